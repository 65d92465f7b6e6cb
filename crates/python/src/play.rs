//! One table driven from Python: games of the engine's rounds ([`Table::play_round_with`]) in
//! a coroutine that suspends at each decision of a Python player.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use dhumbal_agents::neural::{Action, Answer, Encoding};
use dhumbal_game::rng::{ChaChaStreams, Purpose, RandomSource, chacha_stream, deal_id};
use dhumbal_game::rules::MAX_PLAYERS;
use dhumbal_game::{Agent, AgentError, Discard, Observation, Pick, PlayError, Seats, Table};
use dhumbal_runner::render::{Decision, Entry, Paint, Scene};

use crate::ACTION_SLOTS;
use crate::config::{SeatChoice, Setup};

/// Where a table stands between two steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A Python player must decide ([`TableRun::seat`]).
    Decide,
    /// The episode is over: a points game to its end, or `rounds` coin rounds.
    GameOver,
}

/// What a table is resumed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// On from a game's end (or from the start): no decision is pending.
    On,
    /// The legal action with this index.
    Index(usize),
    /// A uniformly random legal action, drawn by the table from the Python seat's own stream:
    /// the agent stream of its slot, keyed by (seed, slot, deal) as a native agent's is, so
    /// the draw depends only on the game and the decisions before it in the round, never on
    /// the thread, the table or the number of tables. It is independent of the deal's
    /// stream: nothing hidden goes into it or comes out of it.
    Random,
}

/// Where one table's decision goes: its rows of the output arrays (shapes checked by
/// `Tables::bind`), valid while the thread that steps the table resumes it
/// ([`TableRun::advance`]), which alone writes them then.
#[derive(Clone, Copy)]
pub struct Rows {
    /// The observation row (`state_dim` values).
    pub obs: *mut f32,
    pub state_dim: usize,
    /// The mask row ([`ACTION_SLOTS`] values).
    pub mask: *mut i8,
    /// The action feature rows (`cards`: [`ACTION_SLOTS`] × action width values; null for
    /// `paper`).
    pub features: *mut f32,
    pub features_len: usize,
}

impl Rows {
    /// Writes the decision: the state, the mask (1 for each legal action's slot), and for
    /// `cards` each legal action's feature row, the rows past them zero. Encoded in place:
    /// the state and the rows are zeroed, then written.
    ///
    /// # Safety
    /// The rows are valid, and no other thread touches them meanwhile.
    unsafe fn write(
        &self,
        encoding: Encoding,
        obs: &Observation<'_>,
        actions: &[Action],
        written: &mut usize,
    ) {
        use std::slice::from_raw_parts_mut as rows;
        // SAFETY (every block): rows of the checked shapes, this table's alone.
        let state = unsafe { rows(self.obs, self.state_dim) };
        state.fill(0.0);
        encoding.encode_state(obs, state);
        let n = actions.len();
        let mask = unsafe { rows(self.mask, ACTION_SLOTS) };
        mask[..n].fill(1);
        mask[n..].fill(0);
        if !self.features.is_null() {
            let f = unsafe { rows(self.features, self.features_len) };
            let used = n * encoding.action_dim();
            f[..used].fill(0.0);
            encoding.encode_actions(obs, actions, &mut f[..used]);
            // Past the rows written last time the row is still zero (the whole row after a
            // reset, when `written` is unknown).
            let stale = (*written).min(f.len());
            if stale > used {
                f[used..stale].fill(0.0);
            }
            *written = used;
        }
    }
}

