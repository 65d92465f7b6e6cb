//! From accumulated moments to the statistics of a stage: per-agent metrics with intervals,
//! pairwise tests with adjusted p-values and effect sizes, power and the design's variance
//! reduction. Everything here is plain data that serialises to `stats.json`.

use serde::Serialize;

use super::Definitions;
use super::load::StageInfo;
use super::metrics::{Accumulated, AgentAcc, CALL_SUCCESS, GAME_WIN, RoundMetric, WinCount};
use super::power;
use super::stats::{
    self, Cluster, Correlation, Moments, PooledSd, TestResult, bonferroni, cohen_d, holm,
    mean_interval, normal_interval, pearson, percentile, pooled_sd, wilson,
};

/// A compared metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Win,
    Economic,
    Calls,
    CallSuccess,
    Cards,
    HandValue,
    DecisionTime,
    GameWin,
}

/// What one observation of a metric is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Round,
    Call,
    Game,
}

impl Metric {
    /// The metric's key in `stats.json` and the CSV tables.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Win => "win",
            Metric::Economic => "economic",
            Metric::Calls => "calls",
            Metric::CallSuccess => "call_success",
            Metric::Cards => "cards_discarded",
            Metric::HandValue => "hand_value",
            Metric::DecisionTime => "decision_time_us",
            Metric::GameWin => "game_win",
        }
    }

    /// The paper's name for the same comparison (its `statistical_analysis.csv` columns).
    pub fn paper_key(self) -> Option<&'static str> {
        match self {
            Metric::Win => Some("win"),
            Metric::Economic => Some("economic"),
            Metric::Calls => Some("jhyap"),
            Metric::CallSuccess => Some("risk"),
            Metric::Cards => Some("cards"),
            _ => None,
        }
    }

    /// A heading for tables and figure panels.
    pub fn label(self, points: bool) -> &'static str {
        match self {
            Metric::Win => "Win rate",
            Metric::Economic if points => "Economic (−points/round)",
            Metric::Economic => "Economic (coins/round)",
            Metric::Calls => "Calls per round",
            Metric::CallSuccess => "Call success",
            Metric::Cards => "Cards discarded/round",
            Metric::HandValue => "Final hand value",
            Metric::DecisionTime => "Decision time (µs)",
            Metric::GameWin => "Game win rate",
        }
    }

    /// A short name for heatmap panels, which can be narrow.
    pub fn short_label(self) -> &'static str {
        match self {
            Metric::Win => "Win",
            Metric::Economic => "Economic",
            Metric::Calls => "Calls",
            Metric::CallSuccess => "Call success",
            Metric::Cards => "Cards",
            Metric::HandValue => "Hand value",
            Metric::DecisionTime => "Decision time",
            Metric::GameWin => "Game win",
        }
    }

    pub fn level(self) -> Level {
        match self {
            Metric::CallSuccess => Level::Call,
            Metric::GameWin => Level::Game,
            _ => Level::Round,
        }
    }

    fn round_metric(self) -> Option<RoundMetric> {
        match self {
            Metric::Win => Some(RoundMetric::Win),
            Metric::Economic => Some(RoundMetric::Economic),
            Metric::Calls => Some(RoundMetric::Calls),
            Metric::Cards => Some(RoundMetric::Cards),
            Metric::HandValue => Some(RoundMetric::HandValue),
            Metric::DecisionTime => Some(RoundMetric::DecisionTime),
            _ => None,
        }
    }

    /// Index into the per-deal block moments, where a paired analysis exists.
    fn block_index(self) -> Option<usize> {
        match self {
            Metric::GameWin => Some(GAME_WIN),
            Metric::CallSuccess => None,
            m => m.round_metric().map(RoundMetric::index),
        }
    }
}

/// Settings of an analysis.
#[derive(Clone, Debug, Serialize)]
pub struct Options {
    pub definitions: Definitions,
    /// Family-wise significance level.
    pub alpha: f64,
    /// Target power for sample sizes and minimum detectable effects.
    pub power: f64,
    /// The win-rate difference of interest (0.05 = 5 percentage points).
    pub delta: f64,
    /// Whether to draw figures.
    #[serde(skip)]
    pub figures: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            definitions: Definitions::Ours,
            alpha: 0.05,
            power: 0.8,
            delta: 0.05,
            figures: true,
        }
    }
}

