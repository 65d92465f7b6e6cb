//! The replay viewer: one self-contained HTML page that replays traced deals (docs/traces.md)
//! in a browser, turn by turn, with every seat's hand, the pile and the stock, each decision's
//! candidates and each round's outcome.
//!
//! The page needs no server and no network: its style and script are inlined from the files
//! beside this one (`viewer/page.html`, `viewer/page.css`, `viewer/page.js`, plain JavaScript
//! without dependencies) and the traces are embedded as JSON in a
//! `<script type="application/json">` element, with `<`, `>` and `&` written as `\u003c`,
//! `\u003e` and `\u0026` so that no text of a trace (an agent's name, a script's note) can end
//! the element or be read as markup. The page rebuilds the table at each step from the events
//! alone (deal, decisions, draws, reshuffles, round ends) and checks what it rebuilt against
//! each decision's view.
//!
//! A stage with traces gets `<stage>/traces/replay.html` when it finishes ([`write_viewer`],
//! called by the run); `show --html FILE` writes a page of chosen traces ([`write_html`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Doing, Error, Result};
use crate::trace::{self, TRACES_DIR};

/// The page a stage's traces get, in its `traces/` folder.
pub const PAGE_FILE: &str = "replay.html";

/// At most this much trace text goes into a page asked for with `show --html` (a browser holds
/// the page's data several times over); the traces beyond it are named in the page.
pub const MAX_EMBEDDED_BYTES: u64 = 192 << 20;

/// At most this much goes into the page a stage gets by itself (`traces/replay.html`): a run
/// that traces one deal in a thousand of a big stage writes hundreds of megabytes of traces,
/// which no one replays in one page, and reading them all would cost the run more than the
/// tracing did. The traces beyond it are named in the page, for `show --html`; a first trace
/// bigger than this (a long session) goes in up to the round that reaches it.
pub const STAGE_PAGE_BYTES: u64 = 16 << 20;

const TEMPLATE: &str = include_str!("viewer/page.html");
const STYLE: &str = include_str!("viewer/page.css");
const SCRIPT: &str = include_str!("viewer/page.js");

/// Writes `<stage_dir>/traces/replay.html` from every trace in `<stage_dir>/traces/*.jsonl`
/// (in file name order: by deal, then by arrangement); `None` when the stage has no traces.
pub fn write_viewer(stage_dir: &Path) -> Result<Option<PathBuf>> {
    let dir = stage_dir.join(TRACES_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).doing("cannot read", &dir),
    };
    let mut traces = Vec::new();
    for entry in entries {
        let path = entry.doing("cannot read", &dir)?.path();
        if path.extension().is_some_and(|e| e == "jsonl") && path.is_file() {
            traces.push(path);
        }
    }
    if traces.is_empty() {
        return Ok(None);
    }
    traces.sort();
    let out = dir.join(PAGE_FILE);
    // The run wrote these traces itself, event by event: their lines are not parsed again.
    write_page(&traces, &out, STAGE_PAGE_BYTES, Check::FirstLine)?;
    Ok(Some(out))
}

/// Writes a replay page of `traces` (trace files, shown in this order) to `out`, whole or not
/// at all (written beside it, then renamed).
pub fn write_html(traces: &[PathBuf], out: &Path) -> Result<()> {
    write_page(traces, out, MAX_EMBEDDED_BYTES, Check::EveryLine)
}

/// How much of a trace is read as this format's events ([`trace::read`]) before it goes into a
/// page: every line (files a user names), or the first alone (the `game` line, which says the
/// format; traces the run has just written).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    EveryLine,
    FirstLine,
}

