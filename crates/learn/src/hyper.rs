//! Hyperparameters: every one settable from a scenario (`train: [{hyper: {lr: 3e-4}}]`), with
//! two presets. `paper` is the paper's section III-B/C as its code ran them
//! (its `dqn.py` and `ppo.py`: DQN replays once per episode, syncs its target
//! every 100 episodes, decays ε per episode; PPO updates after every episode, minibatch 16, 5
//! epochs). `default` is what this project found to learn well and fast: bigger batches,
//! several episodes per iteration (played in parallel), more updates per episode.

use dhumbal_agents::neural::Algorithm;
use serde_json::{Map, Value};

/// Every hyperparameter. Counts are whole numbers; all are read from YAML as numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Hyper {
    /// Adam's learning rate.
    pub lr: f64,
    pub gamma: f64,
    /// Episodes played with one frozen network before updating (in parallel).
    pub episodes_per_iteration: u64,
    /// Rewards are divided by this before learning (coins or points per round).
    pub reward_scale: f64,
    /// Gradient clipping by global norm (0: none).
    pub max_grad_norm: f64,
    // DQN / Double DQN
    pub batch_size: u64,
    pub replay: u64,
    /// Transitions in the buffer before the first update.
    pub warmup: u64,
    /// Gradient steps per episode played.
    pub updates_per_episode: f64,
    /// The target network copies the online one every this many updates.
    pub target_every: u64,
    pub epsilon_start: f64,
    pub epsilon_end: f64,
    /// ε after e episodes: max(epsilon_end, epsilon_start * epsilon_decay^e).
    pub epsilon_decay: f64,
    /// 1: Huber loss; 0: squared error.
    pub huber: u64,
    // PPO
    pub clip: f64,
    pub epochs: u64,
    pub minibatch: u64,
    pub entropy_coef: f64,
    pub value_coef: f64,
    pub gae_lambda: f64,
    /// 1: advantages normalised per update, (a - mean) / std.
    pub normalize_advantages: u64,
    // Self-play
    /// A snapshot of the learner joins the opponent pool every this many episodes.
    pub snapshot_every: u64,
    /// The pool keeps this many latest snapshots.
    pub pool_size: u64,
}

/// Names, docs and which algorithms read them: `dhumbal-run train --help` and
/// docs/learning.md list these.
pub const PARAMS: &[(&str, &str, &str)] = &[
    ("lr", "all", "Adam's learning rate"),
    ("gamma", "all", "discount factor"),
    (
        "episodes_per_iteration",
        "all",
        "episodes played (in parallel) with one frozen network before the networks update",
    ),
    (
        "reward_scale",
        "all",
        "rewards (coins or minus points of the round) are divided by this",
    ),
    (
        "max_grad_norm",
        "all",
        "gradient clipping by global norm; 0: none",
    ),
    ("batch_size", "dqn", "transitions per gradient step"),
    ("replay", "dqn", "replay buffer capacity, in transitions"),
    (
        "warmup",
        "dqn",
        "transitions in the buffer before the first update",
    ),
    (
        "updates_per_episode",
        "dqn",
        "gradient steps per episode played",
    ),
    (
        "target_every",
        "dqn",
        "the target network copies the online one every this many updates",
    ),
    ("epsilon_start", "dqn", "exploration rate at the start"),
    ("epsilon_end", "dqn", "lowest exploration rate"),
    (
        "epsilon_decay",
        "dqn",
        "epsilon after e episodes: max(epsilon_end, epsilon_start * epsilon_decay^e)",
    ),
    ("huber", "dqn", "1: Huber loss, 0: squared error"),
    ("clip", "ppo", "clip range of the probability ratio"),
    (
        "epochs",
        "ppo, imitate",
        "passes over each iteration's steps",
    ),
    ("minibatch", "ppo, imitate", "steps per gradient step"),
    ("entropy_coef", "ppo", "weight of the entropy bonus"),
    ("value_coef", "ppo", "weight of the value loss"),
    ("gae_lambda", "ppo", "GAE lambda"),
    (
        "normalize_advantages",
        "ppo",
        "1: advantages normalised per iteration, (a - mean) / std",
    ),
    (
        "snapshot_every",
        "all",
        "self-play: a snapshot of the learner joins the opponent pool every this many episodes",
    ),
    (
        "pool_size",
        "all",
        "self-play: how many latest snapshots the pool keeps",
    ),
];