/// Mean, spread and interval of a metric for one agent.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub n: u64,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    /// 95% interval of the mean with the units of analysis (deals, games) as clusters, so
    /// that rounds of one deal or game are not counted as independent: a t interval on G - 1
    /// degrees of freedom with the cluster-robust standard error (with one round per unit,
    /// the ordinary t interval).
    pub ci95: Option<[f64; 2]>,
    pub units: u64,
}

fn summary(round: &Moments, unit: &Cluster) -> Summary {
    Summary {
        n: round.n,
        mean: round.mean(),
        sd: round.sd(),
        ci95: unit.interval(0.95).map(|(l, h)| [l, h]),
        units: unit.g,
    }
}

/// A count of successes (wins, successful calls) with its intervals. Every interval is
/// `null` when there is nothing to estimate (no rounds, no calls).
#[derive(Clone, Debug, Serialize)]
pub struct Rate {
    pub n: u64,
    pub k: u64,
    pub rate: Option<f64>,
    /// The primary 95% interval, the one tables and figures show; how it was computed is
    /// `ci95_method`.
    pub ci95: Option<[f64; 2]>,
    /// `wilson` (Wilson score interval, observations independent), `normal` (the paper's
    /// eq. 6, `--definitions paper`), or `deal` / `game` (the cluster-robust t interval with
    /// deals or games as units: `ci95_units`).
    pub ci95_method: &'static str,
    /// Wilson score interval, treating every observation (round, call, game) as independent.
    pub ci95_wilson: Option<[f64; 2]>,
    /// The paper's eq. 6: p ± 1.96·sqrt(p(1-p)/n).
    pub ci95_normal: Option<[f64; 2]>,
    /// Blocked designs (`rotate`/`permute` seating, point games): the cluster-robust t
    /// interval with deals (games) as units, clipped to [0, 1] (when the rate is 0 or 1, whose
    /// cluster variance is 0: Wilson's with the units as observations); `null` otherwise or
    /// with fewer than two units.
    pub ci95_units: Option<[f64; 2]>,
    /// Units (deals, games) behind `ci95_units`.
    pub units: Option<u64>,
}

/// How the primary interval of a rate is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Primary {
    /// Wilson: observations independent (coin scoring with `fixed` or `random` seating).
    Wilson,
    /// The paper's normal interval (its win rate, `--definitions paper`).
    Normal,
    /// The cluster-robust interval with this unit (`deal` or `game`) as clusters.
    Units(&'static str),
}

/// `units`: the per-deal (per-game) clusters of the same count, in blocked designs only.
fn rate(k: u64, n: u64, units: Option<&Cluster>, primary: Primary) -> Rate {
    let ci95_wilson = wilson(k, n, 0.95).map(|(l, h)| [l, h]);
    let ci95_normal = normal_interval(k, n, 1.96).map(|(l, h)| [l, h]);
    let ci95_units = units.filter(|_| n > 0).and_then(|c| {
        if k == 0 || k == n {
            // Every observation 0 (or 1): the cluster variance is 0 and the t interval would
            // collapse to a point. Wilson's with the G units as the observations instead: the
            // largest design effect clustering can have.
            wilson(if k == 0 { 0 } else { c.g }, c.g, 0.95)
        } else {
            c.interval(0.95)
        }
        .map(|(l, h)| [l.max(0.0), h.min(1.0)])
    });
    let (ci95, ci95_method) = match primary {
        Primary::Wilson => (ci95_wilson, "wilson"),
        Primary::Normal => (ci95_normal, "normal"),
        Primary::Units(unit) => (ci95_units, unit),
    };
    Rate {
        n,
        k,
        rate: (n > 0).then(|| k as f64 / n as f64),
        ci95,
        ci95_method,
        ci95_wilson,
        ci95_normal,
        ci95_units,
        units: units.filter(|_| ci95_units.is_some()).map(|c| c.g),
    }
}

