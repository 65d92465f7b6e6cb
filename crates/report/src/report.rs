//! Writing a stage's report: `stats.json`, `tables/`, `figures/` and `report.md`, beside the
//! records. Statistics first, then tables, then figures, so that a figure that fails costs
//! only itself.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dhumbal_runner::folder::Refusal;

use super::analyze::{Metric, StageAnalysis};
use super::error::{Doing, Error, Result};
use super::figures::{self, FigureOutcome, Place};
use super::load::{self, StageInfo};
use super::sequential::Entry;
use super::stats_file;
use super::tables::{self, num, pval};
use super::{Definitions, Options, analyze_for_report};

/// What a stage's report consists of.
pub struct StageReport {
    pub dir: PathBuf,
    pub analysis: StageAnalysis,
    pub files: Vec<PathBuf>,
    /// Figures that could not be drawn, with the reason.
    pub figure_errors: Vec<(String, String)>,
}

/// Regenerates the report of every stage under `root` (a run folder or one stage's folder),
/// beside the records or, with `out`, under `out` (one subfolder per stage, as in `root`).
/// Every stage is described (manifest, summary, records) and every destination checked before
/// any is analysed, so that a bad description writes nothing; a stage whose records fail
/// writes nothing of its own. An existing report is replaced only with `force` (otherwise a
/// [`Refusal`] names it).
pub fn report_dir(
    root: &Path,
    out: Option<&Path>,
    force: bool,
    opts: &Options,
) -> Result<Vec<StageReport>> {
    let mut stages = Vec::new();
    for dir in load::stage_dirs(root)? {
        let info = load::stage_info(&dir)?;
        let dest = match out {
            None => dir.clone(),
            Some(out) => out.join(dir.strip_prefix(root).unwrap_or(Path::new(""))),
        };
        stages.push((dir, dest, info));
    }
    if !force
        && let Some((_, dest, _)) = stages
            .iter()
            .find(|(_, dest, _)| dest.join("report.md").exists())
    {
        return Err(Refusal(format!(
            "{} exists; nothing was written. --out DIR writes this report somewhere else, \
             --force replaces the existing one",
            dest.join("report.md").display()
        ))
        .into());
    }
    let mut reports = Vec::new();
    for (dir, dest, info) in stages {
        std::fs::create_dir_all(&dest).doing("cannot create", &dest)?;
        reports.push(
            report_stage(&dir, &dest, &info, opts).map_err(|e| Error::Stage {
                dir: dir.clone(),
                source: Box::new(e),
            })?,
        );
    }
    Ok(reports)
}

/// Analyses the records in `records` and writes the report files to `dir` (the same folder
/// for a run's own report).
pub fn report_stage(
    records: &Path,
    dir: &Path,
    info: &StageInfo,
    opts: &Options,
) -> Result<StageReport> {
    let acc = super::metrics::accumulate(records, info)?;
    let (analysis, acc) = analyze_for_report(info, acc, opts);
    write_report(records, dir, opts, analysis, acc)
}

/// [`report_stage`] from the analysis [`analyze_for_report`] (or [`crate::analyze_stage`])
/// made of the same records with the same options (a run computes it once, for the stage's
/// summary and its report). The ratings are fitted here if the analysis has none.
pub fn report_analyzed(
    dir: &Path,
    opts: &Options,
    analysis: StageAnalysis,
    acc: super::metrics::Accumulated,
) -> Result<StageReport> {
    write_report(dir, dir, opts, analysis, acc)
}