/// What the coroutine leaves for the Python side at a suspension.
struct Exchange {
    status: Option<Status>,
    seat: usize,
    /// The pending decision's legal actions (its observation went straight into the rows).
    actions: Vec<Action>,
    /// Where the next decision is written: set for each resume.
    rows: Option<Rows>,
    /// Feature values (`cards`) written into this table's rows at the last decision: only
    /// those need clearing at the next (the rest of the rows is zero).
    written: usize,
    /// The index of the legal action played at the last Python decision (`None` when the
    /// table was resumed without one).
    played: Option<usize>,
    /// Rewards per seat since they were last taken.
    rewards: [f64; MAX_PLAYERS],
    winner: Option<usize>,
    games: u64,
    /// The game being played (its index in the seed's sequence).
    game: u64,
    /// Whether the table keeps what `render` shows ([`TableRun::set_render`]); off, it keeps
    /// and allocates nothing for it.
    render: bool,
    /// The pending decision as the deciding seat sees it (kept when `render` is on).
    scene: Option<Scene>,
    /// The standings when the last game ended (kept when `render` is on).
    final_standings: Vec<i64>,
}

/// Resumed with the chosen action ([`Move::On`] after a game over and at the start).
type Co = Coroutine<Move, (), Result<(), PlayError>>;

/// A table's stack: as large as the stack of the rayon threads that play tournaments (Rust's
/// default for spawned threads), so that an agent that plays in a tournament (a deep Rhai
/// script, a search) plays here. Reserved, not committed: untouched pages cost nothing.
const STACK: usize = 2 << 20;

/// One table: its coroutine and what it left at its last suspension.
pub struct TableRun {
    ex: Rc<RefCell<Exchange>>,
    co: Option<Co>,
    /// Set when the coroutine stopped: the table is stuck until reset.
    failed: Option<Stopped>,
    /// Episodes that ended before the Python player's first decision (one Python seat only:
    /// another player called at once): played, not reported, their rewards dropped.
    skipped: u64,
}

impl TableRun {
    /// A table that has not been reset yet.
    pub fn idle() -> TableRun {
        TableRun {
            ex: Rc::new(RefCell::new(Exchange {
                status: None,
                seat: 0,
                actions: Vec::new(),
                rows: None,
                // Unknown: the first decision clears the whole row.
                written: usize::MAX,
                played: None,
                rewards: [0.0; MAX_PLAYERS],
                winner: None,
                games: 0,
                game: 0,
                render: false,
                scene: None,
                final_standings: Vec::new(),
            })),
            co: None,
            failed: None,
            skipped: 0,
        }
    }

    /// A table that will play games `first`, `first + stride`, ... of `seed` (not started:
    /// [`TableRun::advance`] runs it to its first decision).
    pub fn start(
        setup: Arc<Setup>,
        seed: u64,
        first: u64,
        stride: u64,
    ) -> Result<TableRun, TableError> {
        let mut run = TableRun::idle();
        let ex = run.ex.clone();
        let stack = DefaultStack::new(STACK).map_err(TableError::Stack)?;
        run.co = Some(Coroutine::with_stack(
            stack,
            move |y: &Yielder<Move, ()>, _first: Move| drive(y, &ex, &setup, seed, first, stride),
        ));
        Ok(run)
    }

