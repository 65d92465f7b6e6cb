//! What learning agents need to play, without libtorch: observation encodings, the plain-Rust
//! forward pass over trained weights, checkpoints, and [`Policy`] (a network and how it
//! chooses). Training (`dhumbal-learn`) uses the same encoding and policy code, so a network
//! is encoded and chosen from identically in training and in play.

pub mod checkpoint;
pub mod encoding;
pub mod net;

use std::sync::Arc;

use dhumbal_game::rng::RandomSource;
use dhumbal_game::{Agent, Candidate, Explanation, Observation};

pub use checkpoint::{Checkpoint, CheckpointError};
pub use encoding::{Action, Answer, Encoded, Encoding};
pub use net::{Mlp, Scratch};

/// The learning algorithms, as scenario kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Dqn,
    Ddqn,
    Ppo,
    /// A policy trained to choose as a teacher agent does (a search's visit counts, or the
    /// moves of any other agent): distilled play at network speed.
    Imitate,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Dqn,
        Algorithm::Ddqn,
        Algorithm::Ppo,
        Algorithm::Imitate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Dqn => "dqn",
            Algorithm::Ddqn => "ddqn",
            Algorithm::Ppo => "ppo",
            Algorithm::Imitate => "imitate",
        }
    }

    /// Whether the acting network's scores are logits of a policy (a softmax over the legal
    /// actions), not Q-values.
    pub fn is_policy(self) -> bool {
        matches!(self, Algorithm::Ppo | Algorithm::Imitate)
    }

    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The network that acts: Q-values, or the policy's logits.
    pub fn acting_net(self) -> &'static str {
        match self {
            Algorithm::Dqn | Algorithm::Ddqn => "q",
            Algorithm::Ppo | Algorithm::Imitate => "policy",
        }
    }
}

/// A network that plays: the encoding it reads and the scores it gives each legal action.
#[derive(Clone, Debug)]
pub struct Policy {
    pub algorithm: Algorithm,
    pub encoding: Encoding,
    pub net: Mlp,
}

/// A policy's per-seat buffers: reused from decision to decision, so play allocates nothing
/// once they have grown.
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    pub encoded: Encoded,
    pub scores: Vec<f32>,
    pub scratch: Scratch,
}

/// How a policy picks among the scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// The best score (the first of equals).
    Greedy,
    /// Drawn from the softmax of the scores (PPO's policy; for Q-values, a Boltzmann policy).
    Sample,
    /// Uniformly random with probability ε, otherwise the best (DQN's exploration).
    EpsilonGreedy(f64),
}

impl Policy {
    /// Encodes the decision into `ws` and scores its legal actions (`ws.scores`).
    pub fn evaluate(&self, obs: &Observation<'_>, ws: &mut Workspace) {
        self.encoding.encode(obs, &mut ws.encoded);
        self.net.score(&ws.encoded, &mut ws.scratch, &mut ws.scores);
    }

    /// Chooses among the scored actions in `ws`; draws from `rng` only when the choice is
    /// random (never for `Greedy`). Leaves the probabilities in `ws.scores` for `Sample`.
    pub fn choose(&self, ws: &mut Workspace, choice: Choice, rng: &mut dyn RandomSource) -> usize {
        let n = ws.scores.len();
        match choice {
            Choice::Greedy => net::argmax(&ws.scores),
            Choice::Sample => {
                net::softmax(&mut ws.scores);
                net::sample(&ws.scores, rng.random())
            }
            Choice::EpsilonGreedy(eps) => {
                if eps > 0.0 && rng.random() < eps {
                    rng.below(n as u32) as usize
                } else {
                    net::argmax(&ws.scores)
                }
            }
        }
    }

    /// Reads the acting network of a checkpoint.
    pub fn from_checkpoint(c: &Checkpoint) -> Result<Policy, CheckpointError> {
        let algorithm = Algorithm::from_name(c.text("algorithm"))
            .ok_or_else(|| CheckpointError::UnknownAlgorithm(c.text("algorithm").to_string()))?;
        let encoding = c.encoding()?;
        let net = c.mlp(algorithm.acting_net())?;
        if net.inputs() != encoding.input_dim() || net.outputs() != encoding.outputs() {
            return Err(CheckpointError::Width {
                net: algorithm.acting_net(),
                sizes: net.sizes(),
                encoding,
            });
        }
        Ok(Policy {
            algorithm,
            encoding,
            net,
        })
    }
}

