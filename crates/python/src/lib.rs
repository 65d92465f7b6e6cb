//! The native part of the Python package `dhumbal` (`dhumbal._native`): tables of the engine
//! that stop at the decisions of the players Python controls.
//!
//! The engine calls its players ([`Seats`]); an environment must instead hand each decision
//! to Python and wait for the action. Every table therefore plays its rounds with the engine's
//! own round loop ([`Table::play_round_with`], which [`Table::play_round`] runs for
//! tournaments and training; the game around the rounds is `play.rs`'s) inside a stackful
//! coroutine ([`corosensei`]) that suspends at a Python player's decision, after encoding its
//! observation, and resumes with the chosen action. Opponents built from scenario agent
//! entries play inside the coroutine at native speed.
//!
//! Python sees one class, [`Tables`]: `n` tables stepped together, writing into NumPy arrays
//! that Python allocated (no copy on the way out: a decision is encoded straight into its
//! table's rows), without the GIL while they play. The Python modules build the PettingZoo AEC
//! environment (one table, every seat a Python player), the Gymnasium environment (one table,
//! one learner seat) and the vector environment (`n` tables) on it.
//!
//! Threads: the tables are split into `threads` contiguous shares; the first is stepped on
//! the calling thread, each other one on a worker thread of its own, which starts its tables'
//! coroutines and keeps them until they are dropped (a coroutine never changes threads). A
//! table's games depend only on the seed and its index, so every thread count plays the same
//! games, move for move, and writes the same arrays.
//!
//! Reproducible: game `g` of a seed is dealt from the streams of (seed, g) exactly as the
//! runner deals game `g` of a stage; table `i` of `n` plays games `i`, `i + n`, `i + 2n`, ...,
//! so a vector of tables plays the same games whatever the Python side does between steps.

mod config;
mod play;

use std::sync::Arc;
use std::sync::mpsc;

