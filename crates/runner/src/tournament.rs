//! Tournaments: a stage's sessions (coins) or games (points), each played under every seating
//! arrangement, in parallel, with results that depend only on (seed, match, arrangement).
//!
//! The unit of work is one *match* (a session of rounds sharing standings, or a game until one
//! player is left) under one seating *arrangement*. Units are numbered `match * arrangements +
//! arrangement`; chunks of consecutive units run in parallel and are handed to the caller in
//! order, so the records are the same with one thread or sixteen.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::clock;
use crate::records::Records;
use crate::scenario::{AgentDef, Generator, Seating, Stage};
pub use crate::totals::{AgentTotals, StageTotals};
use crate::trace::{RoundObserver, TraceSelection, Tracer};
use dhumbal_game::rng::{
    ChaChaStreams, Purpose, PyRandom, PythonStreams, RandomSource, Streams, chacha_stream, deal_id,
};
use dhumbal_game::{
    Agent, AgentError, Choice, Discard, Observation, Pick, PlayError, RoundOutcome, Table,
};

/// A stage with every seat's agent decided (`winner_of` resolved).
pub struct Lineup<'a> {
    pub stage: &'a Stage,
    /// The agent in each slot (the seat order of the scenario, before arrangements).
    pub agents: Vec<AgentDef>,
    /// Decisions are timed in one deal in this many (`None`: never); see [`timed_deal`].
    pub decision_sample: Option<u32>,
    /// The units whose every event is written to a trace (see [`crate::trace`]).
    pub trace: TraceSelection,
}

/// Whether play at `table` is over after `round` rounds: a coin session when it has played its
/// `session` rounds, a point game (no session) when [`Table::game_over`] says so.
#[inline]
pub fn over(table: &Table, round: u32, session: Option<u32>) -> bool {
    match session {
        Some(len) => round >= len,
        None => table.game_over(),
    }
}

/// Whether deal `deal` (the records' `deal` number) is one whose decisions are timed when one
/// deal in `every` is: a fixed hash of the number, so the sample is the same on every run
/// and thread count, is spread evenly over sessions and games, and takes all seats and
/// seating arrangements of a deal together (paired comparisons stay paired). Deal 0 is always
/// in the sample, so that even a small stage has timed decisions.
pub fn timed_deal(deal: u64, every: u32) -> bool {
    if deal == 0 {
        return true;
    }
    // SplitMix64's finaliser: consecutive deal numbers land far apart.
    let z =
        dhumbal_game::hash::splitmix64_mix(deal.wrapping_add(dhumbal_game::hash::SPLITMIX64_GAMMA));
    z.is_multiple_of(u64::from(every.max(1)))
}

/// Where a failure happened, for the message.
#[derive(Debug)]
pub struct UnitError {
    pub unit: u64,
    pub matchno: u64,
    pub arrangement: u64,
    pub round: u32,
    pub error: PlayError,
}

/// Shared between a stage's workers and its caller while it plays: a request to stop (Ctrl-C),
/// checked before every round, and counts of play so far for a progress display that moves
/// whatever the agents' speed (records are counted only once written; these run ahead).
#[derive(Debug, Default)]
pub struct Pulse {
    pub stop: Arc<AtomicBool>,
    /// Rounds played, including those of units still in play.
    pub rounds: AtomicU64,
    /// Units finished.
    pub units: AtomicU64,
}

