//! The uniform random baseline (the paper's `RandomBaselineAI`).
//!
//! Each decision is uniform over the legal actions: call or not; every legal discard (singles,
//! every same-rank subset, every contiguous run); the stock or any card on offer. With the
//! paper's pick rule (one card on offer) this is its `random.choice([True, False])`.

use crate::game::cards::Discard;
use crate::game::decision::{Agent, AgentError, Observation, Pick};
use crate::rng::RandomSource;

/// Legal discards kept on the stack in one pass.
const BUFFER: usize = 48;

#[derive(Clone, Debug)]
pub struct RandomAgent {
    name: String,
}

impl RandomAgent {
    pub fn new(name: impl Into<String>) -> RandomAgent {
        RandomAgent { name: name.into() }
    }
}

impl Agent for RandomAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn call(
        &mut self,
        _obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        Ok(rng.coin())
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        // One enumeration into a stack buffer (rollouts call this millions of times); a hand
        // with more legal discards than fit falls back to counting, then walking again. Both
        // draw the same number and pick the same discard.
        let mut buf = [Discard::new(); BUFFER];
        let mut count = 0u32;
        obs.for_each_legal_discard(|d| {
            if let Some(slot) = buf.get_mut(count as usize) {
                *slot = Discard::from_slice(d).expect("a discard fits a hand");
            }
            count += 1;
            true
        });
        let target = rng.below(count);
        if let Some(d) = buf.get(target as usize) {
            return Ok(*d);
        }
        let mut i = 0u32;
        let mut chosen = Discard::new();
        obs.for_each_legal_discard(|d| {
            if i == target {
                chosen = Discard::from_slice(d).expect("a discard fits a hand");
                return false;
            }
            i += 1;
            true
        });
        Ok(chosen)
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        let options = obs.pickable.len() as u32 + 1;
        let i = rng.below(options) as usize;
        Ok(obs.pickable.get(i).map_or(Pick::Stock, |&c| Pick::Pile(c)))
    }
}
