//! Running a whole scenario: stages in order, chunks of units in parallel, records appended in
//! unit order, progress saved after every chunk so that `--resume` can finish the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::folder::{self, CommandLine};
use crate::progress::{Progress, StageProgress};
use crate::records::RecordWriter;
use crate::scenario::{AgentDef, Scenario, SeatEntry, Stage};
use crate::tournament::{Halt, Lineup, Pulse, StageTotals, UnitError};

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub threads: usize,
    /// Finish the unfinished run in the output folder.
    pub resume: bool,
    /// Replace another run's results in the output folder (otherwise refused).
    pub force: bool,
    /// The command line's `--seed` and `--rounds`, kept in `source/run.json` for a rerun.
    pub command_line: CommandLine,
    /// Set (by a Ctrl-C handler, say) to stop: finished units are written, progress saved,
    /// and the run ends with [`Interrupted`].
    pub stop: Arc<AtomicBool>,
}

/// The run stopped on request (`RunOptions::stop`); everything finished is on disk and
/// `--resume` continues.
#[derive(Debug)]
pub struct Interrupted {
    pub stage: String,
    /// Rounds (coins) or games (points) of the stage on disk, of `units`.
    pub done: u64,
    pub units: u64,
    /// "rounds" or "games": what `done` counts.
    pub unit: &'static str,
    pub dir: PathBuf,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted: stage `{}` has {} of {} {} on disk, in {}",
            self.stage,
            self.done,
            self.units,
            self.unit,
            self.dir.display()
        )
    }
}

impl std::error::Error for Interrupted {}

/// What the runner tells its caller as it goes: the CLI draws a progress bar, prints each
/// stage's table and attaches the statistics report to finished stages.
///
/// Time spent in [`Reporter::stage_done`] is not the run's: rounds per second measure play
/// and records only.
pub trait Reporter: Sync {
    /// A stage is about to run `units` units, `done` of them already finished (resume).
    /// `pulse` counts play as it happens (records follow a chunk at a time), until
    /// [`Reporter::stage_done`].
    fn stage_start(
        &self,
        _stage: &Stage,
        _lineup: &[AgentDef],
        _units: u64,
        _done: u64,
        _pulse: &Arc<Pulse>,
    ) {
    }
    /// A stage finished: its records, `summary.csv` and `progress.json` are on disk, so
    /// whatever is done here (a report, say) cannot cost the stage's data.
    fn stage_done(&self, _stage: &Stage, _result: &StageResult) {}
}

/// A reporter that says nothing.
pub struct Quiet;
impl Reporter for Quiet {}

/// One finished stage.
#[derive(Clone)]
pub struct StageResult {
    pub name: String,
    pub dir: PathBuf,
    /// The agent in each slot, as played (a `winner_of` resolved).
    pub agents: Vec<AgentDef>,
    pub totals: StageTotals,
    /// The stage plays point games (until one player is left) rather than coins.
    pub points: bool,
    pub seconds: f64,
    /// Finished by an earlier run and restored from `progress.json` (`--resume`): nothing was
    /// played or written for it this time.
    pub restored: bool,
}

impl StageResult {
    /// The slot `winner_of` seats: the highest game-win rate under point scoring, the highest
    /// win rate under coin scoring (see [`StageTotals::winner`]).
    pub fn winner(&self) -> usize {
        self.totals.winner(self.points)
    }
}

/// The whole run.
#[derive(Clone)]
pub struct RunReport {
    pub stages: Vec<StageResult>,
    /// What went wrong without costing results (agents' output that could not be logged).
    pub warnings: Vec<String>,
    /// Wall time of this invocation, reports excluded.
    pub seconds: f64,
    /// Rounds of every stage, including those an interrupted run had finished.
    pub rounds: u64,
    /// Rounds played by this invocation (`rounds` less those found on disk by `--resume`).
    pub rounds_now: u64,
}

