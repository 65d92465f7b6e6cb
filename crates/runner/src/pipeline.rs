//! A stage's record pipeline: the calling thread plays chunks of units on the pool, encoder
//! threads turn them into Parquet row groups in parallel, and one writer thread appends them
//! in chunk order (CSV journal and Parquet), saving progress after each. A chunk takes a slot
//! from playing until written, so memory is bounded by the slots, not by the number of rounds.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::progress::Progress;
use crate::records::{Encoded, RecordEncoder, RecordWriter, Records};
use crate::tournament::{Halt, Lineup, Pulse, StageTotals};

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

/// What playing one stage needs.
pub(crate) struct StageJob<'a> {
    pub lineup: &'a Lineup<'a>,
    pub pool: &'a rayon::ThreadPool,
    pub threads: usize,
    /// Units per chunk.
    pub chunk_units: u64,
    pub writer: RecordWriter,
    pub encoder: &'a RecordEncoder,
    /// Its last stage is this one's.
    pub progress: &'a mut Progress,
    /// Where `progress.json` goes.
    pub root: &'a Path,
    /// Units already finished (resume), their totals and seconds.
    pub done: u64,
    pub totals: StageTotals,
    pub seconds: f64,
    /// Stop requests in, counts of play out.
    pub pulse: &'a Pulse,
}

/// Plays the stage's remaining units and writes their records: the totals and seconds of the
/// stage as written, and why play stopped early, if it did (a failure, or a stop request; the
/// records of the units finished before it are written).
pub(crate) fn play_stage(job: StageJob<'_>) -> (anyhow::Result<(StageTotals, f64)>, Option<Halt>) {
    let StageJob {
        lineup,
        pool,
        threads,
        chunk_units,
        writer,
        encoder,
        progress,
        root,
        mut done,
        mut totals,
        seconds,
        pulse,
    } = job;
    let units = lineup.units();
    let points = lineup.stage.is_points();
    let stage_start = Instant::now();
    let base_seconds = seconds;
    let mut failure = None;
    // The pipeline: this thread plays chunks (on the pool), encoder threads turn them into
    // Parquet row groups in parallel (encoding costs about half as much as playing, so one
    // thread for it capped the run), and the writer thread, in chunk order, formats and
    // appends the CSV and appends the row groups. A chunk takes a slot from playing until
    // written, so memory is bounded by the slots, not by the number of rounds.
    let encoders = threads.max(1);
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
        let writer_stopped = &writer_stopped;
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
                    for cols in &chunk {
                        totals.add(cols, points);
                    }
                    done += chunk.len() as u64;
                    seconds = base_seconds + stage_start.elapsed().as_secs_f64();
                    let sp = progress.stages.last_mut().expect("pushed above");
                    sp.units_done = done;
                    sp.csv_len = csv_len;
                    sp.totals = totals.clone();
                    sp.seconds = seconds;
                    progress.save(root)?;
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
            if pulse.stopping() {
                failure = Some(Halt::Stopped);
                break;
            }
            if let Some(ms) = delay {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            let end = (next + chunk_units).min(units);
            let (chunk, fail) = pool.install(|| lineup.play_chunk(next..end, pulse));
            next += chunk.len() as u64;
            let stop = fail.is_some();
            failure = fail;
            // A chunk cut short still goes to the writer: its finished units are kept.
            if (!chunk.is_empty() && job_tx.send((index, chunk)).is_err()) || stop {
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
    (written, failure)
}
