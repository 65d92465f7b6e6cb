//! The sections that produce an agent or a measurement: `train:` (checkpoints and policy
//! tables), `tune:` (agent files, each confirmed by a stage of its own) and `exploit:` (how
//! beatable an agent is: stages of its own, then the gain computed from their records). The runner does the work
//! ([`dhumbal_runner::train`], [`dhumbal_runner::tune`]); this module runs them in the
//! experiment's order, starts the trainer executable when a network must be trained here
//! (this process links no libtorch), and writes their reports.

use std::path::{Path, PathBuf};

use dhumbal_runner::folder::{CommandLine, Refusal};
use dhumbal_runner::run::{RunReport, Shard};
use dhumbal_runner::scenario::{Overrides, Scenario, Stage, Tuning};
use dhumbal_runner::train::TrainOptions;
use dhumbal_runner::tune::TuneOptions;

use super::{Error, Failure, Hooks, Mode, load, shell_word, stages, thread_count};

/// How trainings and tunings run: the settings of the command that asked for them.
#[derive(Clone, Copy)]
pub struct How<'a> {
    pub threads: Option<usize>,
    pub mode: Mode,
    /// The scenario's overrides (a trainer run as a child gets them again).
    pub overrides: &'a Overrides,
    /// A shard's share of each tuning's next step (its evaluation, or its confirmation's
    /// look; docs/cluster.md); trainings and exploitability entries do not split.
    pub shard: Option<Shard>,
}

impl<'a> How<'a> {
    /// From a command line's `--threads`, `--resume` and `--force`.
    pub fn from_flags(
        threads: Option<usize>,
        resume: bool,
        force: bool,
        overrides: &'a Overrides,
    ) -> How<'a> {
        How {
            threads,
            mode: Mode::from_flags(resume, force),
            overrides,
            shard: None,
        }
    }

    fn thread_count(&self) -> usize {
        thread_count(self.threads)
    }
}

/// A tuning this call searched or confirmed.
#[derive(Clone, Debug)]
pub struct Tuned {
    pub id: String,
    /// The agent file.
    pub output: PathBuf,
    /// The best point as `name=value` pairs (`None` when the file was there already and only
    /// the confirmation was played).
    pub best: Option<String>,
    /// The tuning's folder (`tune/<id>/`: its log, manifest, report and confirmation).
    pub dir: PathBuf,
}

/// Trains `which` of the scenario read from `path`: here when this process can (tabular
/// policies always; networks where the training backend is installed), else in the trainer
/// executable.
pub fn trainings(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<(), Error> {
    let neural = which
        .iter()
        .any(|&i| scenario.trainings[i].neural().is_some());
    if neural && !dhumbal_learn::can_train() {
        return in_trainer(path, scenario, which, how);
    }
    here(scenario, which, how, hooks)
}

/// Runs the trainer executable on these trainings and waits for it. It inherits the
/// terminal (its own progress bar and lines) and the same Ctrl-C: it saves its checkpoint and
/// exits 130, while this process waits (the front end's handler keeps it from dying of the
/// first Ctrl-C).
fn in_trainer(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
) -> Result<(), Error> {
    let Some(exe) = dhumbal_runner::trainer::locate() else {
        let set = std::env::var_os("DHUMBAL_TRAIN")
            .filter(|p| !p.is_empty())
            .map(|p| format!(" (DHUMBAL_TRAIN={} is not a file)", p.to_string_lossy()))
            .unwrap_or_default();
        return Err(Error::BadInput(format!(
            "{}{set}",
            dhumbal_learn::TrainError::NoTorch
        )));
    };
    let mut command = std::process::Command::new(&exe);
    command.arg(path);
    for &i in which {
        command.arg("--id").arg(scenario.trainings[i].id());
    }
    if let Some(n) = how.threads {
        command.arg("--threads").arg(n.to_string());
    }
    match how.mode {
        Mode::Resume => {
            command.arg("--resume");
        }
        Mode::Force => {
            command.arg("--force");
        }
        Mode::Fresh => {}
    }
    if let Some(out) = &how.overrides.out {
        command.arg("--out").arg(out);
    }
    if let Some(seed) = how.overrides.seed {
        command.arg("--seed").arg(seed.to_string());
    }
    if let Some(rounds) = how.overrides.rounds {
        command.arg("--rounds").arg(rounds.to_string());
    }
    let status = command.status().map_err(|e| {
        Error::Failed(Failure::Trainer(format!(
            "cannot start the trainer {}: {e}",
            exe.display()
        )))
    })?;
    let what = format!("the trainer {}", exe.display());
    let resume = format!(
        "dhumbal-run train {} --resume",
        shell_word(&path.display().to_string())
    );
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(Error::of_exit_code(code, &what, &resume)),
        // Killed by a signal.
        None => {
            use std::os::unix::process::ExitStatusExt;
            Err(Error::Failed(Failure::Trainer(format!(
                "{what} was killed (signal {})",
                status.signal().unwrap_or(0)
            ))))
        }
    }
}

