//! Playing training episodes: one round at a fresh table, the learner in one seat recording
//! what it saw and did, opponents drawn from the plan's list. Everything random comes from
//! streams keyed by (seed, episode): the learner's seat and its opponents from the seating
//! stream, the deal from the deal stream, each seat's choices from its agent stream.

use std::sync::Arc;

use dhumbal_agents::neural::{
    Action, Choice, Encoded, Encoding, Mlp, Policy, PolicyAgent, Scratch, Workspace,
};
use dhumbal_game::rng::{ChaChaStreams, Purpose, RandomSource, chacha_stream};
use dhumbal_game::rules::Scoring;
use dhumbal_game::{
    Agent, AgentError, Discard, Explanation, Observation, Pick, PlayError, RoundOutcome, Rules,
    Table,
};

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
    /// The teacher's probability of each action row, rows as in `features` (`imitate`).
    pub targets: Vec<f32>,
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
    /// The plan's teacher plays the seat; its choices are recorded (`imitate`).
    Teacher,
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
            // The teacher plays the seat then (`Pupil`): never asked here.
            Acting::Teacher => Choice::Greedy,
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

/// The teacher in the learner's seat: it plays every decision, and each real choice is
/// recorded with the teacher's probability of every legal action ([`teacher_targets`]).
struct Pupil {
    teacher: Box<dyn Agent>,
    encoding: Encoding,
    encoded: Encoded,
    traj: Trajectory,
}

impl Pupil {
    /// Records the decision `obs` the teacher just answered with `played`.
    fn record(&mut self, obs: &Observation<'_>, played: Action) {
        self.encoding.encode(obs, &mut self.encoded);
        let actions = &self.encoded.actions;
        if actions.len() < 2 {
            return;
        }
        let Some(index) = actions.iter().position(|a| *a == played) else {
            // A move the encoding cannot express: nothing to learn from, so not a step.
            return;
        };
        let explanation = self.teacher.explain(obs);
        let t = &mut self.traj;
        t.states.extend_from_slice(&self.encoded.state);
        t.features.extend_from_slice(&self.encoded.features);
        t.n_actions.push(actions.len() as u16);
        t.actions.push(index as u16);
        teacher_targets(actions, index, explanation.as_ref(), &mut t.targets);
    }
}

/// Appends the teacher's probability of each of `actions` to `out`: a search's visit counts,
/// normalised, where its explanation scores the candidates by visits (not calling gets the
/// visits of every move that is not a call: the search weighs the call against the discards
/// themselves); else, and where no visit falls on these actions, all of it on `played`.
pub fn teacher_targets(
    actions: &[Action],
    played: usize,
    explanation: Option<&Explanation>,
    out: &mut Vec<f32>,
) {
    let start = out.len();
    out.extend(std::iter::repeat_n(0f32, actions.len()));
    let visits = explanation.filter(|e| e.score == Explanation::VISITS);
    let mut total = 0f64;
    if let Some(e) = visits {
        for (j, a) in actions.iter().enumerate() {
            let counts = |c: &Action| match a {
                Action::Call(false) => *c != Action::Call(true),
                _ => c == a,
            };
            let v: f64 = e
                .candidates
                .iter()
                .filter(|c| counts(&c.choice))
                .map(|c| c.score)
                .sum();
            out[start + j] = v as f32;
            total += v;
        }
    }
    if total > 0.0 {
        for x in &mut out[start..] {
            *x = (f64::from(*x) / total) as f32;
        }
    } else {
        out[start..].fill(0.0);
        out[start + played] = 1.0;
    }
}

impl Agent for Pupil {
    fn name(&self) -> &str {
        "learner"
    }

    dhumbal_game::pass_on_to!(teacher);

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        let call = self.teacher.call(obs, rng)?;
        self.record(obs, Action::Call(call));
        Ok(call)
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let d = self.teacher.discard(obs, rng)?;
        self.record(obs, Action::Discard(d));
        Ok(d)
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        let p = self.teacher.pick(obs, rng)?;
        self.record(obs, Action::Pick(p));
        Ok(p)
    }
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
    // `imitate`: the teacher plays the seat (its stream is the learner's), and is recorded.
    let mut pupil = match (acting, &plan.teacher) {
        (Acting::Teacher, Some((id, recipe))) => Some(Pupil {
            teacher: recipe.build(id),
            encoding: policy.encoding,
            encoded: Encoded::default(),
            traj: Trajectory::default(),
        }),
        _ => None,
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
                    Acting::Epsilon(_) | Acting::Teacher => Choice::Greedy,
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
        let mut learner_slot: Option<Box<dyn Agent + '_>> = Some(match pupil.as_mut() {
            Some(p) => Box::new(p),
            None => Box::new(&mut learner),
        });
        for s in 0..players {
            if s == seat {
                seats.push(learner_slot.take().expect("one learner"));
            } else {
                seats.push(others.next().expect("an agent per seat"));
            }
        }
        table.play_round(&mut seats, &mut streams, &mut ())?
    };
    let r = reward(rules, &outcome, seat);
    let mut traj = match pupil {
        Some(p) => p.traj,
        None => learner.traj,
    };
    traj.reward = plan
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
        steps: traj.steps() as u32,
        turns: outcome.turns,
        loss: f64::NAN,
        epsilon: match acting {
            Acting::Epsilon(e) => e,
            Acting::Sample(_) | Acting::Teacher => f64::NAN,
        },
        entropy: f64::NAN,
    };
    Ok(Played {
        trajectory: traj,
        record,
    })
}
