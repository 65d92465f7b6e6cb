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

use std::collections::BTreeMap;
use std::f64::consts::LN_10;
use std::fmt;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

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
    /// estimate does not exist.
    NotConnected,
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
            RatingError::NotConnected => write!(
                f,
                "the comparisons are not strongly connected (some agents never lost or never \
                 won against the others): no maximum-likelihood estimate; use alpha > 0"
            ),
            RatingError::BadOptions(m) => write!(f, "{m}"),
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

/// The sufficient statistics of some games: the weight with which each agent was chosen
/// (`wins`) and with which each distinct choice set was used (`uses`).
#[derive(Clone, Debug)]
struct Stats {
    wins: Vec<f64>,
    uses: Vec<f64>,
}

/// One unit reduced: (agent, weight chosen), (set, weight used), and its comparisons
/// (winner, loser), all sorted.
type UnitStats = (Vec<(usize, f64)>, Vec<(usize, f64)>, Vec<(usize, usize)>);

/// The data, reduced once: the distinct choice sets and each unit's statistics.
struct Design {
    agents: usize,
    /// Distinct choice sets, each as (agent, multiplicity) pairs in agent order.
    sets: Vec<Vec<(usize, f64)>>,
    units: Vec<UnitStats>,
    /// Seats played per agent.
    games: Vec<u64>,
}

impl Design {
    fn new(agents: usize, units: &[Unit], model: Model) -> Result<Design, RatingError> {
        let mut index: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
        let mut sets = Vec::new();
        let mut out = Vec::with_capacity(units.len());
        let mut games = vec![0u64; agents];
        for (u, unit) in units.iter().enumerate() {
            let mut wins: BTreeMap<usize, f64> = BTreeMap::new();
            let mut uses: BTreeMap<usize, f64> = BTreeMap::new();
            let mut beats: std::collections::BTreeSet<(usize, usize)> = Default::default();
            for (g, game) in unit.iter().enumerate() {
                let bad = |reason: &str| RatingError::BadGame {
                    unit: u,
                    game: g,
                    reason: reason.to_string(),
                };
                if game.agents.len() != game.places.len() {
                    return Err(bad("agents and places differ in length"));
                }
                if game.agents.len() < 2 {
                    return Err(bad("fewer than two seats"));
                }
                if game.agents.iter().any(|&a| a >= agents) {
                    return Err(bad("an agent index is out of range"));
                }
                for &a in &game.agents {
                    games[a] += 1;
                }
                let mut add = |chosen: usize, set: &[usize], w: f64| {
                    let mut key = vec![0u32; agents];
                    for &a in set {
                        key[a] += 1;
                        if a != chosen {
                            beats.insert((chosen, a));
                        }
                    }
                    let next = index.len();
                    let j = *index.entry(key).or_insert_with_key(|key| {
                        sets.push(
                            key.iter()
                                .enumerate()
                                .filter(|(_, m)| **m > 0)
                                .map(|(a, m)| (a, f64::from(*m)))
                                .collect(),
                        );
                        next
                    });
                    *wins.entry(chosen).or_default() += w;
                    *uses.entry(j).or_default() += w;
                };
                match model {
                    Model::PlackettLuce => choices_pl(game, &mut add),
                    Model::BradleyTerry => choices_bt(game, &mut add),
                }
            }
            out.push((
                wins.into_iter().collect(),
                uses.into_iter().collect(),
                beats.into_iter().collect(),
            ));
        }
        Ok(Design {
            agents,
            sets,
            units: out,
            games,
        })
    }

