//! The uniform random baseline (the paper's `RandomBaselineAI`).
//!
//! Each decision is uniform over the legal actions: call or not; every legal discard (singles,
//! every same-rank subset, every contiguous run); the stock or any card on offer. With the
//! paper's pick rule (one card on offer) this is its `random.choice([True, False])`.

use dhumbal_game::Rules;
use dhumbal_game::cards::{Card, Discard};
use dhumbal_game::decision::{
    Agent, AgentError, Candidate, Choice, Explanation, Observation, Phase, Pick,
};
use dhumbal_game::discards::{Runs, count_multi_discards, for_each_multi_discard};
use dhumbal_game::rng::RandomSource;

use crate::family::{Entry, Family, Param, Recipe, Resolve, describe_params};

#[derive(Clone, Debug)]
pub struct RandomAgent {
    name: String,
}

impl RandomAgent {
    pub fn new(name: impl Into<String>) -> RandomAgent {
        RandomAgent { name: name.into() }
    }
}

impl RandomAgent {
    /// Call or not, one coin flip. (Generic over the stream so that a search's rollouts can
    /// call these without dynamic dispatch.)
    #[inline]
    pub fn choose_call<R: RandomSource + ?Sized>(rng: &mut R) -> bool {
        rng.coin()
    }

    /// A uniformly random legal discard. Singles come first in the enumeration order, so most
    /// draws need no enumeration at all; the count is closed-form (rollouts call this millions
    /// of times). The same draw picks the same discard as counting and walking the whole list
    /// would.
    #[inline]
    pub fn choose_discard<R: RandomSource + ?Sized>(obs: &Observation<'_>, rng: &mut R) -> Discard {
        Self::discard_of(obs.rules, obs.hand.as_slice(), rng)
    }

    /// [`RandomAgent::choose_discard`] from what it reads of the observation: the hand.
    #[inline]
    pub fn discard_of<R: RandomSource + ?Sized>(
        rules: &Rules,
        hand: &[Card],
        rng: &mut R,
    ) -> Discard {
        let singles = hand.len() as u32;
        let count = singles + count_multi_discards(rules, hand);
        let target = rng.below(count);
        if target < singles {
            return Discard::from_slice(&hand[target as usize..=target as usize])
                .expect("one card fits");
        }
        let mut i = singles;
        let mut chosen = Discard::new();
        for_each_multi_discard(rules, hand, Runs::All, |d| {
            if i == target {
                chosen = Discard::from_slice(d).expect("a discard fits a hand");
                return false;
            }
            i += 1;
            true
        });
        chosen
    }

    /// The stock or any card on offer, uniformly.
    #[inline]
    pub fn choose_pick<R: RandomSource + ?Sized>(obs: &Observation<'_>, rng: &mut R) -> Pick {
        Self::pick_of(obs.pickable, rng)
    }

    /// [`RandomAgent::choose_pick`] from what it reads of the observation: the cards on offer.
    #[inline]
    pub fn pick_of<R: RandomSource + ?Sized>(pickable: &[Card], rng: &mut R) -> Pick {
        let options = pickable.len() as u32 + 1;
        let i = rng.below(options) as usize;
        pickable.get(i).map_or(Pick::Stock, |&c| Pick::Pile(c))
    }
}

impl RandomAgent {
    /// Every legal action of `obs` with its probability under the uniform choice, and `note`.
    pub(crate) fn explanation(obs: &Observation<'_>, note: String) -> Explanation {
        let mut candidates = Vec::new();
        match obs.phase {
            Phase::Call => {
                candidates.push(Candidate::new(Choice::Call(false), 0.0));
                candidates.push(Candidate::new(Choice::Call(true), 0.0));
            }
            Phase::Discard => obs.for_each_legal_discard(|d| {
                if let Some(d) = Discard::from_slice(d) {
                    candidates.push(Candidate::new(Choice::Discard(d), 0.0));
                }
                true
            }),
            Phase::Pick => {
                candidates.push(Candidate::new(Choice::Pick(Pick::Stock), 0.0));
                for &c in obs.pickable {
                    candidates.push(Candidate::new(Choice::Pick(Pick::Pile(c)), 0.0));
                }
            }
        }
        let p = 1.0 / candidates.len().max(1) as f64;
        for c in &mut candidates {
            c.score = p;
        }
        Explanation {
            score: "probability".into(),
            candidates,
            notes: vec![note],
        }
    }
}

impl Agent for RandomAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        Some(RandomAgent::explanation(
            obs,
            "uniformly random over the legal actions (the draw is not shown)".into(),
        ))
    }

    fn call(
        &mut self,
        _obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        Ok(RandomAgent::choose_call(rng))
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        Ok(RandomAgent::choose_discard(obs, rng))
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        Ok(RandomAgent::choose_pick(obs, rng))
    }
}

/// The family: `kind: random`, no parameters.
pub struct RandomFamily;

impl RandomFamily {
    /// The recipe of a random agent (a search's default rollout).
    pub fn recipe() -> std::sync::Arc<dyn Recipe> {
        std::sync::Arc::new(RandomRecipe)
    }
}

impl Family for RandomFamily {
    fn name(&self) -> &'static str {
        "random"
    }

    fn doc(&self) -> &'static str {
        "uniform over legal actions (the paper's random baseline)"
    }

    fn params(&self) -> Vec<Param> {
        Vec::new()
    }

    fn resolve(
        &self,
        _entry: &Entry<'_>,
        _cx: &mut dyn Resolve,
    ) -> Option<std::sync::Arc<dyn Recipe>> {
        Some(RandomFamily::recipe())
    }
}

struct RandomRecipe;

impl Recipe for RandomRecipe {
    fn family(&self) -> &'static str {
        "random"
    }

    fn uniform_random(&self) -> bool {
        true
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        describe_params("random", &[], |_| serde_json::Value::Null)
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        Box::new(RandomAgent::new(id))
    }
}
