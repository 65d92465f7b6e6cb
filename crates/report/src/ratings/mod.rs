//! Ratings of many agents: Bradley-Terry and Plackett-Luce strengths by batch maximum
//! likelihood, on an Elo scale anchored at a named agent, with bootstrap intervals over the
//! design's units.
//!
//! A rating here is an agent's log-strength `θ`, fitted to the finishing orders of the games
//! of a stage (or of all the stages of a run) so that the chance of finishing ahead of another
//! agent grows with the difference, shown on the Elo scale (`400/ln 10` points per unit of
//! `θ`) with one agent, the anchor, at 0, and a percentile bootstrap interval over the design's
//! units (a deal with all its seating arrangements; a game under point scoring).
//!
//! Three parts, each allowed to import only those listed before it:
//! - [`model`]: the statistics, numbers in and numbers out: the games reduced ([`Data`]), the
//!   fit ([`fit`], [`rate`]), the Elo scale, the bootstrap, [`Ratings`] and [`RatingError`];
//! - [`collect`]: records into the model's input: [`Collector`] and [`places_from_round`];
//! - [`present`]: what a report shows: [`Leaderboard`], `ratings.csv`, the table, the figure,
//!   the Markdown section, the leaderboard across stages.
//!
//! Reports: [`Collector`] reads a stage's records into games (the hook in `metrics`' one
//! pass); [`of_stage`] rates them for `stats.json`'s `ratings`, with [`csv`] (`ratings.csv`),
//! [`table`], [`figure_spec`] (`figures/ratings.*`) and [`section`] (report.md's *Ratings*);
//! [`with_overview`] puts the leaderboard of all stages together on a run's overview page.
//!
//! Everything public is re-exported here, so that `ratings::X` names it whichever part holds
//! it; code that needs only the model or the collector (`metrics`) names that part.

pub mod collect;
/// The rating model, from `dhumbal-stats` (numbers in, numbers out).
pub use dhumbal_stats::ratings as model;
pub mod present;

pub use collect::{Collector, places_from_round};
pub use model::{
    Data, ELO_PER_NAT, Game, Model, Rating, RatingError, RatingOptions, Ratings, Unit, fit, rate,
};
pub use present::{
    Leader, Leaderboard, RatingSettings, across_stages, csv, expected_score, figure_spec,
    leaderboard, of_stage, section, table, with_overview,
};
