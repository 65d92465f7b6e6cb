//! The summary of a sweep (a stage written with `sweep:`, expanded by the runner into one stage
//! per point, `<sweep>/<path>=<value>,...`): `sweep.csv` and the figure of the headline metric
//! against the swept parameter in the sweep's folder, and a section of the overview page.
//!
//! Like the overview it reads only what is on disk: the manifest (each point's stage carries
//! `sweep: {name, point, index, parameters, values}`), each point's `stats.json` (the
//! headline metrics and their intervals, exactly as the point's own report gives them) and,
//! for the comparisons between points, each point's records. Every point plays the same deals
//! (the stage's seed), so the difference between two points is paired by unit (the deal, the
//! game under point scoring, the session for sessions of several rounds): per unit, the
//! agent's headline outcome at one point minus at the other, with a t interval on the units.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use dhumbal_runner::resolved::SweepMode;
use dhumbal_runner::summary::Manifest;
use serde_json::Value;

use super::error::{Doing, Error, Result};
use super::figures::FigureSpec;
use super::stats_file::{Agent, Rate, StatsFile};
use super::tables::{capital, csv_num, num, signed};
use dhumbal_plots::{self as plots, Band, Width};
use dhumbal_stats::paired::{Paired, Tally, paired_rates};

/// One point of a sweep as the summary needs it.
struct Point {
    /// The stage's name (`<sweep>/<label>`), its folder under the run.
    stage: String,
    /// `threshold=7,call_at=4`.
    label: String,
    /// The value of each swept path, in the sweep's order.
    values: Vec<Value>,
    stats: StatsFile,
    /// Coin scoring in sessions of several rounds: the rounds of a session (its unit).
    session: u64,
}

impl Point {
    /// The rate of `agent` measured by `m`, with its interval.
    fn rate(&self, agent: &str, m: Measure) -> Option<&Rate> {
        m.of(self.stats.agent(agent)?)
    }
}

/// One sweep: its points in expansion order.
struct Sweep {
    name: String,
    /// Each swept path and its short name in labels.
    parameters: Vec<(String, String)>,
    /// `mode: zip`: the points are paired values, not a grid.
    zip: bool,
    points: Vec<Point>,
}

impl Sweep {
    fn points_scoring(&self) -> bool {
        self.points[0].stats.info.points
    }

    /// The design's unit (`game` under point scoring, else `deal`) and how many each point
    /// played (the same at every point: they play the same deals).
    fn units(&self) -> (&'static str, u64) {
        let unit = if self.points_scoring() {
            "game"
        } else {
            "deal"
        };
        (unit, self.points[0].stats.design.units)
    }

    /// The metrics compared across points, the headline first: games won and rounds won
    /// under point scoring, rounds won under coin scoring.
    fn metrics(&self) -> Vec<Measure> {
        if self.points_scoring() {
            vec![Measure::Games, Measure::Rounds]
        } else {
            vec![Measure::Rounds]
        }
    }

    fn agents(&self) -> Vec<String> {
        let stats = &self.points[0].stats;
        stats.agents.iter().map(|a| a.agent.clone()).collect()
    }

    /// The axis title of parameter `k`: `Rule: threshold`, or for an agent's parameter
    /// `call_at of mine` (the path `agents.mine.params.call_at`).
    fn axis_title(&self, k: usize) -> String {
        let (path, name) = &self.parameters[k];
        if path.starts_with("rules.") {
            return format!("Rule: {name}");
        }
        match path.strip_prefix("agents.").and_then(|p| p.split_once('.')) {
            Some((agent, _)) => format!("{name} of {agent}"),
            None => format!("Parameter: {name}"),
        }
    }

    /// What the bands of measure `m` are: the first agent's interval at the first point.
    fn band_text(&self, m: Measure) -> String {
        let (_, units) = self.units();
        let rate = self.points[0].rate(&self.agents()[0], m);
        match rate.map_or("wilson", |r| r.ci95_method.as_str()) {
            "wilson" => "95% Wilson intervals".to_string(),
            "normal" => "95% normal intervals".to_string(),
            u => format!("95% intervals by {u} (cluster-robust t, the {units} {u}s as units)"),
        }
    }