use numpy::{
    PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1,
    PyReadwriteArray2, PyReadwriteArray3, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use dhumbal_agents::neural::Encoding;

pub use config::{ConfigError, Setup};
use play::{Move, Rows, Status, TableError, TableRun};

impl From<ConfigError> for PyErr {
    fn from(e: ConfigError) -> PyErr {
        PyValueError::new_err(e.to_string())
    }
}

impl From<TableError> for PyErr {
    fn from(e: TableError) -> PyErr {
        PyRuntimeError::new_err(e.to_string())
    }
}

/// Fixed width of the action space in Python: the legal actions of a decision fill the first
/// slots, in the order of the Rust learners' encodings. The `paper` encoding has 128 outputs;
/// the `cards` encoding scores any number of actions, but no decision of any variant offers
/// more than this (a hand holds at most 10 cards).
pub const ACTION_SLOTS: usize = 128;

/// The action that asks a table for a uniformly random legal action ([`Move::Random`]),
/// drawn on the thread that steps the table from the Python seat's own stream.
pub const RANDOM_ACTION: i64 = -2;

/// The action that leaves a table as it is (`step`).
const NO_MOVE: i64 = -1;

/// Tables per thread below which the default thread count does not add a thread: stepping a
/// table costs about a microsecond, waking a thread some.
const TABLES_PER_THREAD: usize = 128;

/// `n` tables of one configuration, stepped together.
#[pyclass(unsendable, module = "dhumbal._native")]
struct Tables {
    setup: Arc<Setup>,
    /// The number of tables.
    n: usize,
    /// The tables of the first share (`shares[0]`), stepped on the calling thread.
    local: Vec<TableRun>,
    /// The shares of the tables, in table order: the first is `local`, each other one lives
    /// on its worker thread.
    shares: Vec<Share>,
    /// Each table's state after the last `reset` or `step`, for checking actions before any
    /// table moves.
    summary: Vec<Summary>,
    /// The seed of the last `reset` that gave one.
    seed: Option<u64>,
    /// The arrays every `reset` and `step` writes into (`bind`).
    arrays: Option<Arrays>,
    /// Arrays were bound after the tables started and no `reset` has followed: the pending
    /// decisions are in the arrays bound before, and the new ones' feature rows would be
    /// cleared only as far as the last decision wrote them, so `step` waits for a `reset`.
    rebound: bool,
    /// Whether the tables keep what `render` shows (`set_render`).
    render: bool,
}

/// The output arrays, Python's own, bound once and checked for shape then.
struct Arrays {
    obs: Py<PyArray2<f32>>,
    features: Py<PyArray3<f32>>,
    mask: Py<PyArray2<i8>>,
    seat: Py<PyArray1<i64>>,
    rewards: Py<PyArray2<f64>>,
    done: Py<PyArray1<bool>>,
    winner: Py<PyArray1<i64>>,
    action: Py<PyArray1<i64>>,
}

#[pymethods]
impl Tables {
    /// `config`: JSON with `rules` (a scenario's rules section), `opponents` (agent entries,
    /// one per seat Python does not play; empty: Python plays every seat), `seat` (`rotate`,
    /// `random` or a seat number: where the one Python player sits), `encoding` (`cards` or
    /// `paper`), `reward` (`score` or `win`), `reward_scale`, `game_reward`, `rounds` (coins:
    /// rounds per episode). `base`: the folder relative paths in agent entries start from.
    /// `threads`: how many threads step the tables (each steps a contiguous share; at most
    /// one per table). Default: one per `TABLES_PER_THREAD` tables, at most the cores this
    /// process may use. The thread count changes no result.
    #[new]
    #[pyo3(signature = (config, base, n, threads = None))]
    fn new(config: &str, base: &str, n: usize, threads: Option<usize>) -> PyResult<Tables> {
        if n == 0 {
            return Err(PyValueError::new_err(
                "the number of tables must be at least 1",
            ));
        }
        let threads = match threads {
            Some(0) => {
                return Err(PyValueError::new_err(
                    "threads: expected at least 1 (or None for the default)",
                ));
            }
            Some(t) => t.min(n),
            None => std::thread::available_parallelism()
                .map_or(1, |c| c.get())
                .min(n / TABLES_PER_THREAD)
                .max(1),
        };
        let setup = Setup::parse(config, std::path::Path::new(base))?;
        let mut shares = Vec::with_capacity(threads);
        for k in 0..threads {
            let (lo, hi) = (k * n / threads, (k + 1) * n / threads);
            let worker = if k == 0 {
                None
            } else {
                Some(Worker::spawn(k, hi - lo)?)
            };
            shares.push(Share { lo, hi, worker });
        }
        Ok(Tables {
            setup: Arc::new(setup),
            n,
            local: (0..shares[0].hi).map(|_| TableRun::idle()).collect(),
            shares,
            summary: vec![Summary::IDLE; n],
            seed: None,
            arrays: None,
            rebound: false,
            render: false,
        })
    }

    /// Threads that step the tables (the calling one included).
    #[getter]
    fn threads(&self) -> usize {
        self.shares.len()
    }

    /// Players at a table.
    #[getter]
    fn players(&self) -> usize {
        self.setup.rules.players()
    }

    /// Width of the observation vector.
    #[getter]
    fn state_dim(&self) -> usize {
        self.setup.encoding.state_dim()
    }

    /// Width of an action's feature row (`cards`; 0 for `paper`).
    #[getter]
    fn action_dim(&self) -> usize {
        self.setup.encoding.action_dim()
    }

    #[getter]
    fn action_slots(&self) -> usize {
        ACTION_SLOTS
    }

    #[getter]
    fn encoding(&self) -> &'static str {
        self.setup.encoding.name()
    }

    /// Whether Python plays every seat (the AEC environment) or one (Gymnasium).
    #[getter]
    fn all_seats(&self) -> bool {
        self.setup.all_seats()
    }

    /// The rules as the manifest of a run writes them (JSON).
    #[getter]
    fn rules_json(&self) -> String {
        self.setup.rules_json.clone()
    }

    #[getter]
    fn scoring(&self) -> &'static str {
        if self.setup.points() {
            "points"
        } else {
            "coins"
        }
    }

    #[getter]
    fn num_tables(&self) -> usize {
        self.n
    }

    /// Binds the arrays every `reset` and `step` writes into: per table the deciding seat's
    /// observation, action features (`cards`; one column for `paper`) and mask, the seat,
    /// every seat's reward since the previous step, whether the episode ended, the game's
    /// winner (-1 while it goes on), and the index of the legal action the step played (-1
    /// after a reset and for a table that did not move). Checked for shape and layout here,
    /// once. Arrays bound again after the tables started take effect at the next `reset`
    /// (`step` refuses until then).
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &mut self,
        obs: Bound<'_, PyArray2<f32>>,
        features: Bound<'_, PyArray3<f32>>,
        mask: Bound<'_, PyArray2<i8>>,
        seat: Bound<'_, PyArray1<i64>>,
        rewards: Bound<'_, PyArray2<f64>>,
        done: Bound<'_, PyArray1<bool>>,
        winner: Bound<'_, PyArray1<i64>>,
        action: Bound<'_, PyArray1<i64>>,
    ) -> PyResult<()> {
        let n = self.n;
        let state_dim = self.setup.encoding.state_dim();
        let action_dim = self.setup.encoding.action_dim().max(1);
        let players = self.setup.rules.players();
        for (name, shape, want, contiguous) in [
            (
                "obs",
                obs.shape(),
                vec![n, state_dim],
                obs.is_c_contiguous(),
            ),
            (
                "features",
                features.shape(),
                vec![n, ACTION_SLOTS, action_dim],
                features.is_c_contiguous(),
            ),
            (
                "mask",
                mask.shape(),
                vec![n, ACTION_SLOTS],
                mask.is_c_contiguous(),
            ),
            ("seat", seat.shape(), vec![n], seat.is_c_contiguous()),
            (
                "rewards",
                rewards.shape(),
                vec![n, players],
                rewards.is_c_contiguous(),
            ),
            ("done", done.shape(), vec![n], done.is_c_contiguous()),
            ("winner", winner.shape(), vec![n], winner.is_c_contiguous()),
            ("action", action.shape(), vec![n], action.is_c_contiguous()),
        ] {
            if shape != want.as_slice() {
                return Err(PyValueError::new_err(format!(
                    "array `{name}` has shape {shape:?}; these tables need {want:?}"
                )));
            }
            if !contiguous {
                return Err(PyValueError::new_err(format!(
                    "array `{name}` must be C-contiguous"
                )));
            }
        }
        self.rebound = self.summary.iter().any(|r| r.status.is_some());
        self.arrays = Some(Arrays {
            obs: obs.unbind(),
            features: features.unbind(),
            mask: mask.unbind(),
            seat: seat.unbind(),
            rewards: rewards.unbind(),
            done: done.unbind(),
            winner: winner.unbind(),
            action: action.unbind(),
        });
        Ok(())
    }

    /// With a seed: starts game 0 of `seed` on table 0, game 1 on table 1, ...; without one:
    /// each table starts its next game of the last seed (the one after the game it was
    /// playing, abandoned if unfinished), so that resets go through the seed's games in order.
    /// Plays each table to its first Python decision and writes it into the arrays (see
    /// `step`). Rewards of rounds that ended before that decision are kept for the next
    /// `step` (the arrays' rewards are zero).
    #[pyo3(signature = (seed))]
    fn reset(&mut self, py: Python<'_>, seed: Option<u64>) -> PyResult<()> {
        let n = self.n;
        let stride = n as u64;
        let first: Vec<u64> = match (seed, self.seed) {
            (Some(_), _) => (0..stride).collect(),
            (None, Some(_)) => self
                .summary
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    if r.status.is_some() {
                        r.game + stride
                    } else {
                        i as u64
                    }
                })
                .collect(),
            (None, None) => {
                return Err(PyValueError::new_err(
                    "the first reset needs a seed (later ones without a seed go on to the next games)",
                ));
            }
        };
        let seed = seed.or(self.seed).expect("checked above");
        let first: Arc<[u64]> = first.into();
        let setup = self.setup.clone();
        let render = self.render;
        let mut out = self.out(py)?;
        let raw = out.raw();
        let replies = self.detached(py, move |this| {
            this.on_all(move |lo, runs| {
                let mut fresh = Vec::with_capacity(runs.len());
                for i in lo..lo + runs.len() {
                    let mut r = match TableRun::start(setup.clone(), seed, first[i], stride) {
                        Ok(r) => r,
                        Err(e) => return (None, Some((i, e))),
                    };
                    r.set_render(render);
                    fresh.push(r);
                }
                *runs = fresh;
                let mut error = None;
                for (k, run) in runs.iter_mut().enumerate() {
                    let i = lo + k;
                    // SAFETY: table `i` belongs to this share alone; the arrays outlive the
                    // reset.
                    let done = run
                        .next_decision(unsafe { raw.rows(i) })
                        .and_then(|()| unsafe { raw.write(i, run, false, false) });
                    if let Err(e) = done {
                        error = Some((i, e));
                        break;
                    }
                }
                (Some(runs.iter().map(Summary::of).collect()), error)
            })
        });
        drop(out);
        self.seed = Some(seed);
        self.rebound = false;
        self.gather(replies)
    }

    /// Plays `actions[i]` (an index into the legal actions of table `i`'s pending decision,
    /// which `mask[i]` marks, or `RANDOM_ACTION`: a uniformly random legal one, drawn by the
    /// table) on every table and runs each to its next Python decision. Writes, per table:
    /// the deciding seat's observation, action features (`cards`) and mask, the seat, every
    /// seat's reward since the previous step, whether the episode ended with this step, the
    /// game's winner (-1 while it goes on), and the index of the action played. With more
    /// than one table the GIL is released meanwhile (the arrays stay borrowed, the actions
    /// are copied first). With `autoreset`, a table whose
    /// episode ended starts its next game at once and the arrays show that game's first
    /// decision (rewards and `done` are the finished episode's); without it, the table waits
    /// for `reset`. Tables whose action is -1 do not move and their rows are not written
    /// (they keep the previous step's values; the action played is -1). An action that is
    /// not legal raises before any table moves; an agent's error at table j raises after the
    /// other tables of its thread's share that come before it moved (and the other threads'
    /// tables).
    fn step(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray1<'_, i64>,
        autoreset: bool,
    ) -> PyResult<()> {
        self.step_slice(py, actions.as_slice()?, autoreset)
    }

    /// `step` of one table (`n` = 1) with its action as a number: what the AEC and
    /// single-table environments call, without an array to convert.
    fn step_one(&mut self, py: Python<'_>, action: i64, autoreset: bool) -> PyResult<()> {
        self.step_slice(py, &[action], autoreset)
    }

    /// The legal actions of table `i`'s pending decision, described for people
    /// (`call`, `no call`, `discard 7♠ 7♥`, `draw from the stock`, `take 5♦`).
    fn describe(&mut self, i: usize) -> PyResult<Vec<String>> {
        self.on_one(i, |run| run.describe())
    }

    /// Whether the tables keep, at each Python decision, what `render` shows (off by
    /// default: stepping then keeps and allocates nothing for it). Takes effect at once.
    fn set_render(&mut self, on: bool) -> PyResult<()> {
        self.render = on;
        let replies = self.on_all(move |_, runs| {
            for r in runs.iter_mut() {
                r.set_render(on);
            }
            (None, None)
        });
        self.gather(replies)
    }

    /// Table `i` as text, drawn by the renderer of `dhumbal-run show`: at a decision, the
    /// deciding seat's view (its hand face up, the other hands face down with the cards they
    /// took from the pile, the pile's top, the stock, the standings) and the legal actions by
    /// slot; after a game, its winner and standings. `colour`: ANSI colours (red hearts and
    /// diamonds, dim face-down cards). Needs `set_render(True)` before the decision.
    #[pyo3(signature = (i, colour = false))]
    fn render(&mut self, i: usize, colour: bool) -> PyResult<String> {
        self.on_one(i, move |run| {
            let paint = if colour {
                dhumbal_runner::render::Paint::colour()
            } else {
                dhumbal_runner::render::Paint::plain()
            };
            run.render(paint)
        })
    }

    /// Episodes of table `i` since the last reset that ended before its Python player's first
    /// decision (another player called at once): played but not reported, as an environment
    /// cannot return an episode in which its agent never acted.
    fn skipped(&mut self, i: usize) -> PyResult<u64> {
        self.on_one(i, |r| r.skipped())
    }

    /// Games finished on table `i` since the last reset.
    fn games_played(&mut self, i: usize) -> PyResult<u64> {
        self.on_one(i, |r| r.games_played())
    }
}