/// The presets' names.
pub const PRESETS: &[&str] = &["default", "paper"];

impl Hyper {
    /// A preset for an algorithm, `None` for an unknown name.
    pub fn preset(name: &str, algorithm: Algorithm) -> Option<Hyper> {
        // Imitation learns as PPO's policy does, in passes of minibatches over each
        // iteration's steps; its loss (the teacher's choices) is supervised, so it takes a
        // larger step.
        let ppo = algorithm.is_policy();
        let imitate = algorithm == Algorithm::Imitate;
        let base = Hyper {
            lr: 1e-4,
            gamma: 0.99,
            episodes_per_iteration: 1,
            reward_scale: 100.0,
            max_grad_norm: 0.0,
            batch_size: 32,
            replay: 2000,
            warmup: 32,
            updates_per_episode: 1.0,
            target_every: 100,
            epsilon_start: 1.0,
            epsilon_end: 0.01,
            epsilon_decay: 0.995,
            huber: 0,
            clip: 0.2,
            epochs: 5,
            minibatch: 16,
            entropy_coef: 0.01,
            value_coef: 0.5,
            gae_lambda: 0.95,
            normalize_advantages: 1,
            snapshot_every: 1000,
            pool_size: 5,
        };
        match name {
            "paper" => Some(base),
            "default" => Some(Hyper {
                lr: if imitate {
                    1e-3
                } else if ppo {
                    3e-4
                } else {
                    2.5e-4
                },
                episodes_per_iteration: if ppo { 64 } else { 16 },
                max_grad_norm: if ppo { 0.5 } else { 10.0 },
                batch_size: 128,
                replay: 50_000,
                warmup: 2000,
                updates_per_episode: 0.5,
                target_every: 500,
                epsilon_start: 1.0,
                epsilon_end: 0.05,
                epsilon_decay: 0.9995,
                huber: 1,
                epochs: 4,
                minibatch: 256,
                ..base
            }),
            _ => None,
        }
    }

