//! Ratings of many agents: Bradley-Terry and Plackett-Luce strengths by batch maximum
//! likelihood, on an Elo scale anchored at a named agent, with bootstrap intervals over the
//! design's units.
//!
//! The data are plain: a list of [`Unit`]s (a deal under all its seating arrangements, the unit
//! of the design), each a list of [`Game`]s, each the agents at its seats and their finishing
//! places (0 first; equal places are tied). [`places_from_round`] turns a round's records into
//! places.
//!
//! Models (docs/analysis.md, "Ratings"):
//! - **Plackett-Luce** (Luce 1959, Plackett 1975): a finishing order is a sequence of choices,
//!   the first place chosen among all seats with probability proportional to the strengths
//!   `exp(θ)`, the second among the rest, and so on. A seat's agent may sit at several seats
//!   (a choice set is then a multiset).
//! - **Bradley-Terry** (Bradley and Terry 1952; Zermelo 1929): every pair of seats with
//!   different agents is one comparison (full rank breaking, Azari Soufiani et al. 2013), so a
//!   two-player game is one comparison, and Plackett-Luce and Bradley-Terry agree there.
//!
//! Ties are split: a group of `k` tied seats counts as each of its `k!` orders with weight
//! `1/k!` (the expected log-likelihood over a random break of the tie). For two players this
//! is the chess convention of a draw as half a win and half a loss; Davidson's (1970) and the
//! Davidson-Luce model (Turner et al. 2020, R's `PlackettLuce`) instead add a tie parameter.
//! Splitting keeps the model one parameter per agent and lets `choix` check the fit
//! (`scripts/reference/ratings_fixture.py`).
//!
//! Fit: Newton's method on the log-strengths `θ`, maximising the weighted log-likelihood minus
//! `alpha·Σθ²` (the same penalty as `choix`'s `alpha`: a Gaussian prior of variance
//! `1/(2·alpha)`), with step halving. With `alpha = 0` it is the maximum-likelihood estimate,
//! which exists only when the comparisons are strongly connected (Hunter 2004, Assumption 1:
//! every split of the agents into two groups has someone in each group beating someone in the
//! other); otherwise [`fit`] refuses. Results are on the Elo scale, `400/ln 10` per unit of
//! `θ`, so that a difference of `D` means an expected pairwise score of `1/(1 + 10^(-D/400))`.
//!
//! Data: [`Data`] holds the games reduced as they are added, unit by unit: each distinct game
//! (agents by seat, finishing order) once with what it adds to the sufficient statistics, each
//! unit as its pattern (the multiset of its distinct games), equal patterns stored once. A
//! resample's statistics are then the distinct games' weighted sums, the weights counted from
//! the drawn patterns. The bootstrap resamples units within each stratum (a stage), resample
//! `r` from ChaCha8 stream `r` of the seed, on as many threads as asked, with the same result
//! on any.
//!
//! Reports: [`Collector`] reads a stage's records into games (the hook in `metrics`' one
//! pass); [`of_stage`] rates them for `stats.json`'s `ratings`, with [`csv`] (`ratings.csv`),
//! [`table`], [`figure_spec`] (`figures/ratings.*`) and [`section`] (report.md's *Ratings*);
//! [`with_overview`] puts the leaderboard of all stages together on a run's overview page.

use std::collections::HashMap;
use std::f64::consts::LN_10;
use std::fmt;
use std::path::Path;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Binomial, Distribution};
use serde::Serialize;

use super::figures::{FigureOutcome, FigureSpec};
use super::load::{Row, StageInfo};
use super::stats::percentile;
use super::tables::{Table, csv_num, num};

/// Elo points per unit of log-strength.
pub const ELO_PER_NAT: f64 = 400.0 / LN_10;

/// One game: the agent at each seat (indices into the caller's list of agents) and each seat's
/// finishing place (0 first; seats with equal places are tied; only the order matters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    pub agents: Vec<usize>,
    pub places: Vec<u32>,
}

/// A unit of the design: a deal played under all its seating arrangements (its games). The
/// bootstrap resamples whole units.
pub type Unit = Vec<Game>;

/// Which model the strengths follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Model {
    /// Pairwise comparisons: every pair of seats with different agents.
    BradleyTerry,
    /// Finishing orders.
    #[default]
    PlackettLuce,
}

/// How to fit and report.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingOptions {
    pub model: Model,
    /// The agent rated 0 (for example the index of `random`); `None`: the agents' mean is 0.
    pub anchor: Option<usize>,
    /// Penalty on `Σθ²` as `choix`'s `alpha`; 0 is the plain maximum-likelihood estimate,
    /// which needs strongly connected comparisons. Default `1e-6`, as `choix`, so that a
    /// bootstrap resample where an agent never loses still has a finite (huge) rating.
    pub alpha: f64,
    /// Bootstrap resamples of the units (0: no intervals).
    pub resamples: usize,
    /// Interval level, 0.95 by default.
    pub confidence: f64,
    /// Seed of the resampling (ChaCha8): the same seed gives the same intervals, bit for bit.
    pub seed: u64,
    /// Threads drawing the resamples (0: as many as the machine has); the intervals do not
    /// depend on it.
    pub threads: usize,
}

impl Default for RatingOptions {
    fn default() -> Self {
        RatingOptions {
            model: Model::PlackettLuce,
            anchor: None,
            alpha: 1e-6,
            resamples: 1000,
            confidence: 0.95,
            seed: 0,
            threads: 0,
        }
    }
}

/// One agent's rating.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    /// Elo relative to the anchor.
    pub elo: f64,
    /// Percentile bootstrap interval (`None` without resamples).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Games the agent played (seats, counting each seat).
    pub games: u64,
}

/// The ratings of all agents, in the caller's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    pub model: Model,
    pub anchor: Option<usize>,
    pub ratings: Vec<Rating>,
    /// Whether the comparisons are strongly connected (if not, some ratings are set by the
    /// penalty `alpha` rather than by the data: an agent that never lost, say).
    pub connected: bool,
    /// Resamples drawn, and how many of them were not strongly connected.
    pub resamples: usize,
    pub disconnected_resamples: usize,
}

/// Why the data cannot be rated.
#[derive(Clone, Debug, PartialEq)]
pub enum RatingError {
    /// A game names an agent outside `0..agents`, has fewer than two seats, or has a different
    /// number of agents and places.
    BadGame {
        unit: usize,
        game: usize,
        reason: String,
    },
    /// The anchor is not one of the agents, or did not play.
    BadAnchor(usize),
    /// An agent played no game with another agent.
    Absent(usize),
    /// `alpha = 0` and the comparisons are not strongly connected: the maximum-likelihood
    /// estimate does not exist. `top`: a group of agents none of whom ever finished behind
    /// one of `rest`.
    NotConnected { top: Vec<usize>, rest: Vec<usize> },
    /// Bad options (a negative penalty, a confidence outside (0, 1)).
    BadOptions(String),
}

impl fmt::Display for RatingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RatingError::BadGame { unit, game, reason } => {
                write!(f, "unit {unit}, game {game}: {reason}")
            }
            RatingError::BadAnchor(a) => write!(f, "the anchor (agent {a}) played no rated game"),
            RatingError::Absent(a) => write!(f, "agent {a} played no game against another agent"),
            RatingError::NotConnected { .. } => {
                let names: Vec<String> = (0..=self.largest_agent())
                    .map(|a| format!("agent {a}"))
                    .collect();
                write!(
                    f,
                    "{}; a penalty alpha > 0 gives finite ratings",
                    self.describe(&names)
                )
            }
            RatingError::BadOptions(m) => write!(f, "{m}"),
        }
    }
}

impl RatingError {
    fn largest_agent(&self) -> usize {
        match self {
            RatingError::NotConnected { top, rest } => {
                top.iter().chain(rest).copied().max().unwrap_or(0)
            }
            RatingError::BadAnchor(a) | RatingError::Absent(a) => *a,
            _ => 0,
        }
    }

    /// The message with agents called by `names` (indexed like the agents).
    pub fn describe(&self, names: &[String]) -> String {
        let name = |a: &usize| {
            names
                .get(*a)
                .cloned()
                .unwrap_or_else(|| format!("agent {a}"))
        };
        let list = |v: &[usize]| v.iter().map(name).collect::<Vec<_>>().join(", ");
        match self {
            RatingError::NotConnected { top, rest } => format!(
                "no maximum-likelihood rating exists: {} never finished behind {} (the \
                 comparisons are not strongly connected, so the gap between them is unbounded)",
                list(top),
                list(rest)
            ),
            RatingError::BadAnchor(a) => {
                format!("the anchor {} played no rated game", name(a))
            }
            RatingError::Absent(a) => {
                format!("{} played no game against another agent", name(a))
            }
            other => other.to_string(),
        }
    }
}