impl Tables {
    /// `step` (see there), the actions as a slice.
    fn step_slice(&mut self, py: Python<'_>, actions: &[i64], autoreset: bool) -> PyResult<()> {
        let n = self.n;
        if self.summary.iter().any(|r| r.status.is_none()) {
            return Err(PyRuntimeError::new_err("call reset() before step()"));
        }
        if self.rebound {
            return Err(PyRuntimeError::new_err(
                "arrays were bound since the last reset(): call reset() before step() (the pending decisions are in the arrays bound before)",
            ));
        }
        if actions.len() != n {
            return Err(PyValueError::new_err(format!(
                "{} actions for {n} tables",
                actions.len()
            )));
        }
        // Every action is checked before any table moves: an illegal one leaves all as they were.
        for (i, (&a, run)) in actions.iter().zip(&self.summary).enumerate() {
            if a == NO_MOVE {
                continue;
            }
            match run.status {
                Some(Status::Decide) => {
                    let legal = run.legal;
                    if a != RANDOM_ACTION && (a < 0 || a as usize >= legal) {
                        return Err(PyValueError::new_err(format!(
                            "table {i}: action {a} is not legal: this decision has {legal} legal actions (0 to {}), those the mask marks",
                            legal.saturating_sub(1)
                        )));
                    }
                }
                Some(Status::GameOver) => {
                    return Err(PyRuntimeError::new_err(format!(
                        "table {i}: its episode is over; call reset() (or step with autoreset)"
                    )));
                }
                None => unreachable!("checked above"),
            }
        }
        let mut out = self.out(py)?;
        let raw = out.raw();
        if self.n == 1 {
            // One table (the AEC and single-table environments): a call of a few
            // microseconds, made without releasing the GIL, without copying the action.
            let error = step_share(0, &mut self.local, actions, autoreset, raw);
            self.summary[0] = Summary::of(&self.local[0]);
            drop(out);
            return match error {
                None => Ok(()),
                Some((_, e)) => Err(e.into()),
            };
        }
        // The actions are copied before the GIL is released: another Python thread may write
        // into the caller's array meanwhile.
        let actions: Arc<[i64]> = actions.into();
        let replies = self.detached(py, move |this| {
            if this.shares.len() == 1 {
                // One thread: no reply to wait for.
                let error = step_share(0, &mut this.local, &actions, autoreset, raw);
                for (s, run) in this.summary.iter_mut().zip(&this.local) {
                    *s = Summary::of(run);
                }
                return vec![Ok((None, error))];
            }
            this.on_all(move |lo, runs| {
                let mine = &actions[lo..lo + runs.len()];
                let error = step_share(lo, runs, mine, autoreset, raw);
                (Some(runs.iter().map(Summary::of).collect()), error)
            })
        });
        drop(out);
        self.gather(replies)
    }

