//! The N-Tuple Bandit Evolutionary Algorithm (Lucas, Liu and Perez-Liebana, CEC 2018), as the
//! TabletopGames framework's `ParameterSearch` runs it.
//!
//! The search works on grid indices. A model keeps, for each tuple of dims (every single dim,
//! every pair, and all dims together by default), the count and sum of the objective values
//! seen for each combination of the tuple's indices. Each step evaluates the current point,
//! adds its value to every tuple's statistics, draws `neighbours` mutations of the current
//! point, and moves to the one with the highest upper confidence bound
//!
//! `UCB(x) = mean over tuples seen of the tuple's mean at x
//!           + k_explore · mean over all tuples of sqrt(ln(1 + N) / (n_t(x) + epsilon))`
//!
//! with `N` the evaluations so far and `n_t(x)` the evaluations that shared x's indices on
//! tuple t (the paper's per-tuple UCB averaged over tuples; a tuple never seen at x adds no
//! mean and the largest exploration term). A mutation changes each dim with probability
//! 1/d (d the dims with more than one value) to a different value drawn uniformly, and one dim
//! drawn uniformly when that changed none, as TAG does.

use std::collections::{BTreeMap, BTreeSet};

use dhumbal_game::rng::{ChaChaSource, RandomSource};
use serde_json::json;

use super::{Optimizer, Point, Space, check_values, stream};

/// NTBEA's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct NtbeaSettings {
    /// The exploration constant k of the UCB, in units of the objective. It works best at
    /// about twice the standard deviation of one evaluation's noise
    /// ([`NtbeaSettings::k_explore_for_games`]). Default 0.3: TAG's default is 1.0 for
    /// evaluations of one game each (a win/loss in {0, 1}, standard deviation up to 0.5);
    /// an evaluation here is typically a win rate over several deals, and 0.3 suits about ten
    /// (standard deviation up to 0.16).
    pub k_explore: f64,
    /// Mutations of the current point scored by the model at each step (none is evaluated on
    /// games). Default 50, TAG's and the paper's. As in TAG, the number used is at most a
    /// quarter of the grid's points, and at least 5 (or this number, if smaller).
    pub neighbours: usize,
    /// Added to a tuple's count under the square root so that unseen combinations have a
    /// large but finite bonus. Default 0.1, TAG's.
    pub epsilon: f64,
    /// Model tuples: every single dim, every pair, every triple, all dims together. Default
    /// 1-tuples, 2-tuples and the full tuple (TAG's default; 3-tuples cost many more cells for
    /// little gain at small budgets).
    pub one_tuples: bool,
    pub two_tuples: bool,
    pub three_tuples: bool,
    pub full_tuple: bool,
    /// When the grid has at most this many points, the recommendation is the point with the
    /// best model mean over the whole grid among those whose every tuple except the full one
    /// has been seen (so it may be a point never evaluated, which the model's 1- and 2-tuples
    /// rank best); above it, only the points evaluated are considered, as in TAG. Default
    /// 10,000 (a full scan then costs about a millisecond). 0 always uses the points evaluated.
    pub recommend_grid_limit: u64,
}

impl NtbeaSettings {
    /// A `k_explore` for an objective that is a win rate over `games` games per evaluation:
    /// twice the largest standard deviation of such a rate, 2 · 0.5/√games = 1/√games (1.0 for
    /// one game per evaluation, TAG's setting and default; 0.1 for 100 games).
    pub fn k_explore_for_games(games: u64) -> f64 {
        1.0 / (games.max(1) as f64).sqrt()
    }
}

impl Default for NtbeaSettings {
    fn default() -> Self {
        NtbeaSettings {
            k_explore: 0.3,
            neighbours: 50,
            epsilon: 0.1,
            one_tuples: true,
            two_tuples: true,
            three_tuples: false,
            full_tuple: true,
            recommend_grid_limit: 10_000,
        }
    }
}

/// The stream number of NTBEA's ChaCha8 stream ("ntbe").
const STREAM_TAG: u64 = 0x6e74_6265_0000_0001;

/// An NTBEA run over `space` from `start` (snapped to the grid). Panics when the space is
/// malformed ([`Space::check`]) or a setting is out of range (k_explore or epsilon negative or
/// not finite, epsilon zero, no tuple kind).
pub fn ntbea(
    space: &Space,
    start: &Point,
    settings: &NtbeaSettings,
    seed: u64,
) -> Box<dyn Optimizer> {
    Box::new(Ntbea::new(space, start, settings, seed))
}

