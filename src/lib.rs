//! dhumbal-run: a seeded, parallel experiment runner for AI research on Dhumbal (Jhyap, Yaniv).
//!
//! See `ARCHITECTURE.md` for the map. The layers, bottom up: [`game`] (rules and engine),
//! [`rng`] (random streams), [`agents`] (built-in players), [`bench`] (throughput
//! measurement); the `dhumbal-run` binary is a thin CLI over them.

pub mod agents;
pub mod analysis;
pub mod bench;
pub mod cli;
pub mod game;
pub mod plots;
pub mod records;
pub mod rng;
pub mod scenario;
pub mod tournament;