impl std::error::Error for RatingError {}

/// A round's places from its records: the winner (`won`) first, the other seats by the value
/// of their hands, lower first, equal values tied (docs/analysis.md, "Ratings").
pub fn places_from_round(won: &[bool], hand_values: &[u32]) -> Vec<u32> {
    // Competition ranking: one more than the number of seats strictly ahead.
    let ahead = |s: usize, t: usize| {
        if won[t] != won[s] {
            won[t]
        } else {
            hand_values[t] < hand_values[s]
        }
    };
    (0..won.len())
        .map(|s| (0..won.len()).filter(|&t| ahead(s, t)).count() as u32)
        .collect()
}

/// Per pattern weights: the weight with which each agent was chosen (`wins`) and with which
/// each distinct choice set was used (`uses`).
#[derive(Clone, Debug)]
struct Stats {
    wins: Vec<f64>,
    uses: Vec<f64>,
}

/// What a game adds to the statistics: (agent, weight chosen), (set, weight used) and its
/// comparisons (winner, loser).
#[derive(Clone, Debug, Default)]
struct Adds {
    wins: Vec<(usize, f64)>,
    uses: Vec<(usize, f64)>,
    beats: Vec<(usize, usize)>,
}

/// Games reduced for rating: the distinct choice sets, the distinct games (agents by seat
/// and places, with what each adds), the distinct unit patterns (the multiset of a unit's
/// distinct games) and, per stratum (a stage, for ratings across stages),
/// the pattern of each unit in the order the units were added. Built once, unit by unit
/// ([`Data::add_unit`]), then rated any number of times ([`Data::rate`]); memory grows with
/// the distinct games and patterns, not with the games.
#[derive(Clone, Debug)]
pub struct Data {
    agents: usize,
    model: Model,
    /// Distinct choice sets, each as (agent, multiplicity) pairs in agent order.
    sets: Vec<Vec<(usize, f64)>>,
    /// A set's agents, sorted, to its index.
    set_index: FxMap<Vec<u32>, usize>,
    /// Distinct games: what each adds, and the agents at its seats.
    distinct: Vec<(Adds, Vec<usize>)>,
    /// A game's agents then places to its index in `distinct`.
    game_index: FxMap<Vec<u32>, u32>,
    /// Each pattern's distinct games (indices into `distinct`, sorted), one after the other:
    /// pattern `p` is `pattern_games[pattern_at[p]..pattern_at[p + 1]]`.
    pattern_games: Vec<u32>,
    pattern_at: Vec<u32>,
    /// A unit's distinct games, sorted, to its pattern.
    pattern_index: FxMap<Vec<u32>, u32>,
    /// Per stratum, each unit's pattern.
    strata: Vec<Vec<u32>>,
    /// Seats played per agent.
    games: Vec<u64>,
    /// Games added.
    played: u64,
    /// Scratch: the key of a game, the games of a unit.
    key: Vec<u32>,
    ids: Vec<u32>,
}

/// A hash map on the Fx hash (rustc's: one multiply per word), for the small integer keys
/// read once per game (and per round, `metrics`' deals); lookups only, so its order never
/// shows.
pub(crate) type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

impl Data {
    /// No games yet, for `agents` agents (indices `0..agents`).
    pub fn new(agents: usize, model: Model) -> Data {
        Data {
            agents,
            model,
            sets: Vec::new(),
            set_index: FxMap::default(),
            distinct: Vec::new(),
            game_index: FxMap::default(),
            pattern_games: Vec::new(),
            pattern_at: vec![0],
            pattern_index: FxMap::default(),
            strata: Vec::new(),
            games: vec![0; agents],
            played: 0,
            key: Vec::new(),
            ids: Vec::new(),
        }
    }

    pub fn agents(&self) -> usize {
        self.agents
    }

    pub fn model(&self) -> Model {
        self.model
    }

    /// Units added, over all strata.
    pub fn units(&self) -> u64 {
        self.strata.iter().map(|s| s.len() as u64).sum()
    }

    /// Games added.
    pub fn games(&self) -> u64 {
        self.played
    }

    /// Distinct unit patterns stored (what the bootstrap's cost grows with).
    pub fn patterns(&self) -> usize {
        self.pattern_at.len() - 1
    }

    /// Distinct games stored.
    pub fn distinct_games(&self) -> usize {
        self.distinct.len()
    }

    /// Seats each agent played.
    pub fn seats_played(&self) -> &[u64] {
        &self.games
    }

    /// Adds one unit of stratum `stratum` (0 for a single stage; the bootstrap resamples each
    /// stratum's units separately, keeping its size).
    pub fn add_unit(&mut self, stratum: usize, unit: &[Game]) -> Result<(), RatingError> {
        let number = self.strata.get(stratum).map_or(0, Vec::len);
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        for (g, game) in unit.iter().enumerate() {
            match self.game_id(&game.agents, &game.places) {
                Ok(id) => ids.push(id),
                Err(reason) => {
                    self.ids = ids;
                    return Err(RatingError::BadGame {
                        unit: number,
                        game: g,
                        reason: reason.to_string(),
                    });
                }
            }
        }
        self.add_unit_of(stratum, &mut ids);
        self.ids = ids;
        Ok(())
    }

