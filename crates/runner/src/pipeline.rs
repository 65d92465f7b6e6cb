//! A stage's record pipeline: the calling thread plays chunks of units on the pool, writer
//! threads turn each into a part of the stage's dataset (encoded, compressed, synced and
//! renamed into place, several at once), and a collector thread adds up what is finished
//! (progress, totals) as parts land. A chunk takes a slot from playing until its part is on
//! disk, so memory is bounded by the slots, not by the number of rounds.

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use crate::dataset::{PartMeta, PartWriter};
use crate::records::Records;
use crate::tournament::{Halt, Lineup, Pulse};

/// A chunk to write: its units and their records.
type Job = (Range<u64>, Vec<Records>);

/// A writer thread: takes chunks off `jobs` until it closes (or the collector is gone) and
/// writes each as a part. A panic inside becomes that part's error.
fn write_parts(
    jobs: Arc<Mutex<Receiver<Job>>>,
    out: Sender<anyhow::Result<PartMeta>>,
    writer: &PartWriter,
) {
    loop {
        // The lock is held only to take a job.
        let job = jobs.lock().expect("no writer panics holding it").recv();
        let Ok((units, chunk)) = job else { break };
        let written =
            std::panic::catch_unwind(AssertUnwindSafe(|| writer.write(units.clone(), &chunk)))
                .unwrap_or_else(|_| {
                    Err(anyhow::anyhow!(
                        "the record writer failed on units {}..{}",
                        units.start,
                        units.end
                    ))
                });
        drop(chunk);
        if out.send(written).is_err() {
            break;
        }
    }
}

/// Sets its flag when dropped: the collector holds one, so that however it stops (done, an
/// error, a panic) nothing more is played.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// What playing (part of) one stage needs.
pub(crate) struct StageJob<'a> {
    pub lineup: &'a Lineup<'a>,
    pub pool: &'a rayon::ThreadPool,
    pub threads: usize,
    /// The units to play, one part each, in order.
    pub work: Vec<Range<u64>>,
    pub writer: &'a PartWriter,
    /// Hears of every part on disk, in the order they land (on the collector thread); an
    /// error stops the stage.
    pub landed: &'a mut (dyn FnMut(&PartMeta) -> anyhow::Result<()> + Send),
    /// Stop requests in, counts of play out.
    pub pulse: &'a Pulse,
}

/// Plays `work` and writes its parts. Returns whether every part written landed (an error
/// otherwise), and why play stopped early, if it did (a failure, or a stop request; the
/// units finished before it are written as a shorter part).
pub(crate) fn play_stage(job: StageJob<'_>) -> (anyhow::Result<()>, Option<Halt>) {
    let StageJob {
        lineup,
        pool,
        threads,
        work,
        writer,
        landed,
        pulse,
    } = job;
    let mut failure = None;
    // Encoding and compressing a part costs a fraction of playing it; with as many writers as
    // threads they keep up with play however the work divides.
    let writers = threads.max(1);
    let slots = writers + 2;
    let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<Job>(1);
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<anyhow::Result<PartMeta>>();
    let (slot_tx, slot_rx) = std::sync::mpsc::sync_channel::<()>(slots);
    for _ in 0..slots {
        slot_tx.send(()).expect("the receiver is here");
    }
    let collector_stopped = AtomicBool::new(false);
    let collected: anyhow::Result<()> = std::thread::scope(|scope| {
        let collector_stopped = &collector_stopped;
        for _ in 0..writers {
            let jobs = Arc::clone(&job_rx);
            let out = done_tx.clone();
            scope.spawn(move || write_parts(jobs, out, writer));
        }
        // Writers alone hold the job queue now: if they stop, sending a job fails.
        drop(job_rx);
        drop(done_tx);
        let collector = scope.spawn(move || -> anyhow::Result<()> {
            let _stopped = SetOnDrop(collector_stopped);
            for written in done_rx {
                landed(&written?)?;
                // The player may be waiting for this slot; if it has stopped, no matter.
                let _ = slot_tx.send(());
            }
            Ok(())
        });
        // Test hook: slow the run down so that tests can interrupt it between chunks.
        let delay = std::env::var("DHUMBAL_RUN_CHUNK_DELAY_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        for units in work {
            // No slot, or the collector has stopped (its error is reported below): slots it
            // left in the channel must not start more play.
            if slot_rx.recv().is_err() || collector_stopped.load(Ordering::Acquire) {
                break;
            }
            if pulse.stopping() {
                failure = Some(Halt::Stopped);
                break;
            }
            if let Some(ms) = delay {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            let (chunk, fail) = pool.install(|| lineup.play_chunk(units.clone(), pulse));
            let played = units.start..units.start + chunk.len() as u64;
            let stop = fail.is_some();
            failure = fail;
            // A chunk cut short still becomes a part: its finished units are kept.
            if (!chunk.is_empty() && job_tx.send((played, chunk)).is_err()) || stop {
                break;
            }
        }
        drop(job_tx);
        drop(slot_rx);
        collector.join().expect("the collector does not panic")
    });
    (collected, failure)
}

/// Cuts `ranges` into parts: at every multiple of `part_units` (so that parts line up
/// whoever plays them: a run, its resume, any shard), and at the ranges' own ends.
pub(crate) fn cut(ranges: &[Range<u64>], part_units: u64) -> Vec<Range<u64>> {
    let step = part_units.max(1);
    let mut parts = Vec::new();
    for r in ranges {
        let mut at = r.start;
        while at < r.end {
            let next = ((at / step + 1) * step).min(r.end);
            parts.push(at..next);
            at = next;
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_line_up_with_the_grid() {
        assert_eq!(
            cut(std::slice::from_ref(&(0..10)), 4),
            vec![0..4, 4..8, 8..10]
        );
        assert_eq!(cut(&[3..9, 12..13], 4), vec![3..4, 4..8, 8..9, 12..13]);
        assert_eq!(cut(&[], 4), Vec::<Range<u64>>::new());
    }
}