/// Decision time of one agent.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionTime {
    /// Decisions timed (all of them, or those of the sampled deals).
    pub decisions: u64,
    /// Total time over total decisions (exact; weighted by decisions, so it need not lie
    /// between the median and the 95th percentile below).
    pub mean_us: Option<f64>,
    /// Median of the per-round mean time per decision (single decisions are not recorded).
    pub median_us: Option<f64>,
    /// 95th percentile of the same per-round distribution.
    pub p95_us: Option<f64>,
    /// Rounds with decisions: the per-round distribution's size.
    pub rounds: u64,
}

/// Win rate in one seat or starting position.
#[derive(Clone, Debug, Serialize)]
pub struct Position {
    pub position: usize,
    #[serde(flatten)]
    pub win: Rate,
}

fn positions(counts: &[WinCount], units: &[Cluster], primary: Primary) -> Vec<Position> {
    let clustered = matches!(primary, Primary::Units(_));
    counts
        .iter()
        .enumerate()
        .map(|(position, c)| Position {
            position,
            win: rate(
                c.wins,
                c.rounds,
                units.get(position).filter(|_| clustered),
                primary,
            ),
        })
        .collect()
}

/// One agent's metrics.
#[derive(Clone, Debug, Serialize)]
pub struct AgentMetrics {
    pub agent: String,
    pub kind: String,
    pub slot: usize,
    pub rounds: u64,
    /// Win rate per round; in blocked designs its primary interval is by deal (game).
    pub win: Rate,
    pub economic: Summary,
    pub calls: u64,
    pub calls_per_round: Summary,
    /// Successful calls over calls; in blocked designs its primary interval is by deal
    /// (game), the calls of one deal being clustered.
    pub call_success: Rate,
    pub cards_discarded_per_round: Summary,
    pub turns_per_round: Summary,
    pub final_hand_value: Summary,
    pub decision_time: Option<DecisionTime>,
    /// The paper's risk assessment (eq. 9): Pearson's r between the hand value at a call and
    /// the call's success, over this agent's calls.
    pub risk: Option<Correlation>,
    pub by_seat: Vec<Position>,
    pub by_start_position: Vec<Position>,
    /// Point games (each arrangement of a game counts once).
    pub games: Option<Rate>,
}

/// One test of one pair on one metric.
#[derive(Clone, Debug, Serialize)]
pub struct Pairwise {
    pub metric: &'static str,
    /// The paper's name for the metric, where it has one.
    pub paper_metric: Option<&'static str>,
    pub a: String,
    pub b: String,
    /// `welch` (unpaired, the paper's) or `paired` (per-unit differences).
    pub test: &'static str,
    pub unit: &'static str,
    pub n_a: u64,
    pub n_b: u64,
    pub mean_a: Option<f64>,
    pub mean_b: Option<f64>,
    pub difference: Option<f64>,
    pub statistic: Option<f64>,
    pub df: Option<f64>,
    pub p: Option<f64>,
    pub p_bonferroni: Option<f64>,
    pub p_holm: Option<f64>,
    /// Stars on the adjusted p named in `stars_on`.
    pub stars: &'static str,
    pub effect: Option<f64>,
    /// `cohen_d` (pooled SD, eq. 11-12) or `cohen_dz` (SD of the differences).
    pub effect_name: &'static str,
    /// Paired tests: variance of the mean difference under this design (paired unit means)
    /// over what independent rounds would give (Welch's s_a²/n_a + s_b²/n_b on rounds). Below
    /// 1 the design removed variance; above 1 it added some (agents at one table are
    /// negatively correlated, or the arrangements of one deal repeat its information).
    pub variance_ratio: Option<f64>,
    /// Paired tests: variance of the unit differences over the sum of the two agents'
    /// unit-mean variances: what pairing the same units removes (1 - 2·cov/(var_a + var_b)).
    pub pairing_ratio: Option<f64>,
    /// Smallest difference (metric units) this test detects with the target power at the
    /// Bonferroni level alpha/k.
    pub mde: Option<f64>,
    /// Win metrics: power to detect a difference of `delta` at alpha/k.
    pub power_at_delta: Option<f64>,
    /// The test the stars and the figures use for this metric.
    pub primary: bool,
}