impl Pulse {
    /// A pulse that stops when `stop` is set.
    pub fn new(stop: Arc<AtomicBool>) -> Pulse {
        Pulse {
            stop,
            ..Pulse::default()
        }
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A worker adds its rounds to [`Pulse::rounds`] when this long has passed since it last did
/// (and when a unit ends): a slow agent's rounds show as they finish, and the fastest stages
/// touch the shared counter a few times a second instead of per round, which cost a few per
/// cent. Reading the clock (`clock::ticks`) costs about 10 ns a round.
const PULSE_NANOS: u64 = 50_000_000;

/// Why a unit did not finish.
#[derive(Debug)]
pub enum Halt {
    /// An agent or the engine failed.
    Failed(UnitError),
    /// [`Pulse::stop`] was set.
    Stopped,
}

/// An agent wrapped to time its decisions and trace them, when asked (the engine counts
/// them: [`RoundOutcome::decisions`]). Tournaments seat every agent in one; `dhumbal-run play`
/// seats every seat's agent (the person's too) in one that traces, its trace written to disk
/// before the person's decisions ([`Timed::before_deciding`]).
pub struct Timed {
    inner: Box<dyn Agent>,
    timing: bool,
    /// Clock ticks spent deciding this round (converted to nanoseconds when recorded).
    ticks: u64,
    /// The unit's trace, when it is traced.
    tracer: Option<Tracer>,
    /// Called with the trace before each traced decision (see [`Timed::before_deciding`]).
    before: Option<BeforeDeciding>,
    /// Where the agent says how long it took (see [`Timed::reporting`]).
    reported: Option<Arc<AtomicU64>>,
}

/// What a [`Timed`] calls with its trace before each traced decision.
type BeforeDeciding = Box<dyn FnMut(&Tracer) + Send>;

impl Timed {
    /// `inner`, its decisions written to `tracer` when there is one, and not timed (a
    /// tournament times the decisions of its sampled deals).
    pub fn new(inner: Box<dyn Agent>, tracer: Option<Tracer>) -> Timed {
        Timed {
            inner,
            timing: false,
            ticks: 0,
            tracer,
            before: None,
            reported: None,
        }
    }

    /// The same agent, each traced decision's time the nanoseconds the agent stores in
    /// `reported` as it answers, not the clock's: a study's person, whose decision may have
    /// been made before a restart and is answered again from its journal.
    pub fn reporting(mut self, reported: Arc<AtomicU64>) -> Timed {
        self.reported = Some(reported);
        self
    }

    /// Times every decision from now on (a study's games, each of a person's decisions
    /// measured).
    pub fn timing_all(&mut self) {
        self.timing = true;
    }

    /// Nanoseconds spent deciding since the last call, which starts the count again.
    pub fn take_nanos(&mut self) -> u64 {
        clock::to_nanos(std::mem::take(&mut self.ticks))
    }

    /// The same agent, `before` called with the trace before each of its traced decisions
    /// (`dhumbal-run play` writes the trace so far to disk before the person answers).
    pub fn before_deciding(mut self, before: impl FnMut(&Tracer) + Send + 'static) -> Timed {
        self.before = Some(Box::new(before));
        self
    }

    #[inline]
    fn measure<T>(
        &mut self,
        obs: &Observation<'_>,
        f: impl FnOnce(&mut dyn Agent) -> Result<T, AgentError>,
        choice: impl FnOnce(&T) -> Choice,
    ) -> Result<T, AgentError> {
        if self.plain() {
            return f(&mut *self.inner);
        }
        self.measured(obs, f, choice)
    }

    /// Whether the decision at hand is neither timed nor traced: the agent's own answer, as
    /// it gives it, is all there is to it.
    #[inline]
    fn plain(&self) -> bool {
        !self.timing && self.tracer.is_none()
    }

    /// [`Timed::measure`] of a timed or traced decision: out of line, so that the usual
    /// decision (neither) costs a test before the agent's own call, not a frame
    /// holding all of this (`Timed`'s methods were 5% of a run's samples).
    #[inline(never)]
    fn measured<T>(
        &mut self,
        obs: &Observation<'_>,
        f: impl FnOnce(&mut dyn Agent) -> Result<T, AgentError>,
        choice: impl FnOnce(&T) -> Choice,
    ) -> Result<T, AgentError> {
        if let (Some(before), Some(tracer)) = (&mut self.before, &self.tracer) {
            before(tracer);
        }
        let start = clock::ticks();
        let out = f(&mut *self.inner);
        let spent = clock::ticks().wrapping_sub(start);
        if self.timing {
            self.ticks += spent;
        }
        if let Some(tracer) = &self.tracer {
            let ns = match &self.reported {
                Some(r) => r.swap(0, Ordering::Relaxed),
                None => clock::to_nanos(spent),
            };
            tracer.decided(&mut *self.inner, obs, &out, choice, ns);
        }
        out
    }
}

impl Agent for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    // The oracle flag and the lifecycle hooks: an oracle seated by a scenario must see the
    // hands, a learner must hear of every round.
    dhumbal_game::pass_on_to!(inner);

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        self.measure(obs, |a| a.call(obs, rng), |&c| Choice::Call(c))
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        self.measure(obs, |a| a.discard(obs, rng), |d| Choice::Discard(*d))
    }

    fn discard_into(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        if self.plain() {
            return self.inner.discard_into(obs, rng, into);
        }
        // Timed or traced: the discard as `discard` gives it (the trace reads it from there).
        *into = self.discard(obs, rng)?;
        Ok(())
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        self.measure(obs, |a| a.pick(obs, rng), |&p| Choice::Pick(p))
    }
}

impl<'a> Lineup<'a> {
    /// `agents` at `stage`, no decision timed and no unit traced (a tuning's evaluations).
    pub fn untimed(stage: &'a Stage, agents: Vec<AgentDef>) -> Lineup<'a> {
        Lineup {
            stage,
            agents,
            decision_sample: None,
            trace: TraceSelection::default(),
        }
    }
}

impl Lineup<'_> {
    pub fn units(&self) -> u64 {
        self.stage.matches * self.stage.arrangements()
    }