    /// The index of a game among the distinct games (added if new), or why it is not one.
    fn game_id(&mut self, agents: &[usize], places: &[u32]) -> Result<u32, &'static str> {
        if agents.len() != places.len() {
            return Err("agents and places differ in length");
        }
        if agents.len() < 2 {
            return Err("fewer than two seats");
        }
        if agents.len() > 16 {
            return Err("more than 16 seats");
        }
        if agents.iter().any(|&a| a >= self.agents) {
            return Err("an agent index is out of range");
        }
        self.key.clear();
        self.key.extend(agents.iter().map(|&a| a as u32));
        // Only the order of the places matters: ranks, so that (0, 5) and (0, 1) are one game.
        self.key.extend(
            places
                .iter()
                .map(|p| places.iter().filter(|q| *q < p).count() as u32),
        );
        if let Some(&id) = self.game_index.get(self.key.as_slice()) {
            return Ok(id);
        }
        let game = Game {
            agents: agents.to_vec(),
            places: self.key[agents.len()..].to_vec(),
        };
        let mut add = Adds::default();
        let (sets, set_index) = (&mut self.sets, &mut self.set_index);
        let mut key: Vec<u32> = Vec::with_capacity(game.agents.len());
        let mut choose = |chosen: usize, set: &[usize], w: f64| {
            key.clear();
            key.extend(set.iter().map(|&a| a as u32));
            key.sort_unstable();
            for &a in set {
                if a != chosen && !add.beats.contains(&(chosen, a)) {
                    add.beats.push((chosen, a));
                }
            }
            let j = match set_index.get(key.as_slice()) {
                Some(&j) => j,
                None => {
                    let mut members: Vec<(usize, f64)> = Vec::new();
                    for &a in key.iter() {
                        match members.last_mut() {
                            Some((b, m)) if *b == a as usize => *m += 1.0,
                            _ => members.push((a as usize, 1.0)),
                        }
                    }
                    sets.push(members);
                    set_index.insert(key.clone(), sets.len() - 1);
                    sets.len() - 1
                }
            };
            add_to(&mut add.wins, chosen, w);
            add_to(&mut add.uses, j, w);
        };
        match self.model {
            Model::PlackettLuce => choices_pl(&game, &mut choose),
            Model::BradleyTerry => choices_bt(&game, &mut choose),
        }
        let id = self.distinct.len() as u32;
        self.distinct.push((add, game.agents));
        self.game_index.insert(self.key.clone(), id);
        Ok(id)
    }

    /// Adds a unit given as its games' indices (reordered).
    fn add_unit_of(&mut self, stratum: usize, ids: &mut [u32]) {
        ids.sort_unstable();
        for &id in ids.iter() {
            for &a in &self.distinct[id as usize].1 {
                self.games[a] += 1;
            }
        }
        self.played += ids.len() as u64;
        let p = match self.pattern_index.get(&*ids) {
            Some(&p) => p,
            None => {
                let p = self.patterns() as u32;
                self.pattern_games.extend_from_slice(ids);
                self.pattern_at.push(self.pattern_games.len() as u32);
                self.pattern_index.insert(ids.to_vec(), p);
                p
            }
        };
        if self.strata.len() <= stratum {
            self.strata.resize(stratum + 1, Vec::new());
        }
        self.strata[stratum].push(p);
    }

    /// How many units of each pattern the data hold.
    fn multiplicities(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.patterns()];
        for &p in self.strata.iter().flatten() {
            counts[p as usize] += 1;
        }
        counts
    }

    /// The statistics of the units counted `counts[p]` times per pattern `p` (through the
    /// times each distinct game is counted), and whether their comparisons are strongly
    /// connected over the agents that play (`Err`: a group of agents that never finished
    /// behind the others).
    fn stats(&self, counts: &[u32]) -> (Stats, Connected) {
        let n = self.agents;
        let mut times = vec![0u64; self.distinct.len()];
        for (p, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let (from, to) = (self.pattern_at[p] as usize, self.pattern_at[p + 1] as usize);
            for &g in &self.pattern_games[from..to] {
                times[g as usize] += u64::from(c);
            }
        }
        let mut s = Stats {
            wins: vec![0.0; n],
            uses: vec![0.0; self.sets.len()],
        };
        let mut beats = vec![false; n * n];
        for ((add, _), &t) in self.distinct.iter().zip(&times) {
            if t == 0 {
                continue;
            }
            let t = t as f64;
            for &(a, w) in &add.wins {
                s.wins[a] += t * w;
            }
            for &(j, w) in &add.uses {
                s.uses[j] += t * w;
            }
            for &(a, b) in &add.beats {
                beats[a * n + b] = true;
            }
        }
        let present: Vec<bool> = self.games.iter().map(|&g| g > 0).collect();
        (s, unbeaten_group(&beats, &present))
    }

    /// The penalised log-likelihood at `theta`, its gradient and the negated Hessian.
    fn objective(&self, s: &Stats, theta: &[f64], alpha: f64, with_derivatives: bool) -> Derivs {
        let n = self.agents;
        let mut f = -alpha * theta.iter().map(|t| t * t).sum::<f64>();
        let mut grad: Vec<f64> = (0..n).map(|i| s.wins[i] - 2.0 * alpha * theta[i]).collect();
        let mut neg_hess = vec![vec![0.0; n]; if with_derivatives { n } else { 0 }];
        for i in 0..n {
            f += s.wins[i] * theta[i];
            if with_derivatives {
                neg_hess[i][i] = 2.0 * alpha;
            }
        }
        // Shifted by the largest member's θ for a stable log-sum-exp.
        let mut pi: Vec<(usize, f64)> = Vec::new();
        for (set, &w) in self.sets.iter().zip(&s.uses) {
            if w == 0.0 {
                continue;
            }
            let top = set.iter().map(|&(a, _)| theta[a]).fold(f64::MIN, f64::max);
            let d: f64 = set.iter().map(|&(a, m)| m * (theta[a] - top).exp()).sum();
            f -= w * (top + d.ln());
            if !with_derivatives {
                continue;
            }
            pi.clear();
            pi.extend(
                set.iter()
                    .map(|&(a, m)| (a, m * (theta[a] - top).exp() / d)),
            );
            for &(a, pa) in &pi {
                grad[a] -= w * pa;
                neg_hess[a][a] += w * pa;
                for &(b, pb) in &pi {
                    neg_hess[a][b] -= w * pa * pb;
                }
            }
        }
        Derivs { f, grad, neg_hess }
    }

    /// The (penalised) maximum-likelihood log-strengths of `s` by Newton's method with step
    /// halving, from θ = 0. With `alpha = 0` the solution is the one with mean 0 over the
    /// agents that play (those that do not stay at 0).
    fn fit(&self, s: &Stats, alpha: f64) -> Vec<f64> {
        let n = self.agents;
        let present: Vec<bool> = self.games.iter().map(|&g| g > 0).collect();
        let playing = present.iter().filter(|&&p| p).count().max(1) as f64;
        let mut theta = vec![0.0; n];
        let mut cur = self.objective(s, &theta, alpha, true);
        for _ in 0..200 {
            let mut a = cur.neg_hess.clone();
            if alpha == 0.0 {
                // The likelihood is flat along θ + c: pin the mean (the gradient has no
                // component along the ones, so the step does not either).
                for (i, row) in a.iter_mut().enumerate() {
                    for (j, x) in row.iter_mut().enumerate() {
                        if present[i] && present[j] {
                            *x += 1.0 / playing;
                        }
                    }
                }
            }
            // Agents that never play: fixed at 0.
            for i in (0..n).filter(|&i| !present[i]) {
                a[i].fill(0.0);
                for row in a.iter_mut() {
                    row[i] = 0.0;
                }
                a[i][i] = 1.0;
            }
            let mut g = cur.grad.clone();
            for i in (0..n).filter(|&i| !present[i]) {
                g[i] = 0.0;
            }
            let Some(step) = solve(a, g) else { break };
            let size = step.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let mut t = 1.0;
            let mut accepted = false;
            for _ in 0..60 {
                let trial: Vec<f64> = theta.iter().zip(&step).map(|(x, d)| x + t * d).collect();
                let next = self.objective(s, &trial, alpha, false);
                if next.f >= cur.f - 1e-12 * cur.f.abs() {
                    theta = trial;
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
            if !accepted {
                break;
            }
            cur = self.objective(s, &theta, alpha, true);
            if size * t < 1e-11 {
                break;
            }
        }
        if alpha == 0.0 {
            let mean = (0..n)
                .filter(|&i| present[i])
                .map(|i| theta[i])
                .sum::<f64>()
                / playing;
            for i in (0..n).filter(|&i| present[i]) {
                theta[i] -= mean;
            }
        }
        theta
    }

    /// Log-strengths `θ` (natural scale) fitted to all the data: the penalised
    /// maximum-likelihood estimate (`alpha` as `choix`'s; 0 for the plain MLE, then with mean
    /// 0).
    pub fn fit_theta(&self, alpha: f64) -> Result<Vec<f64>, RatingError> {
        check_alpha(alpha)?;
        let (s, connected) = self.stats(&self.multiplicities());
        if alpha == 0.0
            && let Err(top) = connected
        {
            return Err(self.not_connected(top));
        }
        Ok(self.fit(&s, alpha))
    }

    fn not_connected(&self, top: Vec<usize>) -> RatingError {
        let rest = (0..self.agents)
            .filter(|a| self.games[*a] > 0 && !top.contains(a))
            .collect();
        RatingError::NotConnected { top, rest }
    }

    /// Rates the agents: Elo relative to the anchor, with percentile bootstrap intervals over
    /// units (each stratum's units resampled with replacement, `opts.resamples` times, the
    /// `r`-th resample drawn from ChaCha8 stream `r` of `opts.seed`: the same intervals to the
    /// bit whatever `opts.threads`).
    pub fn rate(&self, opts: &RatingOptions) -> Result<Ratings, RatingError> {
        check_alpha(opts.alpha)?;
        if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
            return Err(RatingError::BadOptions(format!(
                "the confidence must be in (0, 1), not {}",
                opts.confidence
            )));
        }
        let agents = self.agents;
        if let Some(a) = opts.anchor
            && (a >= agents || self.games[a] == 0)
        {
            return Err(RatingError::BadAnchor(a));
        }
        if let Some(a) = (0..agents).find(|&a| self.games[a] == 0) {
            return Err(RatingError::Absent(a));
        }
        if self.strata.iter().any(|s| s.len() > u32::MAX as usize) {
            return Err(RatingError::BadOptions(
                "more than 2^32 units in one stratum".into(),
            ));
        }
        let (s, connected) = self.stats(&self.multiplicities());
        if opts.alpha == 0.0
            && let Err(top) = connected.clone()
        {
            return Err(self.not_connected(top));
        }
        let elo = |theta: &[f64]| -> Vec<f64> {
            let zero = match opts.anchor {
                Some(a) => theta[a],
                None => theta.iter().sum::<f64>() / theta.len() as f64,
            };
            theta.iter().map(|t| (t - zero) * ELO_PER_NAT).collect()
        };
        let point = elo(&self.fit(&s, opts.alpha));
        let resamples = if self.units() == 0 { 0 } else { opts.resamples };
        let samplers: Vec<Sampler> = if resamples > 0 {
            self.strata.iter().map(|u| Sampler::new(u)).collect()
        } else {
            Vec::new()
        };
        // One resample: its Elo, or `None` when it is not strongly connected and alpha = 0.
        let one = |r: usize, counts: &mut Vec<u32>| -> (Option<Vec<f64>>, bool) {
            let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
            rng.set_stream(r as u64);
            counts.iter_mut().for_each(|c| *c = 0);
            for sampler in &samplers {
                sampler.draw(&mut rng, counts);
            }
            let (rs, ok) = self.stats(counts);
            let ok = ok.is_ok();
            if !ok && opts.alpha == 0.0 {
                return (None, false);
            }
            (Some(elo(&self.fit(&rs, opts.alpha))), ok)
        };
        let threads = match opts.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            t => t,
        }
        .clamp(1, resamples.max(1));
        let chunk = resamples.div_ceil(threads).max(1);
        let results: Vec<(Option<Vec<f64>>, bool)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..resamples)
                .step_by(chunk)
                .map(|start| {
                    let one = &one;
                    scope.spawn(move || {
                        let mut counts = vec![0u32; self.patterns()];
                        (start..(start + chunk).min(resamples))
                            .map(|r| one(r, &mut counts))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("a bootstrap worker panicked"))
                .collect()
        });
        let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); agents];
        let mut disconnected = 0;
        for (e, ok) in results {
            disconnected += usize::from(!ok);
            if let Some(e) = e {
                for (d, x) in draws.iter_mut().zip(e) {
                    d.push(x);
                }
            }
        }
        let tail = (1.0 - opts.confidence) / 2.0;
        let ratings = (0..agents)
            .map(|a| {
                let (low, high) = if draws[a].is_empty() {
                    (None, None)
                } else {
                    (
                        percentile(&mut draws[a], tail),
                        percentile(&mut draws[a], 1.0 - tail),
                    )
                };
                Rating {
                    elo: point[a],
                    low,
                    high,
                    games: self.games[a],
                }
            })
            .collect();
        Ok(Ratings {
            model: self.model,
            anchor: opts.anchor,
            ratings,
            connected: connected.is_ok(),
            resamples,
            disconnected_resamples: disconnected,
        })
    }
}

