//! Running a whole scenario: stages in order, chunks of units in parallel, records appended in
//! unit order, progress saved after every chunk so that `--resume` can finish the run.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::{Lineup, StageTotals, UnitError};
use crate::records::{Encoded, RecordEncoder, RecordWriter, Records};
use crate::scenario::{AgentDef, Scenario, SeatEntry, Stage};

/// A chunk to encode: its place in the stage, and its units' records.
type Job = (u64, Vec<Records>);
/// A chunk encoded: its place, its records (for the totals) and its row groups.
type EncodedJob = (u64, Vec<Records>, anyhow::Result<Encoded>);

/// An encoder thread: takes chunks off `jobs` until it closes (or the writer is gone) and
/// hands each back encoded. A panic inside the encoder becomes that chunk's error: the writer
/// takes chunks in order, so a chunk must never go missing.
fn encode_jobs(jobs: Arc<Mutex<Receiver<Job>>>, out: Sender<EncodedJob>, encoder: &RecordEncoder) {
    loop {
        // The lock is held only to take a job.
        let job = jobs.lock().expect("no encoder panics holding it").recv();
        let Ok((index, chunk)) = job else { break };
        let encoded = std::panic::catch_unwind(AssertUnwindSafe(|| encoder.encode(&chunk)))
            .unwrap_or_else(|_| {
                Err(anyhow::anyhow!(
                    "the record encoder failed on chunk {index}"
                ))
            });
        if out.send((index, chunk, encoded)).is_err() {
            break;
        }
    }
}

/// Sets its flag when dropped: the writer holds one, so that however it stops (done, an error,
/// a panic) nothing more is played.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub threads: usize,
    pub resume: bool,
    /// Write each stage's statistics, tables and figures (`crate::analysis`) after its records.
    pub report: bool,
}

/// What the runner tells its caller as it goes (the CLI draws a progress bar).
pub trait Reporter: Sync {
    /// A stage is about to run `units` units, `done` of them already finished (resume).
    fn stage_start(&self, _stage: &Stage, _lineup: &[AgentDef], _units: u64, _done: u64) {}
    /// More units finished.
    fn advance(&self, _units: u64, _rounds: u64) {}
    fn stage_done(&self, _stage: &Stage, _result: &StageResult) {}
    /// The stage's report was written (or failed: the records are complete either way).
    fn report_done(&self, _stage: &Stage, _report: &anyhow::Result<crate::analysis::StageReport>) {}
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
    pub seconds: f64,
}

/// The whole run.
#[derive(Clone)]
pub struct RunReport {
    pub stages: Vec<StageResult>,
    pub seconds: f64,
    pub rounds: u64,
}

/// Saved after every chunk (`progress.json` in the output folder).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Progress {
    scenario_hash: String,
    stages: Vec<StageProgress>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct StageProgress {
    name: String,
    units_total: u64,
    units_done: u64,
    csv_len: u64,
    complete: bool,
    seconds: f64,
    totals: StageTotals,
}