    /// Runs `f` on the tables without the GIL, on this thread (other Python threads run
    /// meanwhile). `f` must not touch Python objects; the tables' coroutines stay on the
    /// thread that started them.
    fn detached<R, F>(&mut self, py: Python<'_>, f: F) -> R
    where
        R: Send,
        F: FnOnce(&mut Tables) -> R,
    {
        let this = AssertSend((self, f));
        py.detach(move || {
            let (this, f) = this.into_inner();
            f(this)
        })
    }

    /// The bound arrays, borrowed for writing.
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Out<'py>> {
        let a = self
            .arrays
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("call bind() with the output arrays first"))?;
        let busy = |e: numpy::BorrowError| {
            PyRuntimeError::new_err(format!("an output array is borrowed elsewhere: {e}"))
        };
        Ok(Out {
            obs: a.obs.bind(py).try_readwrite().map_err(busy)?,
            features: a.features.bind(py).try_readwrite().map_err(busy)?,
            mask: a.mask.bind(py).try_readwrite().map_err(busy)?,
            seat: a.seat.bind(py).try_readwrite().map_err(busy)?,
            rewards: a.rewards.bind(py).try_readwrite().map_err(busy)?,
            done: a.done.bind(py).try_readwrite().map_err(busy)?,
            winner: a.winner.bind(py).try_readwrite().map_err(busy)?,
            action: a.action.bind(py).try_readwrite().map_err(busy)?,
            state_dim: self.setup.encoding.state_dim(),
            action_dim: self.setup.encoding.action_dim(),
            players: self.setup.rules.players(),
        })
    }

    /// Runs `f(lo, tables)` on every share (`lo`: the index of its first table): on the
    /// worker threads, and meanwhile the first share here; then waits for every reply.
    fn on_all<F>(&mut self, f: F) -> Vec<Result<Reply, TableError>>
    where
        F: Fn(usize, &mut Vec<TableRun>) -> Reply + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let waiting: Vec<_> = self.shares[1..]
            .iter()
            .map(|share| {
                let f = f.clone();
                let lo = share.lo;
                share
                    .worker
                    .as_ref()
                    .expect("every share but the first has a worker")
                    .ask(move |runs| f(lo, runs))
            })
            .collect();
        // The workers write into the arrays until they reply: a panic here waits for them.
        let here = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(0, &mut self.local)));
        let there: Vec<_> = waiting
            .into_iter()
            .map(|w| w.and_then(|rx| wait(&rx)))
            .collect();
        let here = here.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        std::iter::once(Ok(here)).chain(there).collect()
    }

    /// Runs `f` on table `i`, on the thread that holds it.
    fn on_one<R, F>(&mut self, i: usize, f: F) -> PyResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&TableRun) -> R + Send + 'static,
    {
        if i >= self.n {
            return Err(PyValueError::new_err(format!("no table {i}")));
        }
        let share = self
            .shares
            .iter()
            .find(|s| s.lo <= i && i < s.hi)
            .expect("the shares cover the tables");
        let k = i - share.lo;
        match &share.worker {
            None => Ok(f(&self.local[k])),
            Some(w) => w
                .ask(move |runs| f(&runs[k]))
                .and_then(|rx| wait(&rx))
                .map_err(PyErr::from),
        }
    }

    /// Takes in the shares' replies: their tables' summaries, then the first error (by table).
    fn gather(&mut self, replies: Vec<Result<Reply, TableError>>) -> PyResult<()> {
        let mut error: Option<(usize, TableError)> = None;
        let mut first = |e: (usize, TableError)| {
            if !matches!(&error, Some((j, _)) if *j <= e.0) {
                error = Some(e);
            }
        };
        for (share, reply) in self.shares.iter().zip(replies) {
            match reply {
                Ok((summary, e)) => {
                    if let Some(summary) = summary {
                        self.summary[share.lo..share.hi].copy_from_slice(&summary);
                    }
                    if let Some(e) = e {
                        first(e);
                    }
                }
                Err(e) => first((share.lo, e)),
            }
        }
        match error {
            None => Ok(()),
            Some((_, e)) => Err(e.into()),
        }
    }
}