/// A policy in a seat: encodes each decision, scores the legal actions and chooses. The seat
/// keeps only its buffers; the network is shared.
pub struct PolicyAgent {
    name: String,
    policy: Arc<Policy>,
    choice: Choice,
    ws: Workspace,
}

impl PolicyAgent {
    pub fn new(name: impl Into<String>, policy: Arc<Policy>, choice: Choice) -> PolicyAgent {
        PolicyAgent {
            name: name.into(),
            policy,
            choice,
            ws: Workspace::default(),
        }
    }

    fn decide(&mut self, obs: &Observation<'_>, rng: &mut dyn RandomSource) -> Action {
        self.policy.evaluate(obs, &mut self.ws);
        let i = self.policy.choose(&mut self.ws, self.choice, rng);
        self.ws.encoded.actions[i]
    }

    /// The network's output for each legal action of `obs`, recomputed (the forward pass is
    /// deterministic and draws nothing): Q-values, or PPO's probabilities (softmax of its
    /// logits), best first.
    fn explanation(&mut self, obs: &Observation<'_>) -> Explanation {
        self.policy.evaluate(obs, &mut self.ws);
        let raw: Vec<f64> = self.ws.scores.iter().map(|&x| f64::from(x)).collect();
        let mut probs = self.ws.scores.clone();
        net::softmax(&mut probs);
        let ppo = self.policy.algorithm.is_policy();
        let mut candidates: Vec<Candidate> = self
            .ws
            .encoded
            .actions
            .iter()
            .zip(raw.iter().zip(&probs))
            .map(|(&choice, (&score, &p))| {
                if ppo {
                    Candidate::new(choice, f64::from(p)).with("logit", score)
                } else if self.choice == Choice::Greedy {
                    Candidate::new(choice, score)
                } else {
                    Candidate::new(choice, score).with("probability", f64::from(p))
                }
            })
            .collect();
        // Best first; a stable sort keeps the first of equals (the one greedy play takes) first.
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        let how = match (self.choice, ppo) {
            (Choice::Greedy, false) => "plays the legal action of highest Q-value (greedy)",
            (Choice::Greedy, true) => "plays its most probable legal action (greedy)",
            (Choice::Sample, false) => {
                "samples from the softmax of the Q-values (greedy: false; the draw is not shown)"
            }
            (Choice::Sample, true) => {
                "samples from these probabilities (greedy: false; the draw is not shown)"
            }
            (Choice::EpsilonGreedy(_), _) => {
                "epsilon-greedy: a random legal action with probability epsilon, else the best"
            }
        };
        Explanation {
            score: if ppo { "probability" } else { "Q-value" }.into(),
            candidates,
            notes: vec![format!(
                "{} network, `{}` encoding, {} legal actions: {how}",
                self.policy.algorithm.name(),
                self.policy.encoding.name(),
                raw.len()
            )],
        }
    }
}

impl Agent for PolicyAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        Some(self.explanation(obs))
    }

    crate::answer_by!(decide);
}

/// Inside `impl Agent for X`, implements [`Agent::call`], [`Agent::discard`] and
/// [`Agent::pick`] by the [`Action`] that `self.$decide(obs, rng)` chooses, as its [`Answer`]
/// to the decision asked: how a network answers, in play ([`PolicyAgent`]) and in training
/// (the learner's seat in `dhumbal-learn`'s episodes). The caller depends on `dhumbal_game`.
#[macro_export]
macro_rules! answer_by {
    ($decide:ident) => {
        fn call(
            &mut self,
            obs: &::dhumbal_game::Observation<'_>,
            rng: &mut dyn ::dhumbal_game::rng::RandomSource,
        ) -> Result<bool, ::dhumbal_game::AgentError> {
            $crate::neural::Answer::call(self.$decide(obs, rng))
        }

        fn discard(
            &mut self,
            obs: &::dhumbal_game::Observation<'_>,
            rng: &mut dyn ::dhumbal_game::rng::RandomSource,
        ) -> Result<::dhumbal_game::Discard, ::dhumbal_game::AgentError> {
            $crate::neural::Answer::discard(self.$decide(obs, rng))
        }

        fn pick(
            &mut self,
            obs: &::dhumbal_game::Observation<'_>,
            rng: &mut dyn ::dhumbal_game::rng::RandomSource,
        ) -> Result<::dhumbal_game::Pick, ::dhumbal_game::AgentError> {
            $crate::neural::Answer::pick(self.$decide(obs, rng))
        }
    };
}