#[derive(Clone, Copy, Debug, Default)]
struct Stat {
    n: u64,
    sum: f64,
}

#[derive(Clone, Debug)]
struct Tuple {
    dims: Vec<usize>,
    cells: BTreeMap<Vec<u32>, Stat>,
}

impl Tuple {
    fn key(&self, x: &[u32]) -> Vec<u32> {
        self.dims.iter().map(|&d| x[d]).collect()
    }

    fn get(&self, x: &[u32]) -> Option<&Stat> {
        self.cells.get(&self.key(x))
    }
}

pub(super) struct Ntbea {
    space: Space,
    settings: NtbeaSettings,
    seed: u64,
    rng: ChaChaSource,
    sizes: Vec<u32>,
    /// Dims with more than one value (the ones a mutation may change).
    mutable: Vec<usize>,
    neighbours: usize,
    tuples: Vec<Tuple>,
    current: Vec<u32>,
    evaluations: u64,
    /// Points evaluated, in order of first evaluation, without repeats.
    sampled: Vec<Vec<u32>>,
    sampled_set: BTreeSet<Vec<u32>>,
}

impl Ntbea {
    pub(super) fn new(space: &Space, start: &Point, settings: &NtbeaSettings, seed: u64) -> Ntbea {
        if let Err(e) = space.check() {
            panic!("ntbea: {e}");
        }
        assert!(
            settings.k_explore.is_finite() && settings.k_explore >= 0.0,
            "ntbea: k_explore {} is not a finite number ≥ 0",
            settings.k_explore
        );
        assert!(
            settings.epsilon.is_finite() && settings.epsilon > 0.0,
            "ntbea: epsilon {} is not a finite number > 0",
            settings.epsilon
        );
        let d = space.dims.len();
        let mut tuples = Vec::new();
        let mut add = |dims: Vec<usize>| {
            if !tuples.iter().any(|t: &Tuple| t.dims == dims) {
                tuples.push(Tuple {
                    dims,
                    cells: BTreeMap::new(),
                });
            }
        };
        if settings.one_tuples {
            (0..d).for_each(|i| add(vec![i]));
        }
        if settings.two_tuples {
            for i in 0..d {
                (i + 1..d).for_each(|j| add(vec![i, j]));
            }
        }
        if settings.three_tuples {
            for i in 0..d {
                for j in i + 1..d {
                    (j + 1..d).for_each(|k| add(vec![i, j, k]));
                }
            }
        }
        if settings.full_tuple {
            add((0..d).collect());
        }
        assert!(!tuples.is_empty(), "ntbea: no model tuples selected");
        let sizes: Vec<u32> = space.dims.iter().map(|d| d.grid_len() as u32).collect();
        let mutable = (0..d).filter(|&i| sizes[i] > 1).collect();
        let quarter = (space.grid_size() / 4).min(usize::MAX as u128) as usize;
        let neighbours = settings.neighbours.min(quarter.max(5)).max(1);
        let current = space.indices(start).into_iter().map(|i| i as u32).collect();
        Ntbea {
            space: space.clone(),
            settings: settings.clone(),
            seed,
            rng: stream(seed, STREAM_TAG),
            sizes,
            mutable,
            neighbours,
            tuples,
            current,
            evaluations: 0,
            sampled: Vec::new(),
            sampled_set: BTreeSet::new(),
        }
    }

    /// The model's mean at `x`: the mean over tuples seen at x of their mean there, or `None`
    /// when no tuple has seen x.
    fn mean_estimate(&self, x: &[u32]) -> Option<f64> {
        let (mut total, mut count) = (0.0, 0u32);
        for t in &self.tuples {
            if let Some(s) = t.get(x) {
                total += s.sum / s.n as f64;
                count += 1;
            }
        }
        (count > 0).then(|| total / f64::from(count))
    }

    fn upper_bound(&self, x: &[u32]) -> f64 {
        let log_n = (1.0 + self.evaluations as f64).ln();
        let (mut mean_total, mut mean_count, mut explore) = (0.0, 0u32, 0.0);
        for t in &self.tuples {
            let n = match t.get(x) {
                Some(s) => {
                    mean_total += s.sum / s.n as f64;
                    mean_count += 1;
                    s.n
                }
                None => 0,
            };
            explore += (log_n / (n as f64 + self.settings.epsilon)).sqrt();
        }
        let mean = if mean_count > 0 {
            mean_total / f64::from(mean_count)
        } else {
            0.0
        };
        mean + self.settings.k_explore * explore / self.tuples.len() as f64
    }