/// A value handed to [`Python::detach`]'s closure, which runs on the calling thread: the
/// tables (whose coroutines are bound to that thread, hence not `Send`) and a closure over
/// them that touches no Python object.
struct AssertSend<T>(T);

// SAFETY: `Python::detach` runs its closure on the calling thread, so nothing inside moves
// between threads; `Send` is asked only to keep Python tokens out, and `Tables::detached`'s
// closures use no Python object (the arrays go in as `RawOut` pointers).
unsafe impl<T> Send for AssertSend<T> {}

impl<T> AssertSend<T> {
    /// The value (a method, so that a closure captures the whole wrapper, not its field).
    fn into_inner(self) -> T {
        self.0
    }
}

/// What a share answers: its tables' summaries (when they may have changed) and its first
/// error, with the table's index.
type Reply = (Option<Vec<Summary>>, Option<(usize, TableError)>);

/// Plays `actions` (those of tables `lo..`) on a share's tables and writes each one's next
/// decision; stops at the first table that fails and returns its error.
fn step_share(
    lo: usize,
    runs: &mut [TableRun],
    actions: &[i64],
    autoreset: bool,
    raw: RawOut,
) -> Option<(usize, TableError)> {
    for (k, (&a, run)) in actions.iter().zip(runs.iter_mut()).enumerate() {
        let i = lo + k;
        if a == NO_MOVE {
            // SAFETY: table `i` belongs to this share alone; the arrays outlive the step.
            unsafe { raw.not_played(i) };
            continue;
        }
        let m = if a == RANDOM_ACTION {
            Move::Random
        } else {
            Move::Index(a as usize)
        };
        // SAFETY: table `i` belongs to this share alone; the arrays outlive the step.
        let done = run
            .advance(m, unsafe { raw.rows(i) })
            // SAFETY: table `i` belongs to this share alone; the arrays outlive the step.
            .and_then(|()| unsafe { raw.write(i, run, autoreset, true) });
        if let Err(e) = done {
            return Some((i, e));
        }
    }
    None
}

/// A table's state as the calling thread needs it between steps.
#[derive(Clone, Copy)]
struct Summary {
    status: Option<Status>,
    /// The number of legal actions of the pending decision.
    legal: usize,
    /// The game being played (or just ended).
    game: u64,
}

impl Summary {
    const IDLE: Summary = Summary {
        status: None,
        legal: 0,
        game: 0,
    };

    fn of(run: &TableRun) -> Summary {
        Summary {
            status: run.status(),
            legal: run.legal(),
            game: run.game(),
        }
    }
}

/// Tables `lo..hi`: the first share's are [`Tables::local`], each other share's live on its
/// worker thread.
struct Share {
    lo: usize,
    hi: usize,
    worker: Option<Worker>,
}

/// Work for a worker: done on its tables.
type Job = Box<dyn FnOnce(&mut Vec<TableRun>) + Send>;

/// A thread that owns a share of the tables, from their start to their drop, and runs the
/// jobs sent to it in order.
struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    /// Thread `k`, holding `len` tables (idle until a reset).
    fn spawn(k: usize, len: usize) -> Result<Worker, TableError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name(format!("dhumbal-tables-{k}"))
            .spawn(move || {
                let mut runs: Vec<TableRun> = (0..len).map(|_| TableRun::idle()).collect();
                while let Ok(job) = recv_soon(&rx) {
                    job(&mut runs);
                }
            })
            .map_err(TableError::Thread)?;
        Ok(Worker {
            jobs: Some(tx),
            thread: Some(thread),
        })
    }

    /// Sends `f` to the worker; its result comes on the returned channel. A panic in `f`
    /// comes back as an error, and the worker goes on.
    fn ask<R, F>(&self, f: F) -> Result<mpsc::Receiver<Result<R, TableError>>, TableError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Vec<TableRun>) -> R + Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |runs| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(runs)))
                .map_err(|_| TableError::ThreadPanicked);
            let _ = tx.send(r);
        });
        self.jobs
            .as_ref()
            .expect("open until drop")
            .send(job)
            .map_err(|_| TableError::ThreadGone)?;
        Ok(rx)
    }
}

