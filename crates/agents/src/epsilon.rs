//! `epsilon`: any agent made noisier. With probability `epsilon` a decision is uniformly
//! random over the legal actions (as `random` plays), otherwise the wrapped agent decides.
//! The usual exploration policy of learning agents, and a way to measure how much an agent's
//! strength owes to each of its decisions.
//!
//! This file is the whole family: its parameters, how its entry resolves, its recipe and its
//! agent; its entry in `FAMILIES` (`lib.rs`) registers it.

use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::rng::RandomSource;
use dhumbal_game::{
    Agent, AgentError, Card, Discard, Event, Explanation, Observation, Pick, RoundOutcome, Rules,
};

use crate::RandomAgent;
use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve, describe_params};

pub struct EpsilonFamily;

impl Family for EpsilonFamily {
    fn name(&self) -> &'static str {
        "epsilon"
    }

    fn doc(&self) -> &'static str {
        "another agent that, with probability epsilon, takes a uniformly random legal action instead"
    }

    fn params(&self) -> Vec<Param> {
        vec![
            Param::required(
                "agent",
                ParamType::Agent,
                "the agent that decides otherwise: a kind name or {kind: ..., params: ...} or {script: ...}",
            ),
            Param::new(
                "epsilon",
                ParamType::Float,
                0.1,
                "probability that a decision is uniformly random, in [0, 1]",
            )
            .checked(crate::family::probability),
        ]
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        Some(Arc::new(EpsilonRecipe {
            inner: cx.agent(&entry.get("agent"), "params.agent")?,
            epsilon: entry.f64("epsilon"),
        }))
    }
}

impl EpsilonFamily {
    /// `inner` with probability-`epsilon` random actions: what a `kind: epsilon` entry resolves
    /// to, for a caller that already holds the inner recipe (tests wrap their own agents).
    pub fn wrap(inner: Arc<dyn Recipe>, epsilon: f64) -> Arc<dyn Recipe> {
        Arc::new(EpsilonRecipe { inner, epsilon })
    }
}

struct EpsilonRecipe {
    inner: Arc<dyn Recipe>,
    epsilon: f64,
}

impl Recipe for EpsilonRecipe {
    fn family(&self) -> &'static str {
        "epsilon"
    }

    fn searches(&self) -> bool {
        self.inner.searches()
    }

    fn describe(&self) -> Map<String, Value> {
        describe_params("epsilon", &EpsilonFamily.params(), |p| match p.name {
            "agent" => Value::Object(self.inner.describe()),
            _ => Value::from(self.epsilon),
        })
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        Box::new(EpsilonAgent {
            inner: self.inner.build(id),
            epsilon: self.epsilon,
            explored: false,
        })
    }

    fn sources(&self) -> Vec<(String, String)> {
        self.inner.sources()
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        Ok(self.inner.for_rules(rules)?.map(|inner| {
            Arc::new(EpsilonRecipe {
                inner,
                epsilon: self.epsilon,
            }) as Arc<dyn Recipe>
        }))
    }
}

/// The wrapped agent and the noise level. Each decision draws one number from the agent's own
/// stream to decide whose it is, so the noise is as reproducible as the agent; at 0 and 1
/// nothing is drawn, so `epsilon: 0` plays exactly as the wrapped agent and `epsilon: 1`
/// exactly as `random`.
struct EpsilonAgent {
    inner: Box<dyn Agent>,
    epsilon: f64,
    /// Whether the last decision was the random one (for [`Agent::explain`]).
    explored: bool,
}

impl EpsilonAgent {
    fn noisy(&mut self, rng: &mut dyn RandomSource) -> bool {
        self.explored = if self.epsilon <= 0.0 {
            false
        } else if self.epsilon >= 1.0 {
            true
        } else {
            rng.random() < self.epsilon
        };
        self.explored
    }
}

impl Agent for EpsilonAgent {
    fn name(&self) -> &str {
        self.inner.name()
    }

    // The oracle flag and the lifecycle hooks go to the wrapped agent (as
    // `dhumbal_game::pass_on_to!` would hand them on); the explanation is its own.
    fn oracle(&self) -> bool {
        self.inner.oracle()
    }

    fn game_start(&mut self, seat: usize, rules: &Rules) {
        self.inner.game_start(seat, rules)
    }

    fn round_start(&mut self, seat: usize, standings: &[i64]) {
        self.inner.round_start(seat, standings)
    }

    fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
        self.inner.round_end(seat, outcome)
    }

    fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
        self.inner.game_end(seat, standings, won)
    }

    fn witnesses(&self) -> bool {
        self.inner.witnesses()
    }

    fn witness(&mut self, seat: usize, event: &Event, drawn: Option<Card>) {
        self.inner.witness(seat, event, drawn)
    }

    /// Explored: every legal action with its probability under the uniform choice. Otherwise
    /// the wrapped agent's explanation, with a note that this decision was its own.
    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        if self.explored {
            return Some(RandomAgent::explanation(
                obs,
                format!(
                    "explored (epsilon {}): a uniformly random legal action instead of the wrapped agent's",
                    self.epsilon
                ),
            ));
        }
        let note = format!(
            "did not explore (epsilon {}): the wrapped agent decided",
            self.epsilon
        );
        let mut e = self.inner.explain(obs).unwrap_or_default();
        e.notes.insert(0, note);
        Some(e)
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        if self.noisy(rng) {
            return Ok(RandomAgent::choose_call(rng));
        }
        self.inner.call(obs, rng)
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        if self.noisy(rng) {
            return Ok(RandomAgent::choose_discard(obs, rng));
        }
        self.inner.discard(obs, rng)
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        if self.noisy(rng) {
            return Ok(RandomAgent::choose_pick(obs, rng));
        }
        self.inner.pick(obs, rng)
    }
}