/// The design and how much the pairing helped.
#[derive(Clone, Debug, Serialize)]
pub struct Design {
    pub seating: &'static str,
    pub players: usize,
    pub arrangements: u64,
    pub scoring: &'static str,
    pub session: Option<u32>,
    pub seed: Option<u64>,
    pub rounds: u64,
    pub rows: u64,
    /// Units of the paired analysis (deals, or games for point scoring).
    pub units: u64,
    pub unit: &'static str,
    pub mean_turns_per_round: Option<f64>,
    /// Whether some round was started by another seat than seat 0 (then seat and starting
    /// position differ).
    pub starts_vary: bool,
    /// Per metric, medians over pairs of the paired rows' `variance_ratio` and
    /// `pairing_ratio`.
    pub variance_ratio: Vec<VarianceRatio>,
}

/// How much variance the design and the pairing removed for one metric (medians over pairs).
#[derive(Clone, Debug, Serialize)]
pub struct VarianceRatio {
    pub metric: &'static str,
    /// Paired variance of a mean difference over that of independent rounds.
    pub design: Option<f64>,
    /// Paired over unpaired variance of the same unit means.
    pub pairing: Option<f64>,
}

/// Power of the stage's design for the win rate.
#[derive(Clone, Debug, Serialize)]
pub struct PowerSummary {
    pub alpha: f64,
    pub power: f64,
    pub delta: f64,
    pub pairs: usize,
    /// Win rate under equal strength (1/players), whose p(1-p) is σ² in eq. 5.
    pub baseline: f64,
    /// Eq. 5 with σ² = baseline(1-baseline): rounds per agent for delta at alpha and power.
    pub eq5_rounds: Option<f64>,
    /// The same at the Bonferroni level alpha/pairs.
    pub eq5_rounds_bonferroni: Option<f64>,
    /// Rounds each agent played (the fewest over agents).
    pub rounds_per_agent: u64,
    /// What eq. 5 counts and the power below uses: `rounds` (coin scoring, the win rate) or
    /// `games` (point scoring, the game-win rate: the unit `plan` uses).
    pub unit: &'static str,
    /// Rounds (coins) or games (points) each agent played, the fewest over agents.
    pub units_per_agent: u64,
    /// Power of the two-sample z-test for delta with these units (statsmodels
    /// NormalIndPower), at alpha and at alpha/pairs.
    pub achieved_power: f64,
    pub achieved_power_bonferroni: f64,
    /// Minimum detectable win-rate difference at alpha/pairs and the target power, by the
    /// same formula (independent units); the pairwise rows give the design's own.
    pub mde_independent: Option<f64>,
}

/// All statistics of one stage: `stats.json`.
#[derive(Clone, Debug, Serialize)]
pub struct StageAnalysis {
    pub stage: String,
    pub definitions: Definitions,
    pub options: Options,
    pub info: StageInfo,
    pub design: Design,
    pub agents: Vec<AgentMetrics>,
    pub pairwise: Vec<Pairwise>,
    /// Win rate by seat over all agents: the seat effect itself.
    pub seats: Vec<Position>,
    pub start_positions: Vec<Position>,
    pub power: PowerSummary,
    /// How adjusted p-values and stars were computed.
    pub families: String,
    pub stars_on: &'static str,
    pub notes: Vec<String>,
}

/// The metrics compared pairwise, in table order.
pub fn compared_metrics(points: bool, timed: bool, defs: Definitions) -> Vec<Metric> {
    let mut m = match defs {
        Definitions::Paper => vec![
            Metric::Win,
            Metric::Economic,
            Metric::Calls,
            Metric::Cards,
            Metric::CallSuccess,
        ],
        Definitions::Ours => vec![
            Metric::Win,
            Metric::Economic,
            Metric::Calls,
            Metric::CallSuccess,
            Metric::Cards,
            Metric::HandValue,
        ],
    };
    if points {
        m.insert(1, Metric::GameWin);
    }
    if timed && defs == Definitions::Ours {
        m.push(Metric::DecisionTime);
    }
    m
}

