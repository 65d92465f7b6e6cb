//! What each figure of a stage shows, as data for `dhumbal_plots`, and drawing them. Agents are
//! always passed in the stage's slot order, so an agent has the same colour in every figure.
//! A figure that cannot be drawn is reported and skipped; it never loses the other outputs.
//!
//! Figures carry no title inside the image unless the report asks for titles
//! (`Options::titles`, `--titles`): in a paper the caption carries it, and the plot takes the
//! room.

use std::path::{Path, PathBuf};

use super::Definitions;
use super::analyze::{AgentMetrics, Metric, StageAnalysis};
use super::metrics::{Accumulated, RoundMetric};
use super::tables::ci_label;
use dhumbal_plots::{self as plots, Band, HeatmapPanel, Interval, Width};

/// Draws a figure with the title it is given ("" for none).
pub type Draw = Box<dyn Fn(&str) -> plots::Result<plots::Figure> + Send>;

/// Where a figure goes in a stage's `report.md`. A figure is one declaration, a
/// [`FigureSpec`] with its place: the page writes every drawn figure of a place at that
/// place's spot, in the order the specs were declared, so a new figure needs no line in the
/// page's writer, and no figure can be drawn and left off the page (tests/report_pages.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// After the per-agent table: each agent's rates and decision times.
    Agents,
    /// After the pairwise summary: the effects of every pair.
    Effects,
    /// In the ratings section.
    Ratings,
    /// Under the table of seats.
    Seats,
    /// Under the table of starting positions (when starts vary).
    Starts,
    /// "Over the rounds": the cumulative figures.
    OverRounds,
    /// In a block its module writes (the sequential test's), placed there by that module.
    Own,
}

/// One figure to draw: its file stem, where it goes, the title drawn inside it, caption, and
/// how to draw it.
pub struct FigureSpec {
    pub stem: &'static str,
    pub place: Place,
    /// The title drawn inside the image: `None` unless the report asks for titles (the caption
    /// says what the figure shows either way), and for figures whose panels carry the titles.
    pub title: Option<String>,
    pub caption: String,
    pub draw: Draw,
}

/// A drawn figure (or the reason it was not).
pub struct FigureOutcome {
    pub stem: &'static str,
    pub place: Place,
    pub caption: String,
    pub files: Vec<PathBuf>,
    pub error: Option<String>,
}

fn interval(estimate: Option<f64>, ci: Option<[f64; 2]>, scale: f64) -> Interval {
    let (e, [l, h]) = (
        estimate.unwrap_or(f64::NAN),
        ci.unwrap_or([f64::NAN, f64::NAN]),
    );
    Interval {
        estimate: e * scale,
        low: l * scale,
        high: h * scale,
    }
}

/// What a rate's primary interval is, in a caption: `what` names the observations (rounds,
/// calls) that Wilson treats as independent.
fn ci_caption(method: &str, what: &str, units: Option<u64>) -> String {
    match method {
        "wilson" => format!("95% Wilson score intervals ({what} independent)"),
        "normal" => "95% normal intervals p ± 1.96·sqrt(p(1−p)/n) (the paper's eq. 6)".into(),
        unit => format!(
            "95% intervals by {unit}: cluster-robust t intervals with the {}{unit}s as units, \
             since the {what} of one {unit} are not independent (clipped to [0, 100]%)",
            units.map_or(String::new(), |g| format!("{g} "))
        ),
    }
}

/// "N rounds (games) per agent", or the range when agents played different numbers.
fn per_agent(counts: impl Iterator<Item = u64>, what: &str) -> String {
    let counts: Vec<u64> = counts.collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} {what} per agent"),
        (Some(lo), Some(hi)) => format!("{lo}–{hi} {what} per agent"),
        _ => String::new(),
    }
}