    /// A uniformly drawn grid value of dim `d` other than `from`.
    fn other_value(&mut self, d: usize, from: u32) -> u32 {
        let v = self.rng.below(self.sizes[d] - 1);
        if v >= from { v + 1 } else { v }
    }

    fn mutate(&mut self) -> Vec<u32> {
        let mut x = self.current.clone();
        if self.mutable.is_empty() {
            return x;
        }
        let p = 1.0 / self.mutable.len() as f64;
        let mut changed = false;
        for k in 0..self.mutable.len() {
            let d = self.mutable[k];
            if self.rng.random() < p {
                x[d] = self.other_value(d, self.current[d]);
                changed = true;
            }
        }
        if !changed {
            let d = self.mutable[self.rng.below(self.mutable.len() as u32) as usize];
            x[d] = self.other_value(d, self.current[d]);
        }
        x
    }

    /// The recommendation as grid indices.
    fn best(&self) -> Vec<u32> {
        if self.evaluations == 0 {
            return self.current.clone();
        }
        let mut best: Option<(f64, Vec<u32>)> = None;
        let mut consider = |x: &[u32], value: f64| {
            if best.as_ref().is_none_or(|(b, _)| value > *b) {
                best = Some((value, x.to_vec()));
            }
        };
        if self.space.grid_size() <= u128::from(self.settings.recommend_grid_limit) {
            let d = self.sizes.len();
            let mut x = vec![0u32; d];
            'grid: loop {
                let full = |t: &Tuple| t.dims.len() == d;
                if self.tuples.iter().all(|t| full(t) || t.get(&x).is_some())
                    && let Some(m) = self.mean_estimate(&x)
                {
                    consider(&x, m);
                }
                // Next grid point, last dim fastest.
                for i in (0..d).rev() {
                    x[i] += 1;
                    if x[i] < self.sizes[i] {
                        continue 'grid;
                    }
                    x[i] = 0;
                }
                break;
            }
        }
        for x in &self.sampled {
            if let Some(m) = self.mean_estimate(x) {
                consider(x, m);
            }
        }
        best.map_or_else(|| self.current.clone(), |(_, x)| x)
    }

    fn point(&self, x: &[u32]) -> Point {
        let idx: Vec<usize> = x.iter().map(|&i| i as usize).collect();
        self.space.point_of(&idx)
    }
}

impl Optimizer for Ntbea {
    fn ask(&mut self) -> Vec<Point> {
        vec![self.point(&self.current)]
    }

    fn tell(&mut self, values: &[f64]) {
        check_values(values, 1, "ntbea");
        let x = self.current.clone();
        for t in &mut self.tuples {
            let key = t.key(&x);
            let s = t.cells.entry(key).or_default();
            s.n += 1;
            s.sum += values[0];
        }
        self.evaluations += 1;
        if self.sampled_set.insert(x.clone()) {
            self.sampled.push(x);
        }
        let mut next: Option<(f64, Vec<u32>)> = None;
        for _ in 0..self.neighbours {
            let y = self.mutate();
            let ucb = self.upper_bound(&y);
            if next.as_ref().is_none_or(|(b, _)| ucb > *b) {
                next = Some((ucb, y));
            }
        }
        if let Some((_, y)) = next {
            self.current = y;
        }
    }

    fn recommend(&self) -> Point {
        self.point(&self.best())
    }