/// The result of a job sent with [`Worker::ask`].
fn wait<R>(rx: &mpsc::Receiver<Result<R, TableError>>) -> Result<R, TableError> {
    recv_soon(rx).map_err(|_| TableError::ThreadGone)?
}

/// How long a thread of the tables waits for its next job, and the caller for a reply,
/// spinning before it goes to sleep: a little more than the Python code between two `step`s
/// of a vector environment. A thread put to sleep and woken again (a futex each way) started
/// its share of every step late, by tens of microseconds on a virtual machine, which the
/// other threads then waited for at the step's end. Measured (`scripts/bench-python.py`,
/// 1,024 tables, 2 threads): 22-25% more steps per second on a quiet machine, and more also
/// with two or four busy loops beside it.
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// `rx.recv()`, spinning for up to [`SPIN`] before blocking. Spinning, not yielding: a thread
/// that yields to a busy neighbour gets the core back only after the neighbour's time slice
/// (with two busy loops beside the benchmark, yielding made its steps four times slower).
fn recv_soon<T>(rx: &mpsc::Receiver<T>) -> Result<T, mpsc::RecvError> {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            match rx.try_recv() {
                Ok(v) => return Ok(v),
                Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvError),
                Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
            }
        }
        if start.elapsed() >= SPIN {
            return rx.recv();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop; its tables are dropped there.
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The output arrays of one `reset` or `step`, borrowed for writing.
struct Out<'py> {
    obs: PyReadwriteArray2<'py, f32>,
    features: PyReadwriteArray3<'py, f32>,
    mask: PyReadwriteArray2<'py, i8>,
    seat: PyReadwriteArray1<'py, i64>,
    rewards: PyReadwriteArray2<'py, f64>,
    done: PyReadwriteArray1<'py, bool>,
    winner: PyReadwriteArray1<'py, i64>,
    action: PyReadwriteArray1<'py, i64>,
    state_dim: usize,
    action_dim: usize,
    players: usize,
}

impl<'py> Out<'py> {
    /// Pointers to the arrays' data, for the threads that write the tables' rows.
    fn raw(&mut self) -> RawOut {
        RawOut {
            obs: self
                .obs
                .as_slice_mut()
                .expect("checked contiguous")
                .as_mut_ptr(),
            features: self
                .features
                .as_slice_mut()
                .expect("checked contiguous")
                .as_mut_ptr(),
            mask: self
                .mask
                .as_slice_mut()
                .expect("checked contiguous")
                .as_mut_ptr(),
            seat: self.seat.as_slice_mut().expect("1-d").as_mut_ptr(),
            rewards: self
                .rewards
                .as_slice_mut()
                .expect("checked contiguous")
                .as_mut_ptr(),
            done: self.done.as_slice_mut().expect("1-d").as_mut_ptr(),
            winner: self.winner.as_slice_mut().expect("1-d").as_mut_ptr(),
            action: self.action.as_slice_mut().expect("1-d").as_mut_ptr(),
            state_dim: self.state_dim,
            action_dim: self.action_dim,
            players: self.players,
        }
    }
}

/// The output arrays' data while an [`Out`] holds them borrowed (shapes checked by `bind`):
/// each table's rows are written by the thread that holds the table, and by no other.
#[derive(Clone, Copy)]
struct RawOut {
    obs: *mut f32,
    features: *mut f32,
    mask: *mut i8,
    seat: *mut i64,
    rewards: *mut f64,
    done: *mut bool,
    winner: *mut i64,
    action: *mut i64,
    state_dim: usize,
    action_dim: usize,
    players: usize,
}

// SAFETY: the pointers are used only for the rows of the tables a thread holds, and only while
// the calling thread keeps the arrays borrowed and waits for every thread (`Tables::on_all`).
unsafe impl Send for RawOut {}
unsafe impl Sync for RawOut {}

impl RawOut {
    /// Table `i`'s rows, where its next decision is written (encoded in place).
    ///
    /// # Safety
    /// As [`RawOut::write`].
    unsafe fn rows(&self, i: usize) -> Rows {
        let ad = self.action_dim;
        // SAFETY: row `i` of arrays of the checked shapes.
        unsafe {
            Rows {
                obs: self.obs.add(i * self.state_dim),
                state_dim: self.state_dim,
                mask: self.mask.add(i * ACTION_SLOTS),
                features: if ad > 0 {
                    self.features.add(i * ACTION_SLOTS * ad)
                } else {
                    std::ptr::null_mut()
                },
                features_len: ACTION_SLOTS * ad,
            }
        }
    }

    /// Marks table `i` as not moved by this step (its action played: -1).
    ///
    /// # Safety
    /// As [`RawOut::write`].
    unsafe fn not_played(&self, i: usize) {
        // SAFETY: element `i` of an array of the checked shape.
        unsafe { *self.action.add(i) = NO_MOVE };
    }

