//! Evaluation: the learner's greedy policy against one opponent kind filling every other
//! seat, on fixed deals (the same at every evaluation), the learner in each seat of every deal
//! in turn, so that neither the cards nor the seat favour it. Deals are played in parallel on
//! the caller's rayon pool and gathered in order: the result does not depend on threads.

use std::sync::Arc;

use rayon::prelude::*;

use dhumbal_agents::Recipe;
use dhumbal_agents::neural::{Choice, Policy, PolicyAgent};
use dhumbal_game::rng::ChaChaStreams;
use dhumbal_game::{Agent, PlayError, Rules, Table};

use crate::EvalRecord;
use crate::episode::reward;

/// Wins and rewards of one deal, summed over the learner's seats.
struct DealResult {
    wins: u32,
    reward: f64,
}

/// Evaluates `policy` against `opponent` on `deals` deals of `seed`.
pub fn evaluate(
    rules: &Arc<Rules>,
    policy: &Arc<Policy>,
    opponent: (&str, &Arc<dyn Recipe>),
    deals: u64,
    seed: u64,
    episode: u64,
) -> Result<EvalRecord, PlayError> {
    let players = rules.players();
    let results: Vec<DealResult> = (0..deals)
        .into_par_iter()
        .map(|deal| {
            let mut wins = 0;
            let mut total = 0.0;
            for seat in 0..players {
                let mut seats: Vec<Box<dyn Agent>> = (0..players)
                    .map(|s| {
                        if s == seat {
                            Box::new(PolicyAgent::new("learner", policy.clone(), Choice::Greedy))
                                as Box<dyn Agent>
                        } else {
                            opponent.1.build(opponent.0)
                        }
                    })
                    .collect();
                // The opponents keep their slots (1, 2, ...) in seat order around the learner,
                // the learner slot 0: the same streams for the same seat arrangement.
                let slots: Vec<u32> = (0..players)
                    .map(|s| {
                        if s == seat {
                            0
                        } else {
                            1 + ((s + players - seat) % players) as u32
                        }
                    })
                    .collect();
                let mut streams = ChaChaStreams::new(seed, deal, &slots);
                let mut table = Table::new((**rules).clone());
                let outcome = table.play_round(&mut seats, &mut streams, &mut ())?;
                wins += u32::from(outcome.winner == Some(seat));
                total += reward(rules, &outcome, seat);
            }
            Ok(DealResult {
                wins,
                reward: total,
            })
        })
        .collect::<Result<_, PlayError>>()?;
    let n = deals.max(1) as f64;
    let per_deal: Vec<f64> = results
        .iter()
        .map(|r| f64::from(r.wins) / players as f64)
        .collect();
    let (mean, low, high) = mean_interval(&per_deal);
    Ok(EvalRecord {
        episode,
        opponent: opponent.0.to_string(),
        rounds: deals * players as u64,
        deals,
        win_rate: mean,
        low,
        high,
        mean_reward: results.iter().map(|r| r.reward).sum::<f64>() / (n * players as f64),
    })
}

/// The mean of per-unit win rates (a deal's or a game's seats averaged first) with its 95%
/// normal interval by unit, clipped to [0, 1].
pub(crate) fn mean_interval(per_unit: &[f64]) -> (f64, f64, f64) {
    let n = per_unit.len().max(1) as f64;
    let mean = per_unit.iter().sum::<f64>() / n;
    let var = if per_unit.len() > 1 {
        per_unit.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let half = 1.96 * (var / n).sqrt();
    (mean, (mean - half).max(0.0), (mean + half).min(1.0))
}