    /// The point before point `k` along the first parameter: in a zip the point before; in
    /// a grid the last earlier point with the same values of the other parameters.
    fn previous(&self, k: usize) -> Option<usize> {
        if k == 0 {
            return None;
        }
        if self.zip {
            return Some(k - 1);
        }
        let rest = |p: &Point| p.values[1..].to_vec();
        (0..k)
            .rev()
            .find(|&j| rest(&self.points[j]) == rest(&self.points[k]))
    }
}

/// The sweeps of the run described by `manifest`, with their points' stats.json read from
/// `reports`.
fn sweeps(manifest: &Manifest, reports: &Path) -> Result<Vec<Sweep>> {
    let mut out: Vec<Sweep> = Vec::new();
    for spec in &manifest.scenario.stages {
        let Some(sw) = &spec.sweep else {
            continue;
        };
        let stage = spec.name.clone();
        let parameters: Vec<(String, String)> = (sw.parameters.iter())
            .map(|p| (p.path.clone(), p.name.clone()))
            .collect();
        let values = (parameters.iter())
            .map(|(path, _)| {
                sw.values.get(path).cloned().ok_or_else(|| {
                    Error::Inconsistent(format!("stage `{stage}`: its sweep gives no `{path}`"))
                })
            })
            .collect::<Result<_>>()?;
        let point = Point {
            stats: StatsFile::read(&reports.join(&stage))?,
            stage,
            label: sw.point.clone(),
            values,
            session: u64::from(spec.session.unwrap_or(1)).max(1),
        };
        match out.iter_mut().find(|s| s.name == sw.name) {
            Some(s) => s.points.push(point),
            None => out.push(Sweep {
                name: sw.name.clone(),
                parameters,
                zip: sw.mode == SweepMode::Zip,
                points: vec![point],
            }),
        }
    }
    Ok(out)
}

/// An estimate of stats.json (a rate or a mean) with its 95% interval, each part when it has
/// one.
type Estimate = (Option<f64>, Option<f64>, Option<f64>);

fn estimate(value: Option<f64>, ci95: Option<[f64; 2]>) -> Estimate {
    (value, ci95.map(|c| c[0]), ci95.map(|c| c[1]))
}

/// [`estimate`] of a rate, if there is one.
fn rate_estimate(r: Option<&Rate>) -> Estimate {
    r.map_or((None, None, None), |r| estimate(r.rate, r.ci95))
}

/// A rate compared across the points of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    /// Point scoring: games won of games played (a game counts once per arrangement).
    Games,
    /// Rounds won of rounds played.
    Rounds,
}

impl Measure {
    /// Its rate in an agent's entry of stats.json.
    fn of(self, agent: &Agent) -> Option<&Rate> {
        match self {
            Measure::Games => agent.games.as_ref(),
            Measure::Rounds => Some(&agent.win),
        }
    }

    /// Its columns' prefix in sweep.csv.
    fn column(self) -> &'static str {
        match self {
            Measure::Games => "games_won",
            Measure::Rounds => "win",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Measure::Games => "games won",
            Measure::Rounds => "rounds won",
        }
    }

    fn index(self) -> usize {
        match self {
            Measure::Games => 0,
            Measure::Rounds => 1,
        }
    }
}

/// Per agent (slot order), per measure (by [`Measure::index`]: games, then rounds), per unit:
/// the agent's tally.
type Outcomes = Vec<[BTreeMap<u64, Tally>; 2]>;

