//! `dhumbal-run tune FILE`, and the tunings a run needs first (docs/tuning.md): the search
//! with a progress bar showing the best so far, then the confirmation stage (the tuned agent
//! against the start on fresh deals, a sequential test) played and reported like any stage,
//! then the tuning's own report (`tune/<id>/report.md`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use dhumbal_runner::scenario::{Overrides, Scenario, Tuning};
use dhumbal_runner::tune::{Evaluation, TuneOptions, TuneReporter, TuneResult};

use super::interrupt::Interrupt;
use super::train::How;
use dhumbal_runner::folder::CommandLine;

use super::run::RunSettings;
use super::settings::{self, Threads, shell_word};

/// `dhumbal-run tune`.
#[derive(Args, Debug, Clone)]
pub struct TuneArgs {
    /// The scenario file whose `tune:` section to run.
    pub scenario: PathBuf,
    /// Only these entries (by id; repeat the flag for several). Default: all.
    #[arg(long = "id", value_name = "ID")]
    pub ids: Vec<String>,
    /// Worker threads playing the evaluations' deals (default: all cores). Results do not
    /// depend on it.
    #[command(flatten)]
    pub threads: Threads,
    /// Continue a search stopped by Ctrl-C or a kill (its log in tune/<id>/), and its
    /// confirmation.
    #[arg(long)]
    pub resume: bool,
    /// Tune afresh, replacing the agent file, the search's records and its confirmation.
    #[arg(long)]
    pub force: bool,
    /// Where the tuning records go (default: the scenario's output folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `dhumbal-run tune`.
pub fn tune(args: TuneArgs) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        out: args.out.clone(),
        ..Overrides::default()
    };
    let path = args.scenario;
    let scenario = match settings::load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if scenario.tunings.is_empty() {
        eprintln!(
            "error: {} has no `tune:` section: nothing to tune (docs/tuning.md)",
            path.display()
        );
        return Ok(ExitCode::from(2));
    }
    let names: Vec<&str> = scenario.tunings.iter().map(|t| t.id.as_str()).collect();
    let which = match settings::chosen(&path, "tuning", &names, &args.ids) {
        Ok(w) => w,
        Err(code) => return Ok(code),
    };
    tunings(
        &path,
        &scenario,
        &which,
        &How {
            threads: args.threads,
            resume: args.resume,
            force: args.force,
            overrides: &overrides,
        },
    )
}

