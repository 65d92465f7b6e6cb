//! The game engine: cards, rules, legal moves, one round of play and its settlement, and the
//! seeded random streams it draws from ([`rng`]).
//!
//! Architecture invariant: this crate knows nothing of YAML, files, threads or clocks. Its only
//! inputs are a [`Rules`] value, agents and random streams; its only output is a
//! [`RoundOutcome`].

pub mod cards;
pub mod decision;
pub mod discards;
pub mod hash;
pub mod rng;
pub mod round;
pub mod rules;

pub use cards::{Card, CardSet, CardVec, Discard, Hand, Suit};
pub use decision::{
    Agent, AgentError, Candidate, Choice, Explanation, Observation, Oracle, Phase, Pick, PlayError,
};
pub use discards::{
    DiscardKind, Runs, classify, count_discards, count_multi_discards, for_each_discard,
    for_each_multi_discard,
};
pub use round::{
    EndReason, Event, Glance, Observer, Resume, RoundOutcome, RoundState, Seats, Table,
};
pub use rules::{Preset, Rules, RulesError, Variant};