/// Each agent's outcomes per unit in the records of `dir`: games won of games played (a
/// game counts once per arrangement; point scoring), rounds won of rounds played. The unit is
/// the game, or the deal (the session, for sessions of `session` rounds).
fn outcomes(dir: &Path, agents: &[String], points: bool, session: u64) -> Result<Outcomes> {
    let mut out: Outcomes = vec![Default::default(); agents.len()];
    super::load::for_each_row(dir, agents, |r| {
        let unit = if points { r.deal } else { r.deal / session };
        let [games, rounds] = &mut out[usize::from(r.slot)];
        let g = games.entry(unit).or_default();
        if points && r.round == 0 {
            g.trials += 1.0;
        }
        if r.game_won {
            g.successes += 1.0;
        }
        let t = rounds.entry(unit).or_default();
        t.trials += 1.0;
        if r.won {
            t.successes += 1.0;
        }
    })?;
    Ok(out)
}

/// Writes each sweep's `sweep.csv` and figures into `reports/<sweep>/`, and returns the
/// overview page's section on the sweeps (empty when the run has none). A sweep whose summary
/// cannot be written is said so on the page; the rest of the page is kept.
pub fn section(manifest: &Manifest, run: &Path, reports: &Path) -> String {
    let list = match sweeps(manifest, reports) {
        Ok(l) => l,
        Err(e) => {
            return format!("\n## Sweeps\n\nThe sweeps' summary could not be written: {e:#}.\n");
        }
    };
    let mut out = String::new();
    for sweep in &list {
        match summarize(sweep, run, reports) {
            Ok(text) => out.push_str(&text),
            Err(e) => {
                let _ = writeln!(
                    out,
                    "\n## Sweep `{}`\n\nIts summary could not be written: {e:#}.",
                    sweep.name
                );
            }
        }
    }
    out
}

/// Each point's paired differences for every agent, per measure (by [`Measure::index`]):
/// against the first point, and against the point before it ([`Sweep::previous`]).
struct Comparisons {
    first: [Vec<Vec<Option<Paired>>>; 2],
    previous: [Vec<Vec<Option<Paired>>>; 2],
}

fn compare(sweep: &Sweep, run: &Path) -> Result<Comparisons> {
    let agents = sweep.agents();
    let points = sweep.points_scoring();
    let per_point: Vec<Outcomes> = sweep
        .points
        .iter()
        .map(|p| outcomes(&run.join(&p.stage), &agents, points, p.session))
        .collect::<Result<_>>()?;
    let against = |k: usize, j: Option<usize>, m: Measure| -> Vec<Option<Paired>> {
        (0..agents.len())
            .map(|a| {
                j.and_then(|j| {
                    paired_rates(&per_point[k][a][m.index()], &per_point[j][a][m.index()])
                })
            })
            .collect()
    };
    let table = |m: Measure, other: &dyn Fn(usize) -> Option<usize>| -> Vec<Vec<Option<Paired>>> {
        (0..per_point.len())
            .map(|k| against(k, other(k).filter(|_| k > 0), m))
            .collect()
    };
    Ok(Comparisons {
        first: [
            table(Measure::Games, &|_| Some(0)),
            table(Measure::Rounds, &|_| Some(0)),
        ],
        previous: [
            table(Measure::Games, &|k| sweep.previous(k)),
            table(Measure::Rounds, &|k| sweep.previous(k)),
        ],
    })
}

