//! Training learning agents: DQN, Double DQN and PPO over the `paper` or `cards` encodings
//! (`dhumbal_agents::neural`), against any agents, with evaluation on fixed deals, per-episode
//! records and checkpoints that resume.
//!
//! How a training run goes (docs/learning.md): episodes are rounds at a table of the plan's
//! rules, the learner in one seat (random by default) and opponents drawn per episode from the
//! plan's list (built-in kinds, scripts, or snapshots of the learner itself). Episodes are
//! played in *iterations* of a fixed number, in parallel on the caller's rayon pool, all with
//! the same frozen network (plain-Rust forward passes, no libtorch call per decision); then the
//! networks are updated on tch. Every random choice comes from ChaCha streams keyed by (seed,
//! episode) or (seed, update), so a run gives the same checkpoint bit for bit whatever the
//! number of threads.
//!
//! This crate knows the engine and the agents, nothing of scenario files or records on disk:
//! the runner resolves a `train:` section into a [`TrainPlan`] and writes what [`train`]
//! reports. It links no libtorch: the networks' updates are a [`Backend`], which only the
//! trainer executable `dhumbal-train` installs (crate `dhumbal-torch`); in any other process
//! [`train`] says so ([`TrainError::NoTorch`]), and everything else (plans, episodes,
//! evaluation, tabular learning) works.

pub mod episode;
pub mod evaluate;
pub mod hyper;
pub mod tabular;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use dhumbal_agents::Recipe;
use dhumbal_agents::neural::{Algorithm, Encoding};
use dhumbal_game::{PlayError, Rules};

pub use hyper::Hyper;

/// A checked training run (from a `train:` entry of a scenario).
#[derive(Clone)]
pub struct TrainPlan {
    /// The entry's id: names its records folder.
    pub id: String,
    pub algorithm: Algorithm,
    pub encoding: Encoding,
    /// Hidden layer widths of every network.
    pub hidden: Vec<usize>,
    /// The rules of the training table (its number of players included).
    pub rules: Arc<Rules>,
    pub episodes: u64,
    /// Opponents drawn uniformly, per episode and per seat, from this list.
    pub opponents: Vec<Opponent>,
    /// `imitate`: the agent that plays the learner's seat, whose choices the network learns
    /// (its visit counts where it explains them as a search's, else the move it played).
    pub teacher: Option<(String, Arc<dyn Recipe>)>,
    pub seating: TrainSeating,
    /// What the learner is rewarded for at the end of each round.
    pub reward: Reward,
    pub seed: u64,
    pub hyper: Hyper,
    pub evaluation: Option<Evaluation>,
    /// Where the checkpoint goes (and a `.train` file beside it with what resuming needs).
    pub checkpoint: PathBuf,
    /// A checkpoint to start from (`init:`, a warm start): its networks' weights, not its
    /// optimizer, progress or replay buffer; the same algorithm, encoding and widths.
    pub init: Option<PathBuf>,
    pub device: DeviceChoice,
    /// The scenario's hash and the program, recorded in the checkpoint.
    pub scenario_hash: String,
    pub program: String,
}

/// One entry of a training's opponent list.
#[derive(Clone)]
pub enum Opponent {
    /// A fixed agent (any kind a scenario can seat), with its id.
    Agent(String, Arc<dyn Recipe>),
    /// A snapshot of the learner, drawn uniformly from the pool of its last snapshots (the
    /// network at the start of training until the first snapshot).
    SelfPlay,
}

impl Opponent {
    pub fn name(&self) -> &str {
        match self {
            Opponent::Agent(id, _) => id,
            Opponent::SelfPlay => "self",
        }
    }
}

/// What a training rewards, at the end of each round (every other step has reward 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reward {
    /// The round's result in the rules' own currency: coins won or lost (coin scoring), minus
    /// the points taken (point scoring), divided by `reward_scale`.
    Score,
    /// 1 for winning the round, 0 otherwise: what a win rate measures (`reward_scale` unused).
    Win,
}

impl Reward {
    pub const NAMES: &'static [&'static str] = &["score", "win"];

    pub fn from_name(name: &str) -> Option<Reward> {
        match name {
            "score" => Some(Reward::Score),
            "win" => Some(Reward::Win),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Reward::Score => "score",
            Reward::Win => "win",
        }
    }

    /// `seat`'s reward for a finished round: its score divided by `scale`, or 1 if it won.
    pub fn of(
        self,
        rules: &dhumbal_game::Rules,
        outcome: &dhumbal_game::RoundOutcome,
        seat: usize,
        scale: f64,
    ) -> f64 {
        match self {
            Reward::Score => episode::reward(rules, outcome, seat) / scale,
            Reward::Win => f64::from(u8::from(outcome.winner == Some(seat))),
        }
    }
}

/// Where the learner sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainSeating {
    /// A seat drawn per episode.
    Random,
    /// Always this seat.
    Fixed(usize),
}

/// Evaluation during training: greedy play against fixed opponents on fixed deals, the
/// learner in every seat of each deal in turn.
#[derive(Clone)]
pub struct Evaluation {
    /// Every this many episodes (and at the end).
    pub every: u64,
    /// Deals per evaluation (each played once per seat of the learner).
    pub deals: u64,
    /// The tables it is measured against: the opponent filling every other seat.
    pub against: Vec<(String, Arc<dyn Recipe>)>,
    /// Seed of the evaluation deals (the same deals at every evaluation).
    pub seed: u64,
}

