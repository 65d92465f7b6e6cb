//! A stage's record pipeline: the pool's threads play units one at a time, in order, across
//! the chunks (parts) of the stage; a chunk is released to the writer threads once it and
//! every one before it are played (released in order; parts may land in any order), and the
//! writers turn it into a part of the stage's dataset (encoded, compressed, synced and
//! renamed into place, several at once), and a collector thread adds up what is finished
//! (progress, totals) as parts land. A tap ([`RecordTap`], the report's pass over the
//! records) may see the released chunks too, in unit order, on a thread of its own. A chunk
//! takes a slot from its first unit until its part is on disk and the tap is done with it, so
//! memory is bounded by the slots, not by the number of rounds (nor by how far a tap lags);
//! its records' buffers then go to the units played next, so that play keeps writing into
//! memory it has touched before (a fresh page costs a fault and the kernel's zeroing: a
//! million-round run took about 12,000 faults and 70-77 MB, and takes about 7,200 and 58 MB).

use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

use crate::dataset::{PartMeta, PartWriter};
use crate::records::Records;
use crate::run::RecordTap;
use crate::tournament::{Halt, Lineup, Pulse};

/// A chunk to write: its units and their records.
type Job = (Range<u64>, Vec<Records>);

/// A released chunk, shared by its writer and the tap (if any).
type Shared<'s> = (Range<u64>, Arc<Held<'s>>);

/// A released chunk's records. The chunk holds its slot until the last of its holders (the
/// writer, the tap) drops them: then the slot goes to the next chunk.
struct Held<'s> {
    records: Vec<Records>,
    schedule: &'s (Mutex<Schedule>, Condvar),
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // The records' memory goes to the units played next, as much of it as units are left
        // to hand out (the rest, and a trace's, which no unit reuses, is freed here, outside
        // the lock: kept to the stage's end, it would be memory nothing else could use), and
        // the slot to the next chunk.
        let mut records = std::mem::take(&mut self.records);
        for r in &mut records {
            r.trace = None;
        }
        // No panic in a drop: a schedule poisoned by a panic is closed anyway.
        if let Ok(mut s) = self.schedule.0.lock() {
            let wanted = if s.closed { 0 } else { s.unhanded };
            let keep = usize::try_from(wanted)
                .unwrap_or(usize::MAX)
                .saturating_sub(s.spare.len())
                .min(records.len());
            s.spare.extend(records.drain(..keep));
            s.open += 1;
        }
        self.schedule.1.notify_all();
        drop(records);
    }
}

/// A writer thread: takes chunks off `jobs` until it closes (or the collector is gone) and
/// writes each as a part. A panic inside becomes that part's error.
fn write_parts(
    jobs: Arc<Mutex<Receiver<Shared<'_>>>>,
    out: Sender<crate::Result<PartMeta>>,
    writer: &PartWriter,
) {
    loop {
        // The lock is held only to take a job.
        let job = jobs.lock().expect("no writer panics holding it").recv();
        let Ok((units, chunk)) = job else { break };
        let written = std::panic::catch_unwind(AssertUnwindSafe(|| {
            writer.write(units.clone(), &chunk.records)
        }))
        .unwrap_or_else(|_| {
            Err(crate::Error::Internal(format!(
                "the record writer failed on units {}..{}",
                units.start, units.end
            )))
        });
        drop(chunk);
        if out.send(written).is_err() {
            break;
        }
    }
}

/// Hands the chunks sent to `chunks` to `tap` in the order of `starts` (their first units:
/// chunks are released in order, but the threads that release them send them in any order),
/// each as soon as every chunk before it has been handed over. Gives the tap back if it saw
/// every chunk, in order, without panicking; a tap that panicked sees nothing more, but the
/// chunks are still taken off the queue so that play never waits for it.
fn feed_tap<'t>(
    mut tap: Box<dyn RecordTap + 't>,
    starts: &[u64],
    chunks: Receiver<Shared<'_>>,
) -> Option<Box<dyn RecordTap + 't>> {
    let mut next = 0;
    let mut early: BTreeMap<u64, Shared<'_>> = BTreeMap::new();
    let mut sound = true;
    for (units, records) in chunks {
        early.insert(units.start, (units, records));
        while let Some((units, records)) = starts.get(next).and_then(|s| early.remove(s)) {
            if sound {
                sound = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    tap.records(units, &records.records);
                }))
                .is_ok();
            }
            next += 1;
        }
    }
    (sound && next == starts.len()).then_some(tap)
}