/// [`write_html`], embedding at most `max_bytes` of trace text: whole traces while they fit,
/// and at least the first, whose first rounds alone go in (up to the round that reaches
/// `max_bytes`) when it is bigger; the page says so and how to see the rest.
///
/// The page is streamed to its file: each embedded trace is copied into the page line by line
/// from its file, so a page costs a buffer in memory, not its traces.
fn write_page(traces: &[PathBuf], out: &Path, max_bytes: u64, check: Check) -> Result<()> {
    if traces.is_empty() {
        return Err(Error::Internal("no trace to show".into()));
    }
    let mut embedded: Vec<(String, &Path)> = Vec::with_capacity(traces.len());
    let mut omitted: Vec<String> = Vec::new();
    let mut stages: Vec<String> = Vec::new();
    let mut bytes = 0u64;
    for path in traces {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let size = std::fs::metadata(path)
            .doing("cannot read the trace", path)?
            .len();
        bytes += size;
        if !embedded.is_empty() && bytes > max_bytes {
            // Not read: a big stage's page costs what it shows, not what was traced.
            omitted.push(name);
            continue;
        }
        let game = trace::read::head(path)?;
        if stages.last() != Some(&game.stage) {
            stages.push(game.stage);
        }
        embedded.push((name, path));
    }
    let title = page_title(&stages);
    let tmp = out.with_file_name(format!(
        ".{}.{}.tmp",
        out.file_name()
            .map_or_else(|| "replay.html".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let written = (|| -> Result<()> {
        let file = std::fs::File::create(&tmp).doing("cannot write", &tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        match render(&mut w, &title, &embedded, &omitted, max_bytes, check) {
            Ok(()) => {}
            Err(Rendered::Write(e)) => return Err(e).doing("cannot write", &tmp),
            Err(Rendered::Read(e)) => return Err(e),
        }
        w.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .doing("cannot write", &tmp)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, out).doing("cannot write", out)
}

/// Why [`render`] stopped: the page could not be written, or a trace could not be read.
enum Rendered {
    Write(std::io::Error),
    Read(Error),
}

impl From<std::io::Error> for Rendered {
    fn from(e: std::io::Error) -> Rendered {
        Rendered::Write(e)
    }
}

impl From<Error> for Rendered {
    fn from(e: Error) -> Rendered {
        Rendered::Read(e)
    }
}

impl From<trace::TraceError> for Rendered {
    fn from(e: trace::TraceError) -> Rendered {
        Rendered::Read(e.into())
    }
}

/// "Dhumbal replay: name" from the traces' stages (all of them, if several).
fn page_title(stages: &[String]) -> String {
    match stages {
        [] => "Dhumbal replay".into(),
        several => format!("Dhumbal replay: {}", several.join(", ")),
    }
}

/// The page: the template with its title, style, script and data (`traces`: each embedded
/// trace's file name and file, copied line by line and, with [`Check::EveryLine`], each line
/// read as an event, the first cut after a round once `max_bytes` are in; `omitted`: the
/// names of those left out) filled in.
fn render(
    w: &mut impl Write,
    title: &str,
    traces: &[(String, &Path)],
    omitted: &[String],
    max_bytes: u64,
    check: Check,
) -> std::result::Result<(), Rendered> {
    let (head, tail) = TEMPLATE
        .split_once(DATA)
        .expect("the template has a data marker");
    let values = [
        ("{{TITLE}}", escape_html(title)),
        ("/*STYLE*/", STYLE.to_string()),
        ("/*SCRIPT*/", SCRIPT.to_string()),
    ];
    w.write_all(fill(head, &values).as_bytes())?;
    w.write_all(b"{\"traces\":[")?;
    let mut line = Vec::new();
    for (i, (name, path)) in traces.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "{{\"file\":")?;
        script_safe_json(w, Value::from(name.as_str()).to_string().as_bytes())?;
        w.write_all(b",\"events\":[")?;
        let cannot = "cannot read the trace";
        let file = std::fs::File::open(path).doing(cannot, path)?;
        let size = file.metadata().doing(cannot, path)?.len();
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let (mut number, mut events, mut read, mut rounds) = (0usize, 0usize, 0u64, 0u64);
        // Set once the page's share is reached at a round's end: the trace stops there, unless
        // all that is left is the game's end.
        let (mut full, mut cut) = (false, false);
        loop {
            line.clear();
            let n =
                std::io::BufRead::read_until(&mut reader, b'\n', &mut line).doing(cannot, path)?;
            if n == 0 {
                break;
            }
            number += 1;
            read += n as u64;
            let event = line.trim_ascii_end();
            if event.is_empty() {
                continue;
            }
            if full && !event.starts_with(br#"{"event":"game_end""#) {
                cut = true;
                break;
            }
            if check == Check::EveryLine {
                trace::read::event(path, number, event)?;
            }
            if events > 0 {
                w.write_all(b",")?;
            }
            events += 1;
            script_safe_json(w, event)?;
            // A trace bigger than the page's share (only the first can be): its first rounds,
            // whole, up to that share.
            if event.starts_with(br#"{"event":"round_end""#) {
                rounds += 1;
                full = read >= max_bytes;
            }
        }
        w.write_all(b"]")?;
        if cut {
            write!(w, ",\"cut\":{{\"rounds\":{rounds},\"bytes\":{size}}}")?;
        }
        w.write_all(b"}")?;
    }
    w.write_all(b"],\"omitted\":")?;
    script_safe_json(w, Value::from(omitted.to_vec()).to_string().as_bytes())?;
    w.write_all(b"}")?;
    w.write_all(fill(tail, &values).as_bytes())?;
    Ok(())
}

/// The marker the page's data replaces.
const DATA: &str = "/*DATA*/";

/// Replaces each marker of `template` (and only the template's own text: a value that
/// happens to contain a marker stays as it is).
fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter_map(|(marker, value)| rest.find(marker).map(|at| (at, *marker, value)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, marker, value)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + marker.len()..];
    }
}

/// Writes JSON so that it can sit inside a `<script>` element: `<`, `>` and `&` only occur
/// inside JSON strings, where their `\u` escapes mean the same (so do U+2028 and U+2029, which
/// old script parsers took for line ends).
fn script_safe_json(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let mut from = 0;
    for (at, &b) in bytes.iter().enumerate() {
        let escape = match b {
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            b'&' => "\\u0026",
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
            0xE2 if bytes.get(at + 1) == Some(&0x80) && bytes.get(at + 2) == Some(&0xA8) => {
                "\\u2028"
            }
            0xE2 if bytes.get(at + 1) == Some(&0x80) && bytes.get(at + 2) == Some(&0xA9) => {
                "\\u2029"
            }
            _ => continue,
        };
        w.write_all(&bytes[from..at])?;
        w.write_all(escape.as_bytes())?;
        from = at + if b == 0xE2 { 3 } else { 1 };
    }
    w.write_all(&bytes[from..])
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read::{Deal, Event, GameEnd, RoundEnd};
    use serde_json::json;

    fn trace(dir: &Path, name: &str, agent: &str) -> PathBuf {
        let path = dir.join(name);
        let game = json!({"event": "game", "format": 2, "stage": "s</script><b>", "deal": 0,
            "arrangement": 0, "players": 2, "rules": "paper", "scoring": "coins",
            "session": 1, "seed": 0,
            "seats": [{"seat": 0, "slot": 0, "agent": agent, "kind": "random", "params": {}},
                      {"seat": 1, "slot": 1, "agent": "b", "kind": "random", "params": {}}]});
        std::fs::write(&path, format!("{game}\n")).unwrap();
        path
    }

    #[test]
    fn the_template_has_each_marker_once_and_the_page_nothing_external() {
        for marker in ["{{TITLE}}", "/*STYLE*/", "/*SCRIPT*/", "/*DATA*/"] {
            assert_eq!(TEMPLATE.matches(marker).count(), 1, "{marker}");
        }
        for part in [TEMPLATE, STYLE, SCRIPT] {
            for external in ["http://", "https://", "<link", "src=", "@import", "url("] {
                assert!(!part.contains(external), "{external}");
            }
        }
        assert!(!SCRIPT.contains("</script"));
        assert!(!STYLE.contains("</style"));
    }

    #[test]
    fn no_trace_text_can_end_the_data_element() {
        let dir = tempfile::tempdir().unwrap();
        let agent = "</script><script>alert(1)</script>/*DATA*/{{TITLE}}&amp;\u{2028}";
        let path = trace(dir.path(), "deal-000000-arrangement-000.jsonl", agent);
        let out = dir.path().join("page.html");
        write_html(&[path], &out).unwrap();
        let page = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "the data and the script only"
        );
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("<title>Dhumbal replay: s&lt;/script&gt;&lt;b&gt;</title>"));
        // The embedded data reads back as the trace.
        let start = page.find("id=\"replay-data\">").unwrap() + "id=\"replay-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let data: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(data["traces"][0]["events"][0]["seats"][0]["agent"], agent);
        assert_eq!(
            data["traces"][0]["file"],
            "deal-000000-arrangement-000.jsonl"
        );
    }

    #[test]
    fn a_stage_without_traces_gets_no_page_and_one_with_gets_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(write_viewer(dir.path()).unwrap(), None);
        let traces = dir.path().join(TRACES_DIR);
        std::fs::create_dir(&traces).unwrap();
        assert_eq!(write_viewer(dir.path()).unwrap(), None);
        trace(&traces, "deal-000001-arrangement-000.jsonl", "a");
        trace(&traces, "deal-000000-arrangement-000.jsonl", "a");
        let page = write_viewer(dir.path()).unwrap().unwrap();
        assert_eq!(page, traces.join(PAGE_FILE));
        let text = std::fs::read_to_string(&page).unwrap();
        let first = text.find("deal-000000-arrangement-000").unwrap();
        assert!(first < text.find("deal-000001-arrangement-000").unwrap());
        // Written again, the same page (nothing of the moment goes in).
        write_viewer(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&page).unwrap(), text);
        assert_eq!(
            std::fs::read_dir(&traces).unwrap().count(),
            3,
            "no temporary file left"
        );
    }

    #[test]
    fn a_file_that_is_not_a_trace_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "{\"event\": \"deal\"}\n").unwrap();
        let e = write_html(std::slice::from_ref(&path), &dir.path().join("p.html")).unwrap_err();
        assert!(format!("{e:#}").contains("x.jsonl"), "{e:#}");
        std::fs::write(&path, "not json\n").unwrap();
        let e = write_html(&[path], &dir.path().join("p.html")).unwrap_err();
        assert!(format!("{e:#}").contains("x.jsonl line 1"), "{e:#}");
    }

    /// An event as the writer writes it (its `event` first).
    fn line(event: Event) -> String {
        serde_json::to_string(&event).unwrap()
    }

    /// Round `round`'s deal at a table of two.
    fn deal(round: u32) -> Event {
        let cards = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        Event::Deal(Deal {
            round,
            hands: vec![cards("A♠ 2♠ 3♠ 4♠ 5♠"), cards("A♥ 2♥ 3♥ 4♥ 5♥")],
            pile: cards("K♣"),
            stock: 43,
            standings: vec![0, 0],
            active: vec![true, true],
        })
    }

    /// Round `round`'s end: seat 0 called and won.
    fn round_end(round: u32) -> Event {
        Event::RoundEnd(RoundEnd {
            round,
            end: dhumbal_game::EndReason::Call,
            turns: 3,
            caller: Some(0),
            call_success: true,
            winner: Some(0),
            hands: vec![vec!["A♠".into()], vec!["A♥".into()]],
            hand_values: vec![1, 1],
            change: vec![1, -1],
            standings: vec![1, -1],
            eliminated: vec![false, false],
        })
    }

    /// The data a page embeds, read back.
    fn data(page: &Path) -> Value {
        let page = std::fs::read_to_string(page).unwrap();
        let start = page.find("id=\"replay-data\">").unwrap() + "id=\"replay-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        serde_json::from_str(&page[start..end]).unwrap()
    }

    #[test]
    fn a_first_trace_bigger_than_the_page_goes_in_by_whole_rounds_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = trace(dir.path(), "deal-000000-arrangement-000.jsonl", "a");
        let mut text = std::fs::read_to_string(&path).unwrap();
        let mut one_round = 0;
        for round in 0..10 {
            let lines = format!("{}\n{}\n", line(deal(round)), line(round_end(round)));
            one_round = lines.len() as u64;
            text += &lines;
        }
        let end = GameEnd {
            rounds: 10,
            standings: vec![10, -10],
            winner: 0,
        };
        text += &format!("{}\n", line(Event::GameEnd(end)));
        std::fs::write(&path, &text).unwrap();
        let second = trace(dir.path(), "deal-000001-arrangement-000.jsonl", "b");
        let out = dir.path().join("page.html");
        write_page(
            &[path.clone(), second.clone()],
            &out,
            3 * one_round,
            Check::EveryLine,
        )
        .unwrap();
        let page = data(&out);
        let events = page["traces"][0]["events"].as_array().unwrap();
        // The game line and whole rounds up to the one that reaches the share.
        assert_eq!(events.last().unwrap()["event"], "round_end");
        let rounds = page["traces"][0]["cut"]["rounds"].as_u64().unwrap();
        assert!((2..=4).contains(&rounds), "{rounds}");
        assert_eq!(events.len() as u64, 1 + 2 * rounds);
        assert_eq!(page["traces"][0]["cut"]["bytes"], text.len() as u64);
        assert_eq!(page["traces"].as_array().unwrap().len(), 1);
        assert_eq!(
            page["omitted"],
            json!(["deal-000001-arrangement-000.jsonl"])
        );
        // With room for it, the whole trace and no cut.
        write_page(&[path, second], &out, 1 << 20, Check::EveryLine).unwrap();
        let page = data(&out);
        assert_eq!(page["traces"][0]["events"].as_array().unwrap().len(), 22);
        assert!(page["traces"][0].get("cut").is_none());
        assert_eq!(page["traces"].as_array().unwrap().len(), 2);
    }
}