/// The report of the records in `records`, written to `dir`. A sequential stage's test is
/// computed again from its records (and refused when it contradicts the decision the runner
/// kept) before anything is written: its outcome goes into stats.json, its block and figure
/// into report.md.
fn write_report(
    records: &Path,
    dir: &Path,
    opts: &Options,
    mut analysis: StageAnalysis,
    acc: super::metrics::Accumulated,
) -> Result<StageReport> {
    if analysis.ratings.is_none() {
        // Fitted beside the analysis when it was made for a report (`analyze_for_report`).
        analysis.ratings = super::ratings::of_stage(&analysis.info, &acc.ratings, &opts.ratings);
    }
    let sequential = super::sequential::outcome(records)?.map(Entry::of);
    let mut files = Vec::new();
    // The figures are drawn on their own threads while stats.json and the tables are written
    // (their specs own what they draw from); an error writing those is the one reported.
    let fig_dir = dir.join("figures");
    let specs = opts.figures.then(|| figures::specs(&analysis, &acc));
    let (written, drawn) = std::thread::scope(|scope| {
        let drawing = specs.map(|specs| {
            scope.spawn(|| -> Result<Vec<FigureOutcome>> {
                std::fs::create_dir_all(&fig_dir).doing("cannot create", &fig_dir)?;
                Ok(figures::draw_all(specs, &fig_dir))
            })
        });
        let written = write_tables(dir, &analysis, sequential.as_ref(), &mut files);
        let drawn = drawing.map_or_else(
            || Ok(Vec::new()),
            |d| {
                d.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            },
        );
        (written, drawn)
    });
    written?;
    let outcomes = drawn?;
    for o in &outcomes {
        files.extend(o.files.iter().cloned());
    }
    // A stage of a run with an `exploit:` section (the run's folder, or the stage's own for
    // a run of one stage): its measured agents get their column beside the ratings.
    let exploits = match (records == dir, records.parent()) {
        (same, Some(run)) if run.join("exploit").is_dir() => {
            crate::exploit::Column::of_run(run, same.then_some("../"))
        }
        (same, _) => crate::exploit::Column::of_run(records, same.then_some("")),
    };
    let mut page = markdown(&analysis, &outcomes, &exploits);
    let mut drawn_after = Vec::new();
    if let Some(s) = &sequential {
        super::sequential::attach(&s.outcome, &mut page, dir, opts.figures, &mut drawn_after)?;
    }
    write_file(dir.join("report.md"), &page, &mut files)?;
    files.extend(drawn_after);
    let figure_errors = outcomes
        .iter()
        .filter_map(|o| o.error.clone().map(|e| (o.stem.to_string(), e)))
        .collect();
    Ok(StageReport {
        dir: dir.to_path_buf(),
        analysis,
        files,
        figure_errors,
    })
}

/// Writes `text` to `path` and lists the file.
fn write_file(path: PathBuf, text: &str, files: &mut Vec<PathBuf>) -> Result<()> {
    std::fs::write(&path, text).doing("cannot write", &path)?;
    files.push(path);
    Ok(())
}

/// stats.json and the tables of a stage's report.
fn write_tables(
    dir: &Path,
    analysis: &StageAnalysis,
    sequential: Option<&Entry>,
    files: &mut Vec<PathBuf>,
) -> Result<()> {
    let json = serde_json::to_string_pretty(&stats_file::Written {
        format: stats_file::FORMAT,
        analysis,
        sequential,
    })
    .doing("cannot write", &dir.join(stats_file::FILE))?;
    write_file(dir.join(stats_file::FILE), &json, files)?;

    let tables_dir = dir.join("tables");
    std::fs::create_dir_all(&tables_dir).doing("cannot create", &tables_dir)?;
    let stage = &analysis.stage;
    write_file(
        tables_dir.join("agents.csv"),
        &tables::agents_csv(analysis),
        files,
    )?;
    write_file(
        tables_dir.join("agents.tex"),
        &tables::agents_table(analysis).to_latex(
            &format!(
                "Per-agent metrics, stage {stage} ({}).",
                if analysis.info.points {
                    format!(
                        "{} games per agent, each arrangement of a game counted once",
                        analysis.power.independent.units_per_agent
                    )
                } else {
                    format!(
                        "{} rounds per agent",
                        analysis.power.independent.rounds_per_agent
                    )
                }
            ),
            &format!("tab:{}-agents", label(stage)),
        ),
        files,
    )?;
    write_file(
        tables_dir.join("pairwise.csv"),
        &tables::pairwise_csv(analysis),
        files,
    )?;
    write_file(
        tables_dir.join("pairwise.tex"),
        &tables::pairwise_summary_table(analysis).to_latex(
            &format!(
                "Pairwise comparisons, stage {stage}: per metric, the primary test's effect size and \
                 its {} p-value ({}).",
                match analysis.definitions {
                    Definitions::Ours => {
                        "Holm-adjusted (paired test by the design's unit, effect Cohen's d_z, \
                         the difference over the SD of the unit differences; for call success \
                         the clustered test, effect Cohen's h)"
                    }
                    Definitions::Paper => "Bonferroni-adjusted Welch (effect Cohen's d)",
                },
                "* p<0.05, ** p<0.01, *** p<0.001"
            ),
            &format!("tab:{}-pairwise", label(stage)),
        ),
        files,
    )?;
    write_file(
        tables_dir.join("seats.csv"),
        &tables::positions_csv(analysis),
        files,
    )?;
    write_file(
        tables_dir.join("seats.tex"),
        &tables::positions_table(analysis, &analysis.seats, false).to_latex(
            &format!("Win rate by seat, stage {stage}."),
            &format!("tab:{}-seats", label(stage)),
        ),
        files,
    )?;
    if let Some(r) = &analysis.ratings {
        write_file(
            tables_dir.join("ratings.csv"),
            &super::ratings::csv(stage, r),
            files,
        )?;
        if !r.agents.is_empty() {
            write_file(
                tables_dir.join("ratings.tex"),
                &super::ratings::table(r).to_latex(
                    &format!("Ratings, stage {stage} (Elo, 95% bootstrap intervals)."),
                    &format!("tab:{}-ratings", label(stage)),
                ),
                files,
            )?;
        }
    }

    Ok(())
}