/// What playing (part of) one stage needs.
pub(crate) struct StageJob<'a, 't> {
    pub lineup: &'a Lineup<'a>,
    pub pool: &'a rayon::ThreadPool,
    pub threads: usize,
    /// The units to play, one part each, in order.
    pub work: Vec<Range<u64>>,
    pub writer: &'a PartWriter,
    /// Hears of every part on disk, in the order they land (on the collector thread); an
    /// error stops the stage.
    pub landed: &'a mut (dyn FnMut(&PartMeta) -> crate::Result<()> + Send),
    /// Stop requests in, counts of play out.
    pub pulse: &'a Pulse,
    /// Sees every chunk released, in unit order, while play goes on (its own lifetime: it
    /// outlives the job, handed back in [`Played`]).
    pub tap: Option<Box<dyn RecordTap + 't>>,
}

/// What [`play_stage`] did.
pub(crate) struct Played<'t> {
    /// Whether every part written landed.
    pub written: crate::Result<()>,
    /// Why play stopped early, if it did (a failure, or a stop request; the units finished
    /// before it are written as a shorter part).
    pub failure: Option<Halt>,
    /// The job's tap, if it saw every chunk of the job, in order, and play did not stop
    /// early (the caller drops it too when a part failed to land: `written`).
    pub tap: Option<Box<dyn RecordTap + 't>>,
}

/// The stage's play, shared by the pool's threads: which unit comes next, how many chunks
/// may be in play (the slots: memory is bounded by them), the records of the chunks in play,
/// and the first unit that failed or was stopped.
///
/// Every thread takes the next unit as soon as it is free, across chunk boundaries: playing
/// chunk by chunk left a thread idle at the end of each chunk until the other finished its
/// last unit (with parts of 16 sessions on 2 threads, about a tenth of the run).
struct Schedule {
    work: Vec<Range<u64>>,
    /// The next unit to hand out: its chunk and the unit.
    chunk: usize,
    unit: u64,
    /// Chunks that may be started: the slots, plus one for each chunk done with (written, and
    /// seen by the tap if any: [`Held`]).
    open: usize,
    /// Each chunk's records by unit (`None` until played; the list made when the chunk's
    /// first unit is handed out, and emptied when it goes to the writers, so that memory
    /// follows the chunks in play, not the stage's units) and its units still unplayed.
    records: Vec<Vec<Option<Records>>>,
    left: Vec<usize>,
    /// The first chunk not yet released to the writers (chunks are released in order).
    next_out: usize,
    /// The first unit that failed or was stopped, and why: nothing from it on is written.
    halt: Option<(u64, Halt)>,
    /// No more units are handed out: a halt, the collector stopped, or the writers gone.
    closed: bool,
    /// The records of chunks already written, whose memory the next units' records take
    /// (never more of them than `unhanded`).
    spare: Vec<Records>,
    /// Units not handed out yet.
    unhanded: u64,
}

impl Schedule {
    /// [`Schedule::new`] as the threads share it: behind its lock, with the condition they
    /// wait on.
    fn shared(work: Vec<Range<u64>>, slots: usize) -> (Mutex<Schedule>, Condvar) {
        (Mutex::new(Schedule::new(work, slots)), Condvar::new())
    }