/// The figures of a stage, in report order. Under point scoring the games won (`game_win`)
/// come first: the game is what an agent plays for, and the win rate per round depends on how
/// long it survives.
pub fn specs(s: &StageAnalysis, acc: &Accumulated) -> Vec<FigureSpec> {
    let names: Vec<String> = s.agents.iter().map(|a| a.agent.clone()).collect();
    let mut out = Vec::new();
    if s.info.points {
        out.push(game_win(s));
    }
    out.push(win_rate(s));
    out.push(economic(s));
    out.push(call_success(s));
    out.extend(cumulative_figures(s, acc, &names));
    // Pairwise effect sizes (Fig. 1, 6) of each pair's primary test, one triangle.
    if names.len() > 1 {
        out.extend(effects(s, &names).map(effects_figure));
    }
    // Ratings (Elo with bootstrap intervals, best first).
    if let Some(r) = &s.ratings {
        out.extend(super::ratings::figure_spec(
            r,
            &names,
            s.options.titles,
            "of this stage's agents",
        ));
    }
    out.extend(seat_figures(s, acc, &names));
    if acc.timed {
        out.push(decision_time(s));
    }
    out
}

/// Each agent's bar: its name, and the estimate and 95% interval `of` reads, times `scale`.
fn bars(
    s: &StageAnalysis,
    scale: f64,
    of: impl Fn(&AgentMetrics) -> (Option<f64>, Option<[f64; 2]>),
) -> Vec<(String, Interval)> {
    s.agents
        .iter()
        .map(|a| {
            let (estimate, ci) = of(a);
            (a.agent.clone(), interval(estimate, ci, scale))
        })
        .collect()
}

/// The title drawn inside a figure: only when the report asks for titles.
fn title(s: &StageAnalysis, t: String) -> Option<String> {
    s.options.titles.then_some(t)
}

/// Games won (point scoring), with the game-win rate's primary 95% interval and the median.
fn game_win(s: &StageAnalysis) -> FigureSpec {
    let bars = bars(s, 100.0, |a| {
        let g = a.games.as_ref();
        (g.and_then(|g| g.rate), g.and_then(|g| g.ci95))
    });
    let games = s.agents.first().and_then(|a| a.games.as_ref());
    let method = games.map_or("wilson", |g| g.ci95_method);
    let ci = match method {
        "wilson" => ci_caption(method, "games", None),
        unit => ci_caption(unit, "arrangements", games.and_then(|g| g.units)),
    };
    spec(
        "game_win",
        Place::Agents,
        title(s, format!("Games won ({})", ci_label(method))),
        format!(
            "Games won: share of its games an agent won (was the last player left), with \
             {ci}; dashed line: median over agents. {}{}.",
            per_agent(
                s.agents.iter().map(|a| a.games.as_ref().map_or(0, |g| g.n)),
                "games"
            ),
            if s.design.arrangements > 1 {
                format!(
                    " (the {} games, each played in its {} seat arrangements)",
                    s.design.units, s.design.arrangements
                )
            } else {
                String::new()
            }
        ),
        move |title| plots::interval_bars(title, "Games won (%)", &bars, true, Width::OneColumn),
    )
}

/// Win rate with its primary 95% interval and the median (paper Fig. 2a, 7a): by deal (game)
/// in blocked designs, else Wilson; the paper's eq. 6 with its definitions. Under point
/// scoring it is per round played, which depends on the table size.
fn win_rate(s: &StageAnalysis) -> FigureSpec {
    let first = s.agents.first();
    let bars = bars(s, 100.0, |a| (a.win.rate, a.win.ci95));
    let method = first.map_or("wilson", |a| a.win.ci95_method);
    let rounds = per_agent(s.agents.iter().map(|a| a.rounds), "rounds");
    let ci = ci_caption(method, "rounds", first.and_then(|a| a.win.units));
    let (win_title, win_axis, win_caption) = if s.info.points {
        (
            format!("Win rate per round ({})", ci_label(method)),
            "Rounds won (%)",
            format!(
                "Win rate per round played (conditional on table size: the survivors of a game \
                 also play 3- and 2-player rounds, where a round is won more often; the games \
                 won are the first figure), per agent, with {ci}; dashed line: median over \
                 agents. {rounds}."
            ),
        )
    } else {
        (
            format!("Win rate ({})", ci_label(method)),
            "Win rate (%)",
            format!("Win rate per agent with {ci}; dashed line: median over agents. {rounds}."),
        )
    };
    spec(
        "win_rate",
        Place::Agents,
        title(s, win_title),
        win_caption,
        move |title| plots::interval_bars(title, win_axis, &bars, true, Width::OneColumn),
    )
}