/// Computes the statistics of a stage from its accumulated records.
pub fn analyze(info: &StageInfo, acc: &Accumulated, opts: &Options) -> StageAnalysis {
    let defs = opts.definitions;
    let agents: Vec<AgentMetrics> = acc
        .agents
        .iter()
        .enumerate()
        .map(|(slot, t)| agent_metrics(info, slot, t, acc.timed, defs))
        .collect();
    let metrics = compared_metrics(info.points, acc.timed, defs);
    let k = acc.pairs.len();
    let alpha_k = if k > 0 {
        opts.alpha / k as f64
    } else {
        opts.alpha
    };
    let unit_name = if info.points {
        "game"
    } else if info.seating.blocks() {
        "deal"
    } else {
        "round"
    };
    let mut pairwise = Vec::new();
    let mut ratios = Vec::new();
    for &metric in &metrics {
        let paired_ok = metric.block_index().is_some();
        let primary_paired = paired_ok && defs == Definitions::Ours;
        let mut welch_rows = Vec::new();
        let mut paired_rows = Vec::new();
        for p in &acc.pairs {
            let (ma, mb) = (
                observations(&acc.agents[p.a], metric),
                observations(&acc.agents[p.b], metric),
            );
            let w = stats::welch(&ma, &mb);
            let sd = match defs {
                Definitions::Ours => PooledSd::Sample,
                Definitions::Paper => PooledSd::Population,
            };
            let d = cohen_d(&ma, &mb, sd);
            // The pooled SD itself (not the difference over d, undefined when the means are
            // equal): what the MDE and the power are scaled by.
            let pooled = pooled_sd(&ma, &mb, PooledSd::Sample).filter(|s| *s > 0.0);
            let welch_se2 = match (ma.var(1), mb.var(1)) {
                (Some(va), Some(vb)) if ma.n > 0 && mb.n > 0 => {
                    Some(va / ma.n as f64 + vb / mb.n as f64)
                }
                _ => None,
            };
            let ratio_n = if ma.n > 0 {
                mb.n as f64 / ma.n as f64
            } else {
                1.0
            };
            let is_win = matches!(metric, Metric::Win | Metric::GameWin);
            welch_rows.push(row(
                metric,
                info,
                p.a,
                p.b,
                "welch",
                match metric.level() {
                    Level::Round => "round",
                    Level::Call => "call",
                    Level::Game => "game",
                },
                &ma,
                &mb,
                w,
                d,
                "cohen_d",
                None,
                pooled.and_then(|s| {
                    power::ttest_ind_mde(ma.n as f64, alpha_k, opts.power, ratio_n).map(|e| e * s)
                }),
                pooled
                    .filter(|_| is_win)
                    .map(|s| power::ttest_ind_power(opts.delta / s, ma.n as f64, alpha_k, ratio_n)),
                !primary_paired,
            ));
            if let Some(bi) = metric.block_index() {
                let pair = &p.diff[bi];
                let g = pair.units();
                let var_d = pair.var_difference();
                let ratio = match (var_d, welch_se2) {
                    (Some(v), Some(se2)) if se2 > 0.0 => Some(v / se2),
                    _ => None,
                };
                let pairing = match (var_d, pair.a.var_mean(), pair.b.var_mean()) {
                    (Some(v), Some(va), Some(vb)) if va + vb > 0.0 => Some(v / (va + vb)),
                    _ => None,
                };
                let sd_d = pair.sd_difference().filter(|s| *s > 0.0);
                let units = Moments::new();
                let mut r = row(
                    metric,
                    info,
                    p.a,
                    p.b,
                    "paired",
                    unit_name,
                    &units,
                    &units,
                    pair.test(),
                    pair.cohen_dz(),
                    "cohen_dz",
                    ratio,
                    sd_d.and_then(|s| {
                        power::ttest_paired_mde(g as f64, alpha_k, opts.power).map(|e| e * s)
                    }),
                    sd_d.filter(|_| is_win)
                        .map(|s| power::ttest_paired_power(opts.delta / s, g as f64, alpha_k)),
                    primary_paired,
                );
                r.n_a = g;
                r.n_b = g;
                r.mean_a = pair.a.mean();
                r.mean_b = pair.b.mean();
                r.difference = pair.difference();
                r.pairing_ratio = pairing;
                paired_rows.push(r);
            }
        }
        adjust(&mut welch_rows, defs);
        adjust(&mut paired_rows, defs);
        if paired_ok {
            let mut r: Vec<f64> = paired_rows
                .iter()
                .filter_map(|r| r.variance_ratio)
                .collect();
            let mut q: Vec<f64> = paired_rows.iter().filter_map(|r| r.pairing_ratio).collect();
            ratios.push(VarianceRatio {
                metric: metric.key(),
                design: percentile(&mut r, 0.5),
                pairing: percentile(&mut q, 0.5),
            });
        }
        pairwise.extend(welch_rows);
        pairwise.extend(paired_rows);
    }
    let round_primary = round_primary(info);
    let seats = pooled_positions(acc, |t| &t.by_seat, &acc.seat_units, round_primary);
    let start_positions = pooled_positions(acc, |t| &t.by_start, &acc.start_units, round_primary);
    let rounds_per_agent = acc.agents.iter().map(|t| t.rounds).min().unwrap_or(0);
    // Eq. 5 compares win rates over the unit the stage's win metric counts: rounds under coin
    // scoring, games under point scoring (as `plan`).
    let units_per_agent = if info.points {
        acc.agents.iter().map(|t| t.games).min().unwrap_or(0)
    } else {
        rounds_per_agent
    };
    let n_agents = info.agents.len().max(1);
    let baseline = 1.0 / info.players.max(n_agents).max(1) as f64;
    let sigma2 = baseline * (1.0 - baseline);
    let es = opts.delta / sigma2.sqrt();
    let n = units_per_agent as f64;
    let power_summary = PowerSummary {
        alpha: opts.alpha,
        power: opts.power,
        delta: opts.delta,
        pairs: k,
        baseline,
        eq5_rounds: power::sample_size_eq5(opts.delta, sigma2, opts.alpha, opts.power),
        eq5_rounds_bonferroni: power::sample_size_eq5(opts.delta, sigma2, alpha_k, opts.power),
        rounds_per_agent,
        unit: if info.points { "games" } else { "rounds" },
        units_per_agent,
        achieved_power: if n > 0.0 {
            power::normal_ind_power(es, n, opts.alpha, 1.0)
        } else {
            0.0
        },
        achieved_power_bonferroni: if n > 0.0 {
            power::normal_ind_power(es, n, alpha_k, 1.0)
        } else {
            0.0
        },
        mde_independent: (n > 0.0).then(|| {
            let z = super::dist::normal_quantile(1.0 - alpha_k / 2.0)
                + super::dist::normal_quantile(opts.power);
            z * (2.0 * sigma2 / n).sqrt()
        }),
    };
    let stars_on = match defs {
        Definitions::Ours => {
            "p_holm of the primary test (paired where the design pairs, else Welch)"
        }
        Definitions::Paper => "p_bonferroni of Welch's test (the paper's test and correction)",
    };
    StageAnalysis {
        stage: info.name.clone(),
        definitions: defs,
        options: opts.clone(),
        info: info.clone(),
        design: Design {
            seating: info.seating.as_str(),
            players: info.players,
            arrangements: info.arrangements(),
            scoring: if info.points { "points" } else { "coins" },
            session: info.session,
            seed: info.seed,
            rounds: acc.rounds,
            rows: acc.rows,
            units: acc.units,
            unit: unit_name,
            mean_turns_per_round: acc.turns.mean(),
            starts_vary: acc.starts_vary,
            variance_ratio: ratios,
        },
        agents,
        pairwise,
        seats,
        start_positions,
        power: power_summary,
        families: format!(
            "one family per metric and test: the {k} pairs of agents; Bonferroni multiplies by \
             the number of defined p-values in the family, Holm steps down over it"
        ),
        stars_on,
        notes: notes(info, acc, defs),
    }
}