    fn describe(&self) -> serde_json::Value {
        let s = &self.settings;
        json!({
            "optimizer": "ntbea",
            "source": "Lucas, Liu and Perez-Liebana, CEC 2018; TabletopGames ParameterSearch",
            "seed": self.seed,
            "k_explore": s.k_explore,
            "neighbours": s.neighbours,
            "neighbours_used": self.neighbours,
            "epsilon": s.epsilon,
            "tuples": {
                "one": s.one_tuples,
                "two": s.two_tuples,
                "three": s.three_tuples,
                "full": s.full_tuple,
                "count": self.tuples.len(),
            },
            "recommend_grid_limit": s.recommend_grid_limit,
            "grid_size": self.space.grid_size().min(u128::from(u64::MAX)) as u64,
            "evaluations": self.evaluations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        check_deterministic_and_replayable, gaussian, int, mixed_space, noise, real, record,
    };
    use super::super::{Dim, Optimizer, Point, Space};
    use super::*;

    /// 5 × 5 × 5 × 4 = 500 grid points, one dim of each kind plus an Int whose `hi` is off
    /// the grid.
    fn space() -> Space {
        Space {
            dims: vec![
                int(0, 8, 2),
                real(0.0, 1.0, 5),
                Dim::Choice { n: 5 },
                int(-3, 4, 2),
            ],
        }
    }

    const OPTIMUM: [f64; 4] = [6.0, 0.25, 2.0, 1.0];
    const START: [f64; 4] = [0.0, 1.0, 4.0, -3.0];

    /// A separable quadratic in each dim's normalized position, 0.7 at the optimum, falling by
    /// 0.03 to 0.2 per dim at one grid step away.
    fn objective(space: &Space, p: &[f64]) -> f64 {
        let weights = [0.5, 0.6, 0.5, 0.3];
        let mut f = 0.7;
        for (i, d) in space.dims.iter().enumerate() {
            let n = (d.grid_len() - 1) as f64;
            let t = d.nearest_index(p[i]) as f64 / n;
            let o = d.nearest_index(OPTIMUM[i]) as f64 / n;
            f -= weights[i] * (t - o) * (t - o);
        }
        f
    }

    /// NTBEA's recommendation after `budget` noisy evaluations.
    fn run_ntbea(seed: u64, budget: usize, sd: f64, settings: &NtbeaSettings) -> Point {
        let space = space();
        let mut opt = ntbea(&space, &START.to_vec(), settings, seed);
        let mut rng = noise(seed);
        for _ in 0..budget {
            let asked = opt.ask();
            let values: Vec<f64> = asked
                .iter()
                .map(|p| objective(&space, p) + sd * gaussian(&mut rng))
                .collect();
            opt.tell(&values);
        }
        opt.recommend()
    }

    /// Random search with the same budget: uniform grid points, the best single evaluation.
    fn run_random(seed: u64, budget: usize, sd: f64) -> Point {
        let space = space();
        let mut rng = stream(seed, 99);
        let mut nrng = noise(seed);
        let mut best: Option<(f64, Point)> = None;
        for _ in 0..budget {
            let p: Point = space
                .dims
                .iter()
                .map(|d| d.grid_value(rng.below(d.grid_len() as u32) as usize))
                .collect();
            let v = objective(&space, &p) + sd * gaussian(&mut nrng);
            if best.as_ref().is_none_or(|(b, _)| v > *b) {
                best = Some((v, p));
            }
        }
        best.unwrap().1
    }

    /// In how many of `seeds` runs NTBEA, and random search, found the optimum (printed).
    fn hits(seeds: u64, budget: usize, sd: f64, settings: &NtbeaSettings) -> (usize, usize) {
        let ntbea_hits = (0..seeds)
            .filter(|&s| run_ntbea(s, budget, sd, settings) == OPTIMUM)
            .count();
        let random_hits = (0..seeds)
            .filter(|&s| run_random(s, budget, sd) == OPTIMUM)
            .count();
        eprintln!(
            "optimum found in {ntbea_hits}/{seeds} runs by NTBEA, {random_hits}/{seeds} by random search"
        );
        (ntbea_hits, random_hits)
    }

    #[test]
    fn finds_the_optimum_of_a_noisy_500_point_space_where_random_search_does_not() {
        // Noise sd 0.05, so k_explore = 2 × 0.05 (as `k_explore_for_games` would give for
        // evaluations of 100 games).
        let (seeds, budget, sd) = (20u64, 300usize, 0.05);
        let settings = NtbeaSettings {
            k_explore: 0.1,
            ..NtbeaSettings::default()
        };
        let (ntbea_hits, random_hits) = hits(seeds, budget, sd, &settings);
        // Measured: 20/20 and 2/20 (100/100 and 12/100 over 100 seeds).
        assert!(
            ntbea_hits >= 18,
            "NTBEA found the optimum in {ntbea_hits}/{seeds} runs"
        );
        assert!(
            random_hits <= 6,
            "random search found it in {random_hits}/{seeds} runs"
        );
    }

    #[test]
    fn the_default_settings_find_the_optimum_under_more_noise_with_more_evaluations() {
        // Noise sd 0.15 (a win rate over about ten games), the default k_explore.
        let (seeds, budget, sd) = (20u64, 1000usize, 0.15);
        let settings = NtbeaSettings::default();
        let (hits, random_hits) = hits(seeds, budget, sd, &settings);
        assert!(hits >= 15, "NTBEA found the optimum in {hits}/{seeds} runs");
        assert!(
            random_hits <= 4,
            "random search found it in {random_hits}/{seeds} runs"
        );
    }

    #[test]
    fn over_a_small_grid_the_recommendation_may_be_a_point_never_evaluated() {
        let space = Space {
            dims: vec![Dim::Choice { n: 3 }, Dim::Choice { n: 3 }],
        };
        let told = [
            ([0, 0], 0.2),
            ([2, 0], 0.6),
            ([0, 2], 0.6),
            ([2, 1], 0.5),
            ([1, 2], 0.5),
        ];
        let run = |limit: u64| {
            let settings = NtbeaSettings {
                recommend_grid_limit: limit,
                ..NtbeaSettings::default()
            };
            let mut o = Ntbea::new(&space, &vec![0.0, 0.0], &settings, 1);
            for (x, v) in told {
                o.current = x.to_vec();
                o.tell(&[v]);
            }
            o.recommend()
        };
        // (2, 2): both 1-tuple means 0.55; every evaluated point's estimate is 0.517 or less.
        assert_eq!(run(100), vec![2.0, 2.0]);
        assert_eq!(run(0), vec![2.0, 0.0]);
    }

    #[test]
    fn deterministic_replayable_and_on_the_grid() {
        let space = mixed_space(real(0.5, 2.5, 3));
        let (start, settings) = (vec![5.0, 0.0, 3.0, 5.0, 0.5], NtbeaSettings::default());
        let (space, start, settings) = (&space, &start, &settings);
        let make = |seed| move || ntbea(space, start, settings, seed);
        check_deterministic_and_replayable(space, make(42), true);
        // Another seed takes another path.
        assert_ne!(record(space, make(42), 30).0, record(space, make(43), 30).0);
    }

    #[test]
    fn k_explore_for_games_is_one_over_the_root_of_the_games() {
        for (games, k) in [(0, 1.0), (1, 1.0), (4, 0.5), (100, 0.1), (400, 0.05)] {
            assert_eq!(
                NtbeaSettings::k_explore_for_games(games),
                k,
                "{games} games"
            );
        }
    }

    fn three_by_three() -> Space {
        Space {
            dims: vec![Dim::Choice { n: 3 }, Dim::Choice { n: 3 }],
        }
    }

    /// NTBEA over 3 × 3 choices with the default settings (tuples: each dim, and the pair,
    /// which is the full tuple), told `told` at the points given.
    fn told(told: &[([u32; 2], f64)]) -> Ntbea {
        let mut o = Ntbea::new(
            &three_by_three(),
            &vec![0.0, 0.0],
            &NtbeaSettings::default(),
            1,
        );
        for (x, v) in told {
            o.current = x.to_vec();
            o.tell(&[*v]);
        }
        o
    }

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() < 1e-12,
            "{got} where {want} was expected"
        );
    }