/// Plays every stage of `scenario`, writing records, summaries and the manifest.
pub fn run(
    scenario: &Scenario,
    opts: &RunOptions,
    reporter: &dyn Reporter,
) -> anyhow::Result<RunReport> {
    let root = &scenario.output.dir;
    folder::claim(root, opts.resume, opts.force)?;
    let mut progress = Progress::start(root, scenario, opts.resume)?;
    if !opts.resume {
        folder::write_sources(root, scenario, &opts.command_line)?;
    }
    // Rounds already on disk (resume): not this invocation's.
    let rounds_before: u64 = progress.stages.iter().map(|s| s.totals.rounds).sum();
    // Opened only if an agent writes to it (a script's `print`).
    scenario.agent_log.attach(&root.join("scripts.log"));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()?;
    let start = Instant::now();
    let mut results: Vec<StageResult> = Vec::new();
    // Time spent in the reporter's `stage_done` (reports): not the run's.
    let mut reporter_seconds = 0.0;
    for (index, stage) in scenario.stages.iter().enumerate() {
        let lineup = Lineup {
            stage,
            agents: seat_agents(stage, &results)?,
            decision_sample: scenario.output.decision_sample,
        };
        let dir = scenario.stage_dir(index);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let units = lineup.units();
        let saved = progress.stages.get(index).cloned();
        if let Some(sp) = &saved
            && sp.complete
        {
            let mut result = stage_result(&lineup, &dir, sp.totals.clone(), sp.seconds);
            result.restored = true;
            let heard = Instant::now();
            reporter.stage_done(stage, &result);
            reporter_seconds += heard.elapsed().as_secs_f64();
            results.push(result);
            continue;
        }
        if saved.as_ref().is_some_and(|sp| sp.units_done > 0) && !scenario.output.csv {
            bail!(
                "--resume needs the rounds.csv journal, and this scenario sets `output.csv: false`; \
                 rerun without --resume"
            );
        }
        let (done, totals, csv_len, seconds) = match saved {
            Some(sp) => (sp.units_done, sp.totals, Some(sp.csv_len), sp.seconds),
            None => (0, StageTotals::new(lineup.agents.len()), None, 0.0),
        };
        progress.stages.truncate(index);
        progress.stages.push(StageProgress {
            name: stage.name.clone(),
            units_total: units,
            units_done: done,
            csv_len: csv_len.unwrap_or(0),
            complete: false,
            seconds,
            totals: totals.clone(),
        });
        let ids: Vec<String> = lineup.agents.iter().map(|a| a.id.clone()).collect();
        let (writer, encoder) = RecordWriter::open(
            &dir,
            &stage.name,
            ids,
            scenario.output.csv,
            scenario.output.parquet,
            csv_len,
        )?;
        let pulse = Arc::new(Pulse::new(opts.stop.clone()));
        reporter.stage_start(stage, &lineup.agents, units, done, &pulse);
        let per_unit = u64::from(stage.session.unwrap_or(8)).max(1);
        let (written, failure) = crate::pipeline::play_stage(crate::pipeline::StageJob {
            lineup: &lineup,
            pool: &pool,
            threads: opts.threads,
            chunk_units: (scenario.output.chunk_rounds / per_unit).max(1),
            writer,
            encoder: &encoder,
            progress: &mut progress,
            root,
            done,
            totals,
            seconds,
            pulse: &pulse,
        });
        let (totals, seconds) = written?;
        match failure {
            Some(Halt::Failed(e)) => return Err(describe_failure(stage, &e, &dir)),
            Some(Halt::Stopped) => {
                let done = progress.stages.last().map_or(0, |s| s.units_done);
                // Coins: a unit is a session of rounds; points: a game.
                let per_unit = u64::from(stage.session.unwrap_or(1));
                return Err(Interrupted {
                    stage: stage.name.clone(),
                    done: done * per_unit,
                    units: units * per_unit,
                    unit: if stage.session.is_some() {
                        "rounds"
                    } else {
                        "games"
                    },
                    dir: dir.clone(),
                }
                .into());
            }
            None => {}
        }
        let result = stage_result(&lineup, &dir, totals.clone(), seconds);
        crate::summary::write_summary_csv(&dir.join("summary.csv"), &result)?;
        let sp = progress.stages.last_mut().expect("pushed above");
        sp.complete = true;
        progress.save(root)?;
        let heard = Instant::now();
        reporter.stage_done(stage, &result);
        reporter_seconds += heard.elapsed().as_secs_f64();
        results.push(result);
    }
    let seconds = start.elapsed().as_secs_f64() - reporter_seconds;
    let rounds = results.iter().map(|r| r.totals.rounds).sum();
    let report = RunReport {
        warnings: scenario
            .agent_log
            .failure()
            .map(|why| format!("agents' output was not logged: {why}"))
            .into_iter()
            .collect(),
        stages: results,
        seconds,
        rounds,
        rounds_now: rounds.saturating_sub(rounds_before),
    };
    crate::summary::write_manifest(&root.join("manifest.json"), scenario, opts, &report)?;
    Ok(report)
}