/// Economic performance (Fig. 2b).
fn economic(s: &StageAnalysis) -> FigureSpec {
    let points = s.info.points;
    let bars = bars(s, 1.0, |a| (a.economic.mean, a.economic.ci95));
    let unit = if points {
        "−Points per round"
    } else {
        "Coins per round"
    };
    spec(
        "economic",
        Place::Agents,
        title(s, "Economic performance".into()),
        format!(
            "Mean {} per round with 95% t intervals over {}s.",
            if points {
                "points taken (negated)"
            } else {
                "coin change"
            },
            s.design.unit
        ),
        move |title| plots::interval_bars(title, unit, &bars, false, Width::OneColumn),
    )
}

/// Call ("Jhyap") success (Fig. 2c), with the same kind of interval as the win rate (calls of
/// one deal are clustered like its rounds).
fn call_success(s: &StageAnalysis) -> FigureSpec {
    let bars = bars(s, 100.0, |a| (a.call_success.rate, a.call_success.ci95));
    let method = s
        .agents
        .first()
        .map_or("wilson", |a| a.call_success.ci95_method);
    spec(
        "call_success",
        Place::Agents,
        title(s, format!("Jhyap call success ({})", ci_label(method))),
        format!(
            "Share of an agent's calls (Jhyap, empty hands and forced showdowns) that won, with \
             {}; dashed line: median over agents. An agent without calls has no bar.",
            ci_caption(method, "calls", None)
        ),
        move |title| {
            plots::interval_bars(title, "Successful calls (%)", &bars, true, Width::OneColumn)
        },
    )
}

/// Cumulative wins (Fig. 3b, 5b) and cumulative coins (Fig. 7b) with 95% bands that follow
/// the design: widened (or narrowed) by each agent's measured design effect.
fn cumulative_figures(s: &StageAnalysis, acc: &Accumulated, names: &[String]) -> [FigureSpec; 2] {
    let points = s.info.points;
    let unit = super::analyze::cluster_unit(&s.info);
    let (win_series, win_d) = cumulative(acc, names, RoundMetric::Win, unit.is_some());
    let wins = spec(
        "cumulative_wins",
        Place::OverRounds,
        title(s, "Cumulative wins".into()),
        format!(
            "Cumulative wins over the stage's rounds (in record order). Band: 95% interval of \
             the expected cumulative count, S_t ± 1.96·s·√(D·t), s the agent's per-round SD \
             and {}",
            band_caption(unit, &win_d)
        ),
        move |title| plots::lines(title, "Round", "Wins", &win_series, Width::OneColumn),
    );
    let (econ_series, econ_d) = cumulative(acc, names, RoundMetric::Economic, unit.is_some());
    let y = if points { "−Points" } else { "Coins" };
    let economic = spec(
        "cumulative_economic",
        Place::OverRounds,
        title(
            s,
            if points {
                "Cumulative points (negated)"
            } else {
                "Cumulative coins"
            }
            .into(),
        ),
        format!(
            "Cumulative {} over the stage's rounds, with the 95% band S_t ± 1.96·s·√(D·t), s \
             the agent's per-round SD and {}",
            if points {
                "points taken (negated)"
            } else {
                "coin change"
            },
            band_caption(unit, &econ_d)
        ),
        move |title| plots::lines(title, "Round", y, &econ_series, Width::OneColumn),
    );
    [wins, economic]
}

/// The pairwise effect sizes, one triangle per metric.
fn effects_figure(effects: Effects) -> FigureSpec {
    spec(
        "effects",
        Place::Effects,
        None,
        effects.caption,
        move |_| {
            plots::heatmaps_with(
                &effects.panels,
                &plots::HeatmapOptions {
                    scale_label: &effects.scale_label,
                    cells: plots::Cells::Lower,
                    // Negligible effects stay pale: full colour needs a medium effect.
                    min_limit: 0.5,
                },
                Width::TwoColumn,
            )
        },
    )
}