    fn slot(&mut self, name: &str) -> Option<Slot<'_>> {
        Some(match name {
            "lr" => Slot::F(&mut self.lr),
            "gamma" => Slot::F(&mut self.gamma),
            "episodes_per_iteration" => Slot::U(&mut self.episodes_per_iteration),
            "reward_scale" => Slot::F(&mut self.reward_scale),
            "max_grad_norm" => Slot::F(&mut self.max_grad_norm),
            "batch_size" => Slot::U(&mut self.batch_size),
            "replay" => Slot::U(&mut self.replay),
            "warmup" => Slot::U(&mut self.warmup),
            "updates_per_episode" => Slot::F(&mut self.updates_per_episode),
            "target_every" => Slot::U(&mut self.target_every),
            "epsilon_start" => Slot::F(&mut self.epsilon_start),
            "epsilon_end" => Slot::F(&mut self.epsilon_end),
            "epsilon_decay" => Slot::F(&mut self.epsilon_decay),
            "huber" => Slot::U(&mut self.huber),
            "clip" => Slot::F(&mut self.clip),
            "epochs" => Slot::U(&mut self.epochs),
            "minibatch" => Slot::U(&mut self.minibatch),
            "entropy_coef" => Slot::F(&mut self.entropy_coef),
            "value_coef" => Slot::F(&mut self.value_coef),
            "gae_lambda" => Slot::F(&mut self.gae_lambda),
            "normalize_advantages" => Slot::U(&mut self.normalize_advantages),
            "snapshot_every" => Slot::U(&mut self.snapshot_every),
            "pool_size" => Slot::U(&mut self.pool_size),
            _ => return None,
        })
    }

    /// Sets one hyperparameter from a scenario value; the error says what would be valid.
    pub fn set(&mut self, name: &str, value: &Value) -> Result<(), HyperError> {
        let Some(slot) = self.slot(name) else {
            let names: Vec<&str> = PARAMS.iter().map(|p| p.0).collect();
            return Err(HyperError::Unknown {
                hint: dhumbal_agents::nearest(name, &names).map(str::to_string),
                valid: names.join(", "),
            });
        };
        let expected = |expected| HyperError::Expected {
            expected,
            got: value.clone(),
        };
        match slot {
            Slot::F(f) => match value.as_f64().filter(|v| v.is_finite() && *v >= 0.0) {
                Some(v) => *f = v,
                None => return Err(expected(Expected::Number)),
            },
            Slot::U(u) => match value.as_u64() {
                Some(v) => *u = v,
                None => return Err(expected(Expected::Whole)),
            },
        }
        self.check().map_err(|range| HyperError::Range {
            range,
            got: value.clone(),
        })
    }

    /// Ranges that a value of the right type can still miss.
    pub fn check(&self) -> Result<(), RangeError> {
        let positive = [
            ("lr", self.lr),
            ("reward_scale", self.reward_scale),
            ("episodes_per_iteration", self.episodes_per_iteration as f64),
            ("batch_size", self.batch_size as f64),
            ("replay", self.replay as f64),
            ("target_every", self.target_every as f64),
            ("epochs", self.epochs as f64),
            ("minibatch", self.minibatch as f64),
            ("snapshot_every", self.snapshot_every as f64),
            ("pool_size", self.pool_size as f64),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v <= 0.0) {
            return Err(RangeError::NotPositive(name));
        }
        let unit = [
            ("gamma", self.gamma),
            ("gae_lambda", self.gae_lambda),
            ("epsilon_start", self.epsilon_start),
            ("epsilon_end", self.epsilon_end),
            ("epsilon_decay", self.epsilon_decay),
        ];
        if let Some((name, _)) = unit.iter().find(|(_, v)| !(0.0..=1.0).contains(v)) {
            return Err(RangeError::NotUnit(name));
        }
        if self.batch_size > self.replay {
            return Err(RangeError::BatchOverReplay);
        }
        Ok(())
    }

    /// Every value, for the checkpoint and the manifest.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut copy = self.clone();
        PARAMS
            .iter()
            .map(|(name, _, _)| {
                let v = match copy.slot(name).expect("every listed name has a slot") {
                    Slot::F(f) => Value::from(*f),
                    Slot::U(u) => Value::from(*u),
                };
                (name.to_string(), v)
            })
            .collect()
    }

    /// The exploration rate after `episodes` episodes.
    pub fn epsilon(&self, episodes: u64) -> f64 {
        let decayed = self.epsilon_start * self.epsilon_decay.powf(episodes as f64);
        decayed.max(self.epsilon_end)
    }
}

enum Slot<'a> {
    F(&'a mut f64),
    U(&'a mut u64),
}

/// Why a hyperparameter cannot be set (of a network's training, or of a tabular method's).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HyperError {
    /// A name no network training reads.
    #[error(
        "unknown hyperparameter; {}valid: {valid}",
        hint.as_ref().map(|n| format!("did you mean `{n}`? ")).unwrap_or_default()
    )]
    Unknown { hint: Option<String>, valid: String },
    /// A name the tabular method does not read.
    #[error("unknown hyperparameter `{name}`; this method has: {valid}")]
    NotOfMethod { name: String, valid: String },
    #[error("expected {expected}, got {got}")]
    Expected { expected: Expected, got: Value },
    #[error("{range}, got {got}")]
    Range { range: RangeError, got: Value },
}

/// What a hyperparameter's value must be.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum Expected {
    #[error("a number, zero or more")]
    Number,
    #[error("a whole number, zero or more")]
    Whole,
    #[error("a number from {0} to {1}")]
    Between(f64, f64),
    #[error("a whole number of at least 1")]
    Count,
    #[error("`value` or `policy`")]
    Solver,
}

/// A range that a network training's hyperparameters miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("`{0}` must be greater than 0")]
    NotPositive(&'static str),
    #[error("`{0}` must be in [0, 1]")]
    NotUnit(&'static str),
    #[error("`batch_size` must not exceed `replay`")]
    BatchOverReplay,
}
