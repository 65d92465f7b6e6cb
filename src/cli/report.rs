//! `dhumbal-run report DIR`: the statistics, tables and figures of a finished run from its
//! records alone, or a training's figures drawn again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::console::Console;
use super::settings;
use crate::experiment::stages;

/// `dhumbal-run report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run's output folder (with manifest.json), one stage's folder, a training's folder
    /// (`train/<id>/`: its four figures are drawn again from its records), a tuning's
    /// (`tune/<id>/`: its page and figures) or an exploitability measurement's
    /// (`exploit/<id>/`: each stage's report, then its page from exploitability.json).
    pub dir: PathBuf,
    /// Write the report here (one subfolder per stage for a staged run) instead of beside
    /// the records.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing report at the destination (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// Whose metric definitions: ours, or the paper's (population SD in Cohen's d, the
    /// normal win interval, stars on Bonferroni-adjusted Welch p-values) to reproduce its
    /// numbers.
    #[arg(long, value_enum, default_value_t = DefinitionsArg::Ours)]
    pub definitions: DefinitionsArg,
    /// Family-wise significance level of the pairwise tests.
    #[arg(long, default_value_t = 0.05, value_parser = settings::probability)]
    pub alpha: f64,
    /// Target power for minimum detectable effects and sample sizes.
    #[arg(long, default_value_t = 0.8, value_parser = settings::probability)]
    pub power: f64,
    /// The win-rate difference of interest (0.05 = 5 percentage points).
    #[arg(long, default_value_t = 0.05, value_parser = settings::difference)]
    pub delta: f64,
    /// Statistics and tables only, no figures.
    #[arg(long)]
    pub no_figures: bool,
    /// Draw each figure's title inside the image. Off by default: a paper puts the title in
    /// the caption, and report.md's captions carry it.
    #[arg(long)]
    pub titles: bool,
    /// Bootstrap resamples of the design's units for the ratings' 95% intervals
    /// (docs/analysis.md, "Ratings"; 0: ratings without intervals).
    #[arg(long, default_value_t = 200)]
    pub rating_resamples: usize,
    /// The agent rated 0 on the ratings' Elo scale, by id (default: `random`, else the
    /// first agent).
    #[arg(long, value_name = "ID")]
    pub rating_anchor: Option<String>,
}

/// `--definitions` of `report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DefinitionsArg {
    /// Ours (docs/analysis.md).
    Ours,
    /// The paper's public code's, to reproduce its numbers.
    Paper,
}

/// `report` of a training's folder (`<output>/train/<id>/`): its figures drawn again from its
/// records, into `figures/` beside them or under `--out`.
fn training_report(
    dir: &Path,
    out: Option<&Path>,
    force: bool,
    titles: bool,
) -> anyhow::Result<ExitCode> {
    let target = out.map_or_else(|| dir.join("figures"), Path::to_path_buf);
    let existing = std::fs::read_dir(&target).is_ok_and(|mut d| d.next().is_some());
    if existing && !force {
        eprintln!(
            "error: {} already holds figures; --force replaces them, --out writes elsewhere",
            target.display()
        );
        return Ok(ExitCode::from(2));
    }
    std::fs::create_dir_all(&target)
        .with_context(|| format!("cannot create {}", target.display()))?;
    match dhumbal_report::training::figures(dir, &target, titles) {
        Ok(files) => {
            println!(
                "training figures of {}: {} files in {}",
                dir.display(),
                files.len(),
                target.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

/// `dhumbal-run report`.
pub fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let ReportArgs {
        dir,
        out,
        force,
        definitions,
        alpha,
        power,
        delta,
        no_figures,
        titles,
        rating_resamples,
        rating_anchor,
    } = args;
    if !dir.is_dir() {
        eprintln!("error: {} is not a folder", dir.display());
        return Ok(ExitCode::from(2));
    }
    let opts = dhumbal_report::Options {
        definitions: match definitions {
            DefinitionsArg::Ours => dhumbal_report::Definitions::Ours,
            DefinitionsArg::Paper => dhumbal_report::Definitions::Paper,
        },
        alpha,
        power,
        delta,
        figures: !no_figures,
        titles,
        ratings: dhumbal_report::ratings::RatingSettings {
            resamples: rating_resamples,
            anchor: rating_anchor,
        },
    };
    if dhumbal_report::training::is_training(&dir) {
        return training_report(&dir, out.as_deref(), force, titles);
    }
    if dhumbal_runner::study::Identity::is_study(&dir) {
        return study_report(&dir, out.as_deref());
    }
    if dhumbal_report::tuning::is_tuning(&dir) {
        // A tuning's folder: its page and figures again, in place (they are derived).
        return match dhumbal_report::tuning::report(&dir) {
            Ok(page) => {
                println!("tuning report in {}", page.display());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                Ok(ExitCode::from(2))
            }
        };
    }
    let start = std::time::Instant::now();
    // Records that cannot be read or make no sense (a missing, empty, header-only or
    // malformed file, columns not those of the records, an unknown agent) are bad input:
    // exit 2, the file named; nothing is written for that stage. Anything else (a file that
    // cannot be written) is a failure while running: exit 1.
    let reports = match dhumbal_report::report_dir(&dir, out.as_deref(), force, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(if e.is_bad_input() { 2 } else { 1 }));
        }
    };
    let mut failed = 0;
    for r in &reports {
        let a = &r.analysis;
        println!(
            "stage `{}`: {} rounds, {} agents, {} pairwise tests -> {}",
            a.stage,
            a.design.rounds,
            a.agents.len(),
            a.pairwise.len(),
            r.dir.join("report.md").display()
        );
        for (stem, e) in &r.figure_errors {
            eprintln!("warning: figure `{stem}` was not drawn: {e}");
            failed += 1;
        }
    }
    println!(
        "{} stage report{} in {:.2} s",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        start.elapsed().as_secs_f64()
    );
    if dir.join(dhumbal_report::exploit::RESULT_FILE).is_file() {
        // An exploitability measurement's folder: its page (the gains, the tests, the
        // responders' play) again from its result, where a plain run has its overview.
        let x = match dhumbal_report::exploit::Exploitability::read(&dir) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(ExitCode::from(2));
            }
        };
        let page = dhumbal_report::exploit::write(out.as_deref().unwrap_or(&dir), &x)?;
        println!("exploitability report in {}", page.display());
    } else if dir.join("manifest.json").is_file() {
        let console = Console::new()?;
        stages::overview(
            &dir,
            out.as_deref().unwrap_or(&dir),
            &opts.ratings,
            &console,
        );
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A study's folder (`dhumbal-run serve`): people against each agent, over the games, move
/// matching, each participant (docs/studies.md), from the scenario it was served from,
/// which `study.json` keeps.
fn study_report(dir: &Path, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let id = dhumbal_runner::study::Identity::read(dir)?;
    let scenario = match dhumbal_runner::scenario::parse(
        &id.scenario,
        &id.text,
        &dhumbal_runner::scenario::Overrides::default(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprint!("error: the study's scenario, as served: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let Some(study) = &scenario.study else {
        anyhow::bail!(dhumbal_runner::folder::Refusal(format!(
            "{}: the scenario kept in study.json has no `study:` section",
            dir.display()
        )));
    };
    let page = dhumbal_report::study::report(dir, &scenario.name, study, out.unwrap_or(dir))?;
    println!("study report in {}", page.display());
    Ok(ExitCode::SUCCESS)
}
