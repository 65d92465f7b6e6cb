//! The runner: a scenario file read and resolved once ([`scenario`]), turned into units of work
//! played in parallel ([`tournament`], [`run`]), and kept as records ([`records`]), per-agent
//! totals ([`totals`]), `summary.csv` and `manifest.json` ([`summary`]), in a results folder
//! that is never overwritten unasked and holds a copy of its inputs ([`folder`]).
//!
//! It sits above the engine (`dhumbal_game`) and the agents (`dhumbal_agents`) and knows
//! nothing of statistics or figures: a report is something the caller attaches to a run, as a
//! [`run::Reporter`] that hears of each finished stage.
//!
//! What can fail fails with one [`Error`], whose variants say what kind of failure it is (a
//! refusal, a stop, a stage that must wait, I/O on a named path, ...), so that callers sort
//! errors by type, not by message.

pub mod bench;
pub mod clock;
pub mod crash;
pub mod dataset;
pub mod error;
pub mod exploit;
pub mod folder;
pub mod human;
pub use dhumbal_optimize as optimize;
mod part_file;
mod pipeline;
mod progress;
pub mod records;
pub mod render;
pub mod resolved;
pub mod result_file;
pub mod run;
pub mod scenario;
pub mod sequential;
pub mod study;
pub mod summary;
pub mod totals;
pub mod tournament;
pub mod trace;
pub mod train;
pub mod trainer;
pub mod tune;
pub mod viewer;
pub mod workers;

pub use error::{Error, Result};