/// Where the networks train.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// CUDA when a GPU is there, the CPU otherwise.
    Auto,
    Cpu,
    Cuda,
}

impl DeviceChoice {
    pub const NAMES: &'static [&'static str] = &["auto", "cpu", "cuda"];

    pub fn from_name(name: &str) -> Option<DeviceChoice> {
        match name {
            "auto" => Some(DeviceChoice::Auto),
            "cpu" => Some(DeviceChoice::Cpu),
            "cuda" => Some(DeviceChoice::Cuda),
            _ => None,
        }
    }
}

/// One training episode, as the records keep it.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeRecord {
    pub episode: u64,
    pub seat: usize,
    /// The opponents, by name, in seat order (the learner's seat says `learner`).
    pub opponents: String,
    /// The learner's reward: coins won or lost (coin scoring), minus points taken (points).
    pub reward: f64,
    /// Whether the learner won the round.
    pub win: bool,
    /// Whether the learner called, and whether the call succeeded.
    pub called: bool,
    pub call_success: bool,
    /// The learner's decisions (the episode's length in steps) and the round's turns.
    pub steps: u32,
    pub turns: u32,
    /// Mean loss of the updates made right after this episode's iteration (NaN where none).
    pub loss: f64,
    /// DQN: the exploration rate it played with; PPO: the policy's mean entropy over the update.
    pub epsilon: f64,
    pub entropy: f64,
}

/// One evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalRecord {
    /// Episodes trained when it was measured.
    pub episode: u64,
    pub opponent: String,
    pub rounds: u64,
    pub deals: u64,
    pub win_rate: f64,
    /// 95% interval of the win rate, by deal (the learner's seats of one deal averaged first).
    pub low: f64,
    pub high: f64,
    pub mean_reward: f64,
}

/// What a training run reports as it goes.
pub enum Event<'a> {
    /// Training resumes from a checkpoint after this many episodes (before any other event).
    Resumed(u64),
    /// Episodes finished (an iteration), with their records.
    Episodes(&'a [EpisodeRecord]),
    Evaluation(&'a EvalRecord),
    /// A checkpoint was written after this many episodes.
    Checkpoint(u64),
}

/// How a training run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Finished {
        episodes: u64,
        device: String,
    },
    /// Stopped on request after this many episodes; the checkpoint holds them.
    Stopped {
        episodes: u64,
    },
}

/// Why a training run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(
        "training a network needs libtorch, which only the trainer `dhumbal-train` links, and none was found: build it with `scripts/run.sh` (which installs torch 2.13.0 into .venv and builds both programs), or `source scripts/setup-torch.sh && cargo build --release -p dhumbal-trainer`; it is looked for in $DHUMBAL_TRAIN (a path), else beside dhumbal-run, else on PATH"
    )]
    NoTorch,
    #[error("{0}")]
    Checkpoint(String),
    #[error("{0}")]
    Device(String),
    #[error("an episode failed: {0}")]
    Play(PlayError),
}

/// Runs a plan: resumes from its checkpoint when asked and one is there, reports through the
/// callback, stops cleanly (checkpoint written) when the flag is set.
pub type TrainFn =
    fn(&TrainPlan, bool, &AtomicBool, &mut dyn FnMut(Event<'_>)) -> Result<Ended, TrainError>;

/// Training on libtorch, as the trainer executable provides it (`dhumbal_torch::BACKEND`).
#[derive(Clone, Copy)]
pub struct Backend {
    /// Runs a plan (see [`TrainFn`]).
    pub train: TrainFn,
    /// The networks a training of a plan starts from, before any update.
    pub initial: fn(&TrainPlan) -> Result<Arc<dhumbal_agents::neural::Policy>, TrainError>,
}

static BACKEND: OnceLock<Backend> = OnceLock::new();

/// Installs the backend for this process (the trainer's `main`, before anything else; a
/// second call changes nothing).
pub fn install(backend: Backend) {
    let _ = BACKEND.set(backend);
}

/// Whether this process can train networks (a backend is installed). A process that cannot
/// runs the trainer executable instead (the runner's `trainer` module).
pub fn can_train() -> bool {
    BACKEND.get().is_some()
}

/// The network a training of `plan` starts from, before any update (to measure what
/// training changed).
pub fn initial_policy(plan: &TrainPlan) -> Result<Arc<dhumbal_agents::neural::Policy>, TrainError> {
    match BACKEND.get() {
        Some(b) => (b.initial)(plan),
        None => Err(TrainError::NoTorch),
    }
}

/// Runs a training plan: resumes from its checkpoint when `resume` and one is there, reports
/// through `event`, stops cleanly (checkpoint written) when `stop` is set.
pub fn train(
    plan: &TrainPlan,
    resume: bool,
    stop: &AtomicBool,
    event: &mut dyn FnMut(Event<'_>),
) -> Result<Ended, TrainError> {
    match BACKEND.get() {
        Some(b) => (b.train)(plan, resume, stop, event),
        None => Err(TrainError::NoTorch),
    }
}