    #[test]
    fn the_model_mean_averages_the_means_of_the_tuples_that_have_seen_a_point() {
        let o = told(&[([0, 0], 0.2), ([0, 0], 0.5), ([1, 2], 0.8)]);
        assert_eq!(o.tuples.len(), 3);
        assert_eq!(o.evaluations, 3);
        // (0, 0) told 0.2 and 0.5: every tuple's mean there is 0.35.
        close(o.mean_estimate(&[0, 0]).unwrap(), 0.35);
        close(o.mean_estimate(&[1, 2]).unwrap(), 0.8);
        // (0, 2): dim 0 at 0 has 0.35, dim 1 at 2 has 0.8; the pair has not seen it.
        close(o.mean_estimate(&[0, 2]).unwrap(), (0.35 + 0.8) / 2.0);
        // (2, 0): only dim 1 at 0 has been seen.
        close(o.mean_estimate(&[2, 0]).unwrap(), 0.35);
        // (2, 1): no tuple has seen it.
        assert_eq!(o.mean_estimate(&[2, 1]), None);
    }

    #[test]
    fn the_upper_bound_adds_k_times_the_mean_exploration_term_over_all_tuples() {
        // Before any evaluation: no mean and ln(1 + 0) = 0, so every bound is 0.
        let fresh = told(&[]);
        for x in [[0, 0], [2, 1]] {
            assert_eq!(fresh.mean_estimate(&x), None);
            assert_eq!(fresh.upper_bound(&x), 0.0);
        }
        let o = told(&[([0, 0], 0.2), ([0, 0], 0.5), ([1, 2], 0.8)]);
        // N = 3 evaluations; k_explore 0.3, epsilon 0.1 (the defaults); three tuples.
        let term = |n: f64| (4.0f64.ln() / (n + 0.1)).sqrt();
        // (0, 0): each tuple has seen it twice.
        close(o.upper_bound(&[0, 0]), 0.35 + 0.3 * term(2.0));
        // (0, 2): dim 0 at 0 twice, dim 1 at 2 once, the pair never.
        close(
            o.upper_bound(&[0, 2]),
            0.575 + 0.3 * (term(2.0) + term(1.0) + term(0.0)) / 3.0,
        );
        // (2, 1): nothing seen, mean 0, every tuple's largest term.
        close(o.upper_bound(&[2, 1]), 0.3 * term(0.0));
        // By hand: sqrt(ln 4 / 0.1) = sqrt(20 ln 2) = 3.7233, times 0.3.
        close(o.upper_bound(&[2, 1]), 0.3 * (20.0 * 2.0f64.ln()).sqrt());
        assert!((o.upper_bound(&[2, 1]) - 1.116_99).abs() < 1e-5);
    }

