//! From accumulated moments to the statistics of a stage: per-agent metrics with intervals,
//! pairwise tests with adjusted p-values and effect sizes, power and the design's variance
//! reduction. Everything here is plain data that serialises to `stats.json`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Definitions;
use super::load::StageInfo;
use super::metrics::{
    Accumulated, AgentAcc, CALL_SUCCESS, GAME_WIN, PairAcc, RoundMetric, WinCount,
};
use super::power;
use super::stats::{
    self, Cluster, Correlation, Moments, PooledSd, Stratified, TestResult, bonferroni, cohen_d,
    holm, mean_interval, normal_interval, pearson, percentile, pooled_sd, wilson,
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

impl Level {
    /// The level's name, the unit of Welch's test.
    pub fn name(self) -> &'static str {
        match self {
            Level::Round => "round",
            Level::Call => "call",
            Level::Game => "game",
        }
    }
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

    /// A heading for tables and figure panels. Under point scoring the per-round rates are
    /// conditional on the table size (survivors of a game play smaller tables), and say so.
    pub fn label(self, points: bool) -> &'static str {
        match self {
            Metric::Win if points => "Win rate per round",
            Metric::Win => "Win rate",
            Metric::Economic if points => "Economic (−points/round)",
            Metric::Economic => "Economic (coins/round)",
            Metric::Calls => "Calls per round",
            Metric::CallSuccess => "Call success",
            Metric::Cards => "Cards discarded/round",
            Metric::HandValue => "Final hand value",
            Metric::GameWin => "Games won",
        }
    }

    /// A short name for heatmap panels, which can be narrow.
    pub fn short_label(self, points: bool) -> &'static str {
        match self {
            Metric::Win if points => "Win per round",
            Metric::Win => "Win",
            Metric::Economic => "Economic",
            Metric::Calls => "Calls",
            Metric::CallSuccess => "Call success",
            Metric::Cards => "Cards",
            Metric::HandValue => "Hand value",
            Metric::GameWin => "Games won",
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
            _ => None,
        }
    }

    /// Index into the per-deal block moments (every compared metric has one: the paired
    /// test's, or call success's clustered comparison).
    fn block_index(self) -> usize {
        match self {
            Metric::GameWin => GAME_WIN,
            Metric::CallSuccess => CALL_SUCCESS,
            m => m.round_metric().expect("a round metric").index(),
        }
    }

    /// The design-based test's name: `paired` where both agents have a value in every unit
    /// (every round metric, game wins), `clustered` for call success, whose units hold one
    /// agent's calls or the other's or both.
    pub fn design_test(self) -> &'static str {
        match self {
            Metric::CallSuccess => "clustered",
            _ => "paired",
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
    /// Whether figures carry their title inside the image. Off by default: a paper puts the
    /// title in the caption (report.md's captions carry it).
    #[serde(skip)]
    pub titles: bool,
    /// Ratings: bootstrap resamples and anchor (docs/analysis.md, "Ratings").
    pub ratings: super::ratings::RatingSettings,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            definitions: Definitions::Ours,
            alpha: 0.05,
            power: 0.8,
            delta: 0.05,
            figures: true,
            titles: false,
            ratings: Default::default(),
        }
    }
}

/// Mean, spread and interval of a metric for one agent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub n: u64,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    /// 95% interval of the mean with the units of analysis (deals, games) as clusters, so
    /// that rounds of one deal or game are not counted as independent: a t interval on G - 1
    /// degrees of freedom with the cluster-robust standard error (with one round per unit,
    /// the ordinary t interval).
    #[serde(deserialize_with = "super::stats_file::interval")]
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

