//! `summary.csv` (one row per agent) and `manifest.json` (what ran, how, how fast).

use std::path::Path;

use anyhow::Context;
use polars::prelude::{Column, CsvWriter, DataFrame, SerWriter};

use crate::run::{RunOptions, RunReport, StageResult};
use crate::scenario::Scenario;
use crate::totals::{Z_95, wilson};

/// One agent's line of the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub agent: String,
    pub kind: String,
    pub rounds: u64,
    pub wins: u64,
    pub win_rate: f64,
    pub win_ci_low: f64,
    pub win_ci_high: f64,
    pub mean_coin_delta: f64,
    pub mean_points_delta: f64,
    pub calls: u64,
    pub calls_per_round: f64,
    pub call_success_rate: Option<f64>,
    pub cards_discarded_per_round: f64,
    pub pile_picks_per_round: f64,
    pub decisions: u64,
    pub mean_decision_us: Option<f64>,
    pub games: u64,
    pub game_wins: u64,
}

/// The summary of a stage, one row per agent slot.
pub fn rows(result: &StageResult) -> Vec<SummaryRow> {
    result
        .agents
        .iter()
        .zip(&result.totals.agents)
        .map(|(def, t)| {
            let per_round = |x: u64| {
                if t.rounds == 0 {
                    0.0
                } else {
                    x as f64 / t.rounds as f64
                }
            };
            let (lo, hi) = wilson(t.wins, t.rounds, Z_95).unwrap_or((0.0, 1.0));
            SummaryRow {
                agent: def.id.clone(),
                kind: def.kind.clone(),
                rounds: t.rounds,
                wins: t.wins,
                win_rate: t.win_rate(),
                win_ci_low: lo,
                win_ci_high: hi,
                mean_coin_delta: t.mean_coin_delta(),
                mean_points_delta: t.mean_points_delta(),
                calls: t.calls,
                calls_per_round: per_round(t.calls),
                call_success_rate: t.call_success_rate(),
                cards_discarded_per_round: per_round(t.cards_discarded),
                pile_picks_per_round: per_round(t.pile_picks),
                decisions: t.decisions,
                mean_decision_us: t.mean_decision_us(),
                games: t.games,
                game_wins: t.game_wins,
            }
        })
        .collect()
}

/// Writes `summary.csv`.
pub fn write_summary_csv(path: &Path, result: &StageResult) -> anyhow::Result<()> {
    let rows = rows(result);
    let n = rows.len();
    let col_f = |name: &str, f: &dyn Fn(&SummaryRow) -> f64| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let col_o = |name: &str, f: &dyn Fn(&SummaryRow) -> Option<f64>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let col_u = |name: &str, f: &dyn Fn(&SummaryRow) -> u64| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let mut df = DataFrame::new(
        n,
        vec![
            Column::new("stage".into(), vec![result.name.as_str(); n]),
            Column::new(
                "agent".into(),
                rows.iter().map(|r| r.agent.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "kind".into(),
                rows.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
            ),
            col_u("rounds", &|r| r.rounds),
            col_u("wins", &|r| r.wins),
            col_f("win_rate", &|r| r.win_rate),
            col_f("win_ci95_low", &|r| r.win_ci_low),
            col_f("win_ci95_high", &|r| r.win_ci_high),
            col_f("mean_coin_delta", &|r| r.mean_coin_delta),
            col_f("mean_points_delta", &|r| r.mean_points_delta),
            col_u("calls", &|r| r.calls),
            col_f("calls_per_round", &|r| r.calls_per_round),
            col_o("call_success_rate", &|r| r.call_success_rate),
            col_f("cards_discarded_per_round", &|r| {
                r.cards_discarded_per_round
            }),
            col_f("pile_picks_per_round", &|r| r.pile_picks_per_round),
            col_u("decisions", &|r| r.decisions),
            col_o("mean_decision_us", &|r| r.mean_decision_us),
            col_u("games", &|r| r.games),
            col_u("game_wins", &|r| r.game_wins),
        ],
    )?;
    let mut file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    CsvWriter::new(&mut file).finish(&mut df)?;
    Ok(())
}

/// The summary as an aligned text table for the terminal.
pub fn table(result: &StageResult, points: bool) -> String {
    let rows = rows(result);
    let mut out = String::new();
    let width = rows.iter().map(|r| r.agent.len()).max().unwrap_or(5).max(5);
    let econ = if points {
        "points/round"
    } else {
        "coins/round"
    };
    out.push_str(&format!(
        "{:<width$} {:>9} {:>8} {:>17} {:>12} {:>7} {:>9} {:>10} {:>12}\n",
        "agent",
        "rounds",
        "win %",
        "95% CI (Wilson)",
        econ,
        "calls",
        "success %",
        "cards/rd",
        "decision us"
    ));
    let games_header = points.then(|| format!("{:>17}", "games won"));
    if let Some(h) = &games_header {
        out.insert_str(out.len() - 1, &format!(" {h}"));
    }
    for r in rows {
        let econ = if points {
            r.mean_points_delta
        } else {
            r.mean_coin_delta
        };
        out.push_str(&format!(
            "{:<width$} {:>9} {:>8.2} {:>17} {:>12.3} {:>7} {:>9} {:>10.3} {:>12}\n",
            r.agent,
            r.rounds,
            100.0 * r.win_rate,
            format!(
                "[{:.2}, {:.2}]",
                100.0 * r.win_ci_low,
                100.0 * r.win_ci_high
            ),
            econ,
            r.calls,
            r.call_success_rate
                .map_or("-".to_string(), |s| format!("{:.2}", 100.0 * s)),
            r.cards_discarded_per_round,
            r.mean_decision_us
                .map_or("-".to_string(), |d| format!("{d:.3}")),
        ));
        if points {
            let won = format!(
                "{}/{} ({:.1}%)",
                r.game_wins,
                r.games,
                100.0 * r.game_wins as f64 / r.games.max(1) as f64
            );
            out.insert_str(out.len() - 1, &format!(" {won:>17}"));
        }
    }
    out
}

/// Writes `manifest.json`.
pub fn write_manifest(
    path: &Path,
    scenario: &Scenario,
    opts: &RunOptions,
    report: &RunReport,
) -> anyhow::Result<()> {
    let manifest = serde_json::json!({
        "program": "dhumbal-run",
        "version": env!("CARGO_PKG_VERSION"),
        "scenario_file": scenario.path.display().to_string(),
        "scenario_hash": scenario.hash(),
        "seed": scenario.seed,
        "threads": opts.threads,
        "resumed": opts.resume,
        "source": format!("{}/run.json", crate::folder::SOURCE_DIR),
        "wall_seconds": report.seconds,
        "rounds": report.rounds,
        "rounds_this_run": report.rounds_now,
        "rounds_per_second": if report.seconds > 0.0 { report.rounds_now as f64 / report.seconds } else { 0.0 },
        "output": scenario.output,
        "stages": report.stages.iter().map(|s| serde_json::json!({
            "name": s.name,
            "dir": s.dir.display().to_string(),
            "rounds": s.totals.rounds,
            "seconds": s.seconds,
            "agents": s.agents.iter().map(|a| a.spec.clone()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "scenario": scenario.resolved_json(),
    });
    std::fs::write(path, serde_json::to_vec_pretty(&manifest)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