    /// Writes table `i`'s state after it moved (`take`: a step, whose rewards and action
    /// played are written; else a reset: zero rewards, no action); with `autoreset`, a
    /// finished episode's table goes on to its next game's first decision after its rewards
    /// are taken.
    ///
    /// # Safety
    /// `i` is a table of the arrays, whose rows no other thread touches meanwhile, and the
    /// arrays are borrowed for the whole call.
    unsafe fn write(
        &self,
        i: usize,
        run: &mut TableRun,
        autoreset: bool,
        take: bool,
    ) -> Result<(), TableError> {
        use std::slice::from_raw_parts_mut as rows;
        let p = self.players;
        // SAFETY (every block below): row `i` of an array of the checked shape.
        let rewards = unsafe { rows(self.rewards.add(i * p), p) };
        if take {
            run.take_rewards(rewards);
        } else {
            rewards.fill(0.0);
        }
        unsafe {
            *self.action.add(i) = match run.played() {
                Some(a) if take => a as i64,
                _ => NO_MOVE,
            };
        }
        let over = run.status() == Some(Status::GameOver);
        unsafe {
            *self.done.add(i) = over;
            *self.winner.add(i) = if over {
                run.winner().map_or(-1, |w| w as i64)
            } else {
                -1
            };
        }
        if over && autoreset {
            run.next_decision(unsafe { self.rows(i) })?;
        }
        // The decision's observation, mask and action rows were written in place when the
        // table reached it (`Rows`); its seat is written here.
        if run.status() == Some(Status::Decide) {
            unsafe { *self.seat.add(i) = run.seat() as i64 };
        }
        Ok(())
    }
}

/// Every agent kind a scenario may name, with its parameters (as `dhumbal-run agents` lists
/// them).
#[pyfunction]
fn agent_kinds() -> Vec<(String, String)> {
    dhumbal_agents::registry::FAMILIES
        .iter()
        .map(|f| (f.name().to_string(), f.doc().to_string()))
        .collect()
}

/// Checks a scenario file as `dhumbal-run validate` does; returns its resolved summary or
/// raises `ValueError` with every problem (file, line, field).
#[pyfunction]
fn validate(path: &str) -> PyResult<String> {
    let scenario = dhumbal_runner::scenario::load(std::path::Path::new(path), &Default::default())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(format!(
        "{}: {} stage{}",
        scenario.name,
        scenario.stages.len(),
        if scenario.stages.len() == 1 { "" } else { "s" }
    ))
}

/// Runs a scenario file through the experiment engine in this process (without the GIL, the
/// terminal's progress and Ctrl-C), as `dhumbal-run SCENARIO` does. Returns `(code, message,
/// outcome)`: code 0 with the outcome as JSON (what was trained, tuned and played), or the
/// exit code the error means (2 bad input, 3 not yet, 130 interrupted, 1 failed) with its
/// message; `dhumbal.run` turns them into a `RunOutcome` or its exceptions.
#[pyfunction]
#[pyo3(signature = (scenario, out=None, seed=None, rounds=None, threads=None, mode="fresh", report=true, csv=false, trace=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run_experiment(
    py: Python<'_>,
    scenario: std::path::PathBuf,
    out: Option<std::path::PathBuf>,
    seed: Option<u64>,
    rounds: Option<u64>,
    threads: Option<usize>,
    mode: &str,
    report: bool,
    csv: bool,
    trace: Vec<u64>,
) -> PyResult<(u8, String, String)> {
    use dhumbal::experiment::{self, Mode, Options};
    let mode = match mode {
        "fresh" => Mode::Fresh,
        "resume" => Mode::Resume,
        "force" => Mode::Force,
        other => {
            return Err(PyValueError::new_err(format!(
                "mode: expected 'fresh', 'resume' or 'force', got {other:?}"
            )));
        }
    };
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads: must be at least 1"));
    }
    let options = Options {
        threads,
        mode,
        overrides: dhumbal_runner::scenario::Overrides {
            seed,
            rounds,
            out,
            trace,
        },
        report,
        csv,
        shard: None,
        stages: Vec::new(),
    };
    let result = py.detach(move || {
        let console = match dhumbal::cli::console::Console::new() {
            Ok(c) => c,
            Err(e) => return (1, format!("{e:#}"), String::new()),
        };
        match experiment::run(&scenario, &options, &console) {
            Ok(outcome) => (0, String::new(), outcome_json(&outcome).to_string()),
            Err(e) => (e.exit_code(), format!("{e:#}"), String::new()),
        }
    });
    // The Ctrl-C that stopped the run reached Python's own handler too (the run's handler
    // chains to it): it is this run's `Interrupted`, not a second KeyboardInterrupt raised
    // after it. A signal that came after the run finished is Python's to raise.
    let signals = py.check_signals();
    if result.0 != 130 {
        signals?;
    }
    Ok(result)
}

/// An experiment's outcome as the Python package reads it (`dhumbal.runs.RunOutcome`).
fn outcome_json(o: &dhumbal::experiment::Outcome) -> serde_json::Value {
    use serde_json::json;
    let played = o.played.as_ref();
    json!({
        "name": o.name,
        "dir": o.dir,
        "trained": o.trained,
        "tuned": o.tuned.iter().map(|t| json!({
            "id": t.id, "output": t.output, "best": t.best, "dir": t.dir,
        })).collect::<Vec<_>>(),
        "stages": played.map(|r| r.stages.iter().map(|s| json!({
            "name": s.name,
            "dir": s.dir,
            "agents": s.agents.iter().map(|a| a.id.clone()).collect::<Vec<_>>(),
            "winner": s.agents[s.winner()].id,
            "decided_by": s.winner_by().1.name(),
            "rounds": s.totals.rounds,
            "seconds": s.seconds,
            "restored": s.restored,
        })).collect::<Vec<_>>()).unwrap_or_default(),
        "rounds": played.map_or(0, |r| r.rounds),
        "rounds_now": played.map_or(0, |r| r.rounds_now),
        "seconds": played.map_or(0.0, |r| r.seconds),
        "warnings": played.map(|r| r.warnings.clone()).unwrap_or_default(),
    })
}

