//! Where agents' text output goes (a script's `print` and `debug`): a file of the run, opened
//! on the first line written, or nowhere. Never the terminal, where it would tear the progress
//! bar and interleave across threads.
//!
//! Each line says where it came from: `[stage main, deal 12, seating 3, seat 2, my-agent]
//! text` (the seating only where a stage has several). The stage, deal and seating are the
//! thread's *place*, which whoever plays deals sets once per deal on the thread that plays it
//! ([`set_place`]; the runner's tournament does); the seat and agent are set by the agent
//! around each of its decisions. A line is formatted whole and written
//! with one write under the log's lock, so lines of different threads never interleave.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A run's agent log. Shared by every agent of a run, on every thread; each line is written
/// whole.
#[derive(Default)]
pub struct AgentLog {
    sink: Mutex<Sink>,
}

#[derive(Default)]
enum Sink {
    /// Output is dropped (a library caller that attached nothing).
    #[default]
    Nowhere,
    /// Output goes to this file, created (or appended to) when the first line comes.
    Pending(PathBuf),
    Open(std::fs::File),
    /// The file could not be opened (why): output is dropped rather than failing a decision,
    /// and [`AgentLog::failure`] says so.
    Failed(String),
}

/// Where output written on this thread comes from.
#[derive(Default)]
struct Place {
    /// The stage's name; empty: none set.
    stage: String,
    deal: Option<u64>,
    /// The seating arrangement the deal is played under, where a stage has several.
    seating: Option<u64>,
    /// The seat and agent deciding now (set around each decision).
    seat: Option<usize>,
    agent: Option<Arc<str>>,
    /// Output is dropped (a rehearsal at validation, a script's `parameters()`).
    muted: u32,
}

thread_local! {
    static PLACE: RefCell<Place> = RefCell::new(Place::default());
}

/// Says that the decisions made on this thread from now on belong to deal `deal` (the
/// records' `deal` number) of stage `stage`, played under seating arrangement `seating` (the
/// records' `rotation`; `None` where a stage has one seating): every line the agent log writes
/// on this thread names them, until the next call or [`clear_place`]. Whoever plays deals calls it once per
/// deal, on the thread that plays it, before the deal (the runner's tournament does). Cheap:
/// the stage's name is copied only when it changes.
pub fn set_place(stage: &str, deal: u64, seating: Option<u64>) {
    PLACE.with(|p| {
        let mut p = p.borrow_mut();
        if p.stage != stage {
            p.stage.clear();
            p.stage.push_str(stage);
        }
        p.deal = Some(deal);
        p.seating = seating;
    });
}

/// Forgets this thread's stage and deal: later lines name neither.
pub fn clear_place() {
    PLACE.with(|p| {
        let mut p = p.borrow_mut();
        p.stage.clear();
        p.deal = None;
        p.seating = None;
    });
}

/// While alive, lines written on this thread name `seat` and `agent`; the previous ones come
/// back when it is dropped (a script rolling out inside another agent's decision, say).
pub(crate) struct Speaking {
    previous: (Option<usize>, Option<Arc<str>>),
}

/// Lines written on this thread until the guard is dropped come from `agent` in `seat`.
pub(crate) fn speaking(seat: usize, agent: &Arc<str>) -> Speaking {
    PLACE.with(|p| {
        let mut p = p.borrow_mut();
        let previous = (p.seat.replace(seat), p.agent.replace(agent.clone()));
        Speaking { previous }
    })
}

impl Drop for Speaking {
    fn drop(&mut self) {
        let (seat, agent) = (self.previous.0, self.previous.1.take());
        PLACE.with(|p| {
            let mut p = p.borrow_mut();
            p.seat = seat;
            p.agent = agent;
        });
    }
}

/// While alive, output written on this thread is dropped.
pub(crate) struct Muted(());

/// Drops this thread's output until the guard is dropped (nests).
pub(crate) fn muted() -> Muted {
    PLACE.with(|p| p.borrow_mut().muted += 1);
    Muted(())
}

impl Drop for Muted {
    fn drop(&mut self) {
        PLACE.with(|p| p.borrow_mut().muted -= 1);
    }
}

/// Most lines one decision's capture keeps (a script printing in a loop must not fill the
/// memory of a traced run); past it, one line says that more were left out.
pub(crate) const MAX_CAPTURED: usize = 64;

