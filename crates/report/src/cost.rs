//! Strength by time per decision: the overview's section that puts stages facing one field
//! on one scale of cost. Each stage (or sweep point) is a point: its first agent's mean time
//! per decision (all its timed decisions, total time over decisions) against its headline
//! rate (games won under point scoring, rounds won otherwise) with the stage's own 95%
//! interval; a sweep's points are one line (a search at four budgets, say), a lone stage a
//! dot (a network, a heuristic). `cost/cost.csv` has every point, `cost/figures/` a figure
//! per field.
//!
//! Stages are put together when they play under the same rules against the same field (the
//! agents after the first, by id, in slot order), and a figure is drawn only where their
//! times differ by a factor of two or more: a sweep of a rule's threshold, whose agent thinks
//! as long at every point, gets no such figure. The times are measurements of the machine
//! and threads that played, never budgets (the budgets are iterations, in the scenario); the
//! section says so, with the run's threads.
//!
//! Like the overview, it reads only what is on disk: the manifest and each stage's
//! `stats.json`.

use std::fmt::Write as _;
use std::path::Path;

use dhumbal_plots::{self as plots, CostPoint, CostSeries, Width};
use dhumbal_runner::summary::Manifest;

use super::error::{Doing, Result};
use super::overview::{cell, estimate, rate_text};
use super::stats_file::{Rate, StatsFile};
use super::tables::{capital, csv_field, csv_num, sig};

/// The folder of the section's files under the reports folder.
const DIR: &str = "cost";

/// Times per decision must span at least this factor for a figure.
const SPAN: f64 = 2.0;

/// One stage as a point of cost and strength.
struct Entry {
    stage: String,
    /// The sweep it is a point of, or the stage's own name.
    series: String,
    agent: String,
    /// Mean microseconds per decision of the first agent, and how many decisions were timed.
    micros: Option<f64>,
    timed: u64,
    rate: Rate,
}

/// Stages under the same rules against the same field.
struct Field {
    /// The rules as resolved (their JSON) and the others' ids: the grouping key.
    rules: String,
    others: Vec<String>,
    players: usize,
    /// `games won` or `rounds won`.
    measure: &'static str,
    entries: Vec<Entry>,
}

impl Field {
    /// The series in order of first appearance, each with its entries that have a time.
    fn series(&self) -> Vec<(&str, Vec<&Entry>)> {
        let mut out: Vec<(&str, Vec<&Entry>)> = Vec::new();
        for e in &self.entries {
            let at = match out.iter().position(|(s, _)| *s == e.series) {
                Some(i) => i,
                None => {
                    out.push((&e.series, Vec::new()));
                    out.len() - 1
                }
            };
            if e.micros.is_some_and(|m| m > 0.0) {
                out[at].1.push(e);
            }
        }
        out
    }

    /// Whether the field gets a figure: two timed stages or more whose times differ by
    /// [`SPAN`] or more.
    fn spans(&self) -> bool {
        let times: Vec<f64> = (self.entries.iter())
            .filter_map(|e| e.micros)
            .filter(|m| *m > 0.0)
            .collect();
        let (lo, hi) = times.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
        times.len() >= 2 && hi >= SPAN * lo
    }
}

/// The run's stages, grouped by field, in the order the scenario gives them.
fn fields(manifest: &Manifest, reports: &Path) -> Result<Vec<Field>> {
    let mut out: Vec<Field> = Vec::new();
    for stage in &manifest.scenario.stages {
        let stats = StatsFile::read(&reports.join(&stage.name))?;
        let Some(first) = stats.agents.first() else {
            continue;
        };
        let points = stats.info.points;
        let Some(rate) = first.headline(points).cloned() else {
            continue;
        };
        let rules = serde_json::to_string(&stage.rules).unwrap_or_default();
        let others: Vec<String> = stats.agents[1..].iter().map(|a| a.agent.clone()).collect();
        let entry = Entry {
            stage: stage.name.clone(),
            series: (stage.sweep.as_ref()).map_or_else(|| stage.name.clone(), |s| s.name.clone()),
            agent: first.agent.clone(),
            micros: first.decision_time.as_ref().and_then(|d| d.mean_us),
            timed: first.decision_time.as_ref().map_or(0, |d| d.decisions),
            rate,
        };
        match (out.iter_mut()).find(|f| f.rules == rules && f.others == others) {
            Some(f) => f.entries.push(entry),
            None => out.push(Field {
                rules,
                others,
                players: stats.design.players,
                measure: if points { "games won" } else { "rounds won" },
                entries: vec![entry],
            }),
        }
    }
    Ok(out)
}