fn add_to(list: &mut Vec<(usize, f64)>, key: usize, w: f64) {
    match list.iter_mut().find(|e| e.0 == key) {
        Some(e) => e.1 += w,
        None => list.push((key, w)),
    }
}

fn check_alpha(alpha: f64) -> Result<(), RatingError> {
    if alpha >= 0.0 && alpha.is_finite() {
        Ok(())
    } else {
        Err(RatingError::BadOptions(format!(
            "the penalty alpha must be finite and at least 0, not {alpha}"
        )))
    }
}

struct Derivs {
    f: f64,
    grad: Vec<f64>,
    neg_hess: Vec<Vec<f64>>,
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (`a` small, positive
/// definite in use); `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c] == 0.0 || !a[p][c].is_finite() {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            if f != 0.0 {
                let (upper, lower) = a.split_at_mut(r);
                for (x, pivot) in lower[0][c..n].iter_mut().zip(&upper[c][c..n]) {
                    *x -= f * pivot;
                }
                b[r] -= f * b[c];
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    Some(x)
}

/// Log-strengths `θ` (natural scale) of `agents` agents fitted to `units`: the penalised
/// maximum-likelihood estimate (`alpha` as `choix`'s; 0 for the plain MLE, then with mean 0).
pub fn fit(
    agents: usize,
    units: &[Unit],
    model: Model,
    alpha: f64,
) -> Result<Vec<f64>, RatingError> {
    check_alpha(alpha)?;
    data_of(agents, units, model)?.fit_theta(alpha)
}

/// Rates `agents` agents from `units` ([`Data::rate`] of one stratum).
pub fn rate(agents: usize, units: &[Unit], opts: &RatingOptions) -> Result<Ratings, RatingError> {
    data_of(agents, units, opts.model)?.rate(opts)
}

fn data_of(agents: usize, units: &[Unit], model: Model) -> Result<Data, RatingError> {
    let mut data = Data::new(agents, model);
    for unit in units {
        data.add_unit(0, unit)?;
    }
    Ok(data)
}

/// Whether comparisons are strongly connected; if not, a group that never lost to the rest.
type Connected = Result<(), Vec<usize>>;

/// Draws a stratum's units with replacement, as the counts per pattern that `m` uniform draws
/// of a unit give (a resample's statistics depend on nothing else). Two exact ways to the same
/// distribution (the multinomial of `m` draws over the patterns, each as likely as its share of
/// the units), the cheaper chosen from the data alone ([`Sampler::new`]):
///
/// - **by pattern**, when the stratum has few patterns for its units (at most one per
///   [`UNITS_PER_PATTERN`] units, as in a long run of one seating): the counts one after
///   another from binomials, pattern `i`'s count `Binomial(left, m_i / M_i)` of the `left`
///   draws not yet given to the patterns before it, `M_i` their multiplicity (rand_distr's
///   BINV and BTPE, exact up to rounding), the last pattern taking the rest: a few draws per
///   pattern instead of one per unit (a million one-round units of 52 finishing orders: the
///   report of `table1-million.yaml` 0.64-0.76 s against 0.82-0.88 s);
/// - **by unit**, otherwise: `m` times a uniform index into the units sorted by pattern
///   (patterns numbered as they first appear in the records, whose order is fixed), each by
///   Lemire's multiply-and-shift with rejection (no modulo bias). A table on the top 12 bits of
///   the random word answers most draws without reading the units (where all indices those bits
///   can give fall on one pattern): the same draws, faster.
enum Sampler {
    ByPattern {
        /// Patterns in the order they first appear, with their multiplicities.
        patterns: Vec<(u32, u64)>,
        units: u64,
    },
    ByUnit {
        sorted: Vec<u32>,
        table: Vec<u32>,
    },
}

const TABLE_BITS: u32 = 12;

/// A stratum is drawn by pattern when it has at least this many units per pattern: a binomial
/// draw cost 47-85 ns on the development machine (rand_distr, ChaCha8), a unit's uniform draw
/// about 2.5 (the report's 200 million in 0.5 CPU-seconds), so where the chain is used it is at
/// least some 5 times cheaper, and it is never used where it would be dearer.
const UNITS_PER_PATTERN: usize = 256;

impl Sampler {
    /// The cheaper way for a stratum's units (pattern numbers).
    fn new(units: &[u32]) -> Sampler {
        let mut sorted = units.to_vec();
        sorted.sort_unstable();
        let patterns = runs(&sorted);
        if !sorted.is_empty() && patterns.len() * UNITS_PER_PATTERN <= sorted.len() {
            Sampler::ByPattern {
                patterns,
                units: sorted.len() as u64,
            }
        } else {
            Sampler::by_unit(sorted)
        }
    }

    /// Draws by unit, from the units sorted by pattern.
    fn by_unit(sorted: Vec<u32>) -> Sampler {
        let m = sorted.len() as u64;
        let shift = 32 - TABLE_BITS;
        let table = if m == 0 {
            Vec::new()
        } else {
            (0..1u64 << TABLE_BITS)
                .map(|b| {
                    let lo = ((b << shift) * m) >> 32;
                    let hi = ((((b + 1) << shift) - 1) * m) >> 32;
                    if sorted[lo as usize] == sorted[hi as usize] {
                        sorted[lo as usize]
                    } else {
                        u32::MAX
                    }
                })
                .collect()
        };
        Sampler::ByUnit { sorted, table }
    }