    /// Play of `work` (chunks of units, in order) with `slots` chunks in play at most.
    fn new(work: Vec<Range<u64>>, slots: usize) -> Schedule {
        debug_assert!(
            work.iter().all(|r| r.start < r.end),
            "`cut` makes no empty chunk"
        );
        Schedule {
            chunk: 0,
            unit: work.first().map_or(0, |r| r.start),
            open: slots,
            records: work.iter().map(|_| Vec::new()).collect(),
            left: work.iter().map(|r| (r.end - r.start) as usize).collect(),
            next_out: 0,
            halt: None,
            closed: false,
            spare: Vec::new(),
            unhanded: work.iter().map(|r| r.end - r.start).sum(),
            work,
        }
    }

    /// The next unit to play, waiting for a slot if its chunk has none; `None` when there is
    /// nothing more to play. `delay` (a test hook) is slept before a chunk's first unit with
    /// the schedule held, so that no unit starts during it, as between chunks played one by
    /// one.
    fn take(
        shared: &(Mutex<Schedule>, Condvar),
        pulse: &Pulse,
        delay: Option<std::time::Duration>,
    ) -> Option<(usize, u64, Records)> {
        let (lock, wake) = shared;
        let mut s = lock.lock().expect("no thread panics holding the schedule");
        loop {
            if s.closed || s.chunk >= s.work.len() {
                return None;
            }
            if s.chunk < s.open {
                break;
            }
            s = wake.wait(s).expect("no thread panics holding the schedule");
        }
        let (chunk, unit) = (s.chunk, s.unit);
        if pulse.stopping() {
            s.halt_at(unit, Halt::Stopped);
            wake.notify_all();
            return None;
        }
        if unit == s.work[chunk].start {
            let units = s.work[chunk].clone();
            s.records[chunk] = units.map(|_| None).collect();
            if let Some(d) = delay {
                std::thread::sleep(d);
            }
        }
        s.unit += 1;
        if s.unit == s.work[chunk].end {
            s.chunk += 1;
            if let Some(next) = s.work.get(s.chunk) {
                s.unit = next.start;
            }
        }
        s.unhanded -= 1;
        Some((chunk, unit, s.spare.pop().unwrap_or_default()))
    }

    /// Play stops at `unit` (unless an earlier unit already stopped it).
    fn halt_at(&mut self, unit: u64, why: Halt) {
        if self.halt.as_ref().is_none_or(|(at, _)| unit < *at) {
            self.halt = Some((unit, why));
        }
        self.closed = true;
    }

    /// The unit's records, and the chunks now complete that go to the writers (every chunk
    /// before them already gone).
    fn finish(&mut self, chunk: usize, unit: u64, played: Result<Records, Halt>) -> Vec<Job> {
        match played {
            Ok(records) => {
                let i = (unit - self.work[chunk].start) as usize;
                self.records[chunk][i] = Some(records);
                self.left[chunk] -= 1;
            }
            Err(why) => self.halt_at(unit, why),
        }
        // In order, so that nothing past a halt is written: the chunk of the unit that halted
        // never completes (that unit is not counted), and no later chunk goes before it.
        let mut out = Vec::new();
        while self.next_out < self.work.len() && self.left[self.next_out] == 0 {
            let units = self.work[self.next_out].clone();
            let records = std::mem::take(&mut self.records[self.next_out]);
            out.push((
                units,
                records.into_iter().map(|r| r.expect("played")).collect(),
            ));
            self.next_out += 1;
        }
        out
    }

    /// After play: the chunk a halt cut short, as the units played before the halt (every one
    /// of them finished: units are handed out in order), if any were.
    fn cut_short(&mut self) -> Option<Job> {
        let (at, _) = self.halt.as_ref()?;
        let units = self.work.get(self.next_out)?.clone();
        if *at < units.start || *at >= units.end {
            return None;
        }
        let played = units.start..*at;
        let records: Vec<Records> = std::mem::take(&mut self.records[self.next_out])
            .into_iter()
            .take((at - units.start) as usize)
            .map(|r| r.expect("every unit before the halt was played"))
            .collect();
        (!records.is_empty()).then_some((played, records))
    }
}

