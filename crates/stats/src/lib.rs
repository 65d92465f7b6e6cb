//! dhumbal-stats: every number a researcher reads or decides on, computed from numbers alone.
//!
//! Distributions ([`dist`]), tests, effects and intervals ([`stats`]), power and sample sizes
//! ([`power`]), ratings ([`ratings`]) and the sequential test with its estimate after a stop
//! ([`sequential`]). Nothing here reads a file, a record or a scenario: the runner and the
//! report turn records into the lists of numbers these functions take, and show what they give.
//!
//! Why a crate of its own: each function is checked against a reference (SciPy, statsmodels,
//! choix, fishtest's formulas: the fixtures under `tests/fixtures/`, made by
//! `scripts/reference/`), and mutation testing (`scripts/mutants.sh`) asks of each mutant whether
//! those checks notice it. A mutant here rebuilds this crate and its tests alone, seconds, where
//! the same code inside the runner or the report cost a rebuild of everything above them.

pub mod dist;
pub mod paired;
pub mod power;
pub mod ratings;
pub mod sequential;
pub mod stats;