    /// Adds one resample's draws to `counts` (per pattern).
    fn draw(&self, rng: &mut ChaCha8Rng, counts: &mut [u32]) {
        match self {
            Sampler::ByPattern { patterns, units } => {
                let (mut left, mut mass) = (*units, *units);
                let Some(((last, _), rest)) = patterns.split_last() else {
                    return;
                };
                for &(p, m) in rest {
                    if left == 0 {
                        break;
                    }
                    let share = m as f64 / mass as f64;
                    let c = Binomial::new(left, share.min(1.0))
                        .expect("a share of the units is a probability")
                        .sample(rng);
                    counts[p as usize] += c as u32;
                    left -= c;
                    mass -= m;
                }
                counts[*last as usize] += left as u32;
            }
            Sampler::ByUnit { sorted, table } => {
                let n = sorted.len() as u32;
                for _ in 0..n {
                    let mut x = rng.next_u32();
                    let mut m = u64::from(x) * u64::from(n);
                    if (m as u32) < n {
                        let floor = n.wrapping_neg() % n;
                        while (m as u32) < floor {
                            x = rng.next_u32();
                            m = u64::from(x) * u64::from(n);
                        }
                    }
                    let p = match table[(x >> (32 - TABLE_BITS)) as usize] {
                        u32::MAX => sorted[(m >> 32) as usize],
                        p => p,
                    };
                    counts[p as usize] += 1;
                }
            }
        }
    }
}

/// The distinct values of a sorted list with how often each occurs.
fn runs(sorted: &[u32]) -> Vec<(u32, u64)> {
    let mut runs: Vec<(u32, u64)> = Vec::new();
    for &p in sorted {
        match runs.last_mut() {
            Some((q, m)) if *q == p => *m += 1,
            _ => runs.push((p, 1)),
        }
    }
    runs
}

/// `Ok` when the directed graph `beats` (n×n, row beats column; restricted to `present`) is
/// strongly connected; otherwise a group of agents none of whom finished behind an agent
/// outside the group (which has no maximum-likelihood rating against the others).
fn unbeaten_group(beats: &[bool], present: &[bool]) -> Result<(), Vec<usize>> {
    let n = present.len();
    let Some(start) = (0..n).find(|&a| present[a]) else {
        return Ok(());
    };
    // Backward (who reaches `start`: beat it, beat one who beat it, ...), then forward.
    for forward in [false, true] {
        let mut seen = vec![false; n];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(a) = stack.pop() {
            for b in 0..n {
                let e = if forward {
                    beats[a * n + b]
                } else {
                    beats[b * n + a]
                };
                if e && present[b] && !seen[b] {
                    seen[b] = true;
                    stack.push(b);
                }
            }
        }
        if (0..n).any(|a| present[a] && !seen[a]) {
            // Backward: no one outside those reaching `start` beat any of them. Forward: no
            // one reached from `start` beat anyone outside them.
            return Err((0..n)
                .filter(|&a| present[a] && (seen[a] != forward))
                .collect());
        }
    }
    Ok(())
}

/// Plackett-Luce choices of a game, ties split: `add(chosen, set, weight)`.
fn choices_pl(game: &Game, add: &mut impl FnMut(usize, &[usize], f64)) {
    let n = game.agents.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&s| (game.places[s], s));
    // Seats not yet placed.
    let mut rest: Vec<usize> = order.clone();
    let mut i = 0;
    let mut set = Vec::with_capacity(n);
    while i < n {
        let mut j = i;
        while j < n && game.places[order[j]] == game.places[order[i]] {
            j += 1;
        }
        let group = &order[i..j];
        let k = group.len();
        // Over a uniformly random order of the group: the seats chosen before (`taken`, a
        // subset of size t) and the one chosen next (`a`) have probability t!(k-1-t)!/k!.
        for taken in 0u32..(1 << k) {
            let t = taken.count_ones() as usize;
            if t == k {
                continue;
            }
            let w = factorial(t) * factorial(k - 1 - t) / factorial(k);
            set.clear();
            for &s in &rest {
                let pos = group.iter().position(|&g| g == s);
                if pos.is_none_or(|p| taken & (1 << p) == 0) {
                    set.push(game.agents[s]);
                }
            }
            if set.len() < 2 {
                continue;
            }
            for (p, &s) in group.iter().enumerate() {
                if taken & (1 << p) == 0 {
                    add(game.agents[s], &set, w);
                }
            }
        }
        rest.retain(|s| !group.contains(s));
        i = j;
    }
}

/// Bradley-Terry comparisons of a game: every pair of seats with different agents, a tie half
/// a win each way.
fn choices_bt(game: &Game, add: &mut impl FnMut(usize, &[usize], f64)) {
    let n = game.agents.len();
    for s in 0..n {
        for t in s + 1..n {
            let (a, b) = (game.agents[s], game.agents[t]);
            if a == b {
                continue;
            }
            let pair = [a, b];
            match game.places[s].cmp(&game.places[t]) {
                std::cmp::Ordering::Less => add(a, &pair, 1.0),
                std::cmp::Ordering::Greater => add(b, &pair, 1.0),
                std::cmp::Ordering::Equal => {
                    add(a, &pair, 0.5);
                    add(b, &pair, 0.5);
                }
            }
        }
    }
}

fn factorial(k: usize) -> f64 {
    (1..=k).map(|i| i as f64).product()
}

// ---------------------------------------------------------------------------------------
// Ratings of a stage's records, and of all the stages of a run.

/// What a report's ratings use: resamples and the anchor (`Options::ratings`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatingSettings {
    /// Bootstrap resamples of the design's units (0: no intervals).
    pub resamples: usize,
    /// The agent rated 0, by id; `None`: `random` if there is one (by id, else by kind), else
    /// the first agent. A name the stage does not seat falls back the same way.
    pub anchor: Option<String>,
}

impl Default for RatingSettings {
    fn default() -> Self {
        RatingSettings {
            resamples: 200,
            anchor: None,
        }
    }
}

/// Mixed into the stage's (or run's) seed for the bootstrap's stream.
const SEED_SALT: u64 = 0x5241_5449_4e47_5321;

/// Collects the games of a stage from its rows, in record order, into a [`Data`] stratum:
/// under coin scoring a round is a game (the winner first, the other seats by the value of
/// their hands, lower first, equal values tied) and a deal with all its seating arrangements
/// a unit; under point scoring a game (one arrangement) is a game, ranked by how long each
/// player lasted (the winner first, then by the last round played, later first, players out
/// in the same round tied), and a game with all its arrangements a unit.
#[derive(Clone, Debug)]
pub struct Collector {
    data: Data,
    stratum: usize,
    /// Agent index in `data` of each slot.
    slots: Vec<usize>,
    points: bool,
    arrangements: u64,
    /// The round being read: (deal, arrangement, round) and its rows (seat, slot, won, hand);
    /// under point scoring `won` is the game won.
    key: Option<(u64, u32, u32)>,
    rows: Vec<(u32, u8, bool, u32)>,
    /// Coin scoring: per deal, the arrangements read and their games (indices into `data`'s
    /// distinct games); spare lists to reuse.
    pending: FxMap<u64, (u64, Vec<u32>)>,
    spare: Vec<Vec<u32>>,
    /// Point scoring: the game being read (deal, arrangement) and per seat its slot, last
    /// round and whether it won; the unit's deal and its finished games.
    game: Option<(u64, u32)>,
    seats: Vec<(u32, u8, u32, bool)>,
    unit: Option<u64>,
    unit_games: Vec<u32>,
    /// Scratch: a game's agents and places.
    agents: Vec<usize>,
    places: Vec<u32>,
    error: Option<RatingError>,
    units: usize,
}

impl Collector {
    /// A collector for one stage, alone.
    pub fn new(info: &StageInfo) -> Collector {
        let n = info.agents.len();
        let model = if info.players >= 3 {
            Model::PlackettLuce
        } else {
            Model::BradleyTerry
        };
        Collector::into_data(Data::new(n, model), 0, (0..n).collect(), info)
    }

    /// A collector adding a stage's units to `data` as stratum `stratum`, its slot `s` being
    /// agent `slots[s]` of `data`.
    pub fn into_data(data: Data, stratum: usize, slots: Vec<usize>, info: &StageInfo) -> Self {
        Collector {
            data,
            stratum,
            slots,
            points: info.points,
            arrangements: info.arrangements().max(1),
            key: None,
            rows: Vec::new(),
            pending: FxMap::default(),
            spare: Vec::new(),
            game: None,
            seats: Vec::new(),
            unit: None,
            unit_games: Vec::new(),
            agents: Vec::new(),
            places: Vec::new(),
            error: None,
            units: 0,
        }
    }

    /// Takes the next row (rows come grouped by round, in record order).
    pub fn push(&mut self, row: &Row) {
        let key = (row.deal, row.rotation, row.round);
        if self.key.is_some_and(|k| k != key) {
            self.end_round();
        }
        self.key = Some(key);
        // Under point scoring what counts is the game won, not the round.
        let won = if self.points { row.game_won } else { row.won };
        self.rows.push((row.seat, row.slot, won, row.hand_value));
    }