/// Writes `cost/cost.csv` and a figure per field whose times span [`SPAN`], and returns the
/// overview's section (empty when no field does). What cannot be written is said on the page.
pub fn section(manifest: &Manifest, reports: &Path) -> String {
    let fields = match fields(manifest, reports) {
        Ok(f) => f,
        Err(e) => {
            return format!(
                "\n## Strength by time per decision\n\nThis section could not be written: {e:#}.\n"
            );
        }
    };
    let shown: Vec<&Field> = fields.iter().filter(|f| f.spans()).collect();
    if shown.is_empty() {
        return String::new();
    }
    match write(&shown, manifest, reports) {
        Ok(text) => text,
        Err(e) => format!(
            "\n## Strength by time per decision\n\nThis section could not be written: {e:#}.\n"
        ),
    }
}

fn write(shown: &[&Field], manifest: &Manifest, reports: &Path) -> Result<String> {
    let dir = reports.join(DIR);
    std::fs::create_dir_all(&dir).doing("cannot create", &dir)?;
    let path = dir.join("cost.csv");
    std::fs::write(&path, csv(shown)).doing("cannot write", &path)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Strength by time per decision\n\nStages that play under the same rules against \
         the same field, put on one scale of cost: each stage's first agent, its {} with the \
         stage's 95% interval against its mean time per decision (every timed decision: total \
         time over decisions). A sweep's points are one line, a stage alone a dot. The times \
         are measurements of the machine that played ({} thread{}, other agents' decisions \
         sharing it), not budgets: the budgets are the scenario's iterations, and a time \
         measured on another machine moves every point sideways alike. Every point: \
         [{DIR}/cost.csv](<{DIR}/cost.csv>).",
        measures(shown),
        manifest.threads,
        if manifest.threads == 1 { "" } else { "s" },
    );
    for (k, field) in shown.iter().enumerate() {
        let stem = format!("cost-{}", k + 1);
        let _ = writeln!(
            out,
            "\n### {} players against {}\n",
            field.players,
            cell(&field.others.join(", "))
        );
        table(&mut out, field);
        match figure(field).and_then(|f| f.write(&dir.join("figures"), &stem)) {
            Ok(_) => {
                let caption = format!(
                    "{} of the first agent against its mean time per decision (µs, log scale), \
                     {} players against {}; bars: 95% intervals.",
                    capital(field.measure),
                    field.players,
                    field.others.join(", ")
                );
                let _ = writeln!(
                    out,
                    "\n![{caption}](<{DIR}/figures/{stem}.svg>)\n\n*{caption}*"
                );
            }
            Err(e) => {
                let _ = writeln!(out, "\nThe figure could not be drawn ({e:#}).");
            }
        }
    }
    Ok(out)
}

/// `games won`, `rounds won`, or both when the fields differ.
fn measures(shown: &[&Field]) -> String {
    let mut m: Vec<&str> = shown.iter().map(|f| f.measure).collect();
    m.dedup();
    if m.len() == 1 {
        m[0].to_string()
    } else {
        "games won (point games) or rounds won".to_string()
    }
}

fn table(out: &mut String, field: &Field) {
    let _ = writeln!(
        out,
        "| line | stage | first agent | µs per decision | {} (%) |\n|---|---|---|---:|---:|",
        field.measure
    );
    for e in &field.entries {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&e.series),
            cell(&e.stage),
            cell(&e.agent),
            e.micros
                .map_or_else(|| "not timed".to_string(), |m| sig(Some(m))),
            rate_text(estimate(e.rate.rate, e.rate.ci95))
        );
    }
}

fn figure(field: &Field) -> plots::Result<plots::Figure> {
    let series: Vec<CostSeries> = (field.series().into_iter())
        .filter(|(_, entries)| !entries.is_empty())
        .map(|(label, entries)| CostSeries {
            label: label.to_string(),
            points: (entries.iter())
                .map(|e| {
                    let [low, high] = e.rate.ci95.unwrap_or([f64::NAN, f64::NAN]);
                    CostPoint {
                        x: e.micros.unwrap_or(f64::NAN),
                        y: 100.0 * e.rate.rate.unwrap_or(f64::NAN),
                        low: 100.0 * low,
                        high: 100.0 * high,
                    }
                })
                .collect(),
        })
        .collect();
    plots::cost_curves(
        "",
        "Mean time per decision (µs, log scale)",
        &format!("{} (%)", capital(field.measure)),
        &series,
        Width::OneColumn,
    )
}

/// One row per stage of a field with a figure.
fn csv(shown: &[&Field]) -> String {
    let mut out = String::from(
        "field,players,others,line,stage,agent,micros_per_decision,decisions_timed,measure,\
         rate,ci95_low,ci95_high\n",
    );
    for (k, f) in shown.iter().enumerate() {
        for e in &f.entries {
            let [lo, hi] = e
                .rate
                .ci95
                .map_or([None, None], |[l, h]| [Some(l), Some(h)]);
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                k + 1,
                f.players,
                csv_field(&f.others.join(" ")),
                csv_field(&e.series),
                csv_field(&e.stage),
                csv_field(&e.agent),
                csv_num(e.micros),
                e.timed,
                f.measure,
                csv_num(e.rate.rate),
                csv_num(lo),
                csv_num(hi),
            );
        }
    }
    out
}