/// Plays `work` and writes its parts, handing the tap (if any) each chunk as it is released.
pub(crate) fn play_stage<'t>(job: StageJob<'_, 't>) -> Played<'t> {
    let StageJob {
        lineup,
        pool,
        threads,
        work,
        writer,
        landed,
        pulse,
        tap,
    } = job;
    let starts: Vec<u64> = work.iter().map(|r| r.start).collect();
    // Encoding and compressing a part costs a fraction of playing it; with as many writers as
    // threads they keep up with play however the work divides.
    let writers = threads.max(1);
    let slots = writers + 2;
    let schedule = Schedule::shared(work, slots);
    // Test hook: slow the run down so that tests can interrupt it between chunks.
    let delay = std::env::var("DHUMBAL_RUN_CHUNK_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_millis);
    let (collected, tap) = std::thread::scope(|scope| {
        let schedule = &schedule;
        // Made here, so that a panic unwinding out of play drops the queue and the writers end.
        let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<Shared<'_>>(1);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = std::sync::mpsc::channel::<crate::Result<PartMeta>>();
        for _ in 0..writers {
            let jobs = Arc::clone(&job_rx);
            let out = done_tx.clone();
            scope.spawn(move || write_parts(jobs, out, writer));
        }
        // Writers alone hold the job queue now: if they stop, sending a job fails.
        drop(job_rx);
        drop(done_tx);
        let collector = scope.spawn(move || -> crate::Result<()> {
            // However the collector stops (done, an error, a panic), nothing more is played.
            let _stopped = CloseOnDrop(schedule);
            // A part's slot goes to the next chunk when its records are dropped (`Held`).
            for written in done_rx {
                landed(&written?)?;
            }
            Ok(())
        });
        // A chunk keeps its slot until the tap is done with it too: a tap slower than play
        // holds play back rather than gathering the stage's records.
        let (tap_tx, tapped) = match tap {
            Some(tap) => {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Shared<'_>>(slots);
                let starts = &starts;
                let fed = std::thread::Builder::new()
                    .name("record-tap".into())
                    .spawn_scoped(scope, move || feed_tap(tap, starts, rx))
                    .expect("cannot start the thread of the records' tap");
                (Some(tx), Some(fed))
            }
            None => (None, None),
        };
        pool.broadcast(|_| {
            // However a thread stops (nothing left, a halt, a panic in play), the schedule
            // closes, so that no other thread waits for a slot that will not come.
            let _closes = CloseOnDrop(schedule);
            while let Some((chunk, unit, spare)) = Schedule::take(schedule, pulse, delay) {
                let played = lineup.play(unit, pulse, spare);
                let halted = played.is_err();
                let ready = schedule
                    .0
                    .lock()
                    .expect("no thread panics holding it")
                    .finish(chunk, unit, played);
                if halted {
                    schedule.1.notify_all();
                }
                // Outside the lock: the writers' queue (and the tap's) may be full.
                for (units, records) in ready {
                    let records = Arc::new(Held { records, schedule });
                    if let Some(tap) = &tap_tx {
                        // Gone only if its thread ended early, which `feed_tap` never does.
                        let _ = tap.send((units.clone(), Arc::clone(&records)));
                    }
                    if job_tx.send((units, records)).is_err() {
                        // The writers are gone (the collector stopped): play no more.
                        close(schedule);
                        break;
                    }
                }
            }
        });
        // A chunk cut short still becomes a part: its finished units are kept.
        let short = schedule
            .0
            .lock()
            .expect("no thread panics holding it")
            .cut_short();
        if let Some((units, records)) = short {
            let _ = job_tx.send((units, Arc::new(Held { records, schedule })));
        }
        drop(job_tx);
        drop(tap_tx);
        let tap = tapped.and_then(|fed| fed.join().expect("`feed_tap` catches the tap's panics"));
        let collected = collector.join().expect("the collector does not panic");
        (collected, tap)
    });
    let failure = schedule
        .0
        .into_inner()
        .expect("no thread panics holding it")
        .halt
        .map(|(_, why)| why);
    Played {
        written: collected,
        tap: tap.filter(|_| failure.is_none()),
        failure,
    }
}

/// Closes the schedule: no more units are handed out, and every thread waiting for a slot
/// wakes.
fn close(shared: &(Mutex<Schedule>, Condvar)) {
    // The spare records' memory is freed outside the lock: no unit will take it.
    let spare = match shared.0.lock() {
        Ok(mut s) => {
            s.closed = true;
            std::mem::take(&mut s.spare)
        }
        Err(_) => Vec::new(),
    };
    shared.1.notify_all();
    drop(spare);
}

/// Closes the schedule when dropped (however its holder stops, a panic included).
struct CloseOnDrop<'a>(&'a (Mutex<Schedule>, Condvar));

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        close(self.0);
    }
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

    /// The units of the jobs a step released.
    fn released(jobs: Vec<Job>) -> Vec<(Range<u64>, usize)> {
        jobs.into_iter().map(|(r, recs)| (r, recs.len())).collect()
    }

    /// A unit handed out, without the memory for its records.
    fn at(taken: Option<(usize, u64, Records)>) -> Option<(usize, u64)> {
        taken.map(|(chunk, unit, _)| (chunk, unit))
    }

    fn take_all(s: &mut Schedule) -> Vec<(usize, u64)> {
        let shared = (
            Mutex::new(std::mem::replace(s, Schedule::new(vec![], 0))),
            Condvar::new(),
        );
        let mut taken = Vec::new();
        while let Some(t) = at(Schedule::take(&shared, &Pulse::default(), None)) {
            taken.push(t);
        }
        *s = shared.0.into_inner().unwrap();
        taken
    }

    #[test]
    fn units_go_out_in_order_across_chunks_and_chunks_reach_the_writers_in_order() {
        let mut s = Schedule::new(vec![0..2, 2..3, 5..7], 8);
        // Nothing held for a chunk before its first unit is handed out.
        assert!(s.records.iter().all(Vec::is_empty));
        let taken = take_all(&mut s);
        assert_eq!(taken, vec![(0, 0), (0, 1), (1, 2), (2, 5), (2, 6)]);
        // Finished out of order: a chunk waits for every chunk before it.
        assert!(released(s.finish(1, 2, Ok(Records::default()))).is_empty());
        assert!(released(s.finish(0, 1, Ok(Records::default()))).is_empty());
        assert!(released(s.finish(2, 6, Ok(Records::default()))).is_empty());
        assert_eq!(
            released(s.finish(0, 0, Ok(Records::default()))),
            vec![(0..2, 2), (2..3, 1)]
        );
        assert_eq!(
            released(s.finish(2, 5, Ok(Records::default()))),
            vec![(5..7, 2)]
        );
        assert!(s.cut_short().is_none() && s.halt.is_none());
        // Nor after it went to the writers.
        assert!(s.records.iter().all(Vec::is_empty));
    }

    #[test]
    fn a_halt_keeps_the_units_before_it_and_nothing_after_it() {
        let mut s = Schedule::new(vec![0..3, 3..6, 6..9], 8);
        // Eight units taken: all of chunks 0 and 1, two of chunk 2.
        let shared = (Mutex::new(s), Condvar::new());
        let pulse = Pulse::default();
        for _ in 0..8 {
            Schedule::take(&shared, &pulse, None).unwrap();
        }
        s = shared.0.into_inner().unwrap();
        // Unit 7 fails first, then unit 4 (earlier): the earlier one is the halt.
        assert!(released(s.finish(2, 7, Err(Halt::Stopped))).is_empty());
        assert!(s.closed);
        assert!(released(s.finish(1, 4, Err(Halt::Stopped))).is_empty());
        assert_eq!(s.halt.as_ref().map(|h| h.0), Some(4));
        // Nothing more is handed out.
        assert!(take_all(&mut s).is_empty());
        // Chunk 2 completes past the halt: never released.
        assert!(released(s.finish(2, 6, Ok(Records::default()))).is_empty());
        for u in [0, 1, 2] {
            let out = released(s.finish(0, u, Ok(Records::default())));
            assert_eq!(out, if u == 2 { vec![(0..3, 3)] } else { vec![] });
        }
        assert!(released(s.finish(1, 5, Ok(Records::default()))).is_empty());
        assert!(released(s.finish(1, 3, Ok(Records::default()))).is_empty());
        // After play, chunk 1 cut at the halt: unit 3 only.
        let (units, records) = s.cut_short().expect("unit 3 was played");
        assert_eq!((units, records.len()), (3..4, 1));
    }

    #[test]
    fn a_halt_at_a_chunks_first_unit_writes_no_empty_part() {
        let mut s = Schedule::new(vec![0..2, 2..4], 8);
        take_all(&mut s);
        s.finish(0, 0, Ok(Records::default()));
        assert_eq!(
            released(s.finish(0, 1, Ok(Records::default()))),
            vec![(0..2, 2)]
        );
        assert!(released(s.finish(1, 2, Err(Halt::Stopped))).is_empty());
        s.finish(1, 3, Ok(Records::default()));
        assert!(s.cut_short().is_none());
    }

    #[test]
    fn a_stop_request_halts_before_the_next_unit() {
        let s = Schedule::new(std::iter::once(0..4).collect(), 8);
        let shared = (Mutex::new(s), Condvar::new());
        let pulse = Pulse::default();
        assert_eq!(at(Schedule::take(&shared, &pulse, None)), Some((0, 0)));
        pulse.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(at(Schedule::take(&shared, &pulse, None)), None);
        let mut s = shared.0.into_inner().unwrap();
        assert_eq!(s.halt.as_ref().map(|h| h.0), Some(1));
        assert!(s.finish(0, 0, Ok(Records::default())).is_empty());
        let (units, records) = s.cut_short().expect("unit 0 was played");
        assert_eq!((units, records.len()), (0..1, 1));
    }

    #[test]
    fn no_chunk_starts_without_a_slot_and_a_landed_part_gives_one() {
        let s = Schedule::new(vec![0..1, 1..2, 2..3], 1);
        let shared = std::sync::Arc::new((Mutex::new(s), Condvar::new()));
        let pulse = std::sync::Arc::new(Pulse::default());
        assert_eq!(at(Schedule::take(&shared, &pulse, None)), Some((0, 0)));
        let waiter = {
            let (shared, pulse) = (shared.clone(), pulse.clone());
            std::thread::spawn(move || at(Schedule::take(&shared, &pulse, None)))
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "chunk 1 started without a slot");
        shared.0.lock().unwrap().open += 1;
        shared.1.notify_all();
        assert_eq!(waiter.join().unwrap(), Some((1, 1)));
        // Closing wakes a waiter with nothing.
        let waiter = {
            let (shared, pulse) = (shared.clone(), pulse.clone());
            std::thread::spawn(move || at(Schedule::take(&shared, &pulse, None)))
        };
        close(&shared);
        assert_eq!(waiter.join().unwrap(), None);
    }

    /// A tap that keeps the units it was given (or panics on the chunk starting at `panic_at`).
    struct Keep {
        seen: std::sync::Arc<Mutex<Vec<Range<u64>>>>,
        panic_at: Option<u64>,
    }

    impl RecordTap for Keep {
        fn records(&mut self, units: Range<u64>, _records: &[Records]) {
            assert_ne!(Some(units.start), self.panic_at, "a tap's bug");
            self.seen.lock().unwrap().push(units);
        }

        fn complete(self: Box<Self>) {}
    }

    /// Chunks sent to the tap in any order reach it in unit order, each once; a tap that
    /// missed a chunk, or panicked, is not handed back, and the queue is drained all the same.
    #[test]
    fn the_tap_sees_chunks_in_unit_order_and_only_a_whole_tap_comes_back() {
        let work = vec![0..2, 2..4, 4..5, 5..9];
        let starts: Vec<u64> = work.iter().map(|r| r.start).collect();
        let schedule = Schedule::shared(work.clone(), 4);
        let held = |r: &Range<u64>| -> Shared<'_> {
            let records = Held {
                records: vec![Records::default(); (r.end - r.start) as usize],
                schedule: &schedule,
            };
            (r.clone(), Arc::new(records))
        };
        for (order, missing, panic_at) in [
            (vec![2, 0, 3, 1], None, None),
            (vec![3, 2, 1, 0], None, None),
            (vec![0, 1, 3], Some(2), None),
            (vec![1, 0, 2, 3], None, Some(4)),
        ] {
            let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
            let tap = Box::new(Keep {
                seen: seen.clone(),
                panic_at,
            });
            let (tx, rx) = std::sync::mpsc::sync_channel::<Shared<'_>>(4);
            for &i in &order {
                tx.send(held(&work[i])).unwrap();
            }
            drop(tx);
            let back = feed_tap(tap, &starts, rx);
            let seen = seen.lock().unwrap().clone();
            match (missing, panic_at) {
                (None, None) => {
                    assert!(back.is_some());
                    assert_eq!(seen, work);
                }
                (Some(gap), _) => {
                    assert!(back.is_none());
                    assert_eq!(seen, work[..gap]);
                }
                (_, Some(_)) => {
                    assert!(back.is_none());
                    assert_eq!(seen, work[..2]);
                }
            }
        }
    }

    /// A chunk's slot comes back when the last of its holders drops its records, not before.
    #[test]
    fn a_chunk_holds_its_slot_until_writer_and_tap_are_done() {
        let schedule = Schedule::shared(vec![0..1, 1..2], 1);
        let chunk = Arc::new(Held {
            records: vec![Records::default()],
            schedule: &schedule,
        });
        let for_tap = Arc::clone(&chunk);
        drop(chunk);
        assert_eq!(schedule.0.lock().unwrap().open, 1, "the tap still holds it");
        drop(for_tap);
        assert_eq!(schedule.0.lock().unwrap().open, 2);
    }

    /// The records of a chunk done with are the memory of the next units' records.
    #[test]
    fn a_written_chunks_records_go_to_the_next_units() {
        let schedule = Schedule::shared(vec![0..1, 1..2], 1);
        let pulse = Pulse::default();
        let (_, _, first) = Schedule::take(&schedule, &pulse, None).unwrap();
        assert_eq!(first.capacity(), 0, "nothing written yet");
        let mut played = Records::reuse(first, 100);
        played.begin_round();
        played.push(crate::records::sample(1, 1)[0].rows()[0]);
        let at = played.rows().as_ptr();
        drop(Held {
            records: vec![played],
            schedule: &schedule,
        });
        let (_, unit, spare) = Schedule::take(&schedule, &pulse, None).unwrap();
        assert_eq!(unit, 1);
        let next = Records::reuse(spare, 50);
        assert_eq!((next.len(), next.rounds()), (0, 0));
        assert!(next.capacity() >= 100 && next.rows().as_ptr() == at);
        // No unit left to hand out: a chunk's records are freed, not kept.
        drop(Held {
            records: vec![next, Records::with_capacity(10)],
            schedule: &schedule,
        });
        assert!(schedule.0.lock().unwrap().spare.is_empty());
    }

    /// A chunk done with keeps no more of its records than there are units left to play.
    #[test]
    fn spare_records_never_outnumber_the_units_left() {
        let schedule = Schedule::shared(vec![0..3, 3..5], 2);
        let pulse = Pulse::default();
        for _ in 0..3 {
            Schedule::take(&schedule, &pulse, None).unwrap();
        }
        drop(Held {
            records: (0..3).map(|_| Records::with_capacity(4)).collect(),
            schedule: &schedule,
        });
        assert_eq!(schedule.0.lock().unwrap().spare.len(), 2);
    }
}