/// The per-observation moments of a metric for one agent (rounds, calls or games).
fn observations(t: &AgentAcc, metric: Metric) -> Moments {
    match metric {
        Metric::CallSuccess => t.call_success,
        Metric::GameWin => t.game,
        m => t.round[m.round_metric().expect("a round metric").index()],
    }
}

#[allow(clippy::too_many_arguments)]
fn row(
    metric: Metric,
    info: &StageInfo,
    a: usize,
    b: usize,
    test: &'static str,
    unit: &'static str,
    ma: &Moments,
    mb: &Moments,
    result: Option<TestResult>,
    effect: Option<f64>,
    effect_name: &'static str,
    variance_ratio: Option<f64>,
    mde: Option<f64>,
    power_at_delta: Option<f64>,
    primary: bool,
) -> Pairwise {
    Pairwise {
        metric: metric.key(),
        paper_metric: metric.paper_key(),
        a: info.agents[a].clone(),
        b: info.agents[b].clone(),
        test,
        unit,
        n_a: ma.n,
        n_b: mb.n,
        mean_a: ma.mean(),
        mean_b: mb.mean(),
        difference: match (ma.mean(), mb.mean()) {
            (Some(x), Some(y)) => Some(x - y),
            _ => None,
        },
        statistic: result.map(|r| r.statistic),
        df: result.map(|r| r.df),
        p: result.map(|r| r.p),
        p_bonferroni: None,
        p_holm: None,
        stars: "",
        effect,
        effect_name,
        variance_ratio,
        pairing_ratio: None,
        mde,
        power_at_delta,
        primary,
    }
}

