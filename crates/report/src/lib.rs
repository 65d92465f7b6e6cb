//! Statistics and figures of a run, computed from its records alone.
//!
//! Per stage, beside the records: `report.md` (tables and figures, readable on GitHub),
//! `stats.json` (every number of the report), `tables/*.csv` and `tables/*.tex` (booktabs),
//! and `figures/*.{svg,png,pdf}`. `dhumbal-run report DIR` regenerates them; the runner writes
//! them after each stage. Definitions, and where they differ from the paper's, are in
//! `docs/analysis.md`.
//!
//! Layout: [`load`] (records and the stage's description), [`metrics`] (the one pass over the
//! records), [`stats`] and [`dist`] (tests, intervals, distributions), [`power`] (power, sample
//! size, minimum detectable effect), [`analyze`] (from moments to statistics), [`tables`]
//! (CSV, LaTeX, Markdown), [`figures`] (what each figure shows, drawn by `dhumbal_plots`),
//! [`report`] (the files), [`stats_file`] (`stats.json` as written and as read back),
//! [`overview`] (the page of a run of several stages), [`plan`] (sample size before a run).
//! What fails fails with one [`Error`] ([`error`]).

pub mod analyze;
pub mod cost;
pub mod error;
pub mod exploit;
pub mod figures;
pub mod load;
pub mod metrics;
pub mod overview;
pub mod plan;
pub mod ratings;
pub mod report;
pub mod sequential;
pub mod stats_file;
pub mod study;
pub mod sweep;
pub mod tables;
pub mod training;
pub mod tuning;

use std::path::Path;

use serde::Serialize;

pub use analyze::{Options, StageAnalysis};
/// The statistics, from `dhumbal-stats`, at the paths the report has always used.
pub use dhumbal_stats::{dist, power, stats};
pub use error::{Error, Result};
pub use load::{Seating, StageInfo};
pub use overview::write_overview;
pub use report::{StageReport, report_analyzed, report_dir, report_stage};

/// Whose definitions the statistics follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Definitions {
    /// Ours (docs/analysis.md): sample variances in Cohen's d, Wilson intervals, Holm-adjusted
    /// stars on the paired test where the design pairs.
    #[default]
    Ours,
    /// The paper's public code, to reproduce its numbers: population variances in Cohen's d,
    /// the normal win interval with z = 1.96, stars on Bonferroni-adjusted Welch p-values, the
    /// paper's five metrics under its names.
    Paper,
}

/// Each agent's headline intervals as the stage's report gives them (stats.json's `win.ci95`
/// and `games.ci95`, by deal or game in blocked designs), for the run's `summary.csv` and the
/// table printed at the end of a stage, from the stage's analysis ([`analyze_stage`]).
pub fn design_intervals(analysis: &StageAnalysis) -> Vec<dhumbal_runner::summary::DesignIntervals> {
    let pair = |c: Option<[f64; 2]>| c.map(|[l, h]| (l, h));
    analysis
        .agents
        .iter()
        .map(|a| dhumbal_runner::summary::DesignIntervals {
            win: pair(a.win.ci95),
            win_method: a.win.ci95_method,
            game_win: a.games.as_ref().and_then(|g| pair(g.ci95)),
            game_win_method: a.games.as_ref().map_or("wilson", |g| g.ci95_method),
        })
        .collect()
}

/// Analyses a stage from a pass over its records ([`metrics::Stream`], made while they were
/// played, or by [`metrics::accumulate`] from the dataset).
pub fn analyze_streamed(
    info: &StageInfo,
    acc: metrics::Accumulated,
    opts: &Options,
) -> (StageAnalysis, metrics::Accumulated) {
    (analyze::analyze(info, &acc, opts), acc)
}

/// [`analyze_streamed`] with the ratings that the stage's report shows (its
/// `StageAnalysis::ratings`), fitted on a thread of their own while the rest of the analysis
/// is made: a report needs both, and the ratings' bootstrap and the power solves of the
/// analysis each take a few tens of milliseconds of a million rounds' report. The same
/// numbers as fitting them afterwards ([`report_analyzed`] does when they are missing).
pub fn analyze_for_report(
    info: &StageInfo,
    acc: metrics::Accumulated,
    opts: &Options,
) -> (StageAnalysis, metrics::Accumulated) {
    let analysis = std::thread::scope(|scope| {
        let ratings = scope.spawn(|| ratings::of_stage(info, &acc.ratings, &opts.ratings));
        let mut analysis = analyze::analyze(info, &acc, opts);
        analysis.ratings = ratings
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        analysis
    });
    (analysis, acc)
}

/// Analyses the stage whose records are in `dir` (without writing anything).
pub fn analyze_stage(
    dir: &Path,
    info: &StageInfo,
    opts: &Options,
) -> Result<(StageAnalysis, metrics::Accumulated)> {
    Ok(analyze_streamed(
        info,
        metrics::accumulate(dir, info)?,
        opts,
    ))
}