/// The agents of a stage, `winner_of` resolved: a winner keeps its definition (a script is
/// recompiled for this stage's rules) and, if its id is taken, gets its stage's name appended.
fn seat_agents(stage: &Stage, results: &[StageResult]) -> anyhow::Result<Vec<AgentDef>> {
    let mut agents = Vec::with_capacity(stage.seats.len());
    let mut winner_from = Vec::with_capacity(stage.seats.len());
    for seat in &stage.seats {
        match seat {
            SeatEntry::Agent(def) => {
                agents.push(def.clone());
                winner_from.push(None);
            }
            SeatEntry::WinnerOf(i) => {
                let result = &results[*i];
                let mut def = result.agents[result.winner()].clone();
                if let Some(recipe) = def.recipe.for_rules(&stage.rules).map_err(|e| {
                    anyhow::anyhow!("recompiling {} for stage `{}`: {e}", def.kind, stage.name)
                })? {
                    def.recipe = recipe;
                }
                agents.push(def);
                winner_from.push(Some(result.name.clone()));
            }
        }
    }
    // Keep ids unique: a winner meeting an agent of the same name is told apart by its stage,
    // then by a number if need be.
    for i in 0..agents.len() {
        let Some(from) = &winner_from[i] else {
            continue;
        };
        let taken = |id: &str, agents: &[AgentDef]| {
            agents.iter().enumerate().any(|(j, a)| j != i && a.id == id)
        };
        if taken(&agents[i].id, &agents) {
            let base = format!("{}-{from}", agents[i].id);
            let mut id = base.clone();
            let mut n = 2;
            while taken(&id, &agents) {
                id = format!("{base}-{n}");
                n += 1;
            }
            agents[i].id = id;
        }
    }
    Ok(agents)
}

fn stage_result(lineup: &Lineup<'_>, dir: &Path, totals: StageTotals, seconds: f64) -> StageResult {
    StageResult {
        name: lineup.stage.name.clone(),
        dir: dir.to_path_buf(),
        agents: lineup.agents.clone(),
        totals,
        points: lineup.stage.is_points(),
        seconds,
        restored: false,
    }
}

/// An agent or the engine failed: where, what, and what to do. An agent's error (a bug in a
/// script, say) is not a crash: the same deal would fail again, so `--resume` is no help
/// until the agent is fixed, and fixing a script changes the scenario.
fn describe_failure(stage: &Stage, e: &UnitError, dir: &Path) -> anyhow::Error {
    let deal = match stage.session {
        Some(len) => format!("deal {}", e.matchno * u64::from(len) + u64::from(e.round)),
        None => format!("game {}, round {}", e.matchno, e.round),
    };
    anyhow::anyhow!(
        "stage `{}`, {deal}, seating {}: {}\nThe run stopped; the records of the finished \
         chunks are in {}. Fix the agent, then run again with --force (a changed agent is a \
         changed scenario, which --resume refuses)",
        stage.name,
        e.arrangement,
        e.error,
        dir.display()
    )
}