/// The 95% interval of a rate over `g` units (deals, games) from its cluster-robust t
/// interval, clipped to [0, 1]. A rate of exactly 0 or 1 has no cluster variance, and the t
/// interval would collapse to a point: Wilson's with the G units as the observations
/// instead, the largest design effect clustering can have.
fn units_interval(
    rate: f64,
    g: u64,
    t_interval: impl FnOnce() -> Option<(f64, f64)>,
) -> Option<[f64; 2]> {
    if rate == 0.0 || rate == 1.0 {
        wilson(if rate == 0.0 { 0 } else { g }, g, 0.95)
    } else {
        t_interval()
    }
    .map(|(l, h)| [l.max(0.0), h.min(1.0)])
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
    let ci95_units = units
        .filter(|_| n > 0)
        .and_then(|c| units_interval(k as f64 / n as f64, c.g, || c.interval(0.95)));
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

/// Decision time of one agent (read back from stats.json too: the overview's strength by
/// time per decision).
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Point games (each arrangement of a game counts once): games won, the primary outcome.
    pub games: Option<Rate>,
    /// Point games: the per-round win rate standardised to the stage's table-size mix
    /// (`design.table_mix`), and the win rate at each table size.
    pub win_standardized: Option<Standardized>,
}

/// A per-round win rate standardised to a common table-size mix (point games): Σ_m w_m·p_m
/// over table sizes m, w_m the stage's share of records at m players, p_m the agent's win
/// rate in its rounds with m players; interval by game (`stats::Stratified`).
#[derive(Clone, Debug, Serialize)]
pub struct Standardized {
    /// `None` when the agent never played a table size the mix has (its rate there is
    /// unknown).
    pub rate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub units: u64,
    pub by_table: Vec<TableRate>,
}

/// Rounds and wins at one table size.
#[derive(Clone, Debug, Serialize)]
pub struct TableRate {
    pub players: usize,
    pub rounds: u64,
    pub rate: Option<f64>,
}

/// A table size's share of a point stage's records (agent-rounds).
#[derive(Clone, Debug, Serialize)]
pub struct TableShare {
    pub players: usize,
    pub share: f64,
}

/// One test of one pair on one metric.
#[derive(Clone, Debug, Serialize)]
pub struct Pairwise {
    pub metric: &'static str,
    /// The paper's name for the metric, where it has one.
    pub paper_metric: Option<&'static str>,
    pub a: String,
    pub b: String,
    /// `welch` (unpaired, the paper's), `paired` (per-unit differences) or `clustered` (call
    /// success: the clustered two-sample comparison over the units where either agent
    /// called).
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
    /// Defined p-values in this row's family (metric and test), the k of Bonferroni and
    /// Holm: fewer than the stage's pairs when some pair has no test (an agent never called).
    pub family: usize,
    /// Stars on the adjusted p named in `stars_on`.
    pub stars: &'static str,
    pub effect: Option<f64>,
    /// `cohen_d` (pooled SD, eq. 11-12, beside Welch's test), `cohen_dz` (the difference
    /// over the SD of the unit differences, t/√G, beside the paired test) or `cohen_h`
    /// (2·asin√p_a − 2·asin√p_b, beside the clustered test of call success).
    pub effect_name: &'static str,
    /// Paired tests: variance of the mean difference under this design (paired unit means)
    /// over what independent rounds would give (Welch's s_a²/n_a + s_b²/n_b on rounds). Below
    /// 1 the design removed variance; above 1 it added some (agents at one table are
    /// negatively correlated, or the arrangements of one deal repeat its information).
    pub variance_ratio: Option<f64>,
    /// Paired tests: variance of the unit differences over the sum of the two agents'
    /// unit-mean variances: what pairing the same units removes (1 - 2·cov/(var_a + var_b)).
    pub pairing_ratio: Option<f64>,
    /// Paired and clustered tests: the SD of the unit differences, sqrt(G·V), which carries
    /// the design effect and plans a run of the same design (`power::MeasuredDesign`).
    pub sd_units: Option<f64>,
    /// Smallest difference (metric units) this test detects with the target power at the
    /// Bonferroni level alpha/k.
    pub mde: Option<f64>,
    /// Win metrics: power to detect a difference of `delta` at alpha/k.
    pub power_at_delta: Option<f64>,
    /// 95% interval of `difference` from this test's standard error and degrees of freedom:
    /// difference ± t_{0.975, df}·se (se = sqrt(V) of the paired or clustered test, Welch's
    /// sqrt(s²ₐ/nₐ + s²ᵦ/nᵦ)).
    pub ci95: Option<[f64; 2]>,
    /// The smallest |difference| this pair's test declares significant at the stage's
    /// Bonferroni level alpha/k: t_{1−alpha/(2k), df}·se. Smaller than `mde` (the difference
    /// detected with the target power), by about z_{1−alpha/(2k)}/(z_{1−alpha/(2k)} +
    /// z_power).
    pub critical_difference: Option<f64>,
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
    /// Point games: the stage's table-size mix, the weights of `win_standardized`.
    pub table_mix: Vec<TableShare>,
}