    /// Resumes the coroutine (with the action at a decision, [`Move::On`] otherwise) until
    /// the next suspension; a Python decision there is written into `rows`.
    pub fn advance(&mut self, action: Move, rows: Rows) -> Result<(), TableError> {
        if let Some(e) = &self.failed {
            return Err(TableError::Stuck(e.clone()));
        }
        let co = self.co.as_mut().ok_or(TableError::NotReset)?;
        // A panic inside the table (an agent's bug) leaves its coroutine finished: the table
        // is marked failed, so that every later step says so instead of panicking again.
        self.ex.borrow_mut().rows = Some(rows);
        let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| co.resume(action)));
        self.ex.borrow_mut().rows = None;
        let e = match resumed {
            Ok(CoroutineResult::Yield(())) => return Ok(()),
            Ok(CoroutineResult::Return(r)) => r.err().map_or(Stopped::Ended, Stopped::Play),
            Err(panic) => Stopped::Panic(
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)")
                    .to_string(),
            ),
        };
        self.failed = Some(e.clone());
        Err(TableError::Stopped(e))
    }

    /// Runs on from a finished episode (or from the start) to the next Python decision,
    /// passing over episodes that end before one.
    pub fn next_decision(&mut self, rows: Rows) -> Result<(), TableError> {
        loop {
            self.advance(Move::On, rows)?;
            if self.status() == Some(Status::Decide) {
                return Ok(());
            }
            self.skipped += 1;
            let mut e = self.ex.borrow_mut();
            e.rewards = [0.0; MAX_PLAYERS];
        }
    }

    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    pub fn status(&self) -> Option<Status> {
        self.ex.borrow().status
    }

    /// The seat deciding now.
    pub fn seat(&self) -> usize {
        self.ex.borrow().seat
    }

    /// The number of legal actions of the pending decision.
    pub fn legal(&self) -> usize {
        self.ex.borrow().actions.len()
    }

    /// The index of the legal action played at the last Python decision (the drawn one for
    /// [`Move::Random`]).
    pub fn played(&self) -> Option<usize> {
        self.ex.borrow().played
    }

    pub fn winner(&self) -> Option<usize> {
        self.ex.borrow().winner
    }

    /// The game being played (or just ended), by its index in the seed's sequence.
    pub fn game(&self) -> u64 {
        self.ex.borrow().game
    }

    pub fn games_played(&self) -> u64 {
        self.ex.borrow().games
    }

    /// Adds the rewards since the last call into `out` (one per seat) and clears them.
    pub fn take_rewards(&mut self, out: &mut [f64]) {
        let mut ex = self.ex.borrow_mut();
        for (o, r) in out.iter_mut().zip(ex.rewards.iter_mut()) {
            *o = *r;
            *r = 0.0;
        }
    }

    /// Whether to keep, at each Python decision, what [`TableRun::render`] shows.
    pub fn set_render(&mut self, on: bool) {
        let mut ex = self.ex.borrow_mut();
        ex.render = on;
        if !on {
            ex.scene = None;
        }
    }

    /// The table as text, drawn by the renderer of `dhumbal-run show`: at a decision, the
    /// deciding seat's view (its hand, the others' hands face down with the cards they took
    /// from the pile, the pile, the stock, the standings) and the legal actions by slot; after
    /// a game, its winner and standings.
    pub fn render(&self, paint: Paint) -> String {
        let ex = self.ex.borrow();
        match ex.status {
            None => "no game yet: call reset()".to_string(),
            Some(Status::GameOver) => {
                let standings: Vec<String> =
                    ex.final_standings.iter().map(i64::to_string).collect();
                let mut text = match ex.winner {
                    Some(w) => format!("game over: seat {w} wins"),
                    None => "game over".to_string(),
                };
                if !standings.is_empty() {
                    text.push_str(&format!(" · standings {}", standings.join(" ")));
                }
                paint.bold(&text)
            }
            Some(Status::Decide) => {
                let Some(scene) = &ex.scene else {
                    return "(rendering was off at this decision)".to_string();
                };
                let mut scene = scene.clone();
                drop(ex);
                let options = self
                    .describe()
                    .into_iter()
                    .enumerate()
                    .map(|(i, text)| Entry {
                        index: Some(i),
                        ..Entry::new(text)
                    })
                    .collect();
                scene.decision = Some(Decision {
                    heading: "legal actions (action index, then action):".to_string(),
                    score: None,
                    options,
                });
                scene.lines(paint).join("\n")
            }
        }
    }

    /// The pending decision's legal actions, for people.
    pub fn describe(&self) -> Vec<String> {
        let ex = self.ex.borrow();
        if ex.status != Some(Status::Decide) {
            return Vec::new();
        }
        ex.actions
            .iter()
            .map(|a| match a {
                Action::Call(true) => "call".to_string(),
                Action::Call(false) => "no call".to_string(),
                Action::Discard(d) => format!("discard {d}"),
                Action::Pick(p) => p.to_string(),
            })
            .collect()
    }
}