    fn end_round(&mut self) {
        let Some((deal, arrangement, round)) = self.key.take() else {
            return;
        };
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_unstable_by_key(|r| r.0);
        if self.points {
            if self.game.is_some_and(|g| g != (deal, arrangement)) {
                self.end_game();
            }
            if self.unit.is_some_and(|u| u != deal) {
                self.end_unit();
            }
            self.game = Some((deal, arrangement));
            self.unit = Some(deal);
            for &(seat, slot, game_won, _) in &rows {
                match self.seats.iter_mut().find(|s| s.0 == seat) {
                    Some(s) => {
                        s.2 = round;
                        s.3 |= game_won;
                    }
                    None => self.seats.push((seat, slot, round, game_won)),
                }
            }
        } else if rows.len() >= 2 {
            // The winner first, the others by hand value, lower first (competition ranking:
            // one more than the seats strictly ahead).
            let ahead = |s: &(u32, u8, bool, u32), t: &(u32, u8, bool, u32)| {
                if t.2 != s.2 { t.2 } else { t.3 < s.3 }
            };
            self.agents.clear();
            self.places.clear();
            for r in &rows {
                self.agents.push(self.slot(r.1));
                self.places
                    .push(rows.iter().filter(|t| ahead(r, t)).count() as u32);
            }
            if let Some(id) = self.game_id() {
                if self.arrangements == 1 {
                    let mut ids = [id];
                    self.add(&mut ids);
                } else {
                    let spare = &mut self.spare;
                    let entry = self
                        .pending
                        .entry(deal)
                        .or_insert_with(|| (0, spare.pop().unwrap_or_default()));
                    entry.0 += 1;
                    entry.1.push(id);
                    if entry.0 >= self.arrangements {
                        let (_, mut ids) = self.pending.remove(&deal).expect("just added");
                        self.add(&mut ids);
                        ids.clear();
                        self.spare.push(ids);
                    }
                }
            }
        }
        rows.clear();
        self.rows = rows;
    }

    fn slot(&self, slot: u8) -> usize {
        self.slots
            .get(usize::from(slot))
            .copied()
            .unwrap_or(usize::MAX)
    }

    /// The index of the game in `agents` and `places`; `None` after an error (kept).
    fn game_id(&mut self) -> Option<u32> {
        if self.error.is_some() {
            return None;
        }
        match self.data.game_id(&self.agents, &self.places) {
            Ok(id) => Some(id),
            Err(reason) => {
                self.error = Some(RatingError::BadGame {
                    unit: self.units,
                    game: 0,
                    reason: reason.to_string(),
                });
                None
            }
        }
    }

    fn end_game(&mut self) {
        if self.game.take().is_none() {
            return;
        }
        let mut seats = std::mem::take(&mut self.seats);
        seats.sort_unstable_by_key(|s| s.0);
        if seats.len() >= 2 {
            // The game's winner first, then by the last round played, later first.
            let ahead = |s: &(u32, u8, u32, bool), t: &(u32, u8, u32, bool)| {
                if t.3 != s.3 { t.3 } else { t.2 > s.2 }
            };
            self.agents.clear();
            self.places.clear();
            for s in &seats {
                self.agents.push(self.slot(s.1));
                self.places
                    .push(seats.iter().filter(|t| ahead(s, t)).count() as u32);
            }
            if let Some(id) = self.game_id() {
                self.unit_games.push(id);
            }
        }
        seats.clear();
        self.seats = seats;
    }

    fn end_unit(&mut self) {
        if self.unit.take().is_none() {
            return;
        }
        let mut games = std::mem::take(&mut self.unit_games);
        self.add(&mut games);
        games.clear();
        self.unit_games = games;
    }

    fn add(&mut self, ids: &mut [u32]) {
        if self.error.is_none() {
            self.data.add_unit_of(self.stratum, ids);
        }
        self.units += 1;
    }

    /// Ends the records: the units not finished yet (a deal short of some arrangements) are
    /// added in deal order.
    pub fn finish(mut self) -> Result<Data, RatingError> {
        self.end_round();
        if self.points {
            self.end_game();
            self.end_unit();
        } else {
            let mut deals: Vec<u64> = self.pending.keys().copied().collect();
            deals.sort_unstable();
            for d in deals {
                let (_, mut ids) = self.pending.remove(&d).expect("listed");
                self.add(&mut ids);
            }
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.data),
        }
    }
}

/// One agent on a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leader {
    /// 1 for the highest rating.
    pub rank: usize,
    pub agent: String,
    /// Elo relative to the anchor (the anchor's is 0).
    pub elo: f64,
    /// 95% percentile bootstrap interval (none without resamples; the anchor's is [0, 0]).
    pub ci95: Option<[f64; 2]>,
    /// Seats the agent played (each game counts each of its seats).
    pub seats: u64,
}

/// Ratings as a report shows them: `stats.json`'s `ratings`, `ratings.csv`, the figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leaderboard {
    /// `plackett-luce` or `bradley-terry`.
    pub model: &'static str,
    /// The agent at 0, and why it (`given`, `random`, `first agent`).
    pub anchor: String,
    pub anchor_rule: String,
    /// The bootstrap's unit (`deal`, `game`, `round`; `unit` across stages) and how many.
    pub unit: String,
    pub units: u64,
    pub games: u64,
    pub resamples: usize,
    /// Resamples without a maximum-likelihood estimate (not strongly connected), left out.
    pub disconnected_resamples: usize,
    pub seed: u64,
    /// Best first.
    pub agents: Vec<Leader>,
    /// Why there are no ratings (then `agents` is empty).
    pub refused: Option<String>,
}

/// The anchor's index among `names`, and why: the agent asked for, else `random` (by id,
/// then by kind), else the first agent.
fn choose_anchor(names: &[String], kinds: &[String], asked: Option<&str>) -> (usize, String) {
    if let Some(a) = asked
        && let Some(i) = names.iter().position(|n| n == a)
    {
        return (i, "given".into());
    }
    let fallback = |rule: &str| match asked {
        Some(a) => format!("{rule} (`{a}` is not an agent here)"),
        None => rule.to_string(),
    };
    if let Some(i) = names.iter().position(|n| n == "random") {
        return (i, fallback("random"));
    }
    if let Some(i) = kinds.iter().position(|k| k == "random") {
        return (i, fallback("random"));
    }
    (0, fallback("first agent"))
}

/// Why the anchor is the anchor, in words.
fn anchor_text(b: &Leaderboard) -> String {
    let (rule, rest) = b
        .anchor_rule
        .split_once(" (")
        .map_or((b.anchor_rule.as_str(), String::new()), |(r, x)| {
            (r, format!("; {}", x.trim_end_matches(')')))
        });
    let why = match rule {
        "given" => "as asked",
        "random" => "the default: the random agent",
        _ => "the default without a random agent: the first agent",
    };
    format!("{why}{rest}")
}

/// Rates `data` (agents `names`, of kinds `kinds`) as a report shows it.
pub fn leaderboard(
    names: &[String],
    kinds: &[String],
    data: &Data,
    settings: &RatingSettings,
    seed: u64,
    unit: &str,
) -> Leaderboard {
    let (anchor, rule) = choose_anchor(names, kinds, settings.anchor.as_deref());
    let seed = seed ^ SEED_SALT;
    let opts = RatingOptions {
        model: data.model(),
        anchor: Some(anchor),
        alpha: 0.0,
        resamples: settings.resamples,
        confidence: 0.95,
        seed,
        threads: 0,
    };
    let mut board = Leaderboard {
        model: match data.model() {
            Model::BradleyTerry => "bradley-terry",
            Model::PlackettLuce => "plackett-luce",
        },
        anchor: names.get(anchor).cloned().unwrap_or_default(),
        anchor_rule: rule,
        unit: unit.to_string(),
        units: data.units(),
        games: data.games(),
        resamples: 0,
        disconnected_resamples: 0,
        seed,
        agents: Vec::new(),
        refused: None,
    };
    match data.rate(&opts) {
        Ok(r) => {
            let mut order: Vec<usize> = (0..names.len()).collect();
            order.sort_by(|&a, &b| {
                r.ratings[b]
                    .elo
                    .total_cmp(&r.ratings[a].elo)
                    .then(a.cmp(&b))
            });
            board.agents = order
                .iter()
                .enumerate()
                .map(|(rank, &a)| {
                    let x = &r.ratings[a];
                    Leader {
                        rank: rank + 1,
                        agent: names[a].clone(),
                        elo: x.elo,
                        ci95: x.low.zip(x.high).map(|(l, h)| [l, h]),
                        seats: x.games,
                    }
                })
                .collect();
            board.resamples = r.resamples;
            board.disconnected_resamples = r.disconnected_resamples;
        }
        Err(e) => board.refused = Some(e.describe(names)),
    }
    board
}