/// A LaTeX label fragment from a stage name.
fn label(stage: &str) -> String {
    stage
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// Every drawn figure of `place`, in declaration order ([`figures::Place`]).
fn figures_at(out: &mut String, outcomes: &[FigureOutcome], place: Place) {
    for o in outcomes.iter().filter(|o| o.place == place) {
        out.push_str(&figures::markdown(o, "figures"));
    }
}

/// `report.md`: the design, the agents, the pairwise comparisons, the ratings, seats and
/// starting positions, the figures over the rounds, power and notes.
fn markdown(
    s: &StageAnalysis,
    figs: &[FigureOutcome],
    exploits: &crate::exploit::Column,
) -> String {
    let mut out = String::new();
    let paper = s.definitions == Definitions::Paper;
    let _ = writeln!(out, "# Stage `{}`: statistics\n", s.stage);
    let _ = writeln!(
        out,
        "Computed by `dhumbal-run report` from this folder's records alone; every number is \
         also in [`stats.json`](stats.json) and the tables in [`tables/`](tables/) (CSV at full \
         precision, LaTeX with booktabs). Definitions: **{}** (see `docs/analysis.md`).\n",
        if paper { "the paper's" } else { "ours" }
    );

    design_section(&mut out, s);
    agents_section(&mut out, s, figs);
    pairwise_section(&mut out, s, figs);
    if let Some(r) = &s.ratings {
        out.push_str(&super::ratings::section(
            r,
            figs,
            "of this stage's agents",
            "tables/ratings.csv",
            exploits,
        ));
    }

    let _ = writeln!(out, "## Seats and starting positions\n");
    out.push_str(&tables::positions_table(s, &s.seats, false).to_markdown());
    out.push('\n');
    figures_at(&mut out, figs, Place::Seats);
    if s.design.starts_vary {
        let _ = writeln!(
            out,
            "By position relative to the player who started the round:\n"
        );
        out.push_str(&tables::positions_table(s, &s.start_positions, true).to_markdown());
        out.push('\n');
        figures_at(&mut out, figs, Place::Starts);
    }

    let _ = writeln!(out, "## Over the rounds\n");
    figures_at(&mut out, figs, Place::OverRounds);

    power_section(&mut out, s);

    if !s.notes.is_empty() {
        let _ = writeln!(out, "## Notes\n");
        for n in &s.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    let failed: Vec<&FigureOutcome> = figs.iter().filter(|f| f.error.is_some()).collect();
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "Figures not drawn: {}.\n",
            failed.iter().map(|f| f.stem).collect::<Vec<_>>().join(", ")
        );
    }
    out
}