    #[test]
    fn other_value_draws_each_other_value_uniformly() {
        let space = Space {
            dims: vec![Dim::Choice { n: 4 }, int(0, 1, 1)],
        };
        let mut o = Ntbea::new(&space, &vec![0.0, 0.0], &NtbeaSettings::default(), 5);
        let draws = 6000;
        for from in 0..4u32 {
            let mut counts = [0usize; 4];
            for _ in 0..draws {
                let v = o.other_value(0, from);
                assert!(v < 4, "{v}");
                counts[v as usize] += 1;
            }
            assert_eq!(counts[from as usize], 0, "from {from}: {counts:?}");
            // 2,000 expected for each of the three others; a standard deviation is 37.
            for v in (0..4).filter(|&v| v != from) {
                assert!(
                    counts[v as usize].abs_diff(draws / 3) < 150,
                    "from {from}: {counts:?}"
                );
            }
        }
        // Of two values, always the other.
        for from in 0..2u32 {
            for _ in 0..100 {
                assert_eq!(o.other_value(1, from), 1 - from);
            }
        }
    }

    #[test]
    fn a_mutation_changes_each_dim_with_probability_one_over_d_and_at_least_one() {
        // Four dims with several values (d = 4) and one with a single value.
        let space = Space {
            dims: vec![
                Dim::Choice { n: 3 },
                int(0, 8, 2),
                real(0.0, 1.0, 4),
                Dim::Choice { n: 2 },
                int(5, 7, 3),
            ],
        };
        let start = vec![1.0, 8.0, 0.0, 1.0, 5.0];
        let mut o = Ntbea::new(&space, &start, &NtbeaSettings::default(), 9);
        let parent = o.current.clone();
        assert_eq!(parent, [1, 4, 0, 1, 0]);
        let draws = 20_000;
        let (mut by_dim, mut by_count) = ([0usize; 5], [0usize; 6]);
        for _ in 0..draws {
            let y = o.mutate();
            assert!(space.contains(&o.point(&y), true), "{y:?}");
            let changed: Vec<usize> = (0..5).filter(|&i| y[i] != parent[i]).collect();
            assert!(!changed.is_empty(), "a mutation equal to its parent");
            changed.iter().for_each(|&i| by_dim[i] += 1);
            by_count[changed.len()] += 1;
        }
        // Mutating does not move the current point.
        assert_eq!(o.current, parent);
        assert_eq!(by_dim[4], 0, "the single value changed");
        // Each dim with probability p = 1/4, and when none was (probability q^4, q = 3/4)
        // one of the four: p + q^4/4 = 0.3291 each.
        let (p, q) = (0.25, 0.75f64);
        let freq = |n: usize| n as f64 / draws as f64;
        for (i, &n) in by_dim[..4].iter().enumerate() {
            assert!(
                (freq(n) - (p + q.powi(4) / 4.0)).abs() < 0.015,
                "dim {i}: {by_dim:?}"
            );
        }
        // The number changed: Binomial(4, 1/4), with 0 counted as 1.
        let want = [
            0.0,
            4.0 * p * q.powi(3) + q.powi(4),
            6.0 * p * p * q * q,
            4.0 * p.powi(3) * q,
            p.powi(4),
            0.0,
        ];
        for k in 0..6 {
            assert!(
                (freq(by_count[k]) - want[k]).abs() < 0.012,
                "{k} changed: {by_count:?}"
            );
        }
    }

