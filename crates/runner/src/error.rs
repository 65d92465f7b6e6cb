//! The runner's error: one type for every fallible public function of the crate, so that a
//! caller (the command line, Python, a test) tells a refusal from a stop from a failure by its
//! variant, never by its message (style.md, "Errors"). The variants of a kind the runner
//! already had as types of their own ([`Refusal`], [`Interrupted`], [`Waiting`],
//! [`Incomplete`], a result file's [`ReadError`], a trace's [`TraceError`]) wrap them.
//!
//! Each message is whole: a variant that carries a cause shows it after its own words
//! (`cannot write PATH: CAUSE`), as anyhow's `{:#}` showed a context and its cause. The cause
//! is its `source()` too, so an `Error` is printed with `{}`, not by a printer that appends
//! every source again (the command line takes it back out of `anyhow` first).

use std::path::{Path, PathBuf};

use polars_core::prelude::PolarsError;

use crate::folder::Refusal;
use crate::result_file::ReadError;
use crate::run::{Incomplete, Interrupted, Waiting};
use crate::sequential::SprtError;
use crate::trace::TraceError;

/// The runner's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the runner could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: what was asked cannot be done as asked (a folder holding another run, a
    /// `--resume` of another scenario, a flag the scenario does not allow); the message says
    /// what to do instead. The command line exits with 2.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// `merge` found a stage with units missing: which, and the shards that owe them. Bad
    /// input (exit code 2); nothing was changed.
    #[error(transparent)]
    Incomplete(Box<Incomplete>),
    /// A stage seats the winner of an earlier stage whose records are not complete yet (other
    /// shards are playing it). Exit code 3.
    #[error(transparent)]
    Waiting(Box<Waiting>),
    /// Stopped on request (`RunOptions::stop`): what is finished is on disk, `--resume`
    /// continues. Exit code 130.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    /// A result file (a manifest, a sequential stage's decision) that cannot be read, or is of
    /// another format (with what to do).
    #[error(transparent)]
    ResultFile(#[from] ReadError),
    /// A trace that cannot be read (file and line named).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An agent or the engine failed while playing (a script's error, an illegal action): where,
    /// what, and what to do.
    #[error("{0}")]
    Play(String),
    /// A network's training failed.
    #[error("training `{id}`: {source}")]
    Training {
        id: String,
        source: dhumbal_learn::TrainError,
    },
    /// A sequential stage's test cannot be computed (its configuration, or a score out of
    /// range).
    #[error("stage `{stage}`: {source}")]
    Sequential { stage: String, source: SprtError },
    /// A stage's records are not what they must be: parts of another scenario, stage or
    /// program, parts that overlap or leave units out, a part that is not one, a value missing.
    #[error("{0}")]
    Records(String),
    /// A file or folder could not be read or written: what was being done, and the path.
    #[error("{doing} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        doing: &'static str,
        source: std::io::Error,
    },
    /// A file could not be copied or moved to `to`.
    #[error("{doing} {} to {}: {source}", from.display(), to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        doing: &'static str,
        source: std::io::Error,
    },
    /// Records or a table could not be read or written by Polars.
    #[error("{doing} {}: {source}", path.display())]
    Polars {
        path: PathBuf,
        doing: &'static str,
        source: PolarsError,
    },
    /// A JSON file could not be read or written.
    #[error("{doing} {}: {source}", path.display())]
    Json {
        path: PathBuf,
        doing: &'static str,
        source: serde_json::Error,
    },
    /// The worker threads could not be started.
    #[error("cannot start the worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// Something that should not happen did (a writer thread that panicked, a search whose
    /// agent does not resolve): a bug to report, not bad input.
    #[error("{0}")]
    Internal(String),
}

impl From<Waiting> for Error {
    fn from(w: Waiting) -> Error {
        Error::Waiting(Box::new(w))
    }
}

impl From<Incomplete> for Error {
    fn from(i: Incomplete) -> Error {
        Error::Incomplete(Box::new(i))
    }
}

impl Error {
    /// Whether this is bad input (a refusal, or a `merge` of a study with units missing): the
    /// command line's exit code 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::Refused(_) | Error::Incomplete(_))
    }
}

/// What was being done to which path when a library call failed: `.doing("cannot write",
/// &path)` turns the call's error into the [`Error`] that says so (the runner's
/// `with_context(|| format!("cannot write {}", path.display()))`). The report's too.
pub trait Doing<T> {
    fn doing(self, doing: &'static str, path: &Path) -> Result<T>;
}

impl<T> Doing<T> for std::result::Result<T, std::io::Error> {
    fn doing(self, doing: &'static str, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            doing,
            source,
        })
    }
}

impl<T> Doing<T> for std::result::Result<T, PolarsError> {
    fn doing(self, doing: &'static str, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Polars {
            path: path.to_path_buf(),
            doing,
            source,
        })
    }
}

impl<T> Doing<T> for std::result::Result<T, serde_json::Error> {
    fn doing(self, doing: &'static str, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Json {
            path: path.to_path_buf(),
            doing,
            source,
        })
    }
}

/// A copy or rename of `from` to `to` that failed (`doing`: "cannot copy", "cannot move").
pub(crate) fn copy_error(
    doing: &'static str,
    from: &Path,
    to: &Path,
) -> impl FnOnce(std::io::Error) -> Error {
    let (from, to) = (from.to_path_buf(), to.to_path_buf());
    move |source| Error::Copy {
        from,
        to,
        doing,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant with a cause reads as the context and the cause did under anyhow's `{:#}`.
    #[test]
    fn a_cause_follows_what_was_being_done() {
        let e = Err::<(), _>(std::io::Error::new(std::io::ErrorKind::NotFound, "gone"))
            .doing("cannot read", Path::new("/x/progress.json"))
            .unwrap_err();
        assert_eq!(e.to_string(), "cannot read /x/progress.json: gone");
        assert!(!e.is_bad_input());
        assert!(Error::from(Refusal("no".into())).is_bad_input());
    }

    /// Small enough to return by value (clippy's `result_large_err` draws the line at 128
    /// bytes).
    #[test]
    fn the_error_is_small() {
        assert!(
            std::mem::size_of::<Error>() <= 128,
            "{}",
            std::mem::size_of::<Error>()
        );
    }
}
