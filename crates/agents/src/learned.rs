//! `dqn`, `ddqn`, `ppo`, `imitate`: trained networks as agents. The checkpoint (written by
//! `dhumbal-run train`, docs/learning.md) is read once when the scenario resolves and shared
//! read-only by every thread; each seat keeps only its buffers. The forward pass is plain
//! Rust (`neural::net`), so trained agents play in builds without libtorch.
//!
//! A checkpoint trained under other rules (players aside), another encoding than the entry
//! asks for, or by another algorithm than the kind names is refused with what to do. A
//! checkpoint that does not exist yet but that a training section of the same scenario
//! writes is accepted: the run trains it before play (its agents refuse to play until then).

use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::rng::RandomSource;
use dhumbal_game::{Agent, AgentError, Discard, Observation, Pick, Rules};

use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve, fitting};
use crate::neural::checkpoint::{rules_fingerprint, rules_name};
use crate::neural::{Algorithm, Checkpoint, Choice, Encoding, Policy, PolicyAgent};

pub struct LearnedFamily(pub Algorithm);

impl Family for LearnedFamily {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn doc(&self) -> &'static str {
        match self.0 {
            Algorithm::Dqn => {
                "a network trained by DQN (`dhumbal-run train`): plays the legal action of highest Q-value"
            }
            Algorithm::Ddqn => {
                "a network trained by Double DQN (`dhumbal-run train`): plays the legal action of highest Q-value"
            }
            Algorithm::Ppo => {
                "a policy trained by PPO (`dhumbal-run train`): plays its most probable legal action, or samples"
            }
            Algorithm::Imitate => {
                "a policy trained to imitate a teacher agent (`dhumbal-run train`, `algorithm: imitate`; a search's visit counts): plays its most probable legal action, or samples"
            }
        }
    }

    fn params(&self) -> Vec<Param> {
        vec![
            Param::required(
                "checkpoint",
                ParamType::Path,
                "the trained checkpoint (.safetensors), relative to the scenario file",
            ),
            Param::new(
                "greedy",
                ParamType::Bool,
                true,
                "true: the best-scored legal action; false: drawn from the softmax of the scores, from the agent's own stream",
            ),
            Param::new(
                "encoding",
                ParamType::Choice(&["any", "cards", "paper"]),
                "any",
                "the encoding the checkpoint must have been trained with (`any`: whichever it was)",
            ),
        ]
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        let written = entry.text("checkpoint");
        let path = cx.path(&written);
        let greedy = entry.bool("greedy");
        let want = Encoding::from_name(&entry.text("encoding"));
        if !path.is_file() {
            if cx.planned(&path) {
                return Some(Arc::new(LearnedRecipe {
                    algorithm: self.0,
                    written,
                    greedy,
                    policy: None,
                    rules: String::new(),
                    rules_name: String::new(),
                }));
            }
            cx.problem(
                "params.checkpoint",
                format!(
                    "no checkpoint at {}: train one with `dhumbal-run train` (a `train:` section that writes this path), or fix the path",
                    path.display()
                ),
            );
            return None;
        }
        let loaded = Checkpoint::read(&path).and_then(|c| {
            let policy = Policy::from_checkpoint(&c)?;
            Ok((c, policy))
        });
        let (checkpoint, policy) = match loaded {
            Ok(x) => x,
            Err(e) => {
                cx.problem("params.checkpoint", e.to_string());
                return None;
            }
        };
        if policy.algorithm != self.0 {
            cx.problem(
                "params.checkpoint",
                format!(
                    "{} was trained by `{}`, not `{}`: seat it as `kind: {}`",
                    written,
                    policy.algorithm.name(),
                    self.0.name(),
                    policy.algorithm.name()
                ),
            );
            return None;
        }
        if let Some(want) = want.filter(|&w| w != policy.encoding) {
            cx.problem(
                "params.encoding",
                format!(
                    "{written} was trained with the `{}` encoding, not `{}`: a network only reads the encoding it learned (train one with `encoding: {}`)",
                    policy.encoding.name(),
                    want.name(),
                    want.name()
                ),
            );
            return None;
        }
        let recipe = LearnedRecipe {
            algorithm: self.0,
            written,
            greedy,
            rules: checkpoint.text("rules").to_string(),
            rules_name: checkpoint.text("rules_name").to_string(),
            policy: Some(Arc::new(policy)),
        };
        fitting(cx, "params.checkpoint", Arc::new(recipe))
    }
}

struct LearnedRecipe {
    algorithm: Algorithm,
    written: String,
    greedy: bool,
    /// The trained network; `None` while a planned checkpoint is not trained yet.
    policy: Option<Arc<Policy>>,
    /// The checkpoint's rules fingerprint, and how it names them.
    rules: String,
    rules_name: String,
}

impl LearnedRecipe {
    fn check_rules(&self, rules: &Rules) -> Result<(), String> {
        if self.policy.is_none() || rules_fingerprint(rules) == self.rules {
            return Ok(());
        }
        Err(format!(
            "{} was trained under {}, and this table plays {}: a network learns the rules it was trained under; train one for these rules (a `train:` section with the same `rules:`)",
            self.written,
            self.rules_name,
            rules_name(rules)
        ))
    }
}

impl Recipe for LearnedRecipe {
    fn family(&self) -> &'static str {
        self.algorithm.name()
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("kind".into(), Value::from(self.algorithm.name()));
        let mut p = Map::new();
        p.insert("checkpoint".into(), Value::from(self.written.clone()));
        p.insert("greedy".into(), Value::from(self.greedy));
        if let Some(policy) = &self.policy {
            p.insert("encoding".into(), Value::from(policy.encoding.name()));
        }
        m.insert("params".into(), Value::Object(p));
        m
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        match &self.policy {
            Some(p) => {
                let choice = if self.greedy {
                    Choice::Greedy
                } else {
                    Choice::Sample
                };
                Box::new(PolicyAgent::new(id, p.clone(), choice))
            }
            None => Box::new(PendingAgent {
                name: id.to_string(),
                message: format!(
                    "checkpoint {} is not trained yet (run the scenario, which trains it first, or `dhumbal-run train`)",
                    self.written
                ),
            }),
        }
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        self.check_rules(rules).map(|()| None)
    }
}

/// A seat whose checkpoint (or tabular policy) is not learned yet: it refuses to play, saying
/// `message`.
pub(crate) struct PendingAgent {
    pub(crate) name: String,
    pub(crate) message: String,
}

impl PendingAgent {
    fn refuse<T>(&self) -> Result<T, AgentError> {
        Err(AgentError(self.message.clone()))
    }
}

impl Agent for PendingAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn call(&mut self, _: &Observation<'_>, _: &mut dyn RandomSource) -> Result<bool, AgentError> {
        self.refuse()
    }

    fn discard(
        &mut self,
        _: &Observation<'_>,
        _: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        self.refuse()
    }

    fn pick(&mut self, _: &Observation<'_>, _: &mut dyn RandomSource) -> Result<Pick, AgentError> {
        self.refuse()
    }
}