/// "Design": the design's table, its unit of analysis, the table sizes of point games, and
/// what the design did to the variance.
fn design_section(out: &mut String, s: &StageAnalysis) {
    let d = &s.design;
    let _ = writeln!(out, "## Design\n");
    let unit_text = match d.unit {
        "deal" => format!(
            "the deal: all {} seat arrangements of one deal form a block, and per-agent means \
             over the block are paired across agents",
            d.arrangements
        ),
        "game" => "the game: rounds of one game (with all its arrangements) share standings, \
                   so per-agent means per game are paired across agents"
            .to_string(),
        _ => "the round: all agents play every round, so rounds are paired across agents".into(),
    };
    let _ = writeln!(
        out,
        "| | |\n|---|---|\n| seating | `{}` ({} arrangement{} per {}) |\n| players | {} |\n| scoring | {} |\n| rounds | {} ({} records) |\n| units of analysis | {} {}s |\n| mean turns per round | {} |\n| seed | {} |\n",
        d.seating,
        d.arrangements,
        if d.arrangements == 1 { "" } else { "s" },
        if s.info.points { "game" } else { "deal" },
        d.players,
        d.scoring,
        d.rounds,
        d.rows,
        d.units,
        d.unit,
        num(d.mean_turns_per_round, 2),
        d.seed.map_or("–".into(), |s| s.to_string()),
    );
    let _ = writeln!(out, "Unit of analysis: {unit_text}.\n");
    if !d.table_mix.is_empty() {
        let mix: Vec<String> = d
            .table_mix
            .iter()
            .rev()
            .map(|t| format!("{} players {}%", t.players, num(Some(100.0 * t.share), 1)))
            .collect();
        let _ = writeln!(
            out,
            "Table sizes (share of records): {}. Players drop out of a point game, so its \
             later rounds are played at smaller tables, where a round is won more often.\n",
            mix.join(", ")
        );
    }
    variance_ratios(out, d);
}

/// What the design did to the variance, per metric ([`super::analyze::VarianceRatio`]).
fn variance_ratios(out: &mut String, d: &super::analyze::Design) {
    if !d.variance_ratio.is_empty() {
        let _ = writeln!(
            out,
            "What the design did to the variance, as ratios (below 1: less variance than the \
             reference, above 1: more). *Per agent* (median over agents): the variance of one \
             agent's mean under this design (by {unit}, cluster-robust) over that of as many \
             independent observations (s²/n): what blocking by {unit} did to each agent's own \
             estimate, the ratio of the squared widths of its interval by {unit} and its \
             Wilson interval. *Difference* (median over pairs): the variance of a mean \
             difference under this design (paired {unit} means) over Welch's s²ₐ/nₐ + s²ᵦ/nᵦ on \
             rounds, which treats the two agents as independent samples. It carries two things: \
             the blocking (the per-agent ratio) and the correlation of the agents at one table, \
             which is the game, not the design: one winner per round makes their wins \
             negatively correlated, and a difference of negatively correlated means varies more \
             than Welch assumes. *Pairing* (median over pairs): the variance of the {unit} \
             differences over the unpaired variance of the same {unit} means (1 − \
             2·cov/(varₐ + varᵦ)); above 1 when the agents are negatively correlated (in a \
             heads-up round one's win is the other's loss, so the pairing ratio of the win rate \
             is exactly 2 there); none for call success, whose calls do not pair. For call \
             success the design's test is the clustered comparison and the reference Welch's \
             test on calls; for games won, Welch's test on games. Welch's test on rounds \
             ignores all of this, so its p-values are too small wherever the difference ratio \
             exceeds 1.\n",
            unit = d.unit
        );
        let _ = writeln!(
            out,
            "| metric | per agent | its variance | difference | its variance | pairing |\n|---|---:|---:|---:|---:|---:|"
        );
        for v in &d.variance_ratio {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                v.metric,
                num(v.per_agent, 3),
                variance_change(v.per_agent),
                num(v.design, 3),
                variance_change(v.design),
                num(v.pairing, 3),
            );
        }
        out.push('\n');
    }
}

