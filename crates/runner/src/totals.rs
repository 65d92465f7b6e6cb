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
    /// Rounds won per round played.
    pub fn win_rate(&self) -> f64 {
        ratio(self.wins, self.rounds)
    }

    /// Point games won per game played (0 under coin scoring, where no games are counted).
    pub fn game_win_rate(&self) -> f64 {
        ratio(self.game_wins, self.games)
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

    /// Adds another set of totals of the same stage (a part's, say).
    pub fn absorb(&mut self, other: &StageTotals) {
        if self.agents.len() < other.agents.len() {
            self.agents
                .resize(other.agents.len(), AgentTotals::default());
        }
        for (t, o) in self.agents.iter_mut().zip(&other.agents) {
            // Every field named: a new total cannot be forgotten here.
            let AgentTotals {
                rounds,
                wins,
                coin_sum,
                points_sum,
                calls,
                call_successes,
                cards_discarded,
                pile_picks,
                turns,
                decisions,
                decision_ns,
                timed_decisions,
                games,
                game_wins,
            } = o;
            t.rounds += rounds;
            t.wins += wins;
            t.coin_sum += coin_sum;
            t.points_sum += points_sum;
            t.calls += calls;
            t.call_successes += call_successes;
            t.cards_discarded += cards_discarded;
            t.pile_picks += pile_picks;
            t.turns += turns;
            t.decisions += decisions;
            t.decision_ns += decision_ns;
            t.timed_decisions += timed_decisions;
            t.games += games;
            t.game_wins += game_wins;
        }
        self.rounds += other.rounds;
    }

    /// The best slot, the one `winner_of` seats. `points`: the stage plays point games (see
    /// [`crate::run::StageResult::winner`], which knows). Under point scoring the highest
    /// game-win rate: survivors play smaller tables, where a round is easier to win, so the
    /// per-round win rate mixes skill with survival. Under coin scoring the highest win rate.
    /// Ties go to economic performance (minus mean points, or mean coins, per round), then to
    /// the first listed.
    pub fn winner(&self, points: bool) -> usize {
        self.winner_by(points).0
    }

    /// [`Self::winner`], with what decided it: the headline rate, or (when the best rates
    /// tie) economic performance, or (when both tie) the order of the list.
    pub fn winner_by(&self, points: bool) -> (usize, Decided) {
        let rate = |t: &AgentTotals| {
            if points {
                t.game_win_rate()
            } else {
                t.win_rate()
            }
        };
        let mut best = 0;
        for (i, t) in self.agents.iter().enumerate().skip(1) {
            let b = &self.agents[best];
            let better = rate(t) > rate(b) || (rate(t) == rate(b) && t.economic() > b.economic());
            if better {
                best = i;
            }
        }
        let b = &self.agents[best];
        let others = || {
            self.agents
                .iter()
                .enumerate()
                .filter(move |(i, _)| *i != best)
        };
        let decided = if others().all(|(_, t)| rate(t) != rate(b)) {
            Decided::Rate
        } else if others().all(|(_, t)| rate(t) != rate(b) || t.economic() != b.economic()) {
            Decided::Economic
        } else {
            Decided::Order
        };
        (best, decided)
    }
}

/// What decided a stage's winner (see [`StageTotals::winner_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// The highest win rate (game-win rate under point scoring).
    Rate,
    /// The best rates tied; economic performance broke the tie.
    Economic,
    /// Rates and economic performance tied; the first listed.
    Order,
}

impl Decided {
    /// How `manifest.json` names it.
    pub fn name(self) -> &'static str {
        match self {
            Decided::Rate => "rate",
            Decided::Economic => "economic",
            Decided::Order => "order",
        }
    }
}

pub use dhumbal_stats::stats::{Z_95, wilson_z as wilson};

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent of a point stage: rounds won of rounds played, games won of games, points taken.
    fn agent(wins: u64, rounds: u64, game_wins: u64, games: u64, points_sum: i64) -> AgentTotals {
        AgentTotals {
            rounds,
            wins,
            points_sum,
            games,
            game_wins,
            ..AgentTotals::default()
        }
    }

    fn stage(agents: Vec<AgentTotals>) -> StageTotals {
        StageTotals {
            rounds: agents.iter().map(|a| a.rounds).sum(),
            agents,
        }
    }

    #[test]
    fn a_point_stage_is_won_by_games_a_coin_stage_by_rounds() {
        // The survivor wins more rounds (it plays the small tables) but fewer games.
        let s = stage(vec![
            agent(400, 1000, 30, 100, 9000),
            agent(300, 1000, 45, 100, 9000),
            agent(350, 1000, 25, 100, 9000),
        ]);
        assert!(s.agents[0].win_rate() > s.agents[1].win_rate());
        assert_eq!(s.winner(true), 1, "highest game-win rate");
        assert_eq!(s.winner(false), 0, "highest win rate");
        // Rates, not counts: 40 of 80 games beats 45 of 100.
        let s = stage(vec![
            agent(300, 1000, 45, 100, 9000),
            agent(300, 1000, 40, 80, 9000),
        ]);
        assert_eq!(s.winner(true), 1);
    }

    #[test]
    fn ties_go_to_economic_performance_then_to_the_first_listed() {
        // Equal game-win rates: fewer points taken per round wins, whatever the round wins.
        let s = stage(vec![
            agent(500, 1000, 40, 100, 9000),
            agent(300, 1000, 40, 100, 8000),
            agent(300, 1000, 40, 100, 8500),
        ]);
        assert_eq!(s.winner(true), 1, "fewest points per round");
        assert_eq!(s.winner_by(true), (1, Decided::Economic));
        // Per round, not in all: 8000 points over 1000 rounds beats 7000 over 700.
        let s = stage(vec![
            agent(300, 700, 40, 100, 7000),
            agent(300, 1000, 40, 100, 8000),
        ]);
        assert_eq!(s.winner(true), 1);
        // Coin stages: equal win rates, the better mean coin change wins.
        let coins = |wins, coin_sum| AgentTotals {
            rounds: 100,
            wins,
            coin_sum,
            ..AgentTotals::default()
        };
        let s = stage(vec![coins(30, -50), coins(30, 20), coins(20, 90)]);
        assert_eq!(s.winner_by(false), (1, Decided::Economic));
        // A rate ahead of the others decides alone, whatever the coins.
        let s = stage(vec![coins(30, -50), coins(29, 20), coins(20, 90)]);
        assert_eq!(s.winner_by(false), (0, Decided::Rate));
        // A full tie: the first listed.
        let s = stage(vec![
            agent(300, 1000, 40, 100, 8000),
            agent(300, 1000, 40, 100, 8000),
        ]);
        assert_eq!((s.winner(true), s.winner(false)), (0, 0));
        assert_eq!(s.winner_by(true), (0, Decided::Order));
    }
}