/// Tunes `which` of the scenario read from `path`, confirms each result and writes its
/// report.
pub fn tunings(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
) -> anyhow::Result<ExitCode> {
    let reporter = TuneTerminal::default();
    let mut scenario = scenario.clone();
    for (k, &i) in which.iter().enumerate() {
        if k > 0 {
            // Read again: an entry may seat what an earlier one wrote (its opponents, its
            // rollout agent).
            scenario = match settings::load(path, how.overrides) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
        }
        let interrupt = Interrupt::install()?;
        let result = dhumbal_runner::tune::tune(
            &scenario,
            i,
            &TuneOptions {
                threads: how.threads.count(),
                resume: how.resume,
                force: how.force,
                stop: interrupt.flag(),
            },
            &reporter,
        )?;
        drop(interrupt);
        let id = scenario.tunings[i].id.clone();
        match &result {
            Some(r) if r.stopped => {
                eprintln!(
                    "stopped: every finished evaluation is in the search's log; run the same command with --resume to go on"
                );
                return Ok(ExitCode::from(130));
            }
            Some(_) => {}
            None => println!(
                "tuning `{id}`: {} exists, so the search is done (`--force` searches afresh)",
                scenario.tunings[i].output.display()
            ),
        }
        // The agent file exists now: read the scenario again, so that the confirmation seats
        // the tuned agent itself.
        scenario = match settings::load(path, how.overrides) {
            Ok(s) => s,
            Err(code) => return Ok(code),
        };
        let t = &scenario.tunings[i];
        if let Some(code) = confirm(path, &scenario, t, how)? {
            return Ok(code);
        }
        match dhumbal_report::tuning::report(&t.dir(&scenario)) {
            Ok(page) => println!("tuning `{}`: report in {}", t.id, page.display()),
            Err(e) if result.is_none() && !t.dir(&scenario).exists() => {
                // Tuned elsewhere (a shipped agent file): no records here to report on.
                let _ = e;
            }
            Err(e) => eprintln!("warning: tuning `{}`: report not written: {e:#}", t.id),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Plays a tuning's confirmation stage into `tune/<id>/confirm/`, with its report; an exit
/// code when it did not finish.
fn confirm(
    path: &Path,
    scenario: &Scenario,
    t: &Tuning,
    how: &How<'_>,
) -> anyhow::Result<Option<ExitCode>> {
    let Some(stage) = &t.confirm else {
        return Ok(None);
    };
    let dir = t.dir(scenario).join("confirm");
    let mut confirm = scenario.clone();
    confirm.name = format!("{}-confirm", t.id);
    confirm.stages = vec![stage.clone()];
    confirm.staged = false;
    confirm.output.dir = dir.clone();
    confirm.output.trace = Default::default();
    confirm.trainings = Vec::new();
    confirm.tunings = Vec::new();
    // A finished confirmation of this very agent file is kept, an unfinished one continued;
    // one of another file (its scenario hash holds the seated agent's parameters) is played
    // again.
    let kept: Option<serde_json::Value> = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let same = kept
        .as_ref()
        .is_some_and(|m| m["scenario_hash"].as_str() == Some(confirm.hash().as_str()));
    let finished = same && dir.join("stats.json").is_file();
    if finished && !how.force {
        println!(
            "tuning `{}`: confirmation already played in {}",
            t.id,
            dir.display()
        );
        return Ok(None);
    }
    let resume = same && !how.force;
    let force = how.force || (kept.is_some() && !same);
    println!(
        "tuning `{}`: confirming against the start on fresh deals ({})",
        t.id,
        dir.display()
    );
    let base = format!(
        "dhumbal-run tune {} --id {}",
        shell_word(&path.display().to_string()),
        shell_word(&t.id)
    );
    let played = super::run::play(
        &confirm,
        RunSettings {
            threads: how.threads,
            resume,
            force,
            report: true,
            csv: false,
            shard: None,
            stages: Vec::new(),
            command_line: CommandLine::default(),
            resume_command: format!("{base} --resume"),
            shard_base: base,
        },
    );
    match played {
        Ok(_) => Ok(None),
        Err(e) => super::run::interrupted(e).map(Some),
    }
}

/// The search's progress bar: evaluations, deals, and the best so far.
#[derive(Default)]
pub struct TuneTerminal {
    bar: Mutex<Option<ProgressBar>>,
}

impl TuneReporter for TuneTerminal {
    fn start(&self, t: &Tuning, done: u64) {
        let mut bar = self.bar.lock().expect("bar");
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        let opponents: Vec<String> = t
            .lineups
            .iter()
            .map(|l| {
                l.iter()
                    .map(|d| d.id.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        let unit = unit(t);
        if done == 0 {
            println!(
                "tuning `{}`: {} parameter{} of `{}` by {}, {} {unit} in evaluations of {}, objective {}, {} players against [{}]; writes {}",
                t.id,
                t.params.len(),
                if t.params.len() == 1 { "" } else { "s" },
                t.start_agent.id,
                match t.optimizer {
                    dhumbal_runner::scenario::OptimizerChoice::Ntbea(_) => "NTBEA",
                    dhumbal_runner::scenario::OptimizerChoice::Spsa(_) => "SPSA",
                },
                t.budget,
                t.batch,
                t.objective.name(),
                t.rules.players(),
                opponents.join("] or ["),
                t.output.display()
            );
        } else {
            println!("tuning `{}`: resuming after {done} {unit}", t.id);
        }
        if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(t.budget);
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, ETA {{eta}}{{msg}}"
                ))
                .expect("template")
                .progress_chars("=> "),
            );
            b.set_prefix(t.id.clone());
            b.set_position(done);
            b.reset_eta();
            *bar = Some(b);
        }
    }

    fn evaluated(&self, _t: &Tuning, e: &Evaluation, best: &str) {
        if let Some(b) = self.bar.lock().expect("bar").as_ref() {
            b.set_position(e.deals_total);
            b.set_message(format!("; best so far: {best}"));
        }
    }

    fn finished(&self, t: &Tuning, r: &TuneResult) {
        if let Some(b) = self.bar.lock().expect("bar").take() {
            b.finish_and_clear();
        }
        if !r.stopped {
            println!(
                "tuning `{}`: {} evaluations, {} {} in {:.1} s; best: {}; written to {}",
                t.id,
                r.evaluations,
                r.deals,
                unit(t),
                r.seconds,
                r.best,
                r.output.display()
            );
        }
    }
}

/// What a tuning's budget counts: games under point scoring, deals under coin scoring.
fn unit(t: &Tuning) -> &'static str {
    if matches!(
        t.rules.variant().scoring,
        dhumbal_game::rules::Scoring::Points(_)
    ) {
        "games"
    } else {
        "deals"
    }
}