/// Why a table cannot go on (Python's `RuntimeError`).
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("cannot reserve a table's stack ({} MiB): {}", STACK >> 20, .0)]
    Stack(std::io::Error),
    #[error("call reset() before step()")]
    NotReset,
    /// The table stopped at this step.
    #[error("{0}; reset() starts again")]
    Stopped(Stopped),
    /// A step of a table that stopped before (it stays stopped until reset).
    #[error("{0}")]
    Stuck(Stopped),
    #[error("cannot start a thread for the tables: {0}")]
    Thread(std::io::Error),
    #[error("a thread of the tables panicked; reset() starts again")]
    ThreadPanicked,
    #[error("a thread of the tables has stopped")]
    ThreadGone,
}

/// Why a table's coroutine stopped.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Stopped {
    /// The engine refused an action, or an agent failed.
    #[error(transparent)]
    Play(PlayError),
    #[error("the table stopped")]
    Ended,
    #[error("the table stopped on a panic: {0}")]
    Panic(String),
}

/// The seats of a round: Python players (suspend and wait) and built agents.
struct Seated<'a> {
    y: &'a Yielder<Move, ()>,
    ex: &'a RefCell<Exchange>,
    agents: &'a mut [Box<dyn Agent>],
    /// Seat to agent index; `None`: a Python player.
    map: &'a [Option<usize>; MAX_PLAYERS],
    encoding: Encoding,
    /// Each seat's name in a rendered table (when rendering is on; else empty).
    names: &'a [String],
    points: bool,
}

impl Seated<'_> {
    /// The Python player's action at `seat`; `rng`: its own stream (that of its slot), for
    /// [`Move::Random`].
    fn ask(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Action, AgentError> {
        {
            let mut guard = self.ex.borrow_mut();
            let ex = &mut *guard;
            self.encoding.legal_actions(obs, &mut ex.actions);
            if ex.actions.len() > ACTION_SLOTS {
                return Err(AgentError(format!(
                    "{} legal actions, more than the {ACTION_SLOTS} slots of the action space",
                    ex.actions.len()
                )));
            }
            let rows = ex
                .rows
                .ok_or_else(|| AgentError("a table resumed without its output rows".into()))?;
            // SAFETY: the thread resuming this table set its rows for this resume.
            unsafe { rows.write(self.encoding, obs, &ex.actions, &mut ex.written) };
            ex.seat = seat;
            ex.status = Some(Status::Decide);
            if ex.render {
                ex.scene = Some(Scene::of_observation(obs, self.names, self.points));
            }
        }
        let m = self.y.suspend(());
        let mut ex = self.ex.borrow_mut();
        let legal = ex.actions.len();
        let a = match m {
            Move::Index(a) => a,
            // A decision has at least one legal action.
            Move::Random if legal > 0 => rng.below(legal as u32) as usize,
            Move::Random | Move::On => usize::MAX,
        };
        ex.played = (a < legal).then_some(a);
        ex.actions
            .get(a)
            .copied()
            .ok_or_else(|| AgentError(format!("action {a} of {legal} legal ones")))
    }
}

impl Seats for Seated<'_> {
    fn name(&self, seat: usize) -> &str {
        match self.map[seat] {
            Some(k) => self.agents[k].name(),
            None => "python",
        }
    }

    fn call(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        match self.map[seat] {
            Some(k) => self.agents[k].call(obs, rng),
            None => self.ask(seat, obs, rng)?.call(),
        }
    }

    fn discard(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        match self.map[seat] {
            Some(k) => self.agents[k].discard(obs, rng),
            None => self.ask(seat, obs, rng)?.discard(),
        }
    }

    fn pick(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        match self.map[seat] {
            Some(k) => self.agents[k].pick(obs, rng),
            None => self.ask(seat, obs, rng)?.pick(),
        }
    }
}