/// "Agents": the per-agent table, what its intervals are, and its figures.
fn agents_section(out: &mut String, s: &StageAnalysis, figs: &[FigureOutcome]) {
    let d = &s.design;
    let paper = s.definitions == Definitions::Paper;
    let _ = writeln!(out, "## Agents\n");
    out.push_str(&tables::agents_table(s).to_markdown());
    let unit = super::analyze::cluster_unit(&s.info);
    let units = s.agents.first().and_then(|a| a.win.units);
    let win_ci = match (paper, unit) {
        (true, Some(u)) => format!(
            "p ± 1.96·sqrt(p(1−p)/n) (the paper's eq. 6, rounds treated as independent), and \
             beside it the interval by {u} (cluster-robust, below), the one to trust here"
        ),
        (true, None) => "p ± 1.96·sqrt(p(1−p)/n) (the paper's eq. 6, clipped to [0, 100]%)".into(),
        (false, Some(u)) => format!(
            "**by {u}** (the primary interval): the cluster-robust t interval with the {}{u}s \
             as units (G − 1 degrees of freedom, clipped to [0, 100]%), because the rounds of \
             one {u} are not independent; beside it the Wilson interval, which treats every \
             round as independent and so misstates the uncertainty here{}, and the paper's \
             normal interval (eq. 6, clipped to [0, 100]%)",
            units.map_or(String::new(), |g| format!("{g} ")),
            wilson_against_units(s, u)
        ),
        (false, None) => "Wilson score (rounds are independent in this design); beside it the \
             paper's normal interval (eq. 6, clipped to [0, 100]%)"
            .into(),
    };
    let call_ci = match unit {
        Some(u) => format!(
            "by {u} (the calls of one {u} form a cluster; Wilson, calls independent, beside it)"
        ),
        None => "Wilson (calls independent: an agent calls at most once per round)".into(),
    };
    let games_ci = if !s.info.points {
        String::new()
    } else {
        format!(
            " Games won, the primary outcome: {} Win % per round is conditional on the table \
             sizes the agent played (an agent that survives longer plays more small tables); \
             the standardised column weights the agent's win rate at each table size by the \
             stage's table-size mix above (direct standardisation; it adjusts for the mix \
             only), with a cluster-robust interval by game (delta method, weights fixed; \
             clipped to [0, 100]%); it is missing for an agent that never played some table \
             size of the mix.",
            if s.info.seating.blocks() {
                "by game (the arrangements of one game form a cluster)."
            } else {
                "Wilson over games (each game played once)."
            }
        )
    };
    let _ = writeln!(
        out,
        "\nIntervals (95%): win rate {win_ci}; economic performance: t interval with {}s as \
         clusters (cluster-robust standard error, G − 1 degrees of freedom); call success: \
         {call_ci}.{games_ci} Risk r: Pearson correlation of hand value at the call with the \
         call's success over the agent's calls (the paper's eq. 9; negative: calls at higher \
         hands fail more often). Decision time: mean over the timed decisions (every deal's, or a \
         sample of deals': see the notes), in parentheses \
         the 95th percentile of the per-round mean time per decision; the figure shows the \
         median and 95th percentile of that per-round distribution.\n",
        d.unit
    );
    figures_at(out, figs, Place::Agents);
}

/// "Pairwise comparisons": what the tests are, the summary table, smaller families, the
/// effects figure and each metric's table.
fn pairwise_section(out: &mut String, s: &StageAnalysis, figs: &[FigureOutcome]) {
    let d = &s.design;
    let paper = s.definitions == Definitions::Paper;
    let _ = writeln!(out, "## Pairwise comparisons\n");
    let welch_role = if paper {
        "With the paper's definitions Welch's t-test is the primary test (stars on its \
         Bonferroni-adjusted p, effect Cohen's d), with the design's test beside it"
    } else {
        "Beside it, as the paper's reference, Welch's t-test"
    };
    let _ = writeln!(
        out,
        "Each metric is compared for every pair by the design's test: the paired test on \
         per-{unit} means (cluster-robust where {unit}s differ in size), and for call success \
         the clustered two-sample test over the {unit}s in which either agent called (the \
         calls of one {unit} are not independent; calls of two agents do not pair); effect: \
         Cohen's d_z, the difference over the SD of the {unit} differences (t/√G), and for \
         call success Cohen's h, 2·asin√pₐ − 2·asin√pᵦ. {welch_role} on rounds (calls for \
         call success, games for \
         games won; eq. 10, effect Cohen's d, eq. 11-12), which treats every observation as \
         independent. Decision time is described above, not tested (a clock measurement \
         depends on the machine and its load). Adjusted p-values: {}. Stars: {}; * p<0.05, \
         ** p<0.01, *** p<0.001. Difference: mean of the first agent minus the second.\n",
        s.families,
        s.stars_on,
        unit = d.unit,
    );
    out.push_str(&tables::pairwise_summary_table(s).to_markdown());
    out.push('\n');
    let k = s.power.pairs;
    let small: Vec<String> = tables::metrics_of(s)
        .into_iter()
        .filter_map(|m| {
            let r = s
                .pairwise
                .iter()
                .find(|r| r.metric == m.key() && r.primary)?;
            (r.family < k).then(|| {
                format!(
                    "{}: {} of the {k} pairs have a test (Bonferroni multiplies by {}, Holm \
                     steps over {})",
                    m.key(),
                    r.family,
                    r.family,
                    r.family
                )
            })
        })
        .collect();
    if !small.is_empty() {
        let _ = writeln!(
            out,
            "Smaller families: {}; a pair has no test when a mean or its variance is \
             undefined (e.g. an agent that never called has no call success).\n",
            small.join("; ")
        );
    }
    figures_at(out, figs, Place::Effects);
    for m in tables::metrics_of(s) {
        let _ = writeln!(out, "### {}\n", heading(s, m));
        out.push_str(&tables::pairwise_table(s, m).to_markdown());
        out.push('\n');
    }
}