/// How much variance the design and the pairing removed for one metric (medians over pairs).
#[derive(Clone, Debug, Serialize)]
pub struct VarianceRatio {
    pub metric: &'static str,
    /// Paired variance of a mean difference over that of independent rounds.
    pub design: Option<f64>,
    /// Paired over unpaired variance of the same unit means.
    pub pairing: Option<f64>,
    /// Each agent's own mean: its variance under this design (by unit, cluster-robust) over
    /// that of as many independent observations (s²/n), median over agents. What blocking
    /// did to one agent's estimate, free of the correlation between agents at one table that
    /// `design` and `pairing` also carry (with one winner per round, a heads-up pair's
    /// `pairing` ratio is exactly 2).
    pub per_agent: Option<f64>,
}

/// Power of the stage's design for its headline outcome: the win rate under coin scoring,
/// games won under point scoring.
#[derive(Clone, Debug, Serialize)]
pub struct PowerSummary {
    pub alpha: f64,
    pub power: f64,
    pub delta: f64,
    pub pairs: usize,
    /// The compared metric: `win` (coin scoring) or `game_win` (point scoring).
    pub metric: &'static str,
    /// The design as run: its primary test of `metric`, pair by pair.
    pub design: DesignPower,
    /// For comparison only: the paper's eq. 5 and the z-test, which count every round (game)
    /// as independent.
    pub independent: IndependentPower,
}

/// Power of the primary test as run, from each pair's measured variance of the difference
/// (`power::MeasuredDesign`): σ_u = sqrt(G·V) per pair, the paired t-test on G units at
/// the Bonferroni level alpha/pairs (Holm rejects at least as often, so these are the powers
/// of the family-wise test's lower bound).
#[derive(Clone, Debug, Serialize)]
pub struct DesignPower {
    /// `paired`: the paired test on units, whatever the definitions (the paper's Welch test
    /// has no design to plan with).
    pub test: &'static str,
    /// `deal`, `game` or `round`; what a run asks for (`deals:`, `games:`) counts these.
    pub unit: &'static str,
    /// Units of the paired test (deals or games both agents played).
    pub units: u64,
    /// Pairs with a measured variance.
    pub pairs_measured: usize,
    /// Median over pairs of the variance of the mean difference under this design over what
    /// as many independent rounds (games) would give: the design effect.
    pub design_effect: Option<f64>,
    /// σ_u, the SD of the unit differences: median and largest over pairs.
    pub sd_units: Spread,
    /// Power to detect `delta` with the units that ran: median and smallest over pairs.
    pub power_at_delta: Spread,
    /// Minimum detectable difference with the units that ran: median and largest.
    pub mde: Spread,
    /// Units needed for `power` at `delta`: for the median pair and for every pair (the
    /// largest).
    pub units_needed: Spread,
}