fn save_progress(dir: &Path, p: &Progress) -> anyhow::Result<()> {
    let tmp = dir.join("progress.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(p)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("progress.json")).context("cannot save progress.json")?;
    Ok(())
}

/// Plays every stage of `scenario`, writing records, summaries and the manifest.
pub fn run(
    scenario: &Scenario,
    opts: &RunOptions,
    reporter: &dyn Reporter,
) -> anyhow::Result<RunReport> {
    let root = &scenario.output.dir;
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    let hash = scenario.hash();
    let mut progress = if opts.resume {
        let path = root.join("progress.json");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "--resume: there is no interrupted run in {} (no progress.json)",
                root.display()
            )
        })?;
        let p: Progress = serde_json::from_str(&text)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if p.scenario_hash != hash {
            bail!(
                "--resume: {} was written by a different scenario (hash {} here, {} there); \
                 the same file, seed and sample size are needed to finish it",
                root.display(),
                hash,
                p.scenario_hash
            );
        }
        p
    } else {
        Progress {
            scenario_hash: hash.clone(),
            stages: Vec::new(),
        }
    };
    let scripted = scenario.stages.iter().any(|st| {
        st.seats
            .iter()
            .any(|seat| matches!(seat, SeatEntry::Agent(d) if d.kind.starts_with("script:")))
    });
    if scripted {
        scenario.script_log.attach(&root.join("scripts.log"))?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()?;
    let start = Instant::now();
    let mut results: Vec<StageResult> = Vec::new();
    let mut report_seconds = 0.0;
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
            let result = stage_result(&lineup, &dir, sp.totals.clone(), sp.seconds);
            reporter.stage_done(stage, &result);
            results.push(result);
            continue;
        }
        if saved.as_ref().is_some_and(|sp| sp.units_done > 0) && !scenario.output.csv {
            bail!(
                "--resume needs the rounds.csv journal, and this scenario sets `output.csv: false`; \
                 rerun without --resume"
            );
        }
        let (mut done, mut totals, csv_len, seconds) = match saved {
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
        reporter.stage_start(stage, &lineup.agents, units, done);
        let per_unit = u64::from(stage.session.unwrap_or(8)).max(1);
        let chunk_units = (scenario.output.chunk_rounds / per_unit).max(1);
        let stage_start = Instant::now();
        let base_seconds = seconds;
        let points = stage.is_points();
        let mut failure = None;
        // The pipeline: this thread plays chunks (on the pool), encoder threads turn them into
        // Parquet row groups in parallel (encoding costs about half as much as playing, so one
        // thread for it capped the run), and the writer thread, in chunk order, formats and
        // appends the CSV and appends the row groups. A chunk takes a slot from playing until
        // written, so memory is bounded by the slots, not by the number of rounds.
        let encoders = opts.threads.max(1);
        let slots = encoders + 2;
        let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<Job>(1);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (encoded_tx, encoded_rx) = std::sync::mpsc::channel::<EncodedJob>();
        let (slot_tx, slot_rx) = std::sync::mpsc::sync_channel::<()>(slots);
        for _ in 0..slots {
            slot_tx.send(()).expect("the receiver is here");
        }
        let writer_stopped = AtomicBool::new(false);
        let written: anyhow::Result<(StageTotals, f64)> = std::thread::scope(|scope| {
            let progress = &mut progress;
            let writer_stopped = &writer_stopped;
            let encoder = &encoder;
            for _ in 0..encoders {
                let jobs = Arc::clone(&job_rx);
                let out = encoded_tx.clone();
                scope.spawn(move || encode_jobs(jobs, out, encoder));
            }
            // Encoders alone hold the job queue now: if they stop, sending a job fails.
            drop(job_rx);
            drop(encoded_tx);
            let writer_thread = scope.spawn(move || -> anyhow::Result<(StageTotals, f64)> {
                let _stopped = SetOnDrop(writer_stopped);
                let mut writer = writer;
                let mut seconds = seconds;
                let mut waiting = std::collections::BTreeMap::new();
                let mut next_index = 0u64;
                for (index, chunk, encoded) in encoded_rx {
                    waiting.insert(index, (chunk, encoded));
                    while let Some((chunk, encoded)) = waiting.remove(&next_index) {
                        next_index += 1;
                        let csv_len = writer.append(&chunk, &encoded?)?;
                        let mut rounds = 0;
                        for cols in &chunk {
                            totals.add(cols, points);
                            rounds += cols.rounds();
                        }
                        done += chunk.len() as u64;
                        seconds = base_seconds + stage_start.elapsed().as_secs_f64();
                        let sp = progress.stages.last_mut().expect("pushed above");
                        sp.units_done = done;
                        sp.csv_len = csv_len;
                        sp.totals = totals.clone();
                        sp.seconds = seconds;
                        save_progress(root, progress)?;
                        reporter.advance(chunk.len() as u64, rounds);
                        // The player may be waiting for this slot; if it has stopped, no matter.
                        let _ = slot_tx.send(());
                    }
                }
                writer.finish()?;
                Ok((totals, seconds))
            });
            // Test hook: slow the run down so that tests can interrupt it between chunks.
            let delay = std::env::var("DHUMBAL_RUN_CHUNK_DELAY_MS")
                .ok()
                .and_then(|v| v.parse::<u64>().ok());
            let mut next = done;
            let mut index = 0u64;
            while next < units {
                // No slot, or the writer has stopped (its error is reported below): slots it
                // left in the channel must not start more play.
                if slot_rx.recv().is_err() || writer_stopped.load(Ordering::Acquire) {
                    break;
                }
                if let Some(ms) = delay {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
                let end = (next + chunk_units).min(units);
                let (chunk, fail) = pool.install(|| lineup.play_chunk(next..end));
                next += chunk.len() as u64;
                let stop = fail.is_some();
                failure = fail;
                if job_tx.send((index, chunk)).is_err() || stop {
                    break;
                }
                index += 1;
            }
            drop(job_tx);
            drop(slot_rx);
            writer_thread
                .join()
                .expect("the record writer does not panic")
        });
        let (totals, seconds) = written?;
        if let Some(e) = failure {
            return Err(describe_failure(stage, &e, &dir));
        }
        let result = stage_result(&lineup, &dir, totals.clone(), seconds);
        crate::records::summary::write_summary_csv(&dir.join("summary.csv"), &result)?;
        let sp = progress.stages.last_mut().expect("pushed above");
        sp.complete = true;
        save_progress(root, &progress)?;
        reporter.stage_done(stage, &result);
        if opts.report {
            // After the records are complete and saved: a failing report loses nothing. Its
            // time is not the run's (rounds per second measure play and records only).
            let report_start = Instant::now();
            let info = analysis_info(stage, &result.agents);
            let report =
                crate::analysis::report_stage(&dir, &info, &crate::analysis::Options::default());
            reporter.report_done(stage, &report);
            report_seconds += report_start.elapsed().as_secs_f64();
        }
        results.push(result);
    }
    let seconds = start.elapsed().as_secs_f64() - report_seconds;
    let rounds = results.iter().map(|r| r.totals.rounds).sum();
    let report = RunReport {
        stages: results,
        seconds,
        rounds,
    };
    crate::records::summary::write_manifest(&root.join("manifest.json"), scenario, opts, &report)?;
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
                let mut def = result.agents[result.totals.winner()].clone();
                def.recipe = def.recipe.for_rules(stage.rules.clone()).map_err(|e| {
                    anyhow::anyhow!(
                        "recompiling {} for stage `{}`: {}",
                        def.kind,
                        stage.name,
                        e.message
                    )
                })?;
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

/// What the analysis needs to know about a stage it did not read from a manifest.
fn analysis_info(stage: &Stage, agents: &[AgentDef]) -> crate::analysis::StageInfo {
    use crate::analysis::SeatingMode;
    use crate::scenario::Seating;
    crate::analysis::StageInfo {
        name: stage.name.clone(),
        agents: agents.iter().map(|a| a.id.clone()).collect(),
        kinds: agents.iter().map(|a| a.kind.clone()).collect(),
        seating: match stage.seating {
            Seating::Fixed => SeatingMode::Fixed,
            Seating::Rotate => SeatingMode::Rotate,
            Seating::Permute => SeatingMode::Permute,
            Seating::Random => SeatingMode::Random,
        },
        points: stage.is_points(),
        players: stage.players(),
        session: stage.session,
        seed: Some(stage.seed),
        source: "runner".into(),
    }
}

fn stage_result(lineup: &Lineup<'_>, dir: &Path, totals: StageTotals, seconds: f64) -> StageResult {
    StageResult {
        name: lineup.stage.name.clone(),
        dir: dir.to_path_buf(),
        agents: lineup.agents.clone(),
        totals,
        seconds,
    }
}

fn describe_failure(stage: &Stage, e: &UnitError, dir: &Path) -> anyhow::Error {
    let deal = match stage.session {
        Some(len) => format!("deal {}", e.matchno * u64::from(len) + u64::from(e.round)),
        None => format!("game {}, round {}", e.matchno, e.round),
    };
    anyhow::anyhow!(
        "stage `{}`, {deal}, seating {}: {}\nrecords of the finished chunks are in {}; fix the problem and rerun \
         (or `--resume` to continue after a crash)",
        stage.name,
        e.arrangement,
        e.error,
        dir.display()
    )
}
