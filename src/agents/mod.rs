//! Built-in agents. Each implements [`crate::game::Agent`] and sees only its
//! [`crate::game::Observation`].

pub mod heuristic;
pub mod random;
pub mod registry;
pub mod script;
pub mod search;

pub use heuristic::{Heuristic, HeuristicParams, Style};
pub use random::RandomAgent;
pub use search::{Rollout, SearchAgent, SearchParams};