/// A value over the pairs of a stage: the median pair's and the least favourable pair's.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Spread {
    pub median: Option<f64>,
    /// Least favourable: the smallest power, the largest SD, MDE or units needed.
    pub worst: Option<f64>,
}

impl Spread {
    pub(crate) fn of(values: &mut [f64], worst_is_min: bool) -> Spread {
        let worst = if worst_is_min {
            values.iter().copied().reduce(f64::min)
        } else {
            values.iter().copied().reduce(f64::max)
        };
        Spread {
            median: percentile(values, 0.5),
            worst,
        }
    }
}

/// The paper's eq. 5 and the two-sample z-test: every round (game) independent.
#[derive(Clone, Debug, Serialize)]
pub struct IndependentPower {
    /// Win rate under equal strength (1/players), whose p(1-p) is σ² in eq. 5.
    pub baseline: f64,
    /// Eq. 5 with σ² = baseline(1-baseline): units per agent for delta at alpha and power.
    pub eq5: Option<f64>,
    /// The same at the Bonferroni level alpha/pairs.
    pub eq5_bonferroni: Option<f64>,
    /// What eq. 5 counts: `round` (coin scoring, the win rate) or `game` (point scoring,
    /// games won; each arrangement of a game counts once).
    pub unit: &'static str,
    /// Rounds (coins) or games (points) each agent played, the fewest over agents.
    pub units_per_agent: u64,
    /// Rounds each agent played, the fewest over agents.
    pub rounds_per_agent: u64,
    /// Power of the two-sample z-test for delta with these units (statsmodels
    /// NormalIndPower), at alpha and at alpha/pairs.
    pub power: f64,
    pub power_bonferroni: f64,
    /// Minimum detectable difference at alpha/pairs and the target power, by the same
    /// formula.
    pub mde_bonferroni: Option<f64>,
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
    /// The agents' ratings (stages of two or more agents; filled for the report, which pays
    /// for the bootstrap, by `analyze_for_report` or `report_analyzed`, not by every
    /// analysis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratings: Option<super::ratings::Leaderboard>,
}

/// The metrics compared pairwise, in table order: the headline outcome first (games won
/// under point scoring, the win rate under coin scoring). Decision time is not compared: it
/// is a clock measurement that depends on the machine and its load, so it is described, not
/// tested.
pub fn compared_metrics(points: bool, defs: Definitions) -> Vec<Metric> {
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
        m.insert(0, Metric::GameWin);
    }
    m
}

/// The metric a stage's power and winner are judged by: games won under point scoring, the
/// win rate under coin scoring.
pub fn headline(points: bool) -> Metric {
    if points { Metric::GameWin } else { Metric::Win }
}

/// Computes the statistics of a stage from its accumulated records.
pub fn analyze(info: &StageInfo, acc: &Accumulated, opts: &Options) -> StageAnalysis {
    let defs = opts.definitions;
    let weights = table_weights(info, acc);
    let table_mix = weights
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0.0)
        .map(|(m, w)| TableShare {
            players: m + 1,
            share: *w,
        })
        .collect();
    let agents: Vec<AgentMetrics> = acc
        .agents
        .iter()
        .enumerate()
        .map(|(slot, t)| agent_metrics(info, slot, t, acc.timed, defs, &weights))
        .collect();
    let k = acc.pairs.len();
    let unit_name = unit_name(info);
    let mut tests = PairTests {
        info,
        acc,
        opts,
        alpha_k: if k > 0 {
            opts.alpha / k as f64
        } else {
            opts.alpha
        },
        unit_name,
        mdes: MdeMemo::default(),
    };
    let mut pairwise = Vec::new();
    let mut ratios = Vec::new();
    for metric in compared_metrics(info.points, defs) {
        let (welch_rows, design_rows) = tests.rows(metric);
        ratios.push(variance_ratio(acc, metric, &design_rows));
        pairwise.extend(welch_rows);
        pairwise.extend(design_rows);
    }
    let round_primary = round_primary(info);
    let seats = pooled_positions(acc, |t| &t.by_seat, &acc.seat_units, round_primary);
    let start_positions = pooled_positions(acc, |t| &t.by_start, &acc.start_units, round_primary);
    let power = power_summary(info, acc, opts, &pairwise);
    let stars_on = match defs {
        Definitions::Ours => {
            "p_holm of the primary test (paired or clustered by the design's unit; Welch's on \
             rounds only where the paper's definitions are asked for)"
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
            table_mix,
        },
        agents,
        pairwise,
        seats,
        start_positions,
        power,
        families: format!(
            "one family per metric and test: the {k} {} of agents (fewer where a pair has \
             no test, e.g. an agent never called: `family` in each row); Bonferroni multiplies \
             by the family's size, Holm steps down over it",
            if k == 1 { "pair" } else { "pairs" }
        ),
        stars_on,
        notes: notes(info, acc, defs),
        ratings: None,
    }
}