/// Win rate by seat, and by starting position when it differs from the seat.
fn seat_figures(s: &StageAnalysis, acc: &Accumulated, names: &[String]) -> Vec<FigureSpec> {
    let width = if names.len() * s.info.players > 20 {
        Width::TwoColumn
    } else {
        Width::OneColumn
    };
    let method = s.seats.first().map_or("wilson", |p| p.win.ci95_method);
    let seat_ci = ci_caption(method, "rounds", None);
    let (groups, series) = seat_groups(s, |a| &a.by_seat);
    let mut out = vec![spec(
        "win_by_seat",
        Place::Seats,
        title(s, format!("Win rate by seat ({})", ci_label(method))),
        format!("Win rate by seat (1 = first in turn order) with {seat_ci}."),
        move |title| {
            plots::grouped_interval_bars(title, "Seat", "Win rate (%)", &groups, &series, width)
        },
    )];
    if acc.starts_vary {
        let (groups, series) = seat_groups(s, |a| &a.by_start_position);
        out.push(spec(
            "win_by_start",
            Place::Starts,
            title(
                s,
                format!("Win rate by starting position ({})", ci_label(method)),
            ),
            format!("Win rate by starting position (1 = moved first in the round) with {seat_ci}."),
            move |title| {
                plots::grouped_interval_bars(
                    title,
                    "Position from the starter",
                    "Win rate (%)",
                    &groups,
                    &series,
                    width,
                )
            },
        ));
    }
    out
}

/// The groups (seats or positions, from 1) and each agent's win rates in them, from `per`.
fn seat_groups(
    s: &StageAnalysis,
    per: impl Fn(&super::analyze::AgentMetrics) -> &Vec<super::analyze::Position>,
) -> (Vec<String>, Vec<(String, Vec<Interval>)>) {
    let len = s.agents.iter().map(|a| per(a).len()).max().unwrap_or(0);
    let groups: Vec<String> = (1..=len).map(|i| i.to_string()).collect();
    let series: Vec<(String, Vec<Interval>)> = s
        .agents
        .iter()
        .map(|a| {
            let v = (0..len)
                .map(|i| match per(a).get(i) {
                    Some(p) if p.win.n > 0 => interval(p.win.rate, p.win.ci95, 100.0),
                    _ => interval(None, None, 1.0),
                })
                .collect();
            (a.agent.clone(), v)
        })
        .collect();
    (groups, series)
}

/// Decision time on a log scale: the median and 95th percentile of one distribution (the
/// per-round mean time per decision), so that the two are ordered. The exact decision-weighted
/// mean is in the table; it can lie above that distribution's p95.
fn decision_time(s: &StageAnalysis) -> FigureSpec {
    let rows: Vec<(String, f64, f64)> = s
        .agents
        .iter()
        .map(|a| {
            let d = a.decision_time.as_ref();
            (
                a.agent.clone(),
                d.and_then(|d| d.median_us).unwrap_or(f64::NAN),
                d.and_then(|d| d.p95_us).unwrap_or(f64::NAN),
            )
        })
        .collect();
    spec(
        "decision_time",
        Place::Agents,
        title(s, "Decision time per round".into()),
        "Time per decision, per agent: median and 95th percentile over rounds of the \
         round's mean time per decision (decision_ns / decisions) over the timed rounds, \
         in microseconds, log scale. The table's mean is over all timed decisions."
            .into(),
        move |title| {
            plots::log_points_labelled(
                title,
                "Mean time per decision in a round (µs)",
                &rows,
                ["Median", "95th percentile"],
                Width::OneColumn,
            )
        },
    )
}

fn spec(
    stem: &'static str,
    place: Place,
    title: Option<String>,
    caption: String,
    draw: impl Fn(&str) -> plots::Result<plots::Figure> + Send + 'static,
) -> FigureSpec {
    FigureSpec {
        stem,
        place,
        title,
        caption,
        draw: Box::new(draw),
    }
}