    /// The statistics of a resample (unit `u` counted `counts[u]` times; all once if `None`),
    /// and whether its comparisons are strongly connected over the agents that play.
    fn stats(&self, counts: Option<&[u32]>) -> (Stats, bool) {
        let n = self.agents;
        let mut s = Stats {
            wins: vec![0.0; n],
            uses: vec![0.0; self.sets.len()],
        };
        let mut beats = vec![vec![false; n]; n];
        for (u, (wins, uses, edges)) in self.units.iter().enumerate() {
            let c = counts.map_or(1.0, |c| f64::from(c[u]));
            if c == 0.0 {
                continue;
            }
            for &(a, w) in wins {
                s.wins[a] += c * w;
            }
            for &(j, w) in uses {
                s.uses[j] += c * w;
            }
            for &(a, b) in edges {
                beats[a][b] = true;
            }
        }
        let present: Vec<bool> = self.games.iter().map(|&g| g > 0).collect();
        let connected = reach_all(&beats, &present);
        (s, connected)
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
    /// halving, from θ = 0. With `alpha = 0` the solution is the one with mean 0.
    fn fit(&self, s: &Stats, alpha: f64) -> Vec<f64> {
        let n = self.agents;
        let present: Vec<bool> = self.games.iter().map(|&g| g > 0).collect();
        let mut theta = vec![0.0; n];
        let mut cur = self.objective(s, &theta, alpha, true);
        for _ in 0..200 {
            let mut a = cur.neg_hess.clone();
            if alpha == 0.0 {
                // The likelihood is flat along θ + c: pin the mean (the gradient has no
                // component along the ones, so the step does not either).
                for row in a.iter_mut() {
                    for x in row.iter_mut() {
                        *x += 1.0 / n as f64;
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
            let mean = theta.iter().sum::<f64>() / n as f64;
            theta.iter_mut().for_each(|x| *x -= mean);
        }
        theta
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
    if !(alpha >= 0.0 && alpha.is_finite()) {
        return Err(RatingError::BadOptions(format!(
            "the penalty alpha must be finite and at least 0, not {alpha}"
        )));
    }
    let design = Design::new(agents, units, model)?;
    let (s, connected) = design.stats(None);
    if alpha == 0.0 && !connected {
        return Err(RatingError::NotConnected);
    }
    Ok(design.fit(&s, alpha))
}

/// Rates `agents` agents from `units`: Elo relative to the anchor, with percentile bootstrap
/// intervals over units (resampled with replacement by a ChaCha8 stream from `opts.seed`).
pub fn rate(agents: usize, units: &[Unit], opts: &RatingOptions) -> Result<Ratings, RatingError> {
    if !(opts.alpha >= 0.0 && opts.alpha.is_finite()) {
        return Err(RatingError::BadOptions(format!(
            "the penalty alpha must be finite and at least 0, not {}",
            opts.alpha
        )));
    }
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(RatingError::BadOptions(format!(
            "the confidence must be in (0, 1), not {}",
            opts.confidence
        )));
    }
    let design = Design::new(agents, units, opts.model)?;
    if let Some(a) = opts.anchor
        && (a >= agents || design.games[a] == 0)
    {
        return Err(RatingError::BadAnchor(a));
    }
    if let Some(a) = (0..agents).find(|&a| design.games[a] == 0) {
        return Err(RatingError::Absent(a));
    }
    let (s, connected) = design.stats(None);
    if opts.alpha == 0.0 && !connected {
        return Err(RatingError::NotConnected);
    }
    let elo = |theta: &[f64]| -> Vec<f64> {
        let zero = match opts.anchor {
            Some(a) => theta[a],
            None => theta.iter().sum::<f64>() / theta.len() as f64,
        };
        theta.iter().map(|t| (t - zero) * ELO_PER_NAT).collect()
    };
    let point = elo(&design.fit(&s, opts.alpha));
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.resamples); agents];
    let mut disconnected = 0;
    if opts.resamples > 0 && !units.is_empty() {
        let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
        let m = units.len();
        let mut counts = vec![0u32; m];
        for _ in 0..opts.resamples {
            counts.iter_mut().for_each(|c| *c = 0);
            for _ in 0..m {
                counts[below(&mut rng, m as u64) as usize] += 1;
            }
            let (rs, ok) = design.stats(Some(&counts));
            if !ok {
                disconnected += 1;
                if opts.alpha == 0.0 {
                    continue;
                }
            }
            for (d, e) in draws.iter_mut().zip(elo(&design.fit(&rs, opts.alpha))) {
                d.push(e);
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
                games: design.games[a],
            }
        })
        .collect();
    Ok(Ratings {
        model: opts.model,
        anchor: opts.anchor,
        ratings,
        connected,
        resamples: if units.is_empty() { 0 } else { opts.resamples },
        disconnected_resamples: disconnected,
    })
}

/// Uniform in `0..n` (n ≥ 1) by rejection on 64-bit words (no modulo bias).
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    let zone = u64::MAX - u64::MAX % n;
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % n;
        }
    }
}

/// Whether the directed graph `beats` (restricted to `present`) is strongly connected.
fn reach_all(beats: &[Vec<bool>], present: &[bool]) -> bool {
    let n = beats.len();
    let Some(start) = (0..n).find(|&a| present[a]) else {
        return true;
    };
    for forward in [true, false] {
        let mut seen = vec![false; n];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(a) = stack.pop() {
            for b in 0..n {
                let e = if forward { beats[a][b] } else { beats[b][a] };
                if e && present[b] && !seen[b] {
                    seen[b] = true;
                    stack.push(b);
                }
            }
        }
        if (0..n).any(|a| present[a] && !seen[a]) {
            return false;
        }
    }
    true
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