/// A variance ratio as a change in words that cannot be misread: "−29.1% (less)" is less
/// variance, "+41.8% (more)" more, and one that rounds to nothing (a ratio of 1: a fixed
/// design whose units are its rounds leaves each agent's variance as it was) "0.0% (the
/// same)", not "+0.0% (more)"; an en dash for none.
fn variance_change(ratio: Option<f64>) -> String {
    ratio.map_or("–".into(), |r| {
        let c = 100.0 * (r - 1.0);
        let text = num(Some(c.abs()), 1);
        if text == num(Some(0.0), 1) {
            format!("{text}% (the same)")
        } else if c < 0.0 {
            format!("−{text}% (less)")
        } else {
            format!("+{text}% (more)")
        }
    })
}

fn heading(s: &StageAnalysis, m: Metric) -> String {
    let label = m.label(s.info.points);
    match m.paper_key() {
        Some(k) if s.definitions == Definitions::Paper => format!("{label} (paper: `{k}`)"),
        _ => label.to_string(),
    }
}

/// The power of the design that ran, pair by pair from the primary test's measured
/// variance; eq. 5 with independent units after it, labelled as the comparison it is.
fn power_section(out: &mut String, s: &StageAnalysis) {
    let p = &s.power;
    let d = &p.design;
    let rate_name = if s.info.points {
        "game-win rate"
    } else {
        "win rate"
    };
    let k = p.pairs.max(1);
    let alpha_k = pval(Some(p.alpha / k as f64));
    let unit = d.unit;
    let _ = writeln!(
        out,
        "## Power
"
    );
    let _ = writeln!(
        out,
        "**For the design that ran.** The paired test of the {rate_name} on {} {unit}s{}, at \
         the Bonferroni level α/{k} = {alpha_k}{}, with each pair's \
         measured variance of the difference: σ_u = sqrt(G·V), the SD of the {unit} \
         differences, which carries the design effect (median over pairs {}: the variance of \
         a difference under this design over that of independent {}s). To detect a {rate_name} \
         difference δ = {} the design has power **{}** (median of the pairs' powers; {} for \
         the least favourable pair); it detects **{}** with power {} (median of the pairs' \
         detectable differences; {} for the least favourable pair), and **{}** {unit}s would \
         reach power {} at δ (median of the pairs' numbers; {} for every pair). Each pair's \
         own values are in the table below. \
         `dhumbal-run plan SCENARIO --pilot THIS_RUN` plans a new run with these variances.\n",
        d.units,
        if s.design.arrangements > 1 {
            format!(
                " (each {unit} with all its {} arrangements)",
                s.design.arrangements
            )
        } else {
            String::new()
        },
        if s.definitions == Definitions::Paper {
            " (a lower bound on Holm's step-down, which rejects at least as often; the \
             paper's definitions star Welch's test)"
        } else {
            " (Holm's step-down, which the stars use, rejects at least as often)"
        },
        num(d.design_effect, 2),
        p.independent.unit,
        p.delta,
        num(d.power_at_delta.median, 3),
        num(d.power_at_delta.worst, 3),
        num(d.mde.median, 4),
        p.power,
        num(d.mde.worst, 4),
        num(d.units_needed.median.map(f64::ceil), 0),
        p.power,
        num(d.units_needed.worst.map(f64::ceil), 0),
    );
    let win_metric = super::analyze::headline(s.info.points);
    let _ = writeln!(
        out,
        "| pair | test | σ_u | MDE ({rate_name}) | power at δ |\n|---|---|---:|---:|---:|"
    );
    for r in s
        .pairwise
        .iter()
        .filter(|r| r.metric == win_metric.key() && r.test == win_metric.design_test())
    {
        let _ = writeln!(
            out,
            "| {} vs {} | {} | {} | {} | {} |",
            r.a,
            r.b,
            r.test,
            num(r.sd_units, 4),
            num(r.mde, 4),
            num(r.power_at_delta, 3)
        );
    }
    let i = &p.independent;
    let (one, why) = match unit {
        "game" => (
            "game (each arrangement of a game)",
            "The arrangements of one game share its deals, and agents at one table are \
             negatively correlated (one winner per game)",
        ),
        "deal" => (
            "round",
            "The arrangements of one deal share its cards, and agents at one table are \
             negatively correlated (one winner per round)",
        ),
        _ => (
            "round",
            "Agents at one table are negatively correlated (one winner per round), and every \
             agent plays every round",
        ),
    };
    let _ = writeln!(
        out,
        "\n*For comparison only, if every {one} were independent* (the paper's eq. 5, n = \
         2(z₁₋α/₂ + z₁₋β)²σ²/δ², σ² = p(1−p) at the equal-strength {rate_name} p = {}): {} \
         {iu}s per agent at α = {}, {} at α/{k}; with the {} {iu}s each agent played, power {} \
         at α, {} at α/{k}, minimum detectable difference {} at α/{k}. {why}, so these \
         figures are not the design's; the design's are above.\n",
        num(Some(i.baseline), 3),
        num(i.eq5.map(f64::ceil), 0),
        p.alpha,
        num(i.eq5_bonferroni.map(f64::ceil), 0),
        i.units_per_agent,
        num(Some(i.power), 3),
        num(Some(i.power_bonferroni), 3),
        num(i.mde_bonferroni, 4),
        iu = i.unit,
    );
}

