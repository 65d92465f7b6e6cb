//! What each figure of a stage shows, as data for `dhumbal_plots`, and drawing them. Agents are
//! always passed in the stage's slot order, so an agent has the same colour in every figure.
//! A figure that cannot be drawn is reported and skipped; it never loses the other outputs.

use std::path::{Path, PathBuf};

use super::Definitions;
use super::analyze::{Metric, StageAnalysis};
use super::metrics::{Accumulated, RoundMetric};
use super::tables::ci_label;
use dhumbal_plots::{self as plots, Band, HeatmapPanel, Interval, Width};

/// One figure to draw: its file stem, caption, and how to draw it.
pub struct FigureSpec {
    pub stem: &'static str,
    pub caption: String,
    pub draw: Box<dyn Fn() -> anyhow::Result<plots::Figure>>,
}

/// A drawn figure (or the reason it was not).
pub struct FigureOutcome {
    pub stem: &'static str,
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

/// The figures of a stage, in report order.
pub fn specs(s: &StageAnalysis, acc: &Accumulated) -> Vec<FigureSpec> {
    let mut out = Vec::new();
    let names: Vec<String> = s.agents.iter().map(|a| a.agent.clone()).collect();
    let points = s.info.points;
    let first = s.agents.first();

    // Win rate with its primary 95% interval and the median (paper Fig. 2a, 7a): by deal
    // (game) in blocked designs, else Wilson; the paper's eq. 6 with its definitions.
    let bars: Vec<(String, Interval)> = s
        .agents
        .iter()
        .map(|a| (a.agent.clone(), interval(a.win.rate, a.win.ci95, 100.0)))
        .collect();
    let method = first.map_or("wilson", |a| a.win.ci95_method);
    let title = format!("Win rate ({})", ci_label(method));
    out.push(spec(
        "win_rate",
        format!(
            "Win rate per agent with {}; dashed line: median over agents. {} rounds per agent.",
            ci_caption(method, "rounds", first.and_then(|a| a.win.units)),
            s.power.rounds_per_agent
        ),
        move || plots::interval_bars(&title, "Win rate (%)", &bars, true, Width::OneColumn),
    ));

    // Economic performance (Fig. 2b).
    let bars: Vec<(String, Interval)> = s
        .agents
        .iter()
        .map(|a| {
            (
                a.agent.clone(),
                interval(a.economic.mean, a.economic.ci95, 1.0),
            )
        })
        .collect();
    let (title, unit) = if points {
        ("Economic performance", "−Points per round")
    } else {
        ("Economic performance", "Coins per round")
    };
    out.push(spec(
        "economic",
        format!(
            "Mean {} per round with 95% t intervals over {}s.",
            if points {
                "points taken (negated)"
            } else {
                "coin change"
            },
            s.design.unit
        ),
        move || plots::interval_bars(title, unit, &bars, false, Width::OneColumn),
    ));

    // Call ("Jhyap") success (Fig. 2c), with the same kind of interval as the win rate
    // (calls of one deal are clustered like its rounds).
    let bars: Vec<(String, Interval)> = s
        .agents
        .iter()
        .map(|a| {
            (
                a.agent.clone(),
                interval(a.call_success.rate, a.call_success.ci95, 100.0),
            )
        })
        .collect();
    let method = first.map_or("wilson", |a| a.call_success.ci95_method);
    let title = format!("Jhyap call success ({})", ci_label(method));
    out.push(spec(
        "call_success",
        format!(
            "Share of an agent's calls (Jhyap, empty hands and forced showdowns) that won, with \
             {}; dashed line: median over agents. An agent without calls has no bar.",
            ci_caption(method, "calls", None)
        ),
        move || {
            plots::interval_bars(
                &title,
                "Successful calls (%)",
                &bars,
                true,
                Width::OneColumn,
            )
        },
    ));

    // Cumulative wins (Fig. 3b, 5b) and cumulative coins (Fig. 7b) with 95% bands.
    let win_series = cumulative(acc, &names, RoundMetric::Win);
    out.push(spec(
        "cumulative_wins",
        "Cumulative wins over the stage's rounds (in record order). Band: 95% interval of the \
         expected cumulative count, S_t ± 1.96·s·√t, s the agent's per-round SD."
            .into(),
        move || {
            plots::lines(
                "Cumulative wins",
                "Round",
                "Wins",
                &win_series,
                Width::OneColumn,
            )
        },
    ));
    let econ_series = cumulative(acc, &names, RoundMetric::Economic);
    let y = if points { "−Points" } else { "Coins" };
    out.push(spec(
        "cumulative_economic",
        format!(
            "Cumulative {} over the stage's rounds, with the 95% band S_t ± 1.96·s·√t.",
            if points {
                "points taken (negated)"
            } else {
                "coin change"
            }
        ),
        move || {
            plots::lines(
                if points {
                    "Cumulative points (negated)"
                } else {
                    "Cumulative coins"
                },
                "Round",
                y,
                &econ_series,
                Width::OneColumn,
            )
        },
    ));

    // Pairwise effect sizes (Fig. 1, 6).
    if names.len() > 1 {
        let panels = heatmap_panels(s, &names);
        if !panels.is_empty() {
            out.push(spec(
                "effects",
                format!(
                    "Cohen's d of the row agent minus the column agent, one panel per metric \
                     (positive: the row agent's mean is higher; for hand value and decision \
                     time lower is better). Stars: {}; * p<0.05, ** p<0.01, *** p<0.001.",
                    s.stars_on
                ),
                move || plots::heatmaps(&panels, Width::TwoColumn),
            ));
        }
    }

    // Win rate by seat, and by starting position when it differs from the seat.
    let seat_groups =
        |per: &dyn Fn(&super::analyze::AgentMetrics) -> &Vec<super::analyze::Position>| {
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
        };
    let width = if names.len() * s.info.players > 20 {
        Width::TwoColumn
    } else {
        Width::OneColumn
    };
    let method = s.seats.first().map_or("wilson", |p| p.win.ci95_method);
    let seat_title = format!("Win rate by seat ({})", ci_label(method));
    let start_title = format!("Win rate by starting position ({})", ci_label(method));
    let seat_ci = ci_caption(method, "rounds", None);
    let (groups, series) = seat_groups(&|a| &a.by_seat);
    out.push(spec(
        "win_by_seat",
        format!("Win rate by seat (1 = first in turn order) with {seat_ci}."),
        move || {
            plots::grouped_interval_bars(
                &seat_title,
                "Seat",
                "Win rate (%)",
                &groups,
                &series,
                width,
            )
        },
    ));
    if acc.starts_vary {
        let (groups, series) = seat_groups(&|a| &a.by_start_position);
        out.push(spec(
            "win_by_start",
            format!("Win rate by starting position (1 = moved first in the round) with {seat_ci}."),
            move || {
                plots::grouped_interval_bars(
                    &start_title,
                    "Position from the starter",
                    "Win rate (%)",
                    &groups,
                    &series,
                    width,
                )
            },
        ));
    }

    // Decision time on a log scale: the median and 95th percentile of one distribution (the
    // per-round mean time per decision), so that the two are ordered. The exact
    // decision-weighted mean is in the table; it can lie above that distribution's p95.
    if acc.timed {
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
        out.push(spec(
            "decision_time",
            "Time per decision, per agent: median and 95th percentile over rounds of the \
             round's mean time per decision (decision_ns / decisions) over the timed rounds, \
             in microseconds, log scale. The table's mean is over all timed decisions."
                .into(),
            move || {
                plots::log_points_labelled(
                    "Decision time per round",
                    "Mean time per decision in a round (µs)",
                    &rows,
                    ["Median", "95th percentile"],
                    Width::OneColumn,
                )
            },
        ));
    }
    out
}

fn spec(
    stem: &'static str,
    caption: String,
    draw: impl Fn() -> anyhow::Result<plots::Figure> + 'static,
) -> FigureSpec {
    FigureSpec {
        stem,
        caption,
        draw: Box::new(draw),
    }
}

/// Cumulative series per agent with the band S_t ± 1.96·s·√t_a, t_a the rounds the agent had
/// played by then (all rounds under coin scoring; its share of them in point games).
fn cumulative(acc: &Accumulated, names: &[String], metric: RoundMetric) -> Vec<Band> {
    let total = acc.rounds.max(1) as f64;
    names
        .iter()
        .enumerate()
        .map(|(a, name)| {
            let t = &acc.agents[a];
            let sd = t.round[metric.index()].sd().unwrap_or(0.0);
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
        .collect()
}

/// One heatmap panel per compared metric: Cohen's d (from the Welch rows) with the stars of
/// the metric's primary test.
fn heatmap_panels(s: &StageAnalysis, names: &[String]) -> Vec<HeatmapPanel> {
    let n = names.len();
    let index = |id: &str| names.iter().position(|x| x == id);
    let mut panels = Vec::new();
    let metrics = super::analyze::compared_metrics(
        s.info.points,
        s.agents.iter().any(|a| a.decision_time.is_some()),
        s.definitions,
    );
    for metric in metrics {
        if metric == Metric::DecisionTime {
            continue;
        }
        let mut values = vec![vec![None; n]; n];
        let mut stars = vec![vec![String::new(); n]; n];
        let mut any = false;
        for r in s.pairwise.iter().filter(|r| r.metric == metric.key()) {
            let (Some(i), Some(j)) = (index(&r.a), index(&r.b)) else {
                continue;
            };
            if r.test == "welch" {
                values[i][j] = r.effect;
                values[j][i] = r.effect.map(|d| -d);
                any |= r.effect.is_some();
            }
            if r.primary {
                stars[i][j] = r.stars.to_string();
                stars[j][i] = r.stars.to_string();
            }
        }
        if any {
            let title = match (s.definitions, metric.paper_key()) {
                (Definitions::Paper, Some(k)) => paper_title(k).to_string(),
                _ => metric.short_label().to_string(),
            };
            panels.push(HeatmapPanel {
                title,
                labels: names.to_vec(),
                values,
                stars,
            });
        }
    }
    panels
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

/// Draws every figure into `dir`; a failure is recorded, not raised.
pub fn draw_all(specs: Vec<FigureSpec>, dir: &Path) -> Vec<FigureOutcome> {
    specs
        .into_iter()
        .map(|f| {
            // A bug in drawing must not take the run down with it: the records and the rest
            // of the report are worth more than one figure.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (f.draw)().and_then(|fig| fig.write(dir, f.stem))
            }))
            .unwrap_or_else(|_| Err(anyhow::anyhow!("drawing `{}` panicked", f.stem)));
            match result {
                Ok(files) => FigureOutcome {
                    stem: f.stem,
                    caption: f.caption,
                    files,
                    error: None,
                },
                Err(e) => FigureOutcome {
                    stem: f.stem,
                    caption: f.caption,
                    files: Vec::new(),
                    error: Some(format!("{e:#}")),
                },
            }
        })
        .collect()
}