/// Adjusts one family's p-values and sets the stars.
fn adjust(rows: &mut [Pairwise], defs: Definitions) {
    let p: Vec<Option<f64>> = rows.iter().map(|r| r.p).collect();
    let (bonf, holm) = (bonferroni(&p), holm(&p));
    for (i, r) in rows.iter_mut().enumerate() {
        r.p_bonferroni = bonf[i];
        r.p_holm = holm[i];
        r.stars = match defs {
            Definitions::Ours => stats::stars(r.p_holm),
            Definitions::Paper => stats::stars(r.p_bonferroni),
        };
    }
}

/// The unit whose rounds (and calls) are clustered: `deal` with `rotate` or `permute` seating
/// (all arrangements of a deal), `game` with point scoring; `None` when rounds are
/// independent (coin scoring, `fixed` or `random` seating).
pub fn cluster_unit(info: &StageInfo) -> Option<&'static str> {
    if info.points {
        Some("game")
    } else if info.seating.blocks() {
        Some("deal")
    } else {
        None
    }
}

/// The primary interval of per-round rates (win rate, call success, by seat): by deal (game)
/// in blocked designs, else Wilson.
fn round_primary(info: &StageInfo) -> Primary {
    cluster_unit(info).map_or(Primary::Wilson, Primary::Units)
}