/// The pairwise tests of a stage: what every row needs, and the minimum detectable effects
/// the rows share.
struct PairTests<'a> {
    info: &'a StageInfo,
    acc: &'a Accumulated,
    opts: &'a Options,
    /// The Bonferroni level: alpha over the pairs.
    alpha_k: f64,
    /// The design's unit.
    unit_name: &'static str,
    mdes: MdeMemo,
}

impl PairTests<'_> {
    /// The rows of `metric` for every pair, Welch's and the design's, each family adjusted.
    fn rows(&mut self, metric: Metric) -> (Vec<Pairwise>, Vec<Pairwise>) {
        let mut welch_rows = Vec::new();
        let mut design_rows = Vec::new();
        let acc = self.acc;
        for p in &acc.pairs {
            let (welch, welch_se2) = self.welch(metric, p);
            welch_rows.push(welch);
            design_rows.push(self.design(metric, p, welch_se2));
        }
        adjust(&mut welch_rows, self.opts.definitions);
        adjust(&mut design_rows, self.opts.definitions);
        (welch_rows, design_rows)
    }

    /// Welch's test of a pair on the metric's observations (rounds, calls or games), and its
    /// squared standard error (the reference of the design's variance ratio).
    fn welch(&mut self, metric: Metric, p: &PairAcc) -> (Pairwise, Option<f64>) {
        let (info, acc, opts, alpha_k) = (self.info, self.acc, self.opts, self.alpha_k);
        let defs = opts.definitions;
        let is_win = matches!(metric, Metric::Win | Metric::GameWin);
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
        let mut welch = row(
            metric,
            info,
            p.a,
            p.b,
            "welch",
            metric.level().name(),
            &ma,
            &mb,
        );
        welch.set_test(w, d, "cohen_d");
        welch.mde = pooled.and_then(|s| {
            self.mdes
                .ind(ma.n as f64, alpha_k, opts.power, ratio_n)
                .map(|e| e * s)
        });
        welch.power_at_delta = pooled
            .filter(|_| is_win)
            .map(|s| power::ttest_ind_power(opts.delta / s, ma.n as f64, alpha_k, ratio_n));
        welch.set_interval(welch_se2.map(f64::sqrt), alpha_k);
        welch.primary = defs != Definitions::Ours;
        (welch, welch_se2)
    }

    /// The design's test of a pair (paired on unit means, clustered for call success), with
    /// its variance against Welch's (`welch_se2`) and its power.
    fn design(&mut self, metric: Metric, p: &PairAcc, welch_se2: Option<f64>) -> Pairwise {
        let (info, opts, alpha_k) = (self.info, self.opts, self.alpha_k);
        let is_win = matches!(metric, Metric::Win | Metric::GameWin);
        let pair = &p.diff[metric.block_index()];
        let g = pair.units();
        let var_d = pair.var_difference();
        let units = Moments::new();
        let mut r = row(
            metric,
            info,
            p.a,
            p.b,
            metric.design_test(),
            self.unit_name,
            &units,
            &units,
        );
        // The effect of the test on units: d_z for the paired test; for call success,
        // whose units hold one agent's calls or the other's, d_z = t/√G would shrink with
        // the units in which only one agent called, so Cohen's h of the two rates.
        match metric {
            Metric::CallSuccess => r.set_test(
                pair.test(),
                pair.a
                    .mean()
                    .zip(pair.b.mean())
                    .map(|(x, y)| stats::cohen_h(x, y)),
                "cohen_h",
            ),
            _ => r.set_test(pair.test(), pair.cohen_dz(), "cohen_dz"),
        }
        r.n_a = g;
        r.n_b = g;
        r.mean_a = pair.a.mean();
        r.mean_b = pair.b.mean();
        r.difference = pair.difference();
        r.variance_ratio = match (var_d, welch_se2) {
            (Some(v), Some(se2)) if se2 > 0.0 => Some(v / se2),
            _ => None,
        };
        r.pairing_ratio = match (var_d, pair.a.var_mean(), pair.b.var_mean()) {
            (Some(v), Some(va), Some(vb)) if va + vb > 0.0 && metric.design_test() == "paired" => {
                Some(v / (va + vb))
            }
            _ => None,
        };
        let measured = var_d.and_then(|v| power::MeasuredDesign::new(v, g));
        r.sd_units = measured.map(|m| m.sd_units);
        // `MeasuredDesign::mde`, the standardised MDE solved once per number of units.
        r.mde = measured.and_then(|m| {
            self.mdes
                .paired(g as f64, alpha_k, opts.power)
                .map(|e| e * m.sd_units)
        });
        r.power_at_delta = measured
            .filter(|_| is_win)
            .map(|m| m.power(opts.delta, g as f64, alpha_k));
        r.set_interval(var_d.map(f64::sqrt), alpha_k);
        r.primary = opts.definitions == Definitions::Ours;
        r
    }
}