    /// The agent slot sitting in each seat under arrangement `a` of match `m`.
    pub fn seating(&self, m: u64, a: u64) -> Vec<usize> {
        let n = self.stage.players();
        match self.stage.seating {
            Seating::Fixed => (0..n).collect(),
            // Rotation k: the agent of slot i sits in seat (i + k) mod n.
            Seating::Rotate => (0..n).map(|seat| (seat + n - a as usize % n) % n).collect(),
            Seating::Permute => nth_permutation(n, a),
            Seating::Random => {
                let mut rng = chacha_stream(self.stage.seed, Purpose::Seating, m);
                let mut slots: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    let j = rng.below(i as u32 + 1) as usize;
                    slots.swap(i, j);
                }
                slots
            }
        }
    }

    /// Plays one unit and returns its records.
    pub fn play_unit(&self, unit: u64) -> Result<Records, UnitError> {
        self.play(unit, &Pulse::default(), Records::default())
            .map_err(|h| match h {
                Halt::Failed(e) => e,
                Halt::Stopped => unreachable!("nothing sets the stop of a private pulse"),
            })
    }

    /// Plays one unit, counting its rounds on `pulse` and stopping before a round when asked.
    /// `spare`: memory for the unit's records (see [`Records::reuse`]).
    pub(crate) fn play(&self, unit: u64, pulse: &Pulse, spare: Records) -> Result<Records, Halt> {
        let stage = self.stage;
        let arrangements = stage.arrangements();
        let (m, a) = (unit / arrangements, unit % arrangements);
        let slots = self.seating(m, a);
        let slot_ids: Vec<u32> = slots.iter().map(|&s| s as u32).collect();
        let tracer = self.trace.traces(m).then(Tracer::default);
        let mut agents: Vec<Timed> = slots
            .iter()
            .map(|&slot| {
                let def = &self.agents[slot];
                Timed::new(def.recipe.build(&def.id), tracer.clone())
            })
            .collect();
        let mut table = Table::new((*stage.rules).clone());
        if let Some(t) = &tracer {
            self.trace_header(t, m, a, &slots);
        }
        table.start_game(&mut agents);
        let mut cols = Records::reuse(
            spare,
            match stage.session {
                Some(len) => len as usize * slots.len(),
                None => 64 * slots.len(),
            },
        );
        let mut python = match stage.generator {
            Generator::Python => Some(PythonStreams(PyRandom::new(stage.seed.wrapping_add(m)))),
            Generator::Chacha => None,
        };
        // Keyed once per unit, moved to each round's deal.
        let mut chacha = ChaChaStreams::new(stage.seed, deal_id(m, 0), &slot_ids);
        let mut round = 0u32;
        // Rounds not yet added to the pulse, and when it was last told.
        let (mut unreported, mut told) = (0u64, clock::ticks());
        loop {
            if over(&table, round, stage.session) {
                break;
            }
            if pulse.stopping() {
                return Err(Halt::Stopped);
            }
            let deal = match stage.session {
                Some(len) => m * u64::from(len) + u64::from(round),
                None => m,
            };
            // Lines agents write to the run's log name the stage, deal and seating.
            dhumbal_agents::log::set_place(&stage.name, deal, (arrangements > 1).then_some(a));
            let timed = self
                .decision_sample
                .is_some_and(|every| timed_deal(deal, every));
            for agent in &mut agents {
                agent.ticks = 0;
                agent.timing = timed;
            }
            let streams: &mut dyn Streams = match (&mut python, &mut chacha) {
                (Some(p), _) => p,
                (None, c) => {
                    c.set_deal(deal_id(m, round));
                    c
                }
            };
            let played = match &tracer {
                None => table.play_round(&mut agents, streams, &mut ()),
                Some(t) => {
                    let mut observer = RoundObserver::new(t, round, &table);
                    table.play_round(&mut agents, streams, &mut observer)
                }
            };
            // Read in place (an outcome is some 700 bytes: each move of it was a copy).
            let outcome = match &played {
                Ok(outcome) => outcome,
                Err(error) => {
                    return Err(Halt::Failed(UnitError {
                        unit,
                        matchno: m,
                        arrangement: a,
                        round,
                        error: error.clone(),
                    }));
                }
            };
            let game_over = stage.session.is_none() && table.game_over();
            let leader = game_over.then(|| table.leader());
            if let Some(t) = &tracer {
                t.round_end(outcome, table.standings(), stage.session.is_none());
            }
            self.record(
                &mut cols, outcome, &table, &agents, &slots, deal, a, leader, timed,
            );
            round += 1;
            unreported += 1;
            let now = clock::ticks();
            if clock::to_nanos(now.wrapping_sub(told)) >= PULSE_NANOS {
                pulse.rounds.fetch_add(unreported, Ordering::Relaxed);
                (unreported, told) = (0, now);
            }
        }
        table.end_game(&mut agents);
        if let Some(t) = tracer {
            t.game_end(round, table.standings(), table.leader());
            cols.trace = Some((crate::trace::file_name(m, a), t.take()));
        }
        pulse.rounds.fetch_add(unreported, Ordering::Relaxed);
        pulse.units.fetch_add(1, Ordering::Relaxed);
        Ok(cols)
    }

    /// A traced unit's first line: what is played, by whom, in which seat.
    fn trace_header(&self, tracer: &Tracer, m: u64, a: u64, slots: &[usize]) {
        let seats: Vec<serde_json::Value> = slots
            .iter()
            .enumerate()
            .map(|(seat, &slot)| {
                let def = &self.agents[slot];
                crate::trace::seat_json(
                    seat,
                    slot,
                    &def.id,
                    &def.kind,
                    def.spec
                        .get("params")
                        .cloned()
                        .unwrap_or(serde_json::Value::Null),
                )
            })
            .collect();
        tracer.line(crate::trace::game_json(self.stage, m, a, seats));
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        cols: &mut Records,
        o: &RoundOutcome,
        table: &Table,
        agents: &[Timed],
        slots: &[usize],
        deal: u64,
        arrangement: u64,
        game_winner: Option<usize>,
        timed: bool,
    ) {
        cols.begin_round();
        for seat in (0..o.seats).filter(|&s| o.active[s]) {
            let slot = slots[seat];
            cols.push(crate::records::Row::of_seat(
                o,
                seat,
                slot,
                deal,
                arrangement as u32,
                table.standings(),
                game_winner,
                timed.then(|| clock::to_nanos(agents[seat].ticks)),
            ));
        }
    }

    /// Plays units `range` in parallel; results in unit order. Stops at the first failure or
    /// stop request, returning the records of the units before it.
    pub fn play_chunk(
        &self,
        range: std::ops::Range<u64>,
        pulse: &Pulse,
    ) -> (Vec<Records>, Option<Halt>) {
        let results: Vec<Result<Records, Halt>> = range
            .into_par_iter()
            .map(|u| self.play(u, pulse, Records::default()))
            .collect();
        let mut done = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(c) => done.push(c),
                Err(e) => return (done, Some(e)),
            }
        }
        (done, None)
    }
}