/// `sweep.csv`: one row per point and agent.
fn csv(sweep: &Sweep, c: &Comparisons) -> String {
    let agents = sweep.agents();
    let measures = sweep.metrics();
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(sweep.parameters.iter().map(|(_, short)| short.clone()));
    header.push("agent".into());
    for m in &measures {
        let m = m.column();
        header.extend([m.to_string(), format!("{m}_ci_low"), format!("{m}_ci_high")]);
        for d in ["vs_first", "vs_previous"] {
            header.extend([
                format!("{m}_{d}_difference"),
                format!("{m}_{d}_ci_low"),
                format!("{m}_{d}_ci_high"),
                format!("{m}_{d}_units"),
            ]);
        }
    }
    header.extend([
        "economic".into(),
        "economic_ci_low".into(),
        "economic_ci_high".into(),
    ]);
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(&header).expect("writing to memory");
    for (k, p) in sweep.points.iter().enumerate() {
        for (a, id) in agents.iter().enumerate() {
            let mut row: Vec<String> = vec![p.label.clone()];
            row.extend(p.values.iter().map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }));
            row.push(id.clone());
            let triple = |(m, l, h): Estimate| [csv_num(m), csv_num(l), csv_num(h)];
            for m in &measures {
                row.extend(triple(rate_estimate(p.rate(id, *m))));
                for list in [&c.first[m.index()], &c.previous[m.index()]] {
                    match list[k][a] {
                        Some(d) => row.extend([
                            csv_num(Some(d.difference)),
                            csv_num(d.ci95.map(|c| c.0)),
                            csv_num(d.ci95.map(|c| c.1)),
                            d.units.to_string(),
                        ]),
                        None => row.extend(std::iter::repeat_n(String::new(), 4)),
                    }
                }
            }
            let economic = p.stats.agent(id).map(|s| &s.economic);
            row.extend(triple(
                economic.map_or((None, None, None), |e| estimate(e.mean, e.ci95)),
            ));
            w.write_record(&row).expect("writing to memory");
        }
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are text")
}

/// The sweep's figures, each measure against the first swept parameter: with one parameter,
/// one figure per measure (`sweep`: the headline; `sweep-rounds`: rounds won, for point games),
/// one line per agent with its 95% band; with more, the headline only, one figure per agent
/// (`sweep-<slot>`, titled with the agent), one line per combination of the other values.
/// None when the first parameter's values are not numbers.
fn figure_specs(sweep: &Sweep) -> Vec<(String, FigureSpec)> {
    if sweep.points.iter().any(|p| p.values[0].as_f64().is_none()) {
        return Vec::new();
    }
    let (unit, units) = sweep.units();
    let same = format!(
        "Every point played the same {units} {unit}s (common random numbers), so differences \
         between points are paired by {unit} (sweep.csv and the overview give them)."
    );
    if sweep.parameters.len() == 1 {
        return (sweep.metrics().into_iter())
            .map(|m| measure_figure(sweep, m, &same))
            .collect();
    }
    let m = sweep.metrics()[0];
    let mut out = Vec::new();
    if let Some(grid) = grid_spec(sweep, m, &sweep.band_text(m), &same) {
        out.push(("sweep-grid".to_string(), grid));
    }
    for (slot, agent) in sweep.agents().iter().enumerate() {
        out.push(agent_figure(sweep, slot, agent, m, &same));
    }
    out
}

/// A line of `agent`'s rate by `m` at `points`, against the first swept parameter, in percent,
/// and its 95% band where the points have intervals.
type Series = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

fn series(points: &[&Point], agent: &str, m: Measure) -> Series {
    let mut line = Vec::new();
    let mut band = Vec::new();
    for p in points {
        let x = p.values[0].as_f64().unwrap_or(f64::NAN);
        let (e, l, h) = rate_estimate(p.rate(agent, m));
        line.push((x, e.map_or(f64::NAN, |e| 100.0 * e)));
        if let (Some(l), Some(h)) = (l, h) {
            band.push((x, 100.0 * l, 100.0 * h));
        }
    }
    (line, band)
}

/// A sweep of one parameter: measure `m` against it, one line per agent (`sweep`, or
/// `sweep-rounds` for rounds won in point games).
fn measure_figure(sweep: &Sweep, m: Measure, same: &str) -> (String, FigureSpec) {
    let points: Vec<&Point> = sweep.points.iter().collect();
    let series: Vec<Band> = (sweep.agents().iter())
        .map(|a| {
            let (points, band) = series(&points, a, m);
            Band {
                label: a.clone(),
                points,
                band: Some(band),
            }
        })
        .collect();
    let (xl, yl) = (sweep.axis_title(0), format!("{} (%)", capital(m.name())));
    let (stem, note) = match m {
        Measure::Rounds if sweep.points_scoring() => (
            "sweep-rounds",
            " A round's win rate depends on how many players are still in, so it \
             describes play, while games won is the outcome.",
        ),
        _ => ("sweep", ""),
    };
    let spec = FigureSpec {
        place: super::figures::Place::Own,
        stem,
        title: None,
        caption: format!(
            "Sweep `{}`: {} against {}, one line per agent; shaded: {}. {same}{note}",
            sweep.name,
            m.name(),
            sweep.parameters[0].1,
            sweep.band_text(m)
        ),
        draw: Box::new(move |title| plots::lines(title, &xl, &yl, &series, Width::OneColumn)),
    };
    (stem.to_string(), spec)
}