/// What the design did to the variance of `metric`: medians over the pairs' design rows and
/// over the agents' own means.
fn variance_ratio(acc: &Accumulated, metric: Metric, design_rows: &[Pairwise]) -> VarianceRatio {
    let mut r: Vec<f64> = design_rows
        .iter()
        .filter_map(|r| r.variance_ratio)
        .collect();
    let mut q: Vec<f64> = design_rows.iter().filter_map(|r| r.pairing_ratio).collect();
    let mut own: Vec<f64> = acc
        .agents
        .iter()
        .filter_map(|t| {
            let m = observations(t, metric);
            let independent = m.var(1)? / m.n as f64;
            let v = t.unit[metric.block_index()].var_mean()?;
            (independent > 0.0).then(|| v / independent)
        })
        .collect();
    VarianceRatio {
        metric: metric.key(),
        design: percentile(&mut r, 0.5),
        pairing: percentile(&mut q, 0.5),
        per_agent: percentile(&mut own, 0.5),
    }
}

/// Point games: each table size's share of the stage's records; empty under coin scoring,
/// where every round seats everyone.
/// Point games: each table size's share of the stage's records (index m - 1 for m players),
/// the weights of the standardised win rate; all 0 under coin scoring, where every round
/// seats everyone.
fn table_weights(info: &StageInfo, acc: &Accumulated) -> Vec<f64> {
    let total: u64 = acc.table_rows.iter().sum();
    acc.table_rows
        .iter()
        .map(|n| {
            if info.points && total > 0 {
                *n as f64 / total as f64
            } else {
                0.0
            }
        })
        .collect()
}

/// Standardised minimum detectable effects by their arguments (as bits): they depend on the
/// counts and levels, not on the pair, so most pairs share one, and each is solved over the
/// noncentral t (a Poisson series of incomplete beta functions, evaluated about a dozen times
/// per solve: with the units needed, most of the analysis' time on a million rounds). The
/// same function of the same arguments: the same numbers.
#[derive(Default)]
struct MdeMemo {
    ind: HashMap<[u64; 4], Option<f64>>,
    paired: HashMap<[u64; 3], Option<f64>>,
}