fn agent_metrics(
    info: &StageInfo,
    slot: usize,
    t: &AgentAcc,
    timed: bool,
    defs: Definitions,
) -> AgentMetrics {
    let s = |m: RoundMetric| summary(&t.round[m.index()], &t.unit[m.index()]);
    let decision_time = timed.then(|| {
        let mut v = t.decision_us.clone();
        DecisionTime {
            decisions: t.timed_decisions,
            mean_us: (t.timed_decisions > 0)
                .then(|| t.decision_ns as f64 / t.timed_decisions as f64 / 1000.0),
            median_us: percentile(&mut v, 0.5),
            p95_us: percentile(&mut v, 0.95),
            rounds: v.len() as u64,
        }
    });
    let primary = round_primary(info);
    // The paper's win interval is its eq. 6; everything else keeps ours.
    let win_primary = match defs {
        Definitions::Paper => Primary::Normal,
        Definitions::Ours => primary,
    };
    // Games are clustered only when one deal is played under several arrangements.
    let game_primary = if info.seating.blocks() {
        Primary::Units("game")
    } else {
        Primary::Wilson
    };
    AgentMetrics {
        agent: info.agents[slot].clone(),
        kind: info.kinds.get(slot).cloned().unwrap_or_default(),
        slot,
        rounds: t.rounds,
        win: rate(
            t.wins,
            t.rounds,
            cluster_unit(info).map(|_| &t.unit[RoundMetric::Win.index()]),
            win_primary,
        ),
        economic: s(RoundMetric::Economic),
        calls: t.calls,
        calls_per_round: s(RoundMetric::Calls),
        call_success: rate(
            t.call_successes,
            t.calls,
            cluster_unit(info).map(|_| &t.unit[CALL_SUCCESS]),
            primary,
        ),
        cards_discarded_per_round: s(RoundMetric::Cards),
        turns_per_round: Summary {
            n: t.turns.n,
            mean: t.turns.mean(),
            sd: t.turns.sd(),
            ci95: mean_interval(&t.turns, 0.95).map(|(l, h)| [l, h]),
            units: t.turns.n,
        },
        final_hand_value: s(RoundMetric::HandValue),
        decision_time,
        risk: pearson(&t.risk, 0.95),
        by_seat: positions(&t.by_seat, &t.by_seat_units, primary),
        by_start_position: positions(&t.by_start, &t.by_start_units, primary),
        games: info.points.then(|| {
            let units = info.seating.blocks().then_some(&t.unit[GAME_WIN]);
            rate(t.game_wins, t.games, units, game_primary)
        }),
    }
}

fn pooled_positions(
    acc: &Accumulated,
    f: impl Fn(&AgentAcc) -> &Vec<WinCount>,
    units: &[Cluster],
    primary: Primary,
) -> Vec<Position> {
    let len = acc.agents.iter().map(|t| f(t).len()).max().unwrap_or(0);
    let mut total = vec![WinCount::default(); len];
    for t in &acc.agents {
        for (i, c) in f(t).iter().enumerate() {
            total[i].rounds += c.rounds;
            total[i].wins += c.wins;
        }
    }
    positions(&total, units, primary)
}

fn notes(info: &StageInfo, acc: &Accumulated, defs: Definitions) -> Vec<String> {
    let mut notes = Vec::new();
    if !acc.timed {
        notes.push(
            "No decision was timed (`output.decision_timing: false`, or no deal of this stage \
             fell in the `output.decision_sample` sample; `decision_sample: 1` times every \
             deal): no decision-time statistics."
                .into(),
        );
    } else if acc.untimed_rows > 0 {
        // Under point scoring a `deal` number names a whole game, so whole games are sampled.
        let unit = if info.points { "games" } else { "deals" };
        notes.push(format!(
            "Decision times are from a sample of {unit} ({} of {} rows timed; \
             `output.decision_sample` sets the share, 1 times every deal).",
            acc.rows - acc.untimed_rows,
            acc.rows
        ));
    }
    if !acc.starts_vary {
        notes.push(
            "Seat 1 (seat 0 in the records) started every round, so seat and starting position coincide."
                .into(),
        );
    }
    if info.seating == super::load::Seating::Fixed && info.agents.len() > 1 {
        notes.push(
            "Fixed seating: each agent always sits in the same seat, so agent and seat effects \
             are confounded (see win rate by seat); `rotate` or `permute` separates them."
                .into(),
        );
    }
    if defs == Definitions::Paper {
        notes.push(
            "Paper definitions: Cohen's d with population variances, stars on Bonferroni-adjusted \
             Welch p-values, win interval p ± 1.96·sqrt(p(1-p)/n). The paper's `cards` was a \
             hypothetical next discard computed from final hands, which the records do not hold; \
             `cards` here counts cards actually discarded."
                .into(),
        );
    }
    notes
}