/// The coroutine's body: games `first`, `first + stride`, ... of `seed`, forever, suspending
/// at each Python decision and after each episode.
fn drive(
    y: &Yielder<Move, ()>,
    ex: &RefCell<Exchange>,
    setup: &Setup,
    seed: u64,
    first: u64,
    stride: u64,
) -> Result<(), PlayError> {
    let rules = &setup.rules;
    let n = rules.players();
    let points = setup.points();
    let mut agents: Vec<Box<dyn Agent>> = setup
        .opponents
        .iter()
        .map(|(id, recipe)| recipe.build(id))
        .collect();
    let mut game = first;
    loop {
        ex.borrow_mut().game = game;
        // Who sits where. Agent streams follow the agent, not the seat (as in tournaments):
        // the Python player is slot 0 and opponent k slot k + 1; with Python in every seat,
        // seat s is slot s.
        let mut map = [None; MAX_PLAYERS];
        let mut slots: Vec<u32> = (0..n as u32).collect();
        if !setup.all_seats() {
            let learner = match setup.seat {
                SeatChoice::Rotate => (game % n as u64) as usize,
                SeatChoice::Random => {
                    chacha_stream(seed, Purpose::Seating, game).below(n as u32) as usize
                }
                SeatChoice::Fixed(s) => s,
            };
            let mut k = 0;
            for s in 0..n {
                if s == learner {
                    slots[s] = 0;
                } else {
                    map[s] = Some(k);
                    slots[s] = k as u32 + 1;
                    k += 1;
                }
            }
        }
        // Seat names for a rendered table: `player_s` for Python seats (the AEC
        // environment's agents), the opponents' ids.
        let names: Vec<String> = if ex.borrow().render {
            (0..n)
                .map(|s| match map[s] {
                    Some(k) => agents[k].name().to_string(),
                    None if setup.all_seats() => format!("player_{s}"),
                    None => "learner".to_string(),
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut streams = ChaChaStreams::new(seed, deal_id(game, 0), &slots);
        let mut table = Table::new((**rules).clone());
        for (s, k) in map.iter().enumerate().take(n) {
            if let Some(k) = *k {
                agents[k].game_start(s, rules);
            }
        }
        let mut rounds = 0u32;
        loop {
            let over = if points {
                table.game_over()
            } else {
                rounds >= setup.rounds
            };
            if over {
                break;
            }
            streams.set_deal(deal_id(game, table.rounds_played()));
            for s in (0..n).filter(|&s| table.active()[s]) {
                if let Some(k) = map[s] {
                    agents[k].round_start(s, table.standings());
                }
            }
            let outcome = {
                let mut seats = Seated {
                    y,
                    ex,
                    agents: &mut agents,
                    map: &map,
                    encoding: setup.encoding,
                    names: &names,
                    points,
                };
                table.play_round_with(&mut seats, &mut streams, &mut ())?
            };
            for s in (0..n).filter(|&s| outcome.active[s]) {
                if let Some(k) = map[s] {
                    agents[k].round_end(s, &outcome);
                }
            }
            let mut e = ex.borrow_mut();
            for s in (0..n).filter(|&s| outcome.active[s]) {
                e.rewards[s] += setup.reward.of(rules, &outcome, s, setup.reward_scale);
            }
            rounds += 1;
        }
        let leader = table.leader();
        for (s, k) in map.iter().enumerate().take(n) {
            if let Some(k) = *k {
                agents[k].game_end(s, table.standings(), s == leader);
            }
        }
        {
            let mut e = ex.borrow_mut();
            if points {
                for s in 0..n {
                    e.rewards[s] += if s == leader {
                        setup.game_reward
                    } else {
                        -setup.game_reward / (n - 1) as f64
                    };
                }
            }
            e.status = Some(Status::GameOver);
            e.winner = Some(leader);
            if e.render {
                e.final_standings = table.standings().to_vec();
                e.scene = None;
            }
            e.games += 1;
        }
        y.suspend(());
        ex.borrow_mut().winner = None;
        game += stride;
    }
}