impl MdeMemo {
    /// [`power::ttest_ind_mde`].
    fn ind(&mut self, n1: f64, alpha: f64, power: f64, ratio: f64) -> Option<f64> {
        *self
            .ind
            .entry([n1, alpha, power, ratio].map(f64::to_bits))
            .or_insert_with(|| power::ttest_ind_mde(n1, alpha, power, ratio))
    }

    /// [`power::ttest_paired_mde`].
    fn paired(&mut self, n: f64, alpha: f64, power: f64) -> Option<f64> {
        *self
            .paired
            .entry([n, alpha, power].map(f64::to_bits))
            .or_insert_with(|| power::ttest_paired_mde(n, alpha, power))
    }
}

/// Power of the headline outcome: by the design as run (each pair's primary test and its
/// measured variance), and, for comparison, by eq. 5 with independent units.
fn power_summary(
    info: &StageInfo,
    acc: &Accumulated,
    opts: &Options,
    pairwise: &[Pairwise],
) -> PowerSummary {
    let k = acc.pairs.len();
    let alpha_k = opts.alpha / k.max(1) as f64;
    let metric = headline(info.points);
    // The design's rows of the headline metric already hold each pair's σ_u, MDE and power.
    let rows: Vec<&Pairwise> = pairwise
        .iter()
        .filter(|r| r.metric == metric.key() && r.test == metric.design_test())
        .collect();
    let units = rows.iter().map(|r| r.n_a).max().unwrap_or(0);
    let collect = |f: &dyn Fn(&Pairwise) -> Option<f64>| -> Vec<f64> {
        rows.iter().filter_map(|r| f(r)).collect()
    };
    let mut ratio = collect(&|r| r.variance_ratio);
    let mut sd = collect(&|r| r.sd_units);
    let mut pw = collect(&|r| r.power_at_delta);
    let mut mde = collect(&|r| r.mde);
    let mut need = collect(&|r| {
        let m = power::MeasuredDesign {
            sd_units: r.sd_units?,
        };
        m.units_needed(opts.delta, alpha_k, opts.power)
    });
    let rounds_per_agent = acc.agents.iter().map(|t| t.rounds).min().unwrap_or(0);
    // Eq. 5 compares win rates over the unit the stage's headline counts: rounds under coin
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
    let z_power = |a: f64| {
        if n > 0.0 {
            power::normal_ind_power(es, n, a, 1.0)
        } else {
            0.0
        }
    };
    PowerSummary {
        alpha: opts.alpha,
        power: opts.power,
        delta: opts.delta,
        pairs: k,
        metric: metric.key(),
        design: DesignPower {
            test: metric.design_test(),
            unit: unit_name(info),
            units,
            pairs_measured: sd.len(),
            design_effect: percentile(&mut ratio, 0.5),
            sd_units: Spread::of(&mut sd, false),
            power_at_delta: Spread::of(&mut pw, true),
            mde: Spread::of(&mut mde, false),
            units_needed: Spread::of(&mut need, false),
        },
        independent: IndependentPower {
            baseline,
            eq5: power::sample_size_eq5(opts.delta, sigma2, opts.alpha, opts.power),
            eq5_bonferroni: power::sample_size_eq5(opts.delta, sigma2, alpha_k, opts.power),
            unit: if info.points { "game" } else { "round" },
            units_per_agent,
            rounds_per_agent,
            power: z_power(opts.alpha),
            power_bonferroni: z_power(alpha_k),
            mde_bonferroni: (n > 0.0).then(|| {
                let z = power::z_sum(alpha_k, opts.power);
                z * (2.0 * sigma2 / n).sqrt()
            }),
        },
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

/// A row of `metric` for the pair (a, b) with the means of `ma` and `mb`, its test still to
/// be set.
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
        statistic: None,
        df: None,
        p: None,
        p_bonferroni: None,
        p_holm: None,
        family: 0,
        stars: "",
        effect: None,
        effect_name: "",
        variance_ratio: None,
        pairing_ratio: None,
        sd_units: None,
        mde: None,
        power_at_delta: None,
        ci95: None,
        critical_difference: None,
        primary: false,
    }
}

