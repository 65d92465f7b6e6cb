//! Agent families: the paper's heuristics, uniform random, information-set and determinized
//! MCTS, Rhai scripts, trained networks, two-player tabular policies and macro actions, and
//! wrappers such as `epsilon`. Each implements
//! [`dhumbal_game::Agent`] and sees only its [`dhumbal_game::Observation`].
//!
//! A family ([`family::Family`]) says its name and parameters and turns a scenario entry into
//! a [`family::Recipe`], which builds agents; [`registry::FAMILIES`] lists them all. This crate
//! knows the engine and nothing above it: no scenario files, no threads, no records.

pub mod family;
pub mod log;
pub mod neural;
pub mod registry;

// The family files, one each (declared here, where rustfmt reaches them; a module declared
// inside a macro is never formatted).
pub mod epsilon;
pub mod heuristic;
pub mod learned;
pub mod random;
pub mod script;
pub mod search;
pub mod tabular;
pub mod tuned;

/// Every agent family, in the order `dhumbal-run agents` lists them. Adding a family: its
/// file, its `pub mod` line above, and its entries in this list.
pub static FAMILIES: &[&dyn Family] = &[
    &random::RandomFamily,
    &heuristic::HeuristicFamily(Style::Aggressive),
    &heuristic::HeuristicFamily(Style::Conservative),
    &heuristic::HeuristicFamily(Style::Balanced),
    &heuristic::HeuristicFamily(Style::Opportunistic),
    &search::SearchFamily::ISMCTS,
    &search::SearchFamily::MCTS,
    &script::ScriptFamily,
    &epsilon::EpsilonFamily,
    &learned::LearnedFamily(Algorithm::Dqn),
    &learned::LearnedFamily(Algorithm::Ddqn),
    &learned::LearnedFamily(Algorithm::Ppo),
    &learned::LearnedFamily(Algorithm::Imitate),
    &tabular::TabularFamily,
    &tabular::MacroFamily,
    &tuned::TunedFamily,
];

pub use family::{Context, Entry, Family, Param, ParamType, Recipe, Resolve};
pub use heuristic::{Heuristic, HeuristicParams, Style};
pub use log::{AgentLog, escape_controls, escape_lines};
use neural::Algorithm;
pub use random::RandomAgent;
pub use search::{Rollout, SearchAgent, SearchParams};

/// The closest of `candidates` to `name` (Levenshtein distance, ties to the first in
/// alphabetical order), if close enough to be a likely typo: for "did you mean" in messages.
pub fn nearest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let (distance, best) = candidates
        .iter()
        .map(|c| (strsim::levenshtein(name, c), *c))
        .min()?;
    let limit = (name.chars().count() / 3).max(2);
    (distance <= limit).then_some(best)
}