/// What D is in a cumulative band's caption: the design effect by `unit`, with its range over
/// agents, or 1 where rounds are independent.
fn band_caption(unit: Option<&str>, d: &[f64]) -> String {
    let (lo, hi) = d
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    match unit {
        Some(u) if lo.is_finite() => format!(
            "D the agent's design effect, the variance of its mean by {u} (cluster-robust, \
             the {u}'s rounds not independent) over that of independent rounds, measured over \
             the whole stage ({} to {} here): at the last round the band is the interval by \
             {u} of the total; with D = 1 it would assume independent rounds.",
            super::tables::num(Some(lo), 2),
            super::tables::num(Some(hi), 2)
        ),
        Some(u) => format!(
            "D = 1: too few {u}s to measure the design effect, so the band assumes independent \
             rounds, which the rounds of a {u} are not."
        ),
        None => "D = 1: rounds are independent in this design.".into(),
    }
}

/// Cumulative series per agent with the band S_t ± 1.96·s·√(D·t_a), t_a the rounds the agent
/// had played by then (all rounds under coin scoring; its share of them in point games) and D
/// its design effect (`blocked`: the variance of its mean by unit over s²/n; else 1), which
/// is returned beside the series, one per agent.
fn cumulative(
    acc: &Accumulated,
    names: &[String],
    metric: RoundMetric,
    blocked: bool,
) -> (Vec<Band>, Vec<f64>) {
    let total = acc.rounds.max(1) as f64;
    let mut effects = Vec::new();
    let bands = names
        .iter()
        .enumerate()
        .map(|(a, name)| {
            let t = &acc.agents[a];
            let m = &t.round[metric.index()];
            let design = blocked
                .then(|| {
                    let independent = m.var(1)? / m.n as f64;
                    let v = t.unit[metric.index()].var_mean()?;
                    (independent > 0.0).then(|| v / independent)
                })
                .flatten();
            if let Some(d) = design {
                effects.push(d);
            }
            let sd = m.sd().unwrap_or(0.0) * design.unwrap_or(1.0).sqrt();
            let share = t.rounds as f64 / total;
            let mut points = vec![(0.0, 0.0)];
            let mut band = vec![(0.0, 0.0, 0.0)];
            for c in &acc.checkpoints {
                let y = match metric {
                    RoundMetric::Win => c.wins[a],
                    _ => c.economic[a],
                };
                let x = c.round as f64;
                let played = x * share;
                let half = 1.96 * sd * played.sqrt();
                let (mut low, mut high) = (y - half, y + half);
                if metric == RoundMetric::Win {
                    // A count of wins lies between 0 and the rounds played.
                    low = low.max(0.0);
                    high = high.min(played);
                }
                points.push((x, y));
                band.push((x, low, high));
            }
            Band {
                label: name.clone(),
                points,
                band: Some(band),
            }
        })
        .collect();
    (bands, effects)
}

/// The effects figure: its panels, the colour bar's label and the caption.
struct Effects {
    panels: Vec<HeatmapPanel>,
    scale_label: String,
    caption: String,
}

/// The effect size an `effect_name` names, for figure labels: "Cohen's d", "Cohen's d_z"
/// (z set as a subscript) or "Cohen's h".
fn effect_label(name: &str) -> String {
    format!("Cohen\u{2019}s {}", effect_symbol(name))
}

/// The symbol of an `effect_name`, for panel titles: d, d_z (z set as a subscript) or h.
fn effect_symbol(name: &str) -> &'static str {
    match name {
        "cohen_dz" => "d_{z}",
        "cohen_h" => "h",
        _ => "d",
    }
}