impl Pairwise {
    fn set_test(&mut self, result: Option<TestResult>, effect: Option<f64>, name: &'static str) {
        self.statistic = result.map(|r| r.statistic);
        self.df = result.map(|r| r.df);
        self.p = result.map(|r| r.p);
        self.effect = effect;
        self.effect_name = name;
    }

    /// Sets `ci95` and `critical_difference` from the test's standard error `se` (its degrees
    /// of freedom already set) at the stage's Bonferroni level `alpha_k`.
    fn set_interval(&mut self, se: Option<f64>, alpha_k: f64) {
        let (Some(se), Some(df), Some(d)) = (
            se.filter(|s| s.is_finite() && *s > 0.0),
            self.df,
            self.difference,
        ) else {
            return;
        };
        let t = super::dist::t_quantile(0.975, df);
        self.ci95 = Some([d - t * se, d + t * se]);
        self.critical_difference =
            Some(super::dist::t_quantile(1.0 - alpha_k / 2.0, df) * se).filter(|c| c.is_finite());
    }
}

/// Adjusts one family's p-values and sets the stars.
fn adjust(rows: &mut [Pairwise], defs: Definitions) {
    let p: Vec<Option<f64>> = rows.iter().map(|r| r.p).collect();
    let family = p.iter().flatten().count();
    let (bonf, holm) = (bonferroni(&p), holm(&p));
    for (i, r) in rows.iter_mut().enumerate() {
        r.p_bonferroni = bonf[i];
        r.p_holm = holm[i];
        r.family = family;
        r.stars = match defs {
            Definitions::Ours => stats::stars(r.p_holm),
            Definitions::Paper => stats::stars(r.p_bonferroni),
        };
    }
}

/// The unit of the paired analysis: `game` (point scoring), `deal` (`rotate`, `permute`) or
/// `round`.
pub fn unit_name(info: &StageInfo) -> &'static str {
    cluster_unit(info).unwrap_or("round")
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
    table_weights: &[f64],
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
        win_standardized: info
            .points
            .then(|| standardized(&t.win_by_table, table_weights)),
    }
}

fn standardized(s: &Stratified, weights: &[f64]) -> Standardized {
    let rate = s.rate(weights);
    let ci95 = rate.and_then(|r| units_interval(r, s.g, || s.interval(weights, 0.95)));
    let by_table = s
        .counts()
        .iter()
        .zip(s.rates())
        .enumerate()
        .filter(|(_, (n, _))| **n > 0.0)
        .map(|(m, (n, rate))| TableRate {
            players: m + 1,
            rounds: *n as u64,
            rate,
        })
        .collect();
    Standardized {
        rate,
        ci95,
        units: s.g,
        by_table,
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
    if acc.timed {
        notes.push(
            "Decision time is described (mean, median, 95th percentile), not tested: it is a \
             clock measurement on this machine under its load at the time, so a p-value would \
             test the machine as much as the agents."
                .into(),
        );
    }
    if info.points {
        notes.push(
            "Point games: games won is the primary outcome. Per-round rates (win rate, calls, \
             points per round) are conditional on the table size: an agent that survives \
             longer plays more 2- and 3-player rounds, where a round is won more often, so \
             they mix skill with survival. The win rate standardised to the stage's \
             table-size mix adjusts for the difference in table-size mix only: within a table \
             size the rate is still that of the agents who got there (see the agents table)."
                .into(),
        );
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