/// A stage's leaderboard from its collected games (`None` with fewer than two agents): what
/// it needs of the stage is in its `info` (names, kinds, seed, unit), so that it can be
/// fitted while the rest of the analysis is made ([`crate::analyze_for_report`]).
pub fn of_stage(
    info: &StageInfo,
    data: &Result<Data, RatingError>,
    settings: &RatingSettings,
) -> Option<Leaderboard> {
    let names: Vec<String> = info.agents.clone();
    if names.len() < 2 {
        return None;
    }
    let kinds: Vec<String> = (0..names.len())
        .map(|slot| info.kinds.get(slot).cloned().unwrap_or_default())
        .collect();
    let seed = info.seed.unwrap_or(0);
    let unit = super::analyze::unit_name(info);
    Some(match data {
        Ok(d) => leaderboard(&names, &kinds, d, settings, seed, unit),
        Err(e) => {
            let mut b = leaderboard(
                &names,
                &kinds,
                &Data::new(names.len(), Model::PlackettLuce),
                settings,
                seed,
                unit,
            );
            b.refused = Some(e.describe(&names));
            b
        }
    })
}

/// `ratings.csv`: one row per agent, best first, at full precision.
pub fn csv(stage: &str, b: &Leaderboard) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let header = [
        "stage",
        "rank",
        "agent",
        "elo",
        "elo_ci95_low",
        "elo_ci95_high",
        "seats",
        "anchor",
        "model",
        "unit",
        "units",
        "resamples",
    ];
    w.write_record(header).expect("writing to memory");
    for a in &b.agents {
        w.write_record([
            stage.to_string(),
            a.rank.to_string(),
            a.agent.clone(),
            csv_num(Some(a.elo)),
            csv_num(a.ci95.map(|c| c[0])),
            csv_num(a.ci95.map(|c| c[1])),
            a.seats.to_string(),
            b.anchor.clone(),
            b.model.to_string(),
            b.unit.clone(),
            b.units.to_string(),
            b.resamples.to_string(),
        ])
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are text")
}

/// The leaderboard for display (Markdown, LaTeX).
pub fn table(b: &Leaderboard) -> Table {
    let header = vec![
        "Rank".to_string(),
        "Agent".to_string(),
        if b.resamples > 0 {
            format!("Elo vs {} [95% CI]", b.anchor)
        } else {
            format!("Elo vs {}", b.anchor)
        },
        "P(ahead of anchor)".to_string(),
        "Seats played".to_string(),
    ];
    let rows = b
        .agents
        .iter()
        .map(|a| {
            let elo = match a.ci95 {
                Some([l, h]) if a.agent != b.anchor => format!(
                    "{} [{}, {}]",
                    num(Some(a.elo), 0),
                    num(Some(l), 0),
                    num(Some(h), 0)
                ),
                _ if a.agent == b.anchor => "0 (anchor)".to_string(),
                _ => num(Some(a.elo), 0),
            };
            vec![
                a.rank.to_string(),
                a.agent.clone(),
                elo,
                num(Some(expected_score(a.elo)), 3),
                a.seats.to_string(),
            ]
        })
        .collect();
    Table {
        header,
        align: vec!['r', 'l', 'r', 'r', 'r'],
        rows,
    }
}

/// The chance that an agent rated `elo` above another finishes ahead of it in a game both
/// play: `1/(1 + 10^(-elo/400))` (under Plackett-Luce too: Luce's choice axiom).
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// What one of the bootstrap's units is, after "over the N deals".
fn unit_detail(b: &Leaderboard) -> &'static str {
    match b.unit.as_str() {
        "deal" => " (each deal with all its seating arrangements)",
        "game" => " (each game with all its seating arrangements)",
        "unit" => {
            " of the stages' designs (a deal with all its seating arrangements; a game under \
             point scoring; a round with fixed or random seats), each stage's units resampled \
             within it"
        }
        _ => "",
    }
}

fn model_text(b: &Leaderboard) -> &'static str {
    match b.model {
        "bradley-terry" => {
            "Bradley-Terry strengths by maximum likelihood on every pair of seats (a tie counts \
             half a win each way)"
        }
        _ => {
            "Plackett-Luce strengths by maximum likelihood on each game's finishing order (ties \
             split: a group of k tied seats counts as each of its k! orders with weight 1/k!)"
        }
    }
}

/// The figure: Elo with its interval, best first, each agent in its own colour (`colours`:
/// the agent's slot, by name).
pub fn figure_spec(
    b: &Leaderboard,
    colours: &[String],
    titled: bool,
    what: &str,
) -> Option<FigureSpec> {
    if b.agents.is_empty() {
        return None;
    }
    let bars: Vec<(String, usize, dhumbal_plots::Interval)> = b
        .agents
        .iter()
        .map(|a| {
            let [l, h] = a.ci95.unwrap_or([f64::NAN, f64::NAN]);
            (
                a.agent.clone(),
                colours
                    .iter()
                    .position(|c| *c == a.agent)
                    .unwrap_or(a.rank - 1),
                dhumbal_plots::Interval {
                    estimate: a.elo,
                    low: l,
                    high: h,
                },
            )
        })
        .collect();
    let axis = format!("Elo (vs {})", b.anchor);
    let width = if b.agents.len() > 8 {
        dhumbal_plots::Width::TwoColumn
    } else {
        dhumbal_plots::Width::OneColumn
    };
    let whiskers = if b.resamples == 0 {
        "No whiskers: no bootstrap resamples were asked for (`--rating-resamples 0`).".to_string()
    } else {
        format!(
            "Whiskers: 95% percentile bootstrap intervals over {} {}s ({} resamples{}).",
            b.units,
            b.unit,
            b.resamples,
            if b.disconnected_resamples > 0 {
                format!(
                    ", {} of them without a rating (not strongly connected) left out",
                    b.disconnected_resamples
                )
            } else {
                String::new()
            }
        )
    };
    let caption = format!(
        "Ratings {what}: {}, on the Elo scale (400/ln 10 per unit of log-strength: a lead of D \
         points means finishing ahead with probability 1/(1 + 10^(−D/400))), anchored at {} = 0 \
         ({}); best first, the anchor's bar empty. {whiskers}",
        model_text(b),
        b.anchor,
        anchor_text(b),
    );
    Some(FigureSpec {
        stem: "ratings",
        place: super::figures::Place::Ratings,
        title: titled.then(|| "Ratings (Elo)".to_string()),
        caption,
        draw: Box::new(move |title| {
            dhumbal_plots::interval_bars_coloured(title, &axis, &bars, width)
        }),
    })
}

/// The `## Ratings` section of a report page; `prefix` is where the page's figures and tables
/// are (`""` beside it).
pub fn section(b: &Leaderboard, figs: &[FigureOutcome], what: &str, csv_path: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "## Ratings\n");
    if let Some(why) = &b.refused {
        let _ = writeln!(out, "No ratings {what}: {why}.\n");
        return out;
    }
    out.push_str(&table(b).to_markdown());
    let intervals = if b.resamples == 0 {
        "No intervals: no bootstrap resamples were asked for (`--rating-resamples 0`).".to_string()
    } else {
        format!(
            "Intervals: 95% percentile bootstrap over the {} {}s{}, {} resamples drawn from a \
             fixed seed ({}), so they are the same on every run and thread count{}.",
            b.units,
            b.unit,
            unit_detail(b),
            b.resamples,
            b.seed,
            if b.disconnected_resamples > 0 {
                format!(
                    "; {} resamples had a group of agents that never finished behind the rest \
                     (no maximum-likelihood estimate) and are left out, which narrows the \
                     intervals",
                    b.disconnected_resamples
                )
            } else {
                String::new()
            }
        )
    };
    let _ = writeln!(
        out,
        "\n{} {what}, on the Elo scale: 400/ln 10 points per unit of log-strength, so that \
         an agent D points above another finishes ahead of it with probability 1/(1 + \
         10^(−D/400)) in any game both play (the column gives that against the anchor). \
         Anchored at **{}** = 0 ({}). {intervals} {} games rated. Every number at full \
         precision in [`{csv_path}`]({csv_path}); docs/analysis.md, *Ratings*, gives the \
         definitions and the check against `choix`.\n",
        model_text(b),
        b.anchor,
        anchor_text(b),
        b.games,
    );
    for o in figs
        .iter()
        .filter(|o| o.place == super::figures::Place::Ratings)
    {
        out.push_str(&super::figures::markdown(o, "figures"));
    }
    out
}