/// One heatmap panel per metric with pairwise rows: the effect size of each pair's primary
/// test (the one the tables star: Cohen's d_z of the paired or clustered test by deal, game or
/// round, or Cohen's d beside Welch's test with the paper's definitions) and its stars, below
/// the diagonal. A pair is (a, b) with a before b in the stage's order; below the diagonal the
/// row is b and the column a, so the cell holds b minus a: the primary row's effect negated.
fn effects(s: &StageAnalysis, names: &[String]) -> Option<Effects> {
    let n = names.len();
    let index = |id: &str| names.iter().position(|x| x == id);
    let mut panels = Vec::new();
    // Per panel, the effect it shows and the unit of its test.
    let mut kinds: Vec<(&'static str, &'static str, &'static str)> = Vec::new();
    for metric in super::tables::metrics_of(s) {
        let mut values = vec![vec![None; n]; n];
        let mut stars = vec![vec![String::new(); n]; n];
        let mut kind = None;
        for r in s
            .pairwise
            .iter()
            .filter(|r| r.metric == metric.key() && r.primary)
        {
            let (Some(i), Some(j)) = (index(&r.a), index(&r.b)) else {
                continue;
            };
            // The row is the later agent of the two.
            let (row, col, sign) = if i > j { (i, j, 1.0) } else { (j, i, -1.0) };
            values[row][col] = r.effect.map(|d| sign * d);
            stars[row][col] = r.stars.to_string();
            if r.effect.is_some() {
                kind.get_or_insert((r.effect_name, r.test, r.unit));
            }
        }
        let Some(kind) = kind else { continue };
        let title = match (s.definitions, metric.paper_key()) {
            (Definitions::Paper, Some(k)) => paper_title(k).to_string(),
            _ => metric.short_label(s.info.points).to_string(),
        };
        kinds.push(kind);
        panels.push(HeatmapPanel {
            title,
            labels: names.to_vec(),
            values,
            stars,
        });
    }
    let (&(effect, test, unit), rest) = kinds.split_first()?;
    let one_kind = rest.iter().all(|k| k.0 == effect);
    let scale_label = if one_kind {
        // No-break spaces keep "(row vs. column)" on one line.
        format!("{} (row\u{a0}vs.\u{a0}column)", effect_label(effect))
    } else {
        // Mixed effects (call success's Cohen's h among paired d_z): the colour bar names the
        // most common one, and each panel with another names its own.
        let count = |e: &str| kinds.iter().filter(|k| k.0 == e).count();
        let common = kinds
            .iter()
            .map(|k| k.0)
            .max_by_key(|e| count(e))
            .unwrap_or(effect);
        for (p, k) in panels.iter_mut().zip(&kinds) {
            if k.0 != common {
                // The symbol alone ("Call success (h)"): a heads-up stage's one-cell panel
                // has no room for the name, which the caption gives.
                p.title = format!("{} ({})", p.title, effect_symbol(k.0));
            }
        }
        format!("{} (row\u{a0}vs.\u{a0}column)", effect_label(common))
    };
    let what = if !one_kind {
        format!(
            "as each panel names: Cohen's d_z of the paired tests by {unit}, the mean of the \
             per-{unit} differences over their SD; Cohen's h of the clustered test of call \
             success, 2·asin√p of the row agent's rate minus the column agent's; Cohen's d of \
             Welch's tests"
        )
    } else if effect == "cohen_dz" {
        let how = if test == "clustered" {
            "clustered"
        } else {
            "paired"
        };
        format!(
            "Cohen's d_z of the {how} test by {unit}: the mean of the per-{unit} differences \
             over their SD"
        )
    } else {
        "Cohen's d of Welch's test: the difference of the means over the pooled SD".to_string()
    };
    let lower_better = if super::tables::metrics_of(s).contains(&Metric::HandValue) {
        "; for hand value lower is better"
    } else {
        ""
    };
    let caption = format!(
        "Effect size of each pair's primary test, the one the tables star ({what}), one panel \
         per metric. Each pair once: the row agent minus the column agent, the row agent \
         being the later of the two in the stage's order (the tables give the earlier minus \
         the later: the opposite sign). Positive: the row agent's mean is higher{lower_better}. \
         A grey cell: no test for that pair (e.g. an agent that never called). Stars: {}; \
         * p<0.05, ** p<0.01, *** p<0.001.",
        s.stars_on
    );
    Some(Effects {
        panels,
        scale_label,
        caption,
    })
}

fn paper_title(key: &str) -> &'static str {
    match key {
        "win" => "Win",
        "economic" => "Economic",
        "jhyap" => "Jhyap (caller)",
        "cards" => "Cards (actual)",
        "risk" => "Risk (call success)",
        _ => "",
    }
}

