//! Where agents' text output goes (a script's `print` and `debug`): a file of the run, opened
//! on the first line written, or nowhere. Never the terminal, where it would tear the progress
//! bar and interleave across threads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    Open(Box<dyn Write + Send>),
    /// The file could not be opened (why): output is dropped rather than failing a decision,
    /// and [`AgentLog::failure`] says so.
    Failed(String),
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

    /// Writes one line, `[who] text`.
    pub fn write(&self, who: &str, text: &str) {
        let Ok(mut sink) = self.sink.lock() else {
            return;
        };
        if let Sink::Pending(path) = &*sink {
            *sink = match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                Ok(file) => Sink::Open(Box::new(std::io::LineWriter::new(file))),
                Err(e) => Sink::Failed(format!("cannot write {}: {e}", path.display())),
            };
        }
        if let Sink::Open(w) = &mut *sink {
            let _ = writeln!(w, "[{who}] {text}");
        }
    }
}