/// The `k`-th permutation of `0..n` in lexicographic order.
fn nth_permutation(n: usize, k: u64) -> Vec<usize> {
    let mut items: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(n);
    let mut k = k;
    for i in (1..=n).rev() {
        let f: u64 = (1..i as u64).product();
        let idx = (k / f) as usize;
        k %= f;
        out.push(items.remove(idx));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample is a fixed function of the deal number, takes about one deal in `every`,
    /// and with `every` 1 takes every deal.
    #[test]
    fn timed_deals_are_a_fixed_even_sample() {
        let count = |every: u32, deals: std::ops::Range<u64>| {
            deals.filter(|&d| timed_deal(d, every)).count()
        };
        assert_eq!(count(1, 0..1000), 1000);
        let n = count(16, 0..160_000);
        assert!((9_600..10_400).contains(&n), "{n} of 160000");
        // Spread over positions: each residue of 64 (a session length) gets its share.
        for r in 0..64u64 {
            let k = (0..2_560u64).filter(|i| timed_deal(i * 64 + r, 16)).count();
            assert!((110..=210).contains(&k), "{k} timed at position {r}");
        }
        assert!(
            (1..64).all(|every| timed_deal(0, every)),
            "deal 0 is always timed"
        );
        // Which deals are timed is pinned: a SplitMix64 written from its definition in Python
        // (z = d + 0x9E3779B97F4A7C15, then the finaliser; timed when z % 16 == 0) picks these.
        let first: Vec<u64> = (0..200).filter(|&d| timed_deal(d, 16)).collect();
        assert_eq!(first, [0, 6, 29, 38, 103, 131, 149, 155, 160, 164, 175]);
    }

    #[test]
    fn permutations_in_lexicographic_order() {
        let all: Vec<Vec<usize>> = (0..6).map(|k| nth_permutation(3, k)).collect();
        assert_eq!(
            all,
            [
                [0, 1, 2],
                [0, 2, 1],
                [1, 0, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0]
            ]
        );
    }
}
