//! Playing training episodes: one round at a fresh table, the learner in one seat recording
//! what it saw and did, opponents drawn from the plan's list. Everything random comes from
//! streams keyed by (seed, episode): the learner's seat and its opponents from the seating
//! stream, the deal from the deal stream, each seat's choices from its agent stream.

use std::sync::Arc;

use dhumbal_agents::neural::{Action, Choice, Mlp, Policy, PolicyAgent, Scratch, Workspace};
use dhumbal_game::rng::{ChaChaStreams, Purpose, RandomSource, chacha_stream};
use dhumbal_game::rules::Scoring;
use dhumbal_game::{Agent, Observation, PlayError, RoundOutcome, Rules, Table};

use crate::{EpisodeRecord, Opponent, TrainPlan, TrainSeating};

/// The learner's side of one episode, flat: step `i`'s state is `states[i*S..(i+1)*S]`, its
/// actions' rows follow each other in `features` (`n_actions[i]` rows of the encoding's action
/// width), so recording a step appends and never allocates once the buffers have grown.
#[derive(Clone, Debug, Default)]
pub struct Trajectory {
    pub states: Vec<f32>,
    pub features: Vec<f32>,
    pub n_actions: Vec<u16>,
    pub actions: Vec<u16>,
    /// Log-probability of the action under the policy that played it (PPO).
    pub logp: Vec<f32>,
    /// The value network's estimate of each state (PPO).
    pub values: Vec<f32>,
    /// The episode's reward as learned from (scaled score, or the win), at its end: every
    /// other step's reward is 0.
    pub reward: f32,
}

impl Trajectory {
    pub fn steps(&self) -> usize {
        self.actions.len()
    }
}

/// How the learner acts while training.
#[derive(Clone, Copy)]
pub enum Acting<'a> {
    /// ε-greedy on the Q-network (DQN).
    Epsilon(f64),
    /// Sampling its policy, with the value network's estimates recorded (PPO).
    Sample(&'a Mlp),
}

/// The learner in its seat.
struct Learner<'a> {
    policy: &'a Policy,
    acting: Acting<'a>,
    ws: Workspace,
    scratch: Scratch,
    traj: Trajectory,
}

impl Learner<'_> {
    fn decide(&mut self, obs: &Observation<'_>, rng: &mut dyn RandomSource) -> Action {
        self.policy.evaluate(obs, &mut self.ws);
        let n = self.ws.encoded.actions.len();
        let choice = match self.acting {
            Acting::Epsilon(e) => Choice::EpsilonGreedy(e),
            Acting::Sample(_) => Choice::Sample,
        };
        let i = self.policy.choose(&mut self.ws, choice, rng);
        if n > 1 {
            // A forced move teaches nothing: only real choices are steps.
            let t = &mut self.traj;
            t.states.extend_from_slice(&self.ws.encoded.state);
            t.features.extend_from_slice(&self.ws.encoded.features);
            t.n_actions.push(n as u16);
            t.actions.push(i as u16);
            if let Acting::Sample(value) = self.acting {
                t.logp.push(self.ws.scores[i].max(1e-30).ln());
                let v = value.forward(&self.ws.encoded.state, &mut self.scratch)[0];
                t.values.push(v);
            }
        }
        self.ws.encoded.actions[i]
    }
}

impl Agent for Learner<'_> {
    fn name(&self) -> &str {
        "learner"
    }

    dhumbal_agents::answer_by!(decide);
}

/// A seat's reward in a round: coins won or lost, or minus the points taken.
pub fn reward(rules: &Rules, outcome: &RoundOutcome, seat: usize) -> f64 {
    match rules.variant().scoring {
        Scoring::Coins(_) => outcome.coin_delta[seat] as f64,
        Scoring::Points(_) => -(outcome.points_delta[seat] as f64),
    }
}

/// One finished episode.
pub struct Played {
    pub trajectory: Trajectory,
    pub record: EpisodeRecord,
}

/// Plays episode `episode` of `plan` with the learner acting by `acting`; `pool` holds the
/// self-play snapshots (the first entry is used while it is the only one).
pub fn play(
    plan: &TrainPlan,
    episode: u64,
    policy: &Policy,
    acting: Acting<'_>,
    pool: &[Arc<Policy>],
) -> Result<Played, PlayError> {
    let rules = &plan.rules;
    let players = rules.players();
    let mut seating = chacha_stream(plan.seed, Purpose::Seating, episode);
    let seat = match plan.seating {
        TrainSeating::Random => seating.below(players as u32) as usize,
        TrainSeating::Fixed(s) => s,
    };
    let mut learner = Learner {
        policy,
        acting,
        ws: Workspace::default(),
        scratch: Scratch::default(),
        traj: Trajectory::default(),
    };
    let mut others: Vec<Box<dyn Agent>> = Vec::with_capacity(players);
    let mut slots = vec![0u32; players];
    let mut names = Vec::with_capacity(players);
    for (s, slot) in slots.iter_mut().enumerate() {
        if s == seat {
            names.push("learner".to_string());
            continue;
        }
        let k = seating.below(plan.opponents.len() as u32) as usize;
        *slot = 1 + s as u32;
        match &plan.opponents[k] {
            Opponent::Agent(id, recipe) => {
                others.push(recipe.build(id));
                names.push(id.clone());
            }
            Opponent::SelfPlay => {
                let j = seating.below(pool.len() as u32) as usize;
                let choice = match acting {
                    Acting::Epsilon(_) => Choice::Greedy,
                    Acting::Sample(_) => Choice::Sample,
                };
                others.push(Box::new(PolicyAgent::new("self", pool[j].clone(), choice)));
                names.push(format!("self-{j}"));
            }
        }
    }
    let mut table = Table::new((**rules).clone());
    let mut streams = ChaChaStreams::new(plan.seed, episode, &slots);
    let outcome = {
        let mut others = others.into_iter();
        let mut seats: Vec<Box<dyn Agent + '_>> = Vec::with_capacity(players);
        let mut learner_slot = Some(&mut learner);
        for s in 0..players {
            if s == seat {
                seats.push(Box::new(learner_slot.take().expect("one learner")));
            } else {
                seats.push(others.next().expect("an agent per seat"));
            }
        }
        table.play_round(&mut seats, &mut streams, &mut ())?
    };
    let r = reward(rules, &outcome, seat);
    learner.traj.reward = plan
        .reward
        .of(rules, &outcome, seat, plan.hyper.reward_scale) as f32;
    let called = outcome.caller == Some(seat);
    let record = EpisodeRecord {
        episode,
        seat,
        opponents: names.join(" "),
        reward: r,
        win: outcome.winner == Some(seat),
        called,
        call_success: called && outcome.call_success,
        steps: learner.traj.steps() as u32,
        turns: outcome.turns,
        loss: f64::NAN,
        epsilon: match acting {
            Acting::Epsilon(e) => e,
            Acting::Sample(_) => f64::NAN,
        },
        entropy: f64::NAN,
    };
    Ok(Played {
        trajectory: learner.traj,
        record,
    })
}