/// The leaderboard of a whole run: every stage's units together (each stage a stratum of the
/// bootstrap), agents identified by id, a `winner_of` seat being the agent it names in its
/// stage of origin. Reads the stages' records under `run`. `None` for fewer than two stages.
pub fn across_stages(
    run: &Path,
    manifest: &serde_json::Value,
    settings: &RatingSettings,
) -> anyhow::Result<Option<(Leaderboard, Vec<String>)>> {
    let stages = manifest["stages"].as_array().cloned().unwrap_or_default();
    if stages.len() < 2 {
        return Ok(None);
    }
    let mut infos = Vec::with_capacity(stages.len());
    for stage in &stages {
        let name = stage["name"].as_str().unwrap_or_default();
        infos.push(super::load::stage_info(&run.join(name))?);
    }
    // Who each slot is: its own id, or for a `winner_of` seat the identity of the agent that
    // won the stage it names.
    let spec = &manifest["scenario"]["stages"];
    let index = |name: &str| stages.iter().position(|s| s["name"].as_str() == Some(name));
    fn identity(
        i: usize,
        slot: usize,
        infos: &[StageInfo],
        stages: &[serde_json::Value],
        spec: &serde_json::Value,
        index: &dyn Fn(&str) -> Option<usize>,
        depth: usize,
    ) -> (String, String) {
        let own = (
            infos[i].agents[slot].clone(),
            infos[i].kinds.get(slot).cloned().unwrap_or_default(),
        );
        let Some(from) = spec[i]["agents"][slot]["winner_of"].as_str() else {
            return own;
        };
        let Some(o) = index(from).filter(|&o| o != i && depth < stages.len()) else {
            return own;
        };
        let Some(w) = stages[o]["winner"]["agent"].as_str() else {
            return own;
        };
        match infos[o].agents.iter().position(|a| a == w) {
            Some(s) => identity(o, s, infos, stages, spec, index, depth + 1),
            None => own,
        }
    }
    let mut names: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    let mut slots: Vec<Vec<usize>> = Vec::new();
    for (i, info) in infos.iter().enumerate() {
        let mut map = Vec::with_capacity(info.agents.len());
        for slot in 0..info.agents.len() {
            let (id, kind) = identity(i, slot, &infos, &stages, spec, &index, 0);
            let k = match names.iter().position(|n| *n == id) {
                Some(k) => k,
                None => {
                    names.push(id);
                    kinds.push(kind);
                    names.len() - 1
                }
            };
            map.push(k);
        }
        slots.push(map);
    }
    let model = if infos.iter().any(|i| i.players >= 3) {
        Model::PlackettLuce
    } else {
        Model::BradleyTerry
    };
    let mut data = Data::new(names.len(), model);
    let mut failure = None;
    for (i, info) in infos.iter().enumerate() {
        let dir = run.join(&info.name);
        let mut c = Collector::into_data(data, i, slots[i].clone(), info);
        super::load::for_each_row(&dir, &info.agents, |row| c.push(row))?;
        data = match c.finish() {
            Ok(d) => d,
            Err(e) => {
                failure = Some(e.describe(&names));
                Data::new(names.len(), model)
            }
        };
        if failure.is_some() {
            break;
        }
    }
    let seed = manifest["seed"].as_u64().unwrap_or(0);
    let mut board = leaderboard(&names, &kinds, &data, settings, seed, "unit");
    if let Some(f) = failure {
        board.agents.clear();
        board.refused = Some(f);
    }
    Ok(Some((board, names)))
}

/// The overview's ratings: computed across the stages of the run in `run`, written under
/// `reports` (`tables/ratings.csv`, `figures/ratings.*`), and their section put into the
/// overview page `text` before its definitions. A failure is said on the page, never raised.
pub fn with_overview(
    text: String,
    run: &Path,
    reports: &Path,
    manifest: &serde_json::Value,
    settings: &RatingSettings,
) -> String {
    let what = "across all stages";
    let section_text = match across_stages(run, manifest, settings) {
        Ok(None) => return text,
        Ok(Some((board, names))) => {
            let mut figs = Vec::new();
            let tables = reports.join("tables");
            let written = std::fs::create_dir_all(&tables).and_then(|_| {
                std::fs::write(tables.join("ratings.csv"), csv("(all stages)", &board))
            });
            if let Some(spec) = figure_spec(&board, &names, false, what) {
                let dir = reports.join("figures");
                if std::fs::create_dir_all(&dir).is_ok() {
                    figs = super::figures::draw_all(vec![spec], &dir);
                }
            }
            let mut s = section(&board, &figs, what, "tables/ratings.csv");
            if let Err(e) = written {
                s.push_str(&format!(
                    "*`tables/ratings.csv` could not be written: {e}*\n\n"
                ));
            }
            s
        }
        Err(e) => format!("## Ratings\n\nNo ratings {what}: {e:#}.\n\n"),
    };
    match text.find("## Definitions") {
        Some(at) => format!("{}{section_text}{}", &text[..at], &text[at..]),
        None => text + section_text.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of drawing a resample give the multinomial of `m` uniform draws of a unit:
    /// every resample keeps the stratum's size, and over many resamples each pattern's count
    /// has mean `m·p`, variance `m·p·(1-p)` and covariance `-m·p·q` with another (p, q: the
    /// patterns' shares). A chain that took pattern `i`'s share of all units rather than of
    /// the units left (`m_i / m`), or of the draws left, fails the means by far.
    #[test]
    fn both_samplers_draw_the_multinomial() {
        let mult = [600u64, 300, 100, 24];
        let units: Vec<u32> = mult
            .iter()
            .enumerate()
            .flat_map(|(p, &k)| std::iter::repeat_n(p as u32, k as usize))
            .collect();
        let m = units.len() as f64;
        let by_pattern = Sampler::new(&units);
        assert!(matches!(by_pattern, Sampler::ByPattern { .. }));
        let by_unit = Sampler::by_unit(units.clone());
        // A few units of many patterns are drawn by unit.
        assert!(matches!(
            Sampler::new(&[0, 1, 2, 2]),
            Sampler::ByUnit { .. }
        ));
        for sampler in [by_pattern, by_unit] {
            let resamples = 20_000;
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let (mut sum, mut sq, mut cross) = ([0f64; 4], [0f64; 4], 0f64);
            for _ in 0..resamples {
                let mut counts = [0u32; 4];
                sampler.draw(&mut rng, &mut counts);
                assert_eq!(counts.iter().map(|&c| u64::from(c)).sum::<u64>(), 1024);
                for p in 0..4 {
                    let c = f64::from(counts[p]);
                    sum[p] += c;
                    sq[p] += c * c;
                }
                cross += f64::from(counts[0]) * f64::from(counts[1]);
            }
            let r = f64::from(resamples);
            for p in 0..4 {
                let share = mult[p] as f64 / m;
                let (mean, var) = (sum[p] / r, sq[p] / r - (sum[p] / r).powi(2));
                let want = m * share * (1.0 - share);
                // Five standard errors of the mean; the variance within 5%.
                assert!(
                    (mean - m * share).abs() < 5.0 * (want / r).sqrt(),
                    "pattern {p}: mean {mean}, want {}",
                    m * share
                );
                assert!(
                    (var / want - 1.0).abs() < 0.05,
                    "pattern {p}: variance {var}, want {want}"
                );
            }
            let cov = cross / r - (sum[0] / r) * (sum[1] / r);
            let want = -m * (600.0 / m) * (300.0 / m);
            assert!(
                (cov / want - 1.0).abs() < 0.06,
                "covariance {cov}, want {want}"
            );
        }
    }

    /// One pattern, or patterns given in any order: the counts still sum to the units.
    #[test]
    fn by_pattern_edge_cases() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let one = Sampler::new(&[3; 300]);
        let mut counts = [0u32; 4];
        one.draw(&mut rng, &mut counts);
        assert_eq!(counts, [0, 0, 0, 300]);
        let mut units: Vec<u32> = (0..2048).map(|i| [2, 0, 1][i % 3]).collect();
        units.reverse();
        let s = Sampler::new(&units);
        let mut counts = [0u32; 3];
        s.draw(&mut rng, &mut counts);
        assert_eq!(counts.iter().sum::<u32>(), 2048);
        assert!(counts.iter().all(|&c| c > 500), "{counts:?}");
    }
}