/// What the Wilson interval does here, measured: its width over that of the interval by
/// `unit` (median over agents), and what that says about the rounds of a unit.
fn wilson_against_units(s: &StageAnalysis, unit: &str) -> String {
    let width = |c: Option<[f64; 2]>| c.map(|[l, h]| h - l).filter(|w| *w > 0.0);
    let mut ratios: Vec<f64> = s
        .agents
        .iter()
        .filter_map(|a| Some(width(a.win.ci95_wilson)? / width(a.win.ci95_units)?))
        .collect();
    match super::stats::percentile(&mut ratios, 0.5) {
        Some(r) if r < 1.0 => format!(
            " (here {} times as wide as the interval by {unit}, median over agents: too \
             narrow, the rounds of a {unit} being positively correlated, as the arrangements \
             of a `permute` deal or the rounds of a game can be)",
            num(Some(r), 2)
        ),
        Some(r) => format!(
            " (here {} times as wide as the interval by {unit}, median over agents: too wide, \
             the rounds of a {unit} balancing each other, as the arrangements of a deal do \
             when each agent plays, in turn, the cards the others had)",
            num(Some(r), 2)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::variance_change;

    #[test]
    fn a_variance_change_says_its_direction_and_none_where_there_is_none() {
        assert_eq!(variance_change(Some(0.709)), "−29.1% (less)");
        assert_eq!(variance_change(Some(1.418)), "+41.8% (more)");
        // Exactly 1, and changes that round to nothing either way.
        for r in [1.0, 1.0004, 0.9996] {
            assert_eq!(variance_change(Some(r)), "0.0% (the same)", "{r}");
        }
        assert_eq!(variance_change(Some(1.0006)), "+0.1% (more)");
        assert_eq!(variance_change(None), "–");
    }
}
