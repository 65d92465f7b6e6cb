//! A participant's journal (`participants/<code>/journal.jsonl`): a header, then every
//! decision as it is made and every game as it ends, one JSON line each, appended and synced
//! before the game goes on. Written and read through one type, [`Line`].

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{FORMAT, GameResult, Participant};
use crate::error::{Doing, Error, Result};

/// The journal's first line: whose it is, and of which study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    /// The study's hash ([`super::Folder::hash`]).
    pub study: String,
    pub participant: String,
    pub index: usize,
}

/// One decision of the person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub game: u32,
    /// The participant's decisions before this one.
    pub seq: u64,
    /// An index into the decision's legal actions (engine order).
    pub choice: usize,
    /// The action as a trace words it (a replay checks it against the game).
    pub action: String,
    /// Time from the decision shown to the answer received.
    pub ns: u64,
    /// Hints asked before answering.
    pub hints: u32,
}

/// A line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum Line {
    Header(Header),
    Decision(Decision),
    /// A game played to its end, its trace and records written.
    GameEnd(GameResult),
}

/// The journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Opens `dir/journal.jsonl` (made with its header if new) and returns it with the lines
    /// it holds. A journal of another study or participant is refused; a last line cut short
    /// (the machine stopped while writing it) is dropped, since the game it would have
    /// changed never got it.
    pub fn open(dir: &Path, study: &str, who: &Participant) -> Result<(Journal, Vec<Line>)> {
        std::fs::create_dir_all(dir).doing("cannot create", dir)?;
        let path = dir.join("journal.jsonl");
        let mut lines = Vec::new();
        if path.exists() {
            let text = std::fs::read_to_string(&path).doing("cannot read", &path)?;
            let mut kept = 0;
            for (n, raw) in text.split_inclusive('\n').enumerate() {
                if !raw.ends_with('\n') {
                    break;
                }
                let line: Line = serde_json::from_str(raw).map_err(|e| {
                    Error::Records(format!("{} line {}: {e}", path.display(), n + 1))
                })?;
                kept += raw.len();
                lines.push(line);
            }
            if kept < text.len() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .doing("cannot repair", &path)?;
                f.set_len(kept as u64).doing("cannot repair", &path)?;
                f.sync_all().doing("cannot repair", &path)?;
            }
            match lines.first() {
                Some(Line::Header(h))
                    if h.format == FORMAT && h.study == study && h.participant == who.code => {}
                _ => {
                    return Err(crate::folder::Refusal(format!(
                        "{} is not participant {}'s journal of this study: serve the study \
                         into another folder (--out)",
                        path.display(),
                        who.code
                    ))
                    .into());
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .doing("cannot open", &path)?;
        let mut journal = Journal { path, file };
        if lines.is_empty() {
            let header = Line::Header(Header {
                format: FORMAT,
                study: study.into(),
                participant: who.code.clone(),
                index: who.index,
            });
            journal.append(&header)?;
            // The folder's entry of the new file, on disk too.
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            lines.push(header);
        }
        Ok((journal, lines))
    }

    /// Appends `line` and syncs it to disk.
    pub fn append(&mut self, line: &Line) -> Result<()> {
        let mut text = serde_json::to_string(line).doing("cannot write", &self.path)?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .doing("cannot write", &self.path)
    }
}

/// The lines of the journal at `path`, read only (a last line cut short is left out).
pub fn read(path: &Path) -> Result<Vec<Line>> {
    let text = std::fs::read_to_string(path).doing("cannot read", path)?;
    let mut lines = Vec::new();
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        if !raw.ends_with('\n') {
            break;
        }
        lines.push(
            serde_json::from_str(raw)
                .map_err(|e| Error::Records(format!("{} line {}: {e}", path.display(), n + 1)))?,
        );
    }
    Ok(lines)
}

/// Appends one line to the file at `path` (made if missing) and syncs it.
pub(crate) fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .doing("cannot open", path)?;
    f.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| f.sync_data())
        .doing("cannot write", path)
}
