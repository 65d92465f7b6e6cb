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
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use super::dist::t_quantile;
use super::figures::FigureSpec;
use super::stats::Moments;
use super::tables::{csv_num, num};
use dhumbal_plots::{self as plots, Band, Width};

/// One point of a sweep as the summary needs it.
struct Point {
    /// The stage's name (`<sweep>/<label>`), its folder under the run.
    stage: String,
    /// `threshold=7,call_at=4`.
    label: String,
    /// The value of each swept path, in the sweep's order.
    values: Vec<Value>,
    stats: Value,
    /// Coin scoring in sessions of several rounds: the rounds of a session (its unit).
    session: u64,
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
        self.points[0].stats["info"]["points"]
            .as_bool()
            .unwrap_or(false)
    }

    /// The design's unit (`game` under point scoring, else `deal`) and how many each point
    /// played (the same at every point: they play the same deals).
    fn units(&self) -> (&'static str, u64) {
        let unit = if self.points_scoring() {
            "game"
        } else {
            "deal"
        };
        let units = self.points[0].stats["design"]["units"]
            .as_u64()
            .unwrap_or(0);
        (unit, units)
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
        ids(&self.points[0].stats)
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

fn ids(stats: &Value) -> Vec<String> {
    stats["agents"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|a| a["agent"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The sweeps of the run described by `manifest`, with their points' stats.json read from
/// `reports`.
fn sweeps(manifest: &Value, reports: &Path) -> anyhow::Result<Vec<Sweep>> {
    let mut out: Vec<Sweep> = Vec::new();
    let specs = manifest["scenario"]["stages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for spec in &specs {
        let sw = &spec["sweep"];
        let Some(name) = sw["name"].as_str() else {
            continue;
        };
        let stage = spec["name"].as_str().unwrap_or_default().to_string();
        let parameters: Vec<(String, String)> = sw["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["path"].as_str().unwrap_or_default().to_string(),
                    p["name"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let values = parameters
            .iter()
            .map(|(path, _)| sw["values"][path].clone())
            .collect();
        let path = reports.join(&stage).join("stats.json");
        let stats: Value = serde_json::from_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        )
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
        let point = Point {
            stage,
            label: sw["point"].as_str().unwrap_or_default().to_string(),
            values,
            stats,
            session: spec["session"].as_u64().unwrap_or(1).max(1),
        };
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(Sweep {
                name: name.to_string(),
                parameters,
                zip: sw["mode"].as_str() == Some("zip"),
                points: vec![point],
            }),
        }
    }
    Ok(out)
}

/// A statistic of stats.json (`key`: `rate` or `mean`) with its 95% interval.
fn estimate(stat: &Value, key: &str) -> (Option<f64>, Option<f64>, Option<f64>) {
    let ci = stat["ci95"].as_array();
    (
        stat[key].as_f64(),
        ci.and_then(|c| c.first()?.as_f64()),
        ci.and_then(|c| c.get(1)?.as_f64()),
    )
}

/// A paired difference between two points: its mean over the units both played, the 95% t
/// interval on the units, and how many units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    pub units: u64,
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
    /// Its key in stats.json's agents.
    fn key(self) -> &'static str {
        match self {
            Measure::Games => "games",
            Measure::Rounds => "win",
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

/// Per agent (slot order), per unit: (games won, games, rounds won, rounds).
type Outcomes = Vec<BTreeMap<u64, [f64; 4]>>;

/// Each agent's outcomes per unit in the records of `dir`: games won and games played (a
/// game counts once per arrangement; point scoring), rounds won and rounds played. The unit is
/// the game, or the deal (the session, for sessions of `session` rounds).
fn outcomes(dir: &Path, agents: &[String], points: bool, session: u64) -> anyhow::Result<Outcomes> {
    let mut out: Outcomes = vec![BTreeMap::new(); agents.len()];
    super::load::for_each_row(dir, agents, |r| {
        let unit = if points { r.deal } else { r.deal / session };
        let e = out[usize::from(r.slot)].entry(unit).or_insert([0.0; 4]);
        if points && r.round == 0 {
            e[1] += 1.0;
        }
        if r.game_won {
            e[0] += 1.0;
        }
        e[3] += 1.0;
        if r.won {
            e[2] += 1.0;
        }
    })?;
    Ok(out)
}

/// The paired difference `a` − `b` of one agent's per-unit outcomes, over the units both have.
fn paired(a: &BTreeMap<u64, [f64; 4]>, b: &BTreeMap<u64, [f64; 4]>, m: Measure) -> Option<Paired> {
    let (k, n) = (2 * m.index(), 2 * m.index() + 1);
    let mut moments = Moments::new();
    for (unit, x) in a {
        let (ka, na) = (x[k], x[n]);
        if let Some(y) = b.get(unit)
            && let (kb, nb) = (y[k], y[n])
            && na > 0.0
            && nb > 0.0
        {
            moments.push(ka / na - kb / nb);
        }
    }
    let mean = moments.mean()?;
    let half = if moments.n >= 2 {
        t_quantile(0.975, (moments.n - 1) as f64) * moments.se()?
    } else {
        f64::NAN
    };
    Some(Paired {
        difference: mean,
        low: mean - half,
        high: mean + half,
        units: moments.n,
    })
}

/// Writes each sweep's `sweep.csv` and figures into `reports/<sweep>/`, and returns the
/// overview page's section on the sweeps (empty when the run has none). A sweep whose summary
/// cannot be written is said so on the page; the rest of the page is kept.
pub fn section(manifest: &Value, run: &Path, reports: &Path) -> String {
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

fn compare(sweep: &Sweep, run: &Path) -> anyhow::Result<Comparisons> {
    let agents = sweep.agents();
    let points = sweep.points_scoring();
    let per_point: Vec<Outcomes> = sweep
        .points
        .iter()
        .map(|p| outcomes(&run.join(&p.stage), &agents, points, p.session))
        .collect::<anyhow::Result<_>>()?;
    let against = |k: usize, j: Option<usize>, m: Measure| -> Vec<Option<Paired>> {
        (0..agents.len())
            .map(|a| j.and_then(|j| paired(&per_point[k][a], &per_point[j][a], m)))
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
            let s = agent_stats(&p.stats, id);
            let mut row: Vec<String> = vec![p.label.clone()];
            row.extend(p.values.iter().map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }));
            row.push(id.clone());
            let triple = |(m, l, h): (Option<f64>, Option<f64>, Option<f64>)| {
                [csv_num(m), csv_num(l), csv_num(h)]
            };
            for m in &measures {
                row.extend(triple(estimate(&s[m.key()], "rate")));
                for list in [&c.first[m.index()], &c.previous[m.index()]] {
                    match list[k][a] {
                        Some(d) => row.extend([
                            csv_num(Some(d.difference)),
                            csv_num(Some(d.low)),
                            csv_num(Some(d.high)),
                            d.units.to_string(),
                        ]),
                        None => row.extend(std::iter::repeat_n(String::new(), 4)),
                    }
                }
            }
            row.extend(triple(estimate(&s["economic"], "mean")));
            w.write_record(&row).expect("writing to memory");
        }
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are text")
}

/// An agent's entry of a point's stats.json (`null` if it has none).
fn agent_stats(stats: &Value, id: &str) -> Value {
    stats["agents"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["agent"].as_str() == Some(id)).cloned())
        .unwrap_or(Value::Null)
}

/// The sweep's figures, each measure against the first swept parameter: with one parameter,
/// one figure per measure (`sweep`: the headline; `sweep-rounds`: rounds won, for point games),
/// one line per agent with its 95% band; with more, the headline only, one figure per agent
/// (`sweep-<slot>`, titled with the agent), one line per combination of the other values.
/// None when the first parameter's values are not numbers.
fn figure_specs(sweep: &Sweep) -> Vec<(String, FigureSpec)> {
    let agents = sweep.agents();
    if sweep.points.iter().any(|p| p.values[0].as_f64().is_none()) {
        return Vec::new();
    }
    let x_name = sweep.parameters[0].1.clone();
    let x_label = sweep.axis_title(0);
    let (unit, units) = sweep.units();
    let series_of = |points: &[&Point], agent: &str, m: Measure| {
        let mut line = Vec::new();
        let mut band = Vec::new();
        for p in points {
            let x = p.values[0].as_f64().unwrap_or(f64::NAN);
            let (e, l, h) = estimate(&agent_stats(&p.stats, agent)[m.key()], "rate");
            line.push((x, e.map_or(f64::NAN, |e| 100.0 * e)));
            if let (Some(l), Some(h)) = (l, h) {
                band.push((x, 100.0 * l, 100.0 * h));
            }
        }
        (line, band)
    };
    let band_text = |m: Measure| {
        let method = agent_stats(&sweep.points[0].stats, &agents[0])[m.key()]["ci95_method"]
            .as_str()
            .unwrap_or("wilson")
            .to_string();
        match method.as_str() {
            "wilson" => "95% Wilson intervals".to_string(),
            "normal" => "95% normal intervals".to_string(),
            u => format!("95% intervals by {u} (cluster-robust t, the {units} {u}s as units)"),
        }
    };
    let same = format!(
        "Every point played the same {units} {unit}s (common random numbers), so differences \
         between points are paired by {unit} (sweep.csv and the overview give them)."
    );
    let mut out = Vec::new();
    if sweep.parameters.len() == 1 {
        let points: Vec<&Point> = sweep.points.iter().collect();
        for m in sweep.metrics() {
            let series: Vec<Band> = agents
                .iter()
                .map(|a| {
                    let (points, band) = series_of(&points, a, m);
                    Band {
                        label: a.clone(),
                        points,
                        band: Some(band),
                    }
                })
                .collect();
            let (xl, yl) = (x_label.clone(), format!("{} (%)", capital(m.name())));
            let (stem, note) = match m {
                Measure::Rounds if sweep.points_scoring() => (
                    "sweep-rounds",
                    " A round's win rate depends on how many players are still in, so it \
                     describes play, while games won is the outcome.",
                ),
                _ => ("sweep", ""),
            };
            out.push((
                stem.to_string(),
                FigureSpec {
                    place: super::figures::Place::Own,
                    stem,
                    title: None,
                    caption: format!(
                        "Sweep `{}`: {} against {x_name}, one line per agent; shaded: {}. {same}{note}",
                        sweep.name,
                        m.name(),
                        band_text(m)
                    ),
                    draw: Box::new(move |title| {
                        plots::lines(title, &xl, &yl, &series, Width::OneColumn)
                    }),
                },
            ));
        }
        return out;
    }
    let m = sweep.metrics()[0];
    if let Some(grid) = grid_spec(sweep, m, &band_text(m), &same) {
        out.push(("sweep-grid".to_string(), grid));
    }
    for (slot, agent) in agents.iter().enumerate() {
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
                let (line, band) = series_of(points, agent, m);
                Band {
                    label: rest.clone(),
                    points: line,
                    band: Some(band),
                }
            })
            .collect();
        let (xl, yl, name) = (
            x_label.clone(),
            format!("{} (%)", capital(m.name())),
            agent.clone(),
        );
        out.push((
            format!("sweep-{}", slot + 1),
            FigureSpec {
                place: super::figures::Place::Own,
                stem: "sweep",
                title: Some(agent.clone()),
                caption: format!(
                    "Sweep `{}`: {} of `{agent}` against {x_name}, one line per value of the \
                     other swept parameters; shaded: {}. {same}",
                    sweep.name,
                    m.name(),
                    band_text(m)
                ),
                // Each agent's figure carries its name: the figures differ only by it.
                draw: Box::new(move |_| plots::lines(&name, &xl, &yl, &series, Width::OneColumn)),
            },
        ));
    }
    out
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
    let players = sweep.points[0].stats["info"]["players"]
        .as_f64()
        .unwrap_or(sweep.agents().len() as f64);
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
                            let (e, _, _) =
                                estimate(&agent_stats(&p.stats, agent)[m.key()], "rate");
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

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Writes one sweep's files and returns its section of the overview.
fn summarize(sweep: &Sweep, run: &Path, reports: &Path) -> anyhow::Result<String> {
    let dir = reports.join(&sweep.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let comparisons = compare(sweep, run)?;
    let csv_path = dir.join("sweep.csv");
    std::fs::write(&csv_path, csv(sweep, &comparisons))
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let mut drawn: Vec<(String, String, Vec<PathBuf>)> = Vec::new();
    let mut failed = Vec::new();
    for (stem, spec) in figure_specs(sweep) {
        match (spec.draw)("").and_then(|f| f.write(&dir.join("figures"), &stem)) {
            Ok(files) => drawn.push((stem, spec.caption, files)),
            Err(e) => failed.push(format!("{stem}: {e:#}")),
        }
    }
    let agents = sweep.agents();
    let (unit, units) = sweep.units();
    let measures = sweep.metrics();
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
    let mut header = "| point |".to_string();
    let mut rule = "|---|".to_string();
    for a in &agents {
        let _ = write!(header, " {a} |");
        rule.push_str("---:|");
    }
    let show = |d: Option<Paired>| match d {
        Some(d) => format!(
            "{} [{}, {}]{}",
            signed(100.0 * d.difference),
            num(Some(100.0 * d.low), 2),
            num(Some(100.0 * d.high), 2),
            if d.low > 0.0 || d.high < 0.0 { "*" } else { "" }
        ),
        None => "–".into(),
    };
    let along = if sweep.zip || sweep.parameters.len() == 1 {
        "the point before it".to_string()
    } else {
        format!(
            "the point before it along `{}` (the other values the same)",
            sweep.parameters[0].0
        )
    };
    for (i, m) in measures.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{} (%, with the 95% interval each point's report gives):\n\n{header}\n{rule}",
            capital(m.name())
        );
        for p in &sweep.points {
            let _ = write!(out, "| [{}](<{}/report.md>) |", p.label, p.stage);
            for a in &agents {
                let (e, l, h) = estimate(&agent_stats(&p.stats, a)[m.key()], "rate");
                let pct = |x: Option<f64>| num(x.map(|x| 100.0 * x), 2);
                let _ = write!(out, " {} [{}, {}] |", pct(e), pct(l), pct(h));
            }
            out.push('\n');
        }
        if sweep.points.len() < 2 {
            continue;
        }
        let first = &sweep.points[0].label;
        let mut lists = vec![(
            format!("each point against the first (`{first}`)"),
            &comparisons.first[m.index()],
        )];
        // The headline also against its neighbour; the second measure against the first point.
        if i == 0 {
            lists.push((
                format!("each point against {along}"),
                &comparisons.previous[m.index()],
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
                    let _ = write!(out, " {} |", show(*d));
                }
                out.push('\n');
            }
        }
    }
    if sweep.points.len() > 1 {
        let _ = writeln!(
            out,
            "\nEach interval is one comparison's: over many points and agents, some exclude 0 by \
             chance alone (one in twenty at 95% where nothing changes)."
        );
    }
    for (stem, caption, _) in &drawn {
        let _ = writeln!(
            out,
            "\n![{caption}](<{}/figures/{stem}.svg>)\n\n*{caption}*",
            sweep.name
        );
    }
    if drawn.is_empty() && failed.is_empty() {
        let _ = writeln!(
            out,
            "\nNo figure: the values of `{}` are not numbers (the tables above give every point).",
            sweep.parameters[0].0
        );
    }
    for f in failed {
        let _ = writeln!(out, "\nA figure could not be drawn ({f}).");
    }
    Ok(out)
}

fn signed(x: f64) -> String {
    let s = num(Some(x), 2);
    if x > 0.0 && s != "0.00" {
        format!("+{s}")
    } else {
        s
    }
}