/// A sweep of several parameters: `agent`'s measure `m` against the first, one line per value
/// of the others (`sweep-<slot>`, titled with the agent).
fn agent_figure(
    sweep: &Sweep,
    slot: usize,
    agent: &str,
    m: Measure,
    same: &str,
) -> (String, FigureSpec) {
    let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in &sweep.points {
        let rest = p.label.split(',').skip(1).collect::<Vec<_>>().join(", ");
        match groups.iter_mut().find(|(r, _)| *r == rest) {
            Some((_, g)) => g.push(p),
            None => groups.push((rest, vec![p])),
        }
    }
    let series: Vec<Band> = groups
        .iter()
        .map(|(rest, points)| {
            let (line, band) = series(points, agent, m);
            Band {
                label: rest.clone(),
                points: line,
                band: Some(band),
            }
        })
        .collect();
    let (xl, yl, name) = (
        sweep.axis_title(0),
        format!("{} (%)", capital(m.name())),
        agent.to_string(),
    );
    let spec = FigureSpec {
        place: super::figures::Place::Own,
        stem: "sweep",
        title: Some(agent.to_string()),
        caption: format!(
            "Sweep `{}`: {} of `{agent}` against {}, one line per value of the other swept \
             parameters; shaded: {}. {same}",
            sweep.name,
            m.name(),
            sweep.parameters[0].1,
            sweep.band_text(m)
        ),
        // Each agent's figure carries its name: the figures differ only by it.
        draw: Box::new(move |_| plots::lines(&name, &xl, &yl, &series, Width::OneColumn)),
    };
    (format!("sweep-{}", slot + 1), spec)
}