/// Runs `dhumbal-run` with these arguments in this process (without the GIL) and returns its
/// exit code: 0 done, 1 failed, 2 bad input, 3 not yet, 130 interrupted.
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<String>) -> i32 {
    use std::process::ExitCode;
    let code = py.detach(move || {
        dhumbal::cli::main_from(std::iter::once("dhumbal-run".to_string()).chain(args))
    });
    [0u8, 2, 3, 130]
        .into_iter()
        .find(|&c| ExitCode::from(c) == code)
        .map_or(1, i32::from)
}

/// Writes a checkpoint that the `dqn`, `ddqn` or `ppo` kinds seat: `layers` are the acting
/// network's (weight `[outputs, inputs]` flat in row order, bias), ReLU between layers, as
/// dhumbal-run's own networks; `rules` the rules section (JSON) it was trained under.
#[pyfunction]
#[pyo3(signature = (path, algorithm, encoding, rules, layers, note=None))]
fn save_checkpoint(
    path: &str,
    algorithm: &str,
    encoding: &str,
    rules: &str,
    layers: Vec<(Vec<usize>, Vec<f32>, Vec<f32>)>,
    note: Option<String>,
) -> PyResult<()> {
    use dhumbal_agents::neural::checkpoint::{FORMAT, rules_fingerprint, rules_name};
    use dhumbal_agents::neural::{Algorithm, Checkpoint, Policy};
    let algorithm = Algorithm::from_name(algorithm).ok_or_else(|| {
        PyValueError::new_err(format!(
            "algorithm: expected dqn, ddqn, ppo or imitate, got `{algorithm}`"
        ))
    })?;
    let enc = Encoding::from_name(encoding).ok_or_else(|| {
        PyValueError::new_err(format!(
            "encoding: expected cards or paper, got `{encoding}`"
        ))
    })?;
    let setup = Setup::parse(
        &format!("{{\"rules\": {rules}}}"),
        std::path::Path::new("."),
    )?;
    let mut c = Checkpoint::default();
    let net = algorithm.acting_net();
    let mut hidden = Vec::new();
    for (i, (shape, w, b)) in layers.into_iter().enumerate() {
        if shape.len() != 2 || shape[0] * shape[1] != w.len() || b.len() != shape[0] {
            return Err(PyValueError::new_err(format!(
                "layer {i}: weight shape {shape:?} with {} values and a bias of {}",
                w.len(),
                b.len()
            )));
        }
        // A network with NaN or an infinity would be refused where it is seated: refused
        // here, where the Python code that made it can still say which layer.
        for (what, values) in [("weight", &w), ("bias", &b)] {
            if let Some(at) = values.iter().position(|v| !v.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "layer {i}: the {what} holds a non-finite value ({} at index {at}); a checkpoint's weights must be finite",
                    values[at]
                )));
            }
        }
        hidden.push(shape[0]);
        c.tensors
            .insert(format!("{net}.{i}.weight"), (shape.clone(), w));
        c.tensors
            .insert(format!("{net}.{i}.bias"), (vec![shape[0]], b));
    }
    hidden.pop();
    let meta = serde_json::json!({
        "format": FORMAT,
        "algorithm": algorithm.name(),
        "encoding": enc.name(),
        "hidden": hidden,
        "rules": rules_fingerprint(&setup.rules),
        "rules_name": rules_name(&setup.rules),
        "program": format!("dhumbal (Python) {}", env!("CARGO_PKG_VERSION")),
        "note": note.unwrap_or_default(),
    });
    c.meta = meta.as_object().cloned().unwrap_or_default();
    // The network must be one this program can seat.
    Policy::from_checkpoint(&c).map_err(|e| PyValueError::new_err(e.to_string()))?;
    c.write(std::path::Path::new(path))
        .map_err(|e| PyRuntimeError::new_err(format!("cannot write {path}: {e}")))
}

/// A checkpoint's tensors as Python receives them: (name, shape, values).
type NamedTensors = Vec<(String, Vec<usize>, Vec<f32>)>;

/// Reads a checkpoint: its metadata (JSON) and every tensor as (name, shape, values).
#[pyfunction]
fn load_checkpoint(path: &str) -> PyResult<(String, NamedTensors)> {
    let c = dhumbal_agents::neural::Checkpoint::read(std::path::Path::new(path))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let meta = serde_json::Value::Object(c.meta.clone()).to_string();
    Ok((
        meta,
        c.tensors
            .into_iter()
            .map(|(name, (shape, values))| (name, shape, values))
            .collect(),
    ))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tables>()?;
    m.add_function(wrap_pyfunction!(agent_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(save_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(load_checkpoint, m)?)?;
    m.add("ACTION_SLOTS", ACTION_SLOTS)?;
    m.add("RANDOM_ACTION", RANDOM_ACTION)?;
    Ok(())
}