/// Trains `which` in this process, with the front end's progress and the figures; a stop
/// keeps the checkpoint.
fn here(
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<(), Error> {
    let results = dhumbal_runner::train::train(
        scenario,
        which,
        &TrainOptions {
            threads: how.thread_count(),
            resume: how.mode.resume(),
            force: how.mode.force(),
            stop: hooks.stop(),
        },
        hooks.trainings(),
    )?;
    for r in &results {
        if let Err(e) = dhumbal_report::training::figures(&r.dir, &r.dir.join("figures"), false) {
            hooks.warn(&format!("training `{}`: figures not written: {e:#}", r.id));
        }
    }
    if results.iter().any(|r| r.stopped) {
        return Err(Error::Interrupted {
            message: "stopped: the checkpoint holds every finished episode".into(),
            resume: "the same command with --resume".into(),
        });
    }
    Ok(())
}

/// Tunes `which` of the scenario read from `path`, confirms each result and writes its
/// report.
pub fn tunings(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<Vec<Tuned>, Error> {
    let mut scenario = scenario.clone();
    let mut tuned = Vec::with_capacity(which.len());
    for (k, &i) in which.iter().enumerate() {
        if k > 0 {
            // Read again: an entry may seat what an earlier one wrote (its opponents, its
            // rollout agent).
            scenario = load(path, how.overrides)?;
        }
        let result = dhumbal_runner::tune::tune(
            &scenario,
            i,
            &TuneOptions {
                threads: how.thread_count(),
                resume: how.mode.resume(),
                force: how.mode.force(),
                stop: hooks.stop(),
                shard: how.shard,
            },
            hooks.tunings(),
        )?;
        let id = scenario.tunings[i].id.clone();
        match &result {
            Some(r) if r.waiting.is_some() => {
                return Err(Error::Pending(format!(
                    "tuning `{id}`: this shard played its share of evaluation {} of the search \
                     ({} evaluations before it are in the log); the other shards' shares are \
                     not all on disk yet: the next wave of shards goes on from there \
                     (scripts/slurm/drive.sbatch submits the waves; docs/cluster.md)",
                    r.waiting.unwrap_or_default(),
                    r.evaluations
                )));
            }
            Some(r) if r.stopped => {
                return Err(Error::Interrupted {
                    message: format!(
                        "tuning `{id}` stopped: every finished evaluation is in the search's log"
                    ),
                    resume: "the same command with --resume".into(),
                });
            }
            Some(_) => {}
            None => hooks.say(&format!(
                "tuning `{id}`: {} exists, so the search is done (`--force` searches afresh)",
                scenario.tunings[i].output.display()
            )),
        }
        // The agent file exists now: read the scenario again, so that the confirmation seats
        // the tuned agent itself.
        scenario = load(path, how.overrides)?;
        let t = &scenario.tunings[i];
        confirm(path, &scenario, t, how, hooks)?;
        match dhumbal_report::tuning::report(&t.dir(&scenario)) {
            Ok(page) => hooks.say(&format!("tuning `{}`: report in {}", t.id, page.display())),
            // Tuned elsewhere (a shipped agent file): no records here to report on.
            Err(_) if result.is_none() && !t.dir(&scenario).exists() => {}
            Err(e) => hooks.warn(&format!("tuning `{}`: report not written: {e:#}", t.id)),
        }
        tuned.push(Tuned {
            id,
            output: t.output.clone(),
            best: result.map(|r| r.best),
            dir: t.dir(&scenario),
        });
    }
    Ok(tuned)
}

/// Plays a tuning's confirmation stage into `tune/<id>/confirm/`, with its report.
fn confirm(
    path: &Path,
    scenario: &Scenario,
    t: &Tuning,
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<(), Error> {
    let Some(stage) = &t.confirm else {
        return Ok(());
    };
    let dir = t.dir(scenario).join("confirm");
    let confirm = apart(
        scenario,
        format!("{}-confirm", t.id),
        vec![stage.clone()],
        false,
        &dir,
    );
    // A finished confirmation of this very agent file is kept, an unfinished one continued;
    // one of another file (its scenario hash holds the seated agent's parameters) is played
    // again.
    let kept = started_as(&dir);
    let same = kept.as_ref().is_some_and(|h| *h == confirm.hash());
    let finished = same && dhumbal_runner::tune::confirmed(&dir);
    if finished && !how.mode.force() {
        hooks.say(&format!(
            "tuning `{}`: confirmation already played in {}",
            t.id,
            dir.display()
        ));
        return Ok(());
    }
    let mode = if how.mode.force() || (kept.is_some() && !same) {
        Mode::Force
    } else if same {
        Mode::Resume
    } else {
        Mode::Fresh
    };
    hooks.say(&format!(
        "tuning `{}`: confirming against the start on fresh deals ({})",
        t.id,
        dir.display()
    ));
    let Some(shard) = how.shard else {
        play_apart(&confirm, mode, "tune", path, &t.id, how, hooks)?;
        return Ok(());
    };
    if mode == Mode::Force {
        return Err(Error::BadInput(format!(
            "--shard {shard}: {} holds the confirmation of another agent file than {}; shards \
             do not replace it: confirm on one machine (`dhumbal-run tune {} --id {} --force`) \
             or remove that folder",
            dir.display(),
            t.output.display(),
            shell_word(&path.display().to_string()),
            shell_word(&t.id)
        )));
    }
    // This shard's share of the confirmation's next look (a sequential stage's looks are
    // shared out as they come); once every look is on disk, the stage is merged here as
    // `dhumbal-run merge` finishes a study played as shards (nothing is played).
    let report = play_apart(&confirm, Mode::Fresh, "tune", path, &t.id, how, hooks)?;
    if !report.shard_stages.iter().all(|s| s.complete) {
        return Err(Error::Pending(format!(
            "tuning `{}`: this shard played its share of the confirmation's next look; the \
             other shards' shares are not all on disk yet: the next wave of shards goes on \
             from there (docs/cluster.md)",
            t.id
        )));
    }
    merge_in_place(&confirm, hooks)
}

/// A section's run whose shards have every stage on disk, finished in its own folder as
/// `dhumbal-run merge` finishes a study played as shards (nothing is played): the stages'
/// summaries and reports, and the manifest.
fn merge_in_place(run: &Scenario, hooks: &dyn Hooks) -> Result<(), Error> {
    let reporter = hooks.stages(true, "");
    dhumbal_runner::run::merge(
        run,
        &dhumbal_runner::run::MergeOptions {
            dirs: vec![run.output.dir.clone()],
            force: false,
            csv: false,
        },
        &*reporter,
    )?;
    reporter.end();
    Ok(())
}

/// The hash of the run that was started in `dir` (finished or not: its source is written
/// before its first record), if one was.
fn started_as(dir: &Path) -> Option<String> {
    dhumbal_runner::folder::saved_run(dir)
        .ok()
        .and_then(|saved| saved.hash)
}

/// `scenario` reduced to `stages`, written into `dir` as a run of its own (named `name`):
/// how a section plays the stages it makes (a tuning's confirmation, an entry's measurement).
fn apart(
    scenario: &Scenario,
    name: String,
    stages: Vec<Stage>,
    staged: bool,
    dir: &Path,
) -> Scenario {
    let mut run = scenario.clone();
    run.name = name;
    run.stages = stages;
    run.staged = staged;
    run.output.dir = dir.to_path_buf();
    run.output.trace = Default::default();
    run.trainings = Vec::new();
    run.tunings = Vec::new();
    run.exploits = Vec::new();
    run
}

/// The run that measures `exploit:` entry `i` of `scenario`: its stages (the self-play, a
/// stage per method) in the entry's folder, as a run of their own.
pub fn entry_run(scenario: &Scenario, i: usize) -> Scenario {
    let x = &scenario.exploits[i];
    apart(
        scenario,
        format!("exploit-{}", x.id),
        x.stages.clone(),
        true,
        &x.dir(scenario),
    )
}

/// Plays a run made by [`apart`] with its reports, stopped as the experiment is; if it stops,
/// `dhumbal-run COMMAND FILE --id ID --resume` finishes it.
fn play_apart(
    run: &Scenario,
    mode: Mode,
    command: &str,
    path: &Path,
    id: &str,
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<RunReport, Error> {
    stages::play(
        run,
        &stages::Settings {
            threads: how.threads,
            mode,
            report: true,
            // The section's own page (`report.md`) is the overview of its stages.
            overview: false,
            csv: false,
            shard: how.shard,
            stages: Vec::new(),
            command_line: CommandLine::default(),
            resume_command: format!(
                "dhumbal-run {command} {} --id {} --resume",
                shell_word(&path.display().to_string()),
                shell_word(id)
            ),
        },
        hooks,
    )
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        Error::BadInput(r.to_string())
    }
}

/// An `exploit:` entry this call measured.
#[derive(Clone, Debug)]
pub struct Exploited {
    pub id: String,
    /// Its folder (`exploit/<id>/`: a stage per method and the self-play, the result, the page).
    pub dir: PathBuf,
    pub result: dhumbal_report::exploit::Exploitability,
}

/// Measures `which` of the scenario's `exploit:` entries: each one's stages (the target's
/// self-play, then each responder at its table) played into `exploit/<id>/` as a run of their
/// own, then the gain computed from their records, the deals where each responder gained most
/// traced, and the page written.
pub fn exploits(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<Vec<Exploited>, Error> {
    let mut done = Vec::with_capacity(which.len());
    let mut scenario = scenario.clone();
    for &i in which {
        // The `tune` method's tuning first, when its agent file is missing (a file that
        // plays stages has tuned it already, with every other tuning); then the scenario read
        // again, so that the entry's stage seats the file.
        // The `learn` method's network likewise, trained here or in the trainer.
        if let Some(t) = scenario.exploits[i].training.clone()
            && let Some(k) = scenario.trainings.iter().position(|u| u.id() == t)
            && !scenario.trainings[k].output().exists()
        {
            let fresh = How {
                mode: Mode::Fresh,
                ..*how
            };
            trainings(path, &scenario, &[k], &fresh, hooks)?;
            scenario = load(path, how.overrides)?;
        }
        if let Some(t) = scenario.exploits[i].tuning.clone()
            && let Some(k) = scenario.tunings.iter().position(|u| u.id == t)
            && dhumbal_runner::tune::needs_work(&scenario, k)
        {
            tunings(path, &scenario, &[k], how, hooks)?;
            scenario = load(path, how.overrides)?;
        }
        let scenario = &scenario;
        let x = &scenario.exploits[i];
        let dir = x.dir(scenario);
        let run = entry_run(scenario, i);
        // A measurement of this very entry is continued where it stopped; one of another
        // entry (its scenario hash holds the target and the methods) is refused unless asked
        // (`--force`), as a run's folder is.
        let kept = started_as(&dir);
        let same = kept.as_ref().is_some_and(|h| *h == run.hash());
        if same && !dhumbal_runner::exploit::needs_work(&dir) && how.mode != Mode::Force {
            hooks.say(&format!(
                "exploit `{}`: measured in {} (`--force` measures afresh)",
                x.id,
                dir.display()
            ));
            done.push(Exploited {
                id: x.id.clone(),
                result: dhumbal_report::exploit::Exploitability::read(&dir)?,
                dir,
            });
            continue;
        }
        // Continued where this very entry was started; begun where none was (a file that
        // also plays stages asks to continue what exists, and here nothing does).
        let mode = match how.mode {
            Mode::Force => Mode::Force,
            _ if same => Mode::Resume,
            Mode::Resume if kept.is_none() => Mode::Fresh,
            mode => mode,
        };
        hooks.say(&format!(
            "exploit `{}`: {} at its own table, {} ({})",
            x.id,
            x.target.id,
            x.methods().collect::<Vec<_>>().join(", "),
            dir.display()
        ));
        match how.shard {
            None => {
                play_apart(&run, mode, "exploit", path, &x.id, how, hooks)?;
            }
            Some(shard) => measure_share(
                &run,
                kept.is_some() && !same,
                shard,
                path,
                &x.id,
                how,
                hooks,
            )?,
        }
        let methods: Vec<String> = x.methods().map(String::from).collect();
        let result = dhumbal_report::exploit::compute(&dir, &x.id, &methods, &x.budgets, x.margin)?;
        for m in &result.methods {
            let deals: Vec<u64> = m.top_deals.iter().map(|(d, _)| *d).collect();
            dhumbal_runner::exploit::trace_deals(x, &m.method, &deals, &dir)?;
        }
        let page = dhumbal_report::exploit::write(&dir, &result)?;
        for m in &result.methods {
            let unit = if result.measure == "games" {
                "games"
            } else {
                "deals"
            };
            // A sequential test's decision, where the entry asked for one.
            let decided = m.sequential.as_ref().map_or(String::new(), |t| {
                format!(
                    "; sequential test of gain > {:+.2} points: {} after {} of at most {} {unit}",
                    100.0 * t.plan.margin,
                    t.decision,
                    t.deals,
                    t.max_deals
                )
            });
            hooks.say(&format!(
                "exploit `{}`: {} gains {:+.2} points [{:+.2}, {:+.2}] over {}'s self-play ({} {unit}{decided})",
                x.id,
                m.method,
                100.0 * m.gain,
                100.0 * m.ci_low,
                100.0 * m.ci_high,
                x.target.id,
                m.deals,
            ));
        }
        hooks.say(&format!("exploit `{}`: report in {}", x.id, page.display()));
        done.push(Exploited {
            id: x.id.clone(),
            dir,
            result,
        });
    }
    if let Some(page) = exploit_overview(&scenario)? {
        hooks.say(&format!(
            "exploit: every entry side by side in {}",
            page.display()
        ));
    }
    Ok(done)
}

/// A shard's share of an entry's stages (docs/cluster.md): its share of the self-play and of
/// each fixed responder's stage, and of a gain test's next look once the self-play is
/// complete. `Ok` once every stage is on disk, merged here as `dhumbal-run merge` finishes a
/// study played as shards (nothing is played); else "not yet" (exit code 3): the next wave of
/// shards goes on from the parts on disk. `other`: `dir` holds a measurement of another entry
/// (another target, methods or version), which shards do not replace.
fn measure_share(
    run: &Scenario,
    other: bool,
    shard: Shard,
    path: &Path,
    id: &str,
    how: &How<'_>,
    hooks: &dyn Hooks,
) -> Result<(), Error> {
    let dir = &run.output.dir;
    if other {
        return Err(Error::BadInput(format!(
            "--shard {shard}: {} holds the measurement of another `exploit:` entry than `{id}` \
             (another target, methods, deals or program version); shards do not replace it: \
             measure it on one machine (`dhumbal-run exploit {} --id {} --force`) or remove \
             that folder",
            dir.display(),
            shell_word(&path.display().to_string()),
            shell_word(id)
        )));
    }
    let not_yet = |what: &str| {
        Error::Pending(format!(
            "exploit `{id}`: this shard played its share of {what}; the other shards' shares \
             are not all on disk yet: the next wave of shards goes on from there \
             (scripts/slurm/drive.sbatch submits the waves; docs/cluster.md)"
        ))
    };
    let report = match play_apart(run, Mode::Fresh, "exploit", path, id, how, hooks) {
        Ok(report) => report,
        // A gain test waits for the self-play's other shares.
        Err(Error::NotYet { waiting, .. }) => {
            return Err(not_yet(&format!(
                "the stages it could play; stage `{}` {}, not complete yet",
                waiting.stage,
                waiting.relation()
            )));
        }
        Err(e) => return Err(e),
    };
    if let Some(open) = report.shard_stages.iter().find(|s| !s.complete) {
        return Err(not_yet(&format!(
            "the stages (`{}` is not complete)",
            open.name
        )));
    }
    merge_in_place(run, hooks)
}

/// With more than one `exploit:` entry, their overview (`exploit/report.md`, one CSV and one
/// figure of every entry measured so far) written again; the page.
fn exploit_overview(scenario: &Scenario) -> Result<Option<PathBuf>, Error> {
    let [first, _, ..] = scenario.exploits.as_slice() else {
        return Ok(None);
    };
    let entries: Vec<_> = scenario
        .exploits
        .iter()
        .map(|x| {
            let dir = x.dir(scenario);
            let result = (!dhumbal_runner::exploit::needs_work(&dir))
                .then(|| dhumbal_report::exploit::Exploitability::read(&dir))
                .transpose()?;
            Ok((x.id.clone(), result))
        })
        .collect::<Result<_, Error>>()?;
    let dir = first.dir(scenario);
    let parent = dir.parent().unwrap_or(&dir);
    Ok(Some(dhumbal_report::exploit::write_overview(
        parent,
        &scenario.name,
        &entries,
    )?))
}

/// The entries of `scenario` whose measurement is missing.
pub fn unmeasured(scenario: &Scenario) -> Vec<usize> {
    (0..scenario.exploits.len())
        .filter(|&i| dhumbal_runner::exploit::needs_work(&scenario.exploits[i].dir(scenario)))
        .collect()
}
