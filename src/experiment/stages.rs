//! A scenario's stages played ([`dhumbal_runner::run::run`]) with the front end's progress
//! and stop flag, each finished stage's report attached by the front end's reporter, and the
//! overview page of a run of several stages written at the end.

use std::path::Path;

use dhumbal_runner::folder::CommandLine;
use dhumbal_runner::run::{self as runner, RunOptions, RunReport, Shard};
use dhumbal_runner::scenario::{Scenario, SeatEntry};

use super::{Error, Hooks, Mode, Options, command, command_line, shell_word};

/// How a scenario's stages are played.
#[derive(Clone, Debug)]
pub struct Settings {
    pub threads: Option<usize>,
    pub mode: Mode,
    pub report: bool,
    /// With `report`: also the overview page of the run's stages at its root (a section that
    /// plays stages of its own writes its own page there instead).
    pub overview: bool,
    pub csv: bool,
    pub shard: Option<Shard>,
    pub stages: Vec<String>,
    pub command_line: CommandLine,
    /// The command that finishes the run after an interruption.
    pub resume_command: String,
}

impl Settings {
    /// The stages' settings of an experiment run from `path` with `options`.
    pub fn of(path: &Path, options: &Options) -> Settings {
        let base = command(path, &options.overrides);
        let resume_command = match options.shard {
            None => format!("{base} --resume"),
            Some(s) => {
                let stages: String = options
                    .stages
                    .iter()
                    .map(|n| format!(" --stage {}", shell_word(n)))
                    .collect();
                format!("{base} --shard {s}{stages}")
            }
        };
        Settings {
            threads: options.threads,
            mode: options.mode,
            // A shard's stages are reported by `merge`, once every shard is in.
            report: options.report && options.shard.is_none(),
            overview: true,
            csv: options.csv,
            shard: options.shard,
            stages: options.stages.clone(),
            command_line: command_line(&options.overrides),
            resume_command,
        }
    }
}

/// Plays the stages of a loaded scenario.
pub fn play(
    scenario: &Scenario,
    settings: &Settings,
    hooks: &dyn Hooks,
) -> Result<RunReport, Error> {
    let threads = super::thread_count(settings.threads);
    for line in describe(scenario) {
        hooks.say(&line);
    }
    hooks.say(&format!(
        "  {threads} threads{}",
        match (&settings.shard, settings.mode) {
            (Some(s), _) => format!(", shard {s}"),
            (None, Mode::Resume) => ", resuming".to_string(),
            (None, _) => String::new(),
        }
    ));
    let reporter = hooks.stages(settings.report, &settings.resume_command);
    let result = runner::run(
        scenario,
        &RunOptions {
            threads,
            resume: settings.mode.resume(),
            force: settings.mode.force(),
            shard: settings.shard,
            stages: settings.stages.clone(),
            csv: settings.csv,
            command_line: settings.command_line.clone(),
            stop: hooks.stop(),
        },
        &*reporter,
    );
    reporter.end();
    let report = result.map_err(|e| sorted(e, settings))?;
    for warning in &report.warnings {
        hooks.warn(warning);
    }
    if settings.shard.is_some() {
        // A shard's front end says what it played and what is left (the report holds it).
        return Ok(report);
    }
    let earlier = report.rounds.saturating_sub(report.rounds_now);
    hooks.say(&format!(
        "{} rounds in {:.2} s ({:.0} rounds/s){}; records, summary and manifest in {}",
        report.rounds_now,
        report.seconds,
        report.rounds_now as f64 / report.seconds.max(1e-9),
        if earlier > 0 {
            format!(", after {earlier} rounds played before the interruption")
        } else {
            String::new()
        },
        scenario.output.dir.display()
    ));
    if !scenario.output.trace.is_empty() {
        traces(scenario, hooks);
    }
    if settings.report && settings.overview {
        overview(
            &scenario.output.dir,
            &scenario.output.dir,
            &Default::default(),
            hooks,
        );
    }
    Ok(report)
}

/// The runner's error as the experiment's: a stop (resumed by these settings' command), a
/// stage that must wait (in this shard), a refusal, or a failure.
fn sorted(e: dhumbal_runner::Error, settings: &Settings) -> Error {
    match e {
        dhumbal_runner::Error::Interrupted(i) => Error::Interrupted {
            message: i.to_string(),
            resume: settings.resume_command.clone(),
        },
        dhumbal_runner::Error::Waiting(waiting) => Error::NotYet {
            waiting: *waiting,
            shard: settings.shard,
        },
        e => e.into(),
    }
}