thread_local! {
    /// The buffer that output written on this thread is also copied into, while an agent
    /// captures it ([`capture`]).
    static CAPTURE: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f`, copying every line of output written on this thread meanwhile (muted or not)
/// into `lines` (which it appends to), then restores whatever capture was on before (a
/// script rolling out inside another agent's decision captures into its own buffer). Moves
/// the buffer in and out without allocating: a decision that prints nothing costs nothing.
pub(crate) fn capture<R>(lines: &mut Vec<String>, f: impl FnOnce() -> R) -> R {
    let previous = CAPTURE.with(|c| c.borrow_mut().replace(std::mem::take(lines)));
    let out = f();
    CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(mine) = c.take() {
            *lines = mine;
        }
        *c = previous;
    });
    out
}

/// Copies `text` into this thread's capture, if one is on.
pub(crate) fn captured(text: impl FnOnce() -> String) {
    CAPTURE.with(|c| {
        if let Some(lines) = c.borrow_mut().as_mut() {
            if lines.len() < MAX_CAPTURED {
                lines.push(text());
            } else if lines.len() == MAX_CAPTURED {
                lines.push(format!(
                    "(more than {MAX_CAPTURED} lines: the rest are not kept here)"
                ));
            }
        }
    });
}

/// The line prefix for output from `who` on this thread: `[stage main, deal 12, seat 2, a]`.
fn prefix(who: &str) -> Option<String> {
    PLACE.with(|p| {
        let p = p.borrow();
        if p.muted > 0 {
            return None;
        }
        let mut parts = Vec::with_capacity(4);
        if !p.stage.is_empty() {
            parts.push(format!("stage {}", p.stage));
        }
        if let Some(deal) = p.deal {
            parts.push(format!("deal {deal}"));
        }
        if let Some(seating) = p.seating {
            parts.push(format!("seating {seating}"));
        }
        if let Some(seat) = p.seat {
            parts.push(format!("seat {seat}"));
        }
        parts.push(p.agent.as_deref().unwrap_or(who).to_string());
        Some(format!("[{}]", parts.join(", ")))
    })
}

/// `text` with every control character written out as visible text (`\x1b` for an escape,
/// `\n`, `\t`, `\r`, `\u{9b}` for a C1 control), so that text from outside the program (a
/// script's output or explanation, a trace, a scenario's values) reaching a terminal or a log
/// shows what it holds instead of moving the cursor, clearing the screen or retitling the
/// window. The one escaping function for terminals and logs (the replay page escapes for
/// HTML instead); borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_controls`] line by line: the line ends kept, every other control character
/// escaped (messages of several lines: a scenario's problems, an error's chain).
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && c.is_control()) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(escape_controls).collect();
    Cow::Owned(lines.join("\n"))
}

impl AgentLog {
    /// Sends further output to `path` (appending), opened when the first line is written, so
    /// that a run whose agents say nothing leaves no empty file.
    pub fn attach(&self, path: &Path) {
        if let Ok(mut sink) = self.sink.lock() {
            *sink = Sink::Pending(path.to_path_buf());
        }
    }

    /// Why output was dropped, if the log's file could not be opened.
    pub fn failure(&self) -> Option<String> {
        match &*self.sink.lock().ok()? {
            Sink::Failed(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// Writes `text` from `who` (the agent's name when no agent has said it is deciding on
    /// this thread), each of its lines as `[stage s, deal d, seat n, agent] line`, stage, deal
    /// and seat where known; all in one write.
    pub fn write(&self, who: &str, text: &str) {
        let Some(prefix) = prefix(who) else {
            return;
        };
        let mut out = String::with_capacity(prefix.len() + text.len() + 2);
        // An empty text is still one (empty) line.
        for line in text.split('\n') {
            out.push_str(&prefix);
            out.push(' ');
            out.push_str(&escape_controls(line.strip_suffix('\r').unwrap_or(line)));
            out.push('\n');
        }
        let Ok(mut sink) = self.sink.lock() else {
            return;
        };
        if let Sink::Pending(path) = &*sink {
            *sink = match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                Ok(file) => Sink::Open(file),
                Err(e) => Sink::Failed(format!("cannot write {}: {e}", path.display())),
            };
        }
        if let Sink::Open(file) = &mut *sink {
            let _ = file.write_all(out.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `write` puts in a log attached to a fresh file (in a folder named after `name`).
    fn logged(name: &str, write: impl FnOnce(&AgentLog)) -> String {
        let dir = std::env::temp_dir().join(format!("dhumbal-log-{name}{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("scripts.log");
        let _ = std::fs::remove_file(&path);
        let log = AgentLog::default();
        log.attach(&path);
        write(&log);
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        text
    }

    #[test]
    fn lines_name_their_place_and_are_written_whole() {
        let text = logged("", |log| {
            log.write("a.rhai", "no place");
            set_place("main", 12, None);
            {
                let _s = speaking(2, &Arc::from("mine"));
                log.write("a.rhai", "two\nlines");
                let _m = muted();
                log.write("a.rhai", "dropped");
            }
            log.write("a.rhai", "after");
            clear_place();
        });
        assert_eq!(
            text,
            "[a.rhai] no place\n\
             [stage main, deal 12, seat 2, mine] two\n\
             [stage main, deal 12, seat 2, mine] lines\n\
             [stage main, deal 12, a.rhai] after\n"
        );
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert!(matches!(escape_controls("plain ♥ text"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("a\x1b[2Jb\x07\n\t\r\u{7f}\u{9b}c"),
            "a\\x1b[2Jb\\x07\\n\\t\\r\\x7f\\u{9b}c"
        );
        assert_eq!(
            escape_lines("one\x1b]0;t\x07\ntwo\n"),
            "one\\x1b]0;t\\x07\ntwo\n"
        );
        assert!(!escape_lines("x\x1b").contains('\x1b'));
    }

    #[test]
    fn lines_name_the_seating_where_a_stage_has_several() {
        let text = logged("seating-", |log| {
            set_place("final", 3, Some(5));
            log.write("a.rhai", "x");
            clear_place();
        });
        assert_eq!(text, "[stage final, deal 3, seating 5, a.rhai] x\n");
    }
}
