//! The rating model: Bradley-Terry and Plackett-Luce strengths by batch maximum likelihood, on
//! an Elo scale anchored at a named agent, with bootstrap intervals over the design's units.
//!
//! The data are plain: a list of [`Unit`]s (a deal under all its seating arrangements, the unit
//! of the design), each a list of [`Game`]s, each the agents at its seats and their finishing
//! places (0 first; equal places are tied).
//! The report's `ratings::collect::places_from_round` turns a round's records into places.
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
//! Imports: of this crate only [`crate::stats::percentile`] (arithmetic on a list). The model is
//! numbers in and numbers out, so that it stays testable against the `choix` fixtures without
//! records or figures; the report's `ratings::collect` (what reads records) and
//! `ratings::present` (what draws them) build on it.

use std::collections::HashMap;
use std::f64::consts::LN_10;
use std::fmt;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Binomial, Distribution};

use crate::stats::percentile;

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
pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// The hasher of [`FxMap`]: public only so that the report's record collector can keep the
/// model's game ids in the same kind of map.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fx(u64);

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
    pub fn game_id(&mut self, agents: &[usize], places: &[u32]) -> Result<u32, &'static str> {
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
    pub fn add_unit_of(&mut self, stratum: usize, ids: &mut [u32]) {
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
            #[cfg(test)]
            tests::NEWTON_STEPS.with(|n| n.set(n.get() + 1));
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

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Newton steps `Data::fit` took on this thread.
        pub(super) static NEWTON_STEPS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// A fit stops when its step is below 1e-11: Newton's method from θ = 0 on these concave
    /// likelihoods gets there in a handful of steps (quadratic convergence), far from the
    /// 200 it allows, with and without a penalty, for both models.
    #[test]
    fn a_fit_stops_once_its_step_is_negligible() {
        let units: Vec<Vec<Game>> = (0..40)
            .map(|i| {
                let places = [[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0], [0, 1, 2]][i % 5];
                vec![g(&[0, 1, 2], &places)]
            })
            .collect();
        for model in [Model::PlackettLuce, Model::BradleyTerry] {
            for alpha in [0.0, 0.5] {
                NEWTON_STEPS.with(|n| n.set(0));
                fit(3, &units, model, alpha).unwrap();
                let steps = NEWTON_STEPS.with(|n| n.get());
                assert!(
                    (3..=12).contains(&steps),
                    "{model:?} {alpha}: {steps} steps"
                );
            }
        }
    }

    fn g(agents: &[usize], places: &[u32]) -> Game {
        Game {
            agents: agents.to_vec(),
            places: places.to_vec(),
        }
    }

    /// Plackett-Luce games without ties, one with an agent in two seats: the objective is
    /// the penalised log-likelihood written out choice by choice (each place's agent chosen
    /// among the seats not yet placed, an agent in two seats counted twice), its gradient is
    /// the derivative of that value and its negated Hessian the negated derivative of the
    /// gradient (central differences).
    #[test]
    fn the_objective_is_the_penalised_log_likelihood_with_its_derivatives() {
        let games = [
            g(&[0, 1, 2], &[0, 1, 2]),
            g(&[2, 0, 1], &[0, 1, 2]),
            g(&[1, 2], &[1, 0]),
            g(&[0, 0, 1], &[0, 1, 2]),
            g(&[0, 0, 1], &[2, 1, 0]),
        ];
        let mut data = Data::new(3, Model::PlackettLuce);
        for game in &games {
            data.add_unit(0, std::slice::from_ref(game)).unwrap();
        }
        let (s, _) = data.stats(&data.multiplicities());
        let alpha = 0.7;
        let theta = [0.3, -0.2, 0.5];
        let written_out = |theta: &[f64]| {
            let mut f = -alpha * theta.iter().map(|t| t * t).sum::<f64>();
            for game in &games {
                let mut seats: Vec<usize> = (0..game.agents.len()).collect();
                seats.sort_by_key(|&k| game.places[k]);
                for k in 0..seats.len() - 1 {
                    let chosen = theta[game.agents[seats[k]]];
                    let among: f64 = seats[k..]
                        .iter()
                        .map(|&j| theta[game.agents[j]].exp())
                        .sum();
                    f += chosen - among.ln();
                }
            }
            f
        };
        let at = data.objective(&s, &theta, alpha, true);
        assert!(
            (at.f - written_out(&theta)).abs() < 1e-12,
            "{} {}",
            at.f,
            written_out(&theta)
        );
        // Without derivatives: the same value, and none of them.
        let plain = data.objective(&s, &theta, alpha, false);
        assert_eq!(plain.f, at.f);
        let h = 1e-5;
        for i in 0..3 {
            let moved = |d: f64| {
                let mut t = theta;
                t[i] += d;
                t
            };
            let df = (written_out(&moved(h)) - written_out(&moved(-h))) / (2.0 * h);
            assert!(
                (at.grad[i] - df).abs() < 1e-7,
                "grad {i}: {} {df}",
                at.grad[i]
            );
            let (up, down) = (
                data.objective(&s, &moved(h), alpha, true),
                data.objective(&s, &moved(-h), alpha, true),
            );
            for j in 0..3 {
                let dg = (up.grad[j] - down.grad[j]) / (2.0 * h);
                assert!(
                    (at.neg_hess[j][i] + dg).abs() < 1e-6,
                    "hessian {j} {i}: {} {}",
                    at.neg_hess[j][i],
                    -dg
                );
            }
        }
    }

    /// An agent that never plays stays at 0 and changes nothing of the others' fit: the
    /// plain MLE's mean is pinned over the agents that play.
    #[test]
    fn an_agent_that_never_plays_changes_no_one_s_rating() {
        let units: Vec<Vec<Game>> = [[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0], [0, 1, 2]]
            .iter()
            .map(|p| vec![g(&[0, 1, 2], p)])
            .collect();
        for model in [Model::PlackettLuce, Model::BradleyTerry] {
            for alpha in [0.0, 0.5] {
                let three = fit(3, &units, model, alpha).unwrap();
                let four = fit(4, &units, model, alpha).unwrap();
                assert_eq!(four[3], 0.0, "{model:?} {alpha}");
                for (a, b) in three.iter().zip(&four) {
                    assert!(
                        (a - b).abs() < 1e-9,
                        "{model:?} {alpha}: {three:?} {four:?}"
                    );
                }
            }
        }
    }

    /// Up to 16 seats make a game, 17 do not.
    #[test]
    fn a_game_has_at_most_16_seats() {
        for seats in [16usize, 17, 18] {
            let mut data = Data::new(seats, Model::PlackettLuce);
            let agents: Vec<usize> = (0..seats).collect();
            let places: Vec<u32> = (0..seats as u32).collect();
            let got = data.game_id(&agents, &places);
            assert_eq!(got.is_ok(), seats <= 16, "{seats}: {got:?}");
        }
    }

    /// The Elo scale: 400/ln 10 points per unit of log-strength, so that 3 wins to 1 between
    /// two agents is 400·log10(3) Elo (an expected score of 3/4).
    #[test]
    fn three_wins_to_one_is_400_log10_3_elo() {
        assert!((ELO_PER_NAT - 173.717_792_761_300_7).abs() < 1e-9);
        let units: Vec<Vec<Game>> = [[0, 1], [0, 1], [0, 1], [1, 0]]
            .iter()
            .map(|p| vec![g(&[0, 1], p)])
            .collect();
        let theta = fit(2, &units, Model::BradleyTerry, 0.0).unwrap();
        let elo = (theta[0] - theta[1]) * ELO_PER_NAT;
        assert!((elo - 400.0 * 3f64.log10()).abs() < 1e-6, "{elo}");
    }

    /// What the data count as they are added: units over strata, games, distinct games and
    /// patterns, seats per agent.
    #[test]
    fn the_data_count_what_was_added() {
        let mut data = Data::new(3, Model::PlackettLuce);
        assert_eq!((data.agents(), data.model()), (3, Model::PlackettLuce));
        let a = g(&[0, 1, 2], &[0, 1, 2]);
        let b = g(&[2, 1, 0], &[0, 1, 1]);
        data.add_unit(0, &[a.clone(), b.clone()]).unwrap();
        data.add_unit(0, &[b, a.clone()]).unwrap();
        data.add_unit(1, std::slice::from_ref(&a)).unwrap();
        assert_eq!(data.units(), 3);
        assert_eq!(data.games(), 5);
        assert_eq!(data.distinct_games(), 2);
        assert_eq!(data.patterns(), 2);
        assert_eq!(data.seats_played(), &[5, 5, 5]);
        let bt = Data::new(2, Model::BradleyTerry);
        assert_eq!((bt.agents(), bt.model()), (2, Model::BradleyTerry));
    }

    /// The message of data that cannot be rated names the agents of both groups, the largest
    /// of them included.
    #[test]
    fn an_unconnected_comparison_names_both_groups() {
        let e = RatingError::NotConnected {
            top: vec![3, 1],
            rest: vec![0, 2],
        };
        let text = e.to_string();
        assert!(
            text.contains("agent 3, agent 1 never finished behind agent 0, agent 2"),
            "{text}"
        );
        assert_eq!(e.largest_agent(), 3);
        assert_eq!(RatingError::Absent(4).largest_agent(), 4);
        assert_eq!(RatingError::BadAnchor(2).largest_agent(), 2);
        assert_eq!(RatingError::BadOptions("x".into()).largest_agent(), 0);
    }

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

    /// Where a bucket of the top 12 bits falls on one pattern, the table gives that pattern:
    /// the one the multiply-and-shift gives for every word of the bucket (its first, middle
    /// and last), on strata of several sizes and shapes.
    #[test]
    fn the_draw_table_agrees_with_the_multiply_and_shift() {
        let shift = 32 - TABLE_BITS;
        for (n, patterns) in [
            (5usize, 2u32),
            (1000, 7),
            (4095, 300),
            (4097, 4097),
            (70_000, 9),
        ] {
            let sorted: Vec<u32> = (0..n)
                .map(|i| ((i as u64 * u64::from(patterns)) / n as u64) as u32)
                .collect();
            let Sampler::ByUnit { sorted, table } = Sampler::by_unit(sorted) else {
                unreachable!()
            };
            assert_eq!(table.len(), 1 << TABLE_BITS);
            let mut answered = 0;
            for (b, &t) in table.iter().enumerate() {
                let first = (b as u32) << shift;
                let words = [
                    first,
                    first + (1 << (shift - 1)),
                    first | ((1 << shift) - 1),
                ];
                let direct: Vec<u32> = words
                    .iter()
                    .map(|&x| sorted[((u64::from(x) * n as u64) >> 32) as usize])
                    .collect();
                if t == u32::MAX {
                    continue;
                }
                answered += 1;
                assert!(
                    direct.iter().all(|&p| p == t),
                    "n {n}, bucket {b}: {t} {direct:?}"
                );
            }
            // Few patterns: nearly every bucket is answered by the table.
            if patterns < 10 {
                assert!(answered > 4000, "n {n}: {answered}");
            }
        }
    }

    /// With more units than buckets, each of its own pattern, nearly every draw goes past the
    /// table to the multiply-and-shift: the draws are still uniform over the units (the share
    /// that falls in each tenth of them is a tenth).
    #[test]
    fn draws_past_the_table_are_uniform() {
        let n = 20_000u32;
        let sampler = Sampler::by_unit((0..n).collect());
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut counts = vec![0u32; n as usize];
        let resamples = 50;
        for _ in 0..resamples {
            sampler.draw(&mut rng, &mut counts);
        }
        let draws = f64::from(n) * f64::from(resamples);
        for tenth in 0..10 {
            let from = (tenth * n / 10) as usize;
            let got: f64 = counts[from..from + (n / 10) as usize]
                .iter()
                .map(|&c| f64::from(c))
                .sum::<f64>()
                / draws;
            // Five standard errors of a share of 1/10 over a million draws.
            assert!(
                (got - 0.1).abs() < 5.0 * (0.09 / draws).sqrt(),
                "tenth {tenth}: {got}"
            );
        }
    }

    /// Gaussian elimination: a system with a known solution (a pivot that must be swapped in
    /// first), and a singular one refused.
    #[test]
    fn solve_finds_the_solution_or_says_singular() {
        let a = vec![
            vec![0.0, 2.0, 1.0],
            vec![1.0, 1.0, 0.0],
            vec![2.0, 1.0, 3.0],
        ];
        let want = [1.0, -2.0, 0.5];
        let b: Vec<f64> = a
            .iter()
            .map(|row| row.iter().zip(&want).map(|(x, y)| x * y).sum())
            .collect();
        let x = solve(a, b).unwrap();
        for (got, want) in x.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{x:?}");
        }
        let singular = vec![vec![1.0, 2.0], vec![2.0, 4.0]];
        assert_eq!(solve(singular, vec![1.0, 2.0]), None);
        assert_eq!(solve(vec![vec![f64::NAN]], vec![1.0]), None);
    }

    /// The penalty must be finite and at least 0; the level strictly between 0 and 1; the
    /// anchor an agent that played.
    #[test]
    fn options_outside_their_ranges_are_refused() {
        let units: Vec<Vec<Game>> = [[0, 1, 2], [1, 0, 2], [2, 1, 0], [0, 2, 1]]
            .iter()
            .map(|p| vec![g(&[0, 1, 2], p)])
            .collect();
        for alpha in [-1.0, f64::NAN, f64::INFINITY] {
            let e = fit(3, &units, Model::PlackettLuce, alpha).unwrap_err();
            assert!(matches!(e, RatingError::BadOptions(_)), "{alpha}: {e}");
        }
        assert!(fit(3, &units, Model::PlackettLuce, 0.0).is_ok());
        let opts = |f: &dyn Fn(&mut RatingOptions)| {
            let mut o = RatingOptions {
                resamples: 20,
                threads: 1,
                ..RatingOptions::default()
            };
            f(&mut o);
            o
        };
        for level in [0.0, 1.0, -0.5, 1.5] {
            let e = rate(3, &units, &opts(&|o| o.confidence = level)).unwrap_err();
            assert!(matches!(e, RatingError::BadOptions(_)), "{level}: {e}");
        }
        assert!(rate(3, &units, &opts(&|o| o.confidence = 0.5)).is_ok());
        // Agent 3 of 4 never played: neither it nor agent 4 (none) can be the anchor.
        for anchor in [3, 4] {
            let e = rate(4, &units, &opts(&|o| o.anchor = Some(anchor))).unwrap_err();
            assert_eq!(e, RatingError::BadAnchor(anchor));
        }
        assert_eq!(
            rate(4, &units, &opts(&|_| {})).unwrap_err(),
            RatingError::Absent(3)
        );
    }

    /// Without an anchor the agents' mean is 0; a narrower level gives a narrower interval
    /// inside the wider one, each around the estimate.
    #[test]
    fn the_mean_is_zero_and_levels_nest() {
        let units: Vec<Vec<Game>> = (0..60)
            .map(|i| {
                vec![g(
                    &[0, 1, 2],
                    &[[0, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]][i % 4],
                )]
            })
            .collect();
        let at = |confidence: f64| {
            rate(
                3,
                &units,
                &RatingOptions {
                    resamples: 400,
                    confidence,
                    threads: 2,
                    ..RatingOptions::default()
                },
            )
            .unwrap()
        };
        let (wide, narrow) = (at(0.95), at(0.5));
        let mean = wide.ratings.iter().map(|r| r.elo).sum::<f64>() / 3.0;
        assert!(mean.abs() < 1e-9, "{mean}");
        assert!(wide.ratings[0].elo > 0.0, "{wide:?}");
        for (w, n) in wide.ratings.iter().zip(&narrow.ratings) {
            let (wl, wh, nl, nh) = (
                w.low.unwrap(),
                w.high.unwrap(),
                n.low.unwrap(),
                n.high.unwrap(),
            );
            assert!(wl < nl && nl < nh && nh < wh, "{wl} {nl} {nh} {wh}");
            assert!(nl < n.elo && n.elo < nh, "{nl} {} {nh}", n.elo);
        }
    }

    /// Three units in a cycle (A ahead of B, B of C, C of A): a resample is strongly connected
    /// only when it draws each unit once (2/9 of them), and then it is the data. With alpha 0
    /// the others are counted and left out, so the interval is the estimate itself.
    #[test]
    fn disconnected_resamples_are_counted_and_left_out() {
        let units: Vec<Vec<Game>> = [[0usize, 1], [1, 2], [2, 0]]
            .iter()
            .map(|&[a, b]| vec![g(&[a, b], &[0, 1])])
            .collect();
        let r = rate(
            3,
            &units,
            &RatingOptions {
                model: Model::BradleyTerry,
                alpha: 0.0,
                resamples: 900,
                threads: 2,
                ..RatingOptions::default()
            },
        )
        .unwrap();
        let share = r.disconnected_resamples as f64 / 900.0;
        assert!((share - 7.0 / 9.0).abs() < 0.06, "{share}");
        for rating in &r.ratings {
            assert!(rating.elo.abs() < 1e-6, "{r:?}");
            assert!(
                rating.low.unwrap().abs() < 1e-6 && rating.high.unwrap().abs() < 1e-6,
                "{r:?}"
            );
        }
    }

    /// A group that never finished behind the rest is named with the rest, leaving out an agent
    /// that never played.
    #[test]
    fn an_unconnected_group_is_named_without_the_absent() {
        let units: Vec<Vec<Game>> = [[0usize, 1], [0, 2], [1, 2], [2, 1]]
            .iter()
            .map(|&[a, b]| vec![g(&[a, b], &[0, 1])])
            .collect();
        let e = fit(4, &units, Model::BradleyTerry, 0.0).unwrap_err();
        assert_eq!(
            e,
            RatingError::NotConnected {
                top: vec![0],
                rest: vec![1, 2]
            }
        );
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