    #[test]
    fn a_step_moves_to_the_first_neighbour_with_the_highest_bound() {
        // A twin with the same seed draws the step's neighbours (mutations of the same current
        // point from the same stream); ties in the bound are common here (each mutation that
        // changes only dim 0 has the same bound), and the first drawn wins.
        let mut distinct_ties = 0;
        for seed in 0..40 {
            let settings = NtbeaSettings::default();
            let mut o = Ntbea::new(&three_by_three(), &vec![0.0, 0.0], &settings, seed);
            let mut twin = Ntbea::new(&three_by_three(), &vec![0.0, 0.0], &settings, seed);
            assert_eq!(o.neighbours, 5);
            let drawn: Vec<Vec<u32>> = (0..5).map(|_| twin.mutate()).collect();
            o.tell(&[0.5]);
            let bounds: Vec<f64> = drawn.iter().map(|y| o.upper_bound(y)).collect();
            let top = bounds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let first = &drawn[bounds.iter().position(|&b| b == top).unwrap()];
            let last = &drawn[bounds.iter().rposition(|&b| b == top).unwrap()];
            assert_eq!(&o.current, first, "seed {seed}: {drawn:?} {bounds:?}");
            distinct_ties += usize::from(first != last);
        }
        assert!(
            distinct_ties >= 5,
            "{distinct_ties} seeds with distinct ties"
        );
    }

    #[test]
    fn describe_gives_the_settings_and_the_run_so_far() {
        let settings = NtbeaSettings {
            k_explore: 0.25,
            neighbours: 7,
            epsilon: 0.5,
            three_tuples: true,
            recommend_grid_limit: 99,
            ..NtbeaSettings::default()
        };
        let mut o = ntbea(&space(), &START.to_vec(), &settings, 11);
        for v in [0.1, 0.9] {
            o.ask();
            o.tell(&[v]);
        }
        assert_eq!(
            o.describe(),
            json!({
                "optimizer": "ntbea",
                "source": "Lucas, Liu and Perez-Liebana, CEC 2018; TabletopGames ParameterSearch",
                "seed": 11,
                "k_explore": 0.25,
                "neighbours": 7,
                "neighbours_used": 7,
                "epsilon": 0.5,
                // 4 single dims, 6 pairs, 4 triples and the whole.
                "tuples": {"one": true, "two": true, "three": true, "full": true, "count": 15},
                "recommend_grid_limit": 99,
                "grid_size": 500,
                "evaluations": 2,
            })
        );
        // On 9 points at most a quarter, but at least 5, are scored; the pair is the whole.
        let small = ntbea(
            &three_by_three(),
            &vec![0.0, 0.0],
            &NtbeaSettings::default(),
            3,
        )
        .describe();
        assert_eq!(small["neighbours"], 50);
        assert_eq!(small["neighbours_used"], 5);
        assert_eq!(small["tuples"]["count"], 3);
        assert_eq!(small["grid_size"], 9);
        assert_eq!(small["evaluations"], 0);
        assert_eq!(small["k_explore"], 0.3);
    }

    #[test]
    #[should_panic(expected = "ntbea: told 2 values for an ask of 1 points")]
    fn a_tell_of_two_values_panics() {
        let mut o = ntbea(&space(), &START.to_vec(), &NtbeaSettings::default(), 1);
        o.ask();
        o.tell(&[0.5, 0.5]);
    }

    #[test]
    #[should_panic(expected = "ntbea: told a value that is not finite")]
    fn a_tell_of_nan_panics() {
        let mut o = ntbea(&space(), &START.to_vec(), &NtbeaSettings::default(), 1);
        o.ask();
        o.tell(&[f64::NAN]);
    }
}
