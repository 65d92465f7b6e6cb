//! dhumbal-run: a seeded, parallel experiment runner for AI research on Dhumbal (Jhyap, Yaniv).
//!
//! This package is the top of the workspace: the `dhumbal-run` command line ([`cli`]) over the
//! layer crates, re-exported here under short names for tests, benchmarks and callers that want
//! the whole library at once. See `ARCHITECTURE.md` for the map; bottom up:
//! [`game`] (cards, rules, the engine, [`rng`] random streams), [`agents`] (agent families and
//! their registry), [`runner`] (scenario files, tournaments, records), [`plots`] (figures, a
//! leaf) and [`report`] (statistics and figures of a run). Above them, [`experiment`] is the
//! one engine every front end calls (the command line in [`cli`], the Python package).

pub use dhumbal_agents as agents;
pub use dhumbal_game as game;
pub use dhumbal_game::rng;
pub use dhumbal_learn as learn;
pub use dhumbal_plots as plots;
pub use dhumbal_report as report;
pub use dhumbal_runner as runner;
pub use dhumbal_runner::{bench, records, scenario, tournament};

pub mod cli;
pub mod experiment;
