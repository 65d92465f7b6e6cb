//! The report's error: one type for every fallible public function of the crate, wrapping the
//! runner's ([`dhumbal_runner::Error`]: a refusal, a result file, records that cannot be read)
//! and the figures' ([`PlotError`]), beside the report's own bad input ([`InputError`]). A
//! caller sorts it with [`Error::is_bad_input`] (the command line's exit code 2), not by its
//! message.

use std::path::PathBuf;

use dhumbal_plots::PlotError;
use dhumbal_runner::folder::Refusal;
use dhumbal_runner::result_file::ReadError;

use crate::load::InputError;

/// The report's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a report (or an analysis, a plan's pilot, a training's figures) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Records, or the files that describe their stage, that cannot be read or make no sense,
    /// the file named: bad input.
    #[error(transparent)]
    Input(#[from] InputError),
    /// What the runner's layer said: a refusal (bad input: an existing report not to be
    /// replaced unasked), a result file of another format, records it could not read.
    #[error(transparent)]
    Runner(#[from] dhumbal_runner::Error),
    /// A figure could not be drawn or written.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A figure the report cannot do without could not be drawn.
    #[error("figure `{stem}`: {message}")]
    Figure { stem: String, message: String },
    /// What the run kept does not hold together: a sequential stage's decision that its
    /// records contradict, a sweep in the manifest without a parameter's values, a stage's
    /// `stats.json` without agents.
    #[error("{0}")]
    Inconsistent(String),
    /// The report of one stage of several failed.
    #[error("report for {}: {source}", dir.display())]
    Stage { dir: PathBuf, source: Box<Error> },
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        Error::Runner(r.into())
    }
}

impl From<ReadError> for Error {
    fn from(e: ReadError) -> Error {
        Error::Runner(e.into())
    }
}

impl Error {
    /// Whether this is bad input (records or result files that cannot be read or make no
    /// sense, a refusal): the command line's exit code 2. Anything else (a file that cannot be
    /// written) is a failure while running.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Input(_) => true,
            Error::Runner(e) => e.is_bad_input(),
            Error::Stage { source, .. } => source.is_bad_input(),
            _ => false,
        }
    }
}

/// `.doing("cannot write", &path)`: the runner's own, whose [`dhumbal_runner::Error`] (`Io`,
/// `Json`) a `?` turns into the report's [`Error::Runner`].
pub(crate) use dhumbal_runner::error::Doing;