/// A grid of two parameters (not a zip): the headline of every agent at every point as a
/// heatmap, one panel per agent, the first parameter across, the second down (numbers
/// ascending upwards), coloured on a diverging scale around the fair share (100% divided by
/// the players), so that a cell says at a glance whether the agent wins more or less than an
/// equal player would there.
fn grid_spec(sweep: &Sweep, m: Measure, bands: &str, same: &str) -> Option<FigureSpec> {
    if sweep.zip || sweep.parameters.len() != 2 {
        return None;
    }
    // Each parameter's values as labelled (`threshold=7` gives "7"), in expansion order.
    let label_of = |p: &Point, k: usize| {
        p.label
            .split(',')
            .nth(k)
            .and_then(|part| part.split_once('='))
            .map_or_else(|| p.values[k].to_string(), |(_, v)| v.to_string())
    };
    let mut cols: Vec<(Value, String)> = Vec::new();
    let mut rows: Vec<(Value, String)> = Vec::new();
    for p in &sweep.points {
        if !cols.iter().any(|(v, _)| *v == p.values[0]) {
            cols.push((p.values[0].clone(), label_of(p, 0)));
        }
        if !rows.iter().any(|(v, _)| *v == p.values[1]) {
            rows.push((p.values[1].clone(), label_of(p, 1)));
        }
    }
    // Numbers grow upwards, as on a y axis; other values keep the order written.
    if rows.iter().all(|(v, _)| v.is_number()) {
        rows.reverse();
    }
    let players = sweep.points[0].stats.info.players as f64;
    let panels: Vec<plots::GridPanel> = sweep
        .agents()
        .iter()
        .map(|agent| plots::GridPanel {
            title: agent.clone(),
            values: rows
                .iter()
                .map(|(rv, _)| {
                    cols.iter()
                        .map(|(cv, _)| {
                            let p = sweep
                                .points
                                .iter()
                                .find(|p| p.values[0] == *cv && p.values[1] == *rv)?;
                            let (e, _, _) = rate_estimate(p.rate(agent, m));
                            e.map(|e| 100.0 * e)
                        })
                        .collect()
                })
                .collect(),
            text: Vec::new(),
        })
        .collect();
    let (row_name, col_name) = (sweep.parameters[1].1.clone(), sweep.parameters[0].1.clone());
    let (row_title, col_title) = (sweep.axis_title(1), sweep.axis_title(0));
    let row_labels: Vec<String> = rows.into_iter().map(|(_, l)| l).collect();
    let col_labels: Vec<String> = cols.into_iter().map(|(_, l)| l).collect();
    let fair = 100.0 / players;
    let scale_label = format!("{} (%)", capital(m.name()));
    Some(FigureSpec {
        place: super::figures::Place::Own,
        stem: "sweep-grid",
        title: None,
        caption: format!(
            "Sweep `{}`: {} of each agent at every point ({col_name} across, {row_name} \
             down), in percent; white is the fair share of {} players ({}%), red above it, \
             blue below. The per-agent figures below give the same values with their {bands}. \
             {same}",
            sweep.name,
            m.name(),
            players,
            num(Some(fair), 1),
        ),
        draw: Box::new(move |title| {
            let options = plots::GridOptions {
                title,
                rows: &row_labels,
                row_title: &row_title,
                cols: &col_labels,
                col_title: &col_title,
                centre: fair,
                min_limit: 5.0,
                scale_label: &scale_label,
            };
            // One column unless the panels, stacked, would make it much taller than two
            // columns side by side do.
            let two = plots::grids(&panels, &options, Width::TwoColumn)?;
            match plots::grids(&panels, &options, Width::OneColumn) {
                Ok(one) if one.size_points().1 < 1.6 * two.size_points().1 => Ok(one),
                _ => Ok(two),
            }
        }),
    })
}

/// Writes one sweep's files and returns its section of the overview.
fn summarize(sweep: &Sweep, run: &Path, reports: &Path) -> Result<String> {
    let dir = reports.join(&sweep.name);
    std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
    let comparisons = compare(sweep, run)?;
    let csv_path = dir.join("sweep.csv");
    std::fs::write(&csv_path, csv(sweep, &comparisons)).doing("cannot write", &csv_path)?;
    let figures = draw(sweep, &dir);
    let mut out = intro(sweep);
    for (i, m) in sweep.metrics().into_iter().enumerate() {
        measure_tables(&mut out, sweep, m, i == 0, &comparisons);
    }
    if sweep.points.len() > 1 {
        let _ = writeln!(
            out,
            "\nEach interval is one comparison's: over many points and agents, some exclude 0 by \
             chance alone (one in twenty at 95% where nothing changes)."
        );
    }
    figures_text(&mut out, sweep, figures);
    Ok(out)
}

/// The sweep's figures drawn into `dir/figures`: each drawn one's stem and caption, and why
/// the others could not be drawn.
struct Drawn {
    drawn: Vec<(String, String)>,
    failed: Vec<String>,
}

fn draw(sweep: &Sweep, dir: &Path) -> Drawn {
    let mut out = Drawn {
        drawn: Vec::new(),
        failed: Vec::new(),
    };
    for (stem, spec) in figure_specs(sweep) {
        match (spec.draw)("").and_then(|f| f.write(&dir.join("figures"), &stem)) {
            Ok(_) => out.drawn.push((stem, spec.caption)),
            Err(e) => out.failed.push(format!("{stem}: {e:#}")),
        }
    }
    out
}