/// Draws every figure into `dir`, on as many threads as the machine has; a failure is
/// recorded, not raised. Outcomes come in the order of `specs`, and are the same on any
/// number of threads (each figure its own files).
///
/// In two passes, each a queue that the threads take from as they finish: every figure's
/// picture (its SVG) is made, then the files are written, the largest image first. Writing
/// (the 300 dpi raster, its PNG and the PDF) is most of the time and grows with the image,
/// and one figure (the effects' panels) takes a third of the whole: dealt out in turn, it
/// came last on one thread while the other idled (by the figures' own times on a million
/// rounds, 57 ms where 48 would do on two cores; docs/performance.md).
pub fn draw_all(specs: Vec<FigureSpec>, dir: &Path) -> Vec<FigureOutcome> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, specs.len().max(1));
    let pictured = on_threads(threads, specs, |f| {
        let picture = picture(&f);
        (f, picture)
    });
    // The largest raster first (a stable sort: ties in declaration order).
    let area = |picture: &plots::Result<plots::Figure>| {
        picture.as_ref().map_or(0, |fig| {
            let (w, h) = fig.pixel_size();
            u64::from(w) * u64::from(h)
        })
    };
    let mut jobs: Vec<(usize, (FigureSpec, plots::Result<plots::Figure>))> =
        pictured.into_iter().enumerate().collect();
    jobs.sort_by_key(|(_, (_, picture))| std::cmp::Reverse(area(picture)));
    let mut drawn = on_threads(threads, jobs, |(i, (f, picture))| {
        let files = picture.and_then(|fig| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fig.write(dir, f.stem)))
                .unwrap_or_else(|_| Err(panicked(f.stem)))
        });
        (i, outcome(f, files))
    });
    drawn.sort_by_key(|(i, _)| *i);
    drawn.into_iter().map(|(_, o)| o).collect()
}

/// `f` of every item on `threads` threads, each taking the next item as it finishes one; the
/// results in the items' order.
fn on_threads<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let slots: Vec<std::sync::Mutex<Option<T>>> = items
        .into_iter()
        .map(|t| std::sync::Mutex::new(Some(t)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(slots.len()).max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(slot) = slots.get(i) else {
                            return out;
                        };
                        let item = slot.lock().expect("lock").take().expect("taken once");
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("figures catch their panics"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// One figure's picture (its SVG): a bug in drawing must not take the run down with it (the
/// records and the rest of the report are worth more than one figure).
fn picture(f: &FigureSpec) -> plots::Result<plots::Figure> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (f.draw)(f.title.as_deref().unwrap_or(""))
    }))
    .unwrap_or_else(|_| Err(panicked(f.stem)))
}

/// A figure whose drawing panicked: the report goes on, saying so in its place.
fn panicked(stem: &str) -> plots::PlotError {
    plots::PlotError::Render(format!("drawing `{stem}` panicked"))
}

/// What became of a figure: its files, or why it has none.
fn outcome(f: FigureSpec, files: plots::Result<Vec<PathBuf>>) -> FigureOutcome {
    let (files, error) = match files {
        Ok(files) => (files, None),
        Err(e) => (Vec::new(), Some(format!("{e:#}"))),
    };
    FigureOutcome {
        stem: f.stem,
        place: f.place,
        caption: f.caption,
        files,
        error,
    }
}

/// A drawn figure in a page (its SVG, caption and the other formats), or the reason it could
/// not be drawn: the one way every report page shows a figure. `prefix`: the figures folder's
/// path from the page (`figures` beside it).
pub fn markdown(o: &FigureOutcome, prefix: &str) -> String {
    let stem = o.stem;
    match &o.error {
        None => format!(
            "![{stem}]({prefix}/{stem}.svg)\n\n*{}* ([PNG]({prefix}/{stem}.png), [PDF]({prefix}/{stem}.pdf))\n\n",
            o.caption
        ),
        Some(e) => format!("*Figure `{stem}` could not be drawn: {e}*\n\n"),
    }
}