/// What a scenario will play, stage by stage, as lines to show.
pub fn describe(scenario: &Scenario) -> Vec<String> {
    let mut lines = vec![format!(
        "scenario `{}` (seed {}), output {}",
        scenario.name,
        scenario.seed,
        scenario.output.dir.display()
    )];
    for stage in &scenario.stages {
        let agents: Vec<String> = stage
            .seats
            .iter()
            .map(|s| match s {
                SeatEntry::Agent(d) => d.id.clone(),
                SeatEntry::WinnerOf(i) => format!("winner of `{}`", scenario.stages[*i].name),
            })
            .collect();
        lines.push(format!(
            "  stage `{}`: {}",
            stage.name,
            stage.describe_sample()
        ));
        lines.push(format!(
            "    {} players, agents: {}",
            stage.players(),
            agents.join(", ")
        ));
    }
    // The sections that run before the stages: trainings on one machine (a shard refuses to
    // start while one has work left), tunings and exploitability entries by shards or on one
    // machine (scripts/slurm/submit.sh reads these lines).
    let first = "to do: runs on one machine before the stages";
    for t in &scenario.trainings {
        let state = if t.output().exists() {
            "written"
        } else {
            first
        };
        lines.push(format!(
            "  train `{}`: writes {} ({state})",
            t.id(),
            t.output().display()
        ));
    }
    for (i, t) in scenario.tunings.iter().enumerate() {
        // A tuning splits into shards (one evaluation, or one confirmation look, a wave of
        // them: scripts/slurm/drive.sbatch), before the stages.
        let state = if dhumbal_runner::tune::needs_work(scenario, i) {
            "to do: searched and confirmed before the stages, by shards or on one machine"
        } else {
            "written"
        };
        lines.push(format!(
            "  tune `{}`: writes {} ({state})",
            t.id,
            t.output.display()
        ));
    }
    let unmeasured = super::produce::unmeasured(scenario);
    for (i, x) in scenario.exploits.iter().enumerate() {
        // An entry's stages split into shards too (a gain test: a look a wave).
        let state = if unmeasured.contains(&i) {
            "to do: measured before the stages, by shards or on one machine"
        } else {
            "measured"
        };
        lines.push(format!(
            "  exploit `{}`: target `{}`, into {} ({state})",
            x.id,
            x.target.id,
            x.dir(scenario).display()
        ));
    }
    // Names and ids are refused with control characters; a path (`output.dir`) is not.
    lines
        .into_iter()
        .map(|l| dhumbal_agents::escape_controls(&l).into_owned())
        .collect()
}

/// Where the traces are and how to look at them: a stage's, or once for all the points of a
/// sweep (each point's folder has its own).
fn traces(scenario: &Scenario, hooks: &dyn Hooks) {
    let dir = shell_word(&scenario.output.dir.display().to_string());
    let mut sweeps_told: Vec<&str> = Vec::new();
    for (i, stage) in scenario.stages.iter().enumerate() {
        let traces = scenario
            .stage_dir(i)
            .join(dhumbal_runner::trace::TRACES_DIR);
        if let Some(sweep) = stage.sweep() {
            if traces.is_dir() && !sweeps_told.contains(&sweep) {
                sweeps_told.push(sweep);
                let points = scenario
                    .stages
                    .iter()
                    .filter(|s| s.sweep() == Some(sweep))
                    .count();
                hooks.say(&format!(
                    "traces of the {points} points of sweep `{sweep}` in {}/<point>/{} (open a \
                     point's replay.html in a browser, or `dhumbal-run show {dir} --stage {} \
                     --deal N`)",
                    scenario.output.dir.join(sweep).display(),
                    dhumbal_runner::trace::TRACES_DIR,
                    shell_word(&stage.name),
                ));
            }
            continue;
        }
        if traces.is_dir() {
            let stage_flag = if scenario.staged {
                format!(" --stage {}", shell_word(&stage.name))
            } else {
                String::new()
            };
            hooks.say(&format!(
                "traces of stage `{}` in {} (open replay.html in a browser, or `dhumbal-run show \
                 {dir}{stage_flag} --deal N`)",
                stage.name,
                traces.display(),
            ));
        }
    }
}

/// Writes the overview page of a run of several stages (`report.md` at its root), or says why
/// it could not (the stages' reports stand either way).
pub fn overview(
    run: &Path,
    reports: &Path,
    ratings: &dhumbal_report::ratings::RatingSettings,
    hooks: &dyn Hooks,
) {
    match dhumbal_report::write_overview(run, reports, ratings) {
        Ok(Some(path)) => hooks.say(&format!("overview of the stages in {}", path.display())),
        Ok(None) => {}
        Err(e) => hooks.warn(&format!(
            "the overview page could not be written ({e:#}); the stages' reports stand, and \
             `dhumbal-run report {}` can retry",
            shell_word(&run.display().to_string())
        )),
    }
}