/// The section's heading and what the sweep is.
fn intro(sweep: &Sweep) -> String {
    let (unit, units) = sweep.units();
    let mut out = String::new();
    let _ = writeln!(out, "\n## Sweep `{}`\n", sweep.name);
    let paths: Vec<String> = sweep
        .parameters
        .iter()
        .map(|(p, _)| format!("`{p}`"))
        .collect();
    let _ = writeln!(
        out,
        "{} points over {}{}. Every point played the same {units} {unit}s (the stage's seed: \
         common random numbers), so the comparisons below are paired by {unit}: per {unit}, \
         the agent's rate at one point minus at the other, with a 95% t interval over the \
         {unit}s. Each point's own report: `{}/<point>/report.md`; every number: \
         [{}/sweep.csv](<{}/sweep.csv>).",
        sweep.points.len(),
        paths.join(" and "),
        if sweep.zip { " (zipped)" } else { "" },
        sweep.name,
        sweep.name,
        sweep.name,
    );
    out
}

/// Measure `m` at every point, then each point against the first and, for the `headline`,
/// against the point before it.
fn measure_tables(out: &mut String, sweep: &Sweep, m: Measure, headline: bool, c: &Comparisons) {
    let (unit, _) = sweep.units();
    let agents = sweep.agents();
    let mut header = "| point |".to_string();
    let mut rule = "|---|".to_string();
    for a in &agents {
        let _ = write!(header, " {a} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(
        out,
        "\n{} (%, with the 95% interval each point's report gives):\n\n{header}\n{rule}",
        capital(m.name())
    );
    for p in &sweep.points {
        let _ = write!(out, "| [{}](<{}/report.md>) |", p.label, p.stage);
        for a in &agents {
            let (e, l, h) = rate_estimate(p.rate(a, m));
            let pct = |x: Option<f64>| num(x.map(|x| 100.0 * x), 2);
            let _ = write!(out, " {} [{}, {}] |", pct(e), pct(l), pct(h));
        }
        out.push('\n');
    }
    if sweep.points.len() < 2 {
        return;
    }
    let first = &sweep.points[0].label;
    let mut lists = vec![(
        format!("each point against the first (`{first}`)"),
        &c.first[m.index()],
    )];
    // The headline also against its neighbour; the second measure against the first point.
    if headline {
        let along = if sweep.zip || sweep.parameters.len() == 1 {
            "the point before it".to_string()
        } else {
            format!(
                "the point before it along `{}` (the other values the same)",
                sweep.parameters[0].0
            )
        };
        lists.push((
            format!("each point against {along}"),
            &c.previous[m.index()],
        ));
    }
    for (title, list) in lists {
        let _ = writeln!(
            out,
            "\n{} in {}, paired by {unit} (percentage points, 95% interval; `*`: the \
             interval excludes 0):\n\n{header}\n{rule}",
            capital(m.name()),
            title
        );
        for (k, p) in sweep.points.iter().enumerate().skip(1) {
            if list[k].iter().all(Option::is_none) {
                continue;
            }
            let _ = write!(out, "| {} |", p.label);
            for d in &list[k] {
                let _ = write!(out, " {} |", shown(*d));
            }
            out.push('\n');
        }
    }
}

/// A paired difference in percentage points with its interval, starred when the interval
/// excludes 0.
fn shown(d: Option<Paired>) -> String {
    match d {
        Some(d) => format!(
            "{} [{}, {}]{}",
            signed(100.0 * d.difference),
            num(d.ci95.map(|c| 100.0 * c.0), 2),
            num(d.ci95.map(|c| 100.0 * c.1), 2),
            if d.excludes_zero() { "*" } else { "" }
        ),
        None => "–".into(),
    }
}

/// The figures drawn, with their captions, or why there are none.
fn figures_text(out: &mut String, sweep: &Sweep, figures: Drawn) {
    for (stem, caption) in &figures.drawn {
        let _ = writeln!(
            out,
            "\n![{caption}](<{}/figures/{stem}.svg>)\n\n*{caption}*",
            sweep.name
        );
    }
    if figures.drawn.is_empty() && figures.failed.is_empty() {
        let _ = writeln!(
            out,
            "\nNo figure: the values of `{}` are not numbers (the tables above give every point).",
            sweep.parameters[0].0
        );
    }
    for f in figures.failed {
        let _ = writeln!(out, "\nA figure could not be drawn ({f}).");
    }
}
