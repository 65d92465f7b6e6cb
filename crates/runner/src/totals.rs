//! Per-agent totals, kept as integers so that they are exact and independent of the order in
//! which rounds are added (and so can be saved for `--resume` and added to again).

use serde::{Deserialize, Serialize};

use crate::records::Records;

/// Running totals for one agent of a stage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentTotals {
    pub rounds: u64,
    pub wins: u64,
    pub coin_sum: i64,
    pub points_sum: i64,
    pub calls: u64,
    pub call_successes: u64,
    pub cards_discarded: u64,
    pub pile_picks: u64,
    pub turns: u64,
    pub decisions: u64,
    /// Time spent on the timed decisions (see `output.decision_sample`), and their number.
    pub decision_ns: u64,
    #[serde(default)]
    pub timed_decisions: u64,
    /// Point games: games played and won.
    pub games: u64,
    pub game_wins: u64,
}

impl AgentTotals {
    pub fn win_rate(&self) -> f64 {
        ratio(self.wins, self.rounds)
    }

    pub fn mean_coin_delta(&self) -> f64 {
        if self.rounds == 0 {
            0.0
        } else {
            self.coin_sum as f64 / self.rounds as f64
        }
    }

    pub fn mean_points_delta(&self) -> f64 {
        if self.rounds == 0 {
            0.0
        } else {
            self.points_sum as f64 / self.rounds as f64
        }
    }

    /// Economic performance: mean coin change, or minus the mean points taken (higher is better).
    pub fn economic(&self) -> f64 {
        self.mean_coin_delta() - self.mean_points_delta()
    }

    pub fn call_success_rate(&self) -> Option<f64> {
        (self.calls > 0).then(|| ratio(self.call_successes, self.calls))
    }

    pub fn mean_decision_us(&self) -> Option<f64> {
        (self.timed_decisions > 0)
            .then(|| self.decision_ns as f64 / self.timed_decisions as f64 / 1000.0)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Totals for every agent slot of a stage, plus progress.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTotals {
    pub agents: Vec<AgentTotals>,
    pub rounds: u64,
}

impl StageTotals {
    pub fn new(slots: usize) -> StageTotals {
        StageTotals {
            agents: vec![AgentTotals::default(); slots],
            rounds: 0,
        }
    }

    /// Adds one unit's records; `points`: the stage plays point games.
    pub fn add(&mut self, records: &Records, points: bool) {
        for r in records.rows() {
            let t = &mut self.agents[r.slot as usize];
            t.rounds += 1;
            t.wins += u64::from(r.won);
            t.coin_sum += r.coin_delta;
            t.points_sum += r.points_delta;
            t.calls += u64::from(r.called);
            t.call_successes += u64::from(r.call_success);
            t.cards_discarded += u64::from(r.cards_discarded);
            t.pile_picks += u64::from(r.pile_picks);
            t.turns += u64::from(r.turns);
            t.decisions += u64::from(r.decisions);
            if let Some(ns) = r.decision_ns {
                t.decision_ns += ns;
                t.timed_decisions += u64::from(r.decisions);
            }
            t.game_wins += u64::from(r.game_won);
            // Every seat plays a game's first round.
            if points && r.round == 0 {
                t.games += 1;
            }
        }
        self.rounds += records.rounds();
    }

    /// The best slot: highest win rate, then economic performance, then the first listed.
    pub fn winner(&self) -> usize {
        let mut best = 0;
        for (i, t) in self.agents.iter().enumerate().skip(1) {
            let b = &self.agents[best];
            let better = t.win_rate() > b.win_rate()
                || (t.win_rate() == b.win_rate() && t.economic() > b.economic());
            if better {
                best = i;
            }
        }
        best
    }
}

/// The two-sided 95% normal quantile, z such that P(|Z| <= z) = 0.95.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `k` successes in `n` trials at normal quantile `z` (1.96 for
/// 95%): the project's one implementation, used by the run's summary and by the report.
/// `None` when `n` is 0.
pub fn wilson(k: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_statsmodels() {
        // tests/fixtures/wilson.json, made by scripts/reference/wilson_fixture.py.
        let text = include_str!("../../../tests/fixtures/wilson.json");
        let fixture: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            let (k, n) = (case["k"].as_u64().unwrap(), case["n"].as_u64().unwrap());
            let (lo, hi) = wilson(k, n, Z_95).unwrap();
            assert!(
                (lo - case["low"].as_f64().unwrap()).abs() < 1e-9,
                "{k}/{n}: {lo}"
            );
            assert!(
                (hi - case["high"].as_f64().unwrap()).abs() < 1e-9,
                "{k}/{n}: {hi}"
            );
        }
        assert_eq!(wilson(0, 0, Z_95), None);
    }
}
