//! Search agents: information-set MCTS (`ismcts`) and the paper's determinized MCTS with its
//! "legality probability" UCB (`mcts`), both correct and both built on the engine itself.
//!
//! One decision (call, discard or pick) is one search with a fresh root. Each simulation
//! samples a world consistent with the observation ([`determinize`]), then plays the rest of
//! the round in it with [`Table::play_from`]: the engine's own rules, so a simulation can
//! never play an illegal move or settle a round differently from a real one. Inside the tree
//! every seat's decisions are chosen by UCB among the actions legal in this world (each
//! player maximising its own reward); the first untried action is expanded and the rest of
//! the round is played by the rollout policy (uniformly random by default, or any built-in or
//! scripted agent), optionally cut after `rollout_turns` turns and scored as if the lowest hand
//! won. Each node on the path is updated once with the reward of the player who chose it.
//!
//! All randomness (worlds, expansion, rollouts, reshuffles inside a world) comes from the
//! agent's own stream, so reruns are bit-exact; the default budget is iterations, not time.
//! Differences from the paper's code, and why: `docs/agents.md`.

pub mod belief;
pub mod determinize;
pub mod tree;

use std::time::{Duration, Instant};

use crate::{Heuristic, RandomAgent};
pub use belief::{Belief, BeliefParams, BeliefStats};
pub use determinize::Determinizer;
use dhumbal_game::cards::{Card, Discard};
use dhumbal_game::rng::{ChaChaSource, Purpose, RandomSource, Streams, chacha_stream};
use dhumbal_game::rules::{MAX_PLAYERS, Scoring};
use dhumbal_game::{
    Agent, AgentError, Candidate as Weighed, Choice, Event, Explanation, Glance, Observation,
    Phase, Pick, Resume, RoundOutcome, RoundState, Seats, Table,
};
use tree::{NodeId, ROOT, Tree, key};

/// How a child is chosen inside the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// ISMCTS (Cowling, Powley and Whitehouse 2012): UCB1 with the parent count replaced by
    /// the number of visits in which the action was available.
    Availability,
    /// The paper's eq. 4: UCB1 over the parent's visits, the exploration term multiplied by
    /// the "legality probability" (availability / parent visits).
    Legality,
}

/// What a simulated round is worth to a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reward {
    /// 1 for the round's winner, 0 for everyone else.
    Win,
    /// The coin change (or points taken) scaled into [0, 1]: 0.5 + delta / (2 scale) for
    /// coins, 1 - points / scale for points, clamped.
    Score,
}

impl Reward {
    pub const NAMES: [&'static str; 2] = ["win", "score"];

    pub fn name(self) -> &'static str {
        match self {
            Reward::Win => "win",
            Reward::Score => "score",
        }
    }

    pub fn parse(s: &str) -> Option<Reward> {
        match s {
            "win" => Some(Reward::Win),
            "score" => Some(Reward::Score),
            _ => None,
        }
    }
}

/// Every setting of a search agent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchParams {
    pub selection: Selection,
    /// Outer iterations per decision (the budget; deterministic).
    pub iterations: u32,
    /// Worlds sampled (one simulation each) per iteration: the paper's ISMCTS used 3.
    pub determinizations: u32,
    /// Stop early after this many milliseconds (0: no limit). Makes results depend on speed.
    pub time_limit_ms: f64,
    /// The UCB exploration constant (rewards are in [0, 1]).
    pub exploration: f64,
    pub reward: Reward,
    /// Coins or points that count as a full reward swing with `reward: score`.
    pub reward_scale: f64,
    /// Cut a rollout after this many player-turns (0: play to the end of the round).
    pub rollout_turns: u32,
    /// Search the true world instead of sampled ones (full information; an upper bound).
    pub oracle: bool,
    /// Stop a decision's search once its choice is settled: when the most visited root action
    /// leads every other by more visits than the simulations left, the rest of the budget
    /// cannot change what is played (see [`Lead`]). Decisions are those of the full budget;
    /// only an explanation's counts are those of the iterations played.
    pub stop_when_decided: bool,
    /// Only the searcher's own decisions are in the tree: every other seat plays the rollout
    /// policy throughout each simulation, in the tree's part too. A best responder's look-ahead
    /// against an opponent whose policy it knows (the rollout policy is that opponent), rather
    /// than each player choosing by UCB for itself.
    pub own_tree: bool,
    /// The tree is the root alone: after the decision at hand every seat, the searcher's own
    /// later decisions included, plays the rollout policy (Local Best Response's one-step
    /// look-ahead with a fixed continuation: with the target as rollout policy, each action is
    /// valued as if the target's play followed it, rather than by UCB play that a small budget
    /// leaves noisy).
    pub one_step: bool,
}

impl SearchParams {
    pub const fn ismcts() -> SearchParams {
        SearchParams {
            selection: Selection::Availability,
            iterations: 1000,
            determinizations: 1,
            time_limit_ms: 0.0,
            exploration: 0.7,
            reward: Reward::Win,
            reward_scale: 50.0,
            // A uniformly random rollout under the paper's rules lasts about 50 more turns and
            // ends near the turn limit with nearly random hands; cut at 20 (five turns each at
            // four players) and scored by the lowest hand it says more about the position, at
            // a third of the cost.
            rollout_turns: 20,
            oracle: false,
            stop_when_decided: true,
            own_tree: false,
            one_step: false,
        }
    }

    /// The paper's MCTS settings, with the paper's exploration constant rescaled to rewards
    /// in [0, 1] (it used sqrt 2 on raw coins, where exploration never mattered).
    pub const fn mcts() -> SearchParams {
        SearchParams {
            selection: Selection::Legality,
            ..SearchParams::ismcts()
        }
    }
}

/// Who plays the seats of a simulation once it leaves the tree.
// One per search agent: the heuristic inline (no box) saves a pointer chase per rollout turn.
#[allow(clippy::large_enum_variant)]
pub enum Rollout {
    /// Uniformly random legal actions, called without dynamic dispatch (the default, and by
    /// far the most frequent call of a search).
    Random,
    /// One of the paper's heuristics, called without dynamic dispatch (the championship's
    /// searches roll out with `aggressive`).
    Heuristic(Heuristic),
    /// Any other agent: a script, say.
    Agent(Box<dyn Agent>),
}

impl Rollout {
    /// Whether its choices depend on nothing it kept from earlier simulations: then the
    /// simulations a search leaves out cannot change a later decision's. Opportunistic keeps
    /// its risk and call probability from its last call decision (as the paper's code does),
    /// and any other agent may keep state (a script, say).
    fn stateless(&self) -> bool {
        match self {
            Rollout::Random => true,
            Rollout::Heuristic(h) => !h.carries_state(),
            Rollout::Agent(_) => false,
        }
    }

    fn name(&self) -> &str {
        match self {
            Rollout::Random => "random",
            Rollout::Heuristic(h) => h.name(),
            Rollout::Agent(a) => a.name(),
        }
    }

    // Its decisions, each drawn from `rng` (a concrete stream: a random rollout draws without
    // dynamic dispatch): a search's rollouts, and the moves a belief weighs.

    #[inline]
    fn call<R: RandomSource>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
    ) -> Result<bool, AgentError> {
        match self {
            Rollout::Random => Ok(RandomAgent::choose_call(rng)),
            Rollout::Heuristic(h) => h.call(obs, rng),
            Rollout::Agent(a) => a.call(obs, rng),
        }
    }

    #[inline]
    fn discard<R: RandomSource>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
    ) -> Result<Discard, AgentError> {
        match self {
            Rollout::Random => Ok(RandomAgent::choose_discard(obs, rng)),
            Rollout::Heuristic(h) => h.discard(obs, rng),
            Rollout::Agent(a) => a.discard(obs, rng),
        }
    }

    #[inline]
    fn pick<R: RandomSource>(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut R,
    ) -> Result<Pick, AgentError> {
        match self {
            Rollout::Random => Ok(RandomAgent::choose_pick(obs, rng)),
            Rollout::Heuristic(h) => h.pick(obs, rng),
            Rollout::Agent(a) => a.pick(obs, rng),
        }
    }
}

/// A search agent: its settings, its rollout policy, and memory reused across decisions.
pub struct SearchAgent {
    name: String,
    params: SearchParams,
    rollout: Rollout,
    /// How explanations name the rollout policy: the agent the scenario gave (`aggressive`,
    /// a script's id), not the name its rollout agent was built under (`<id>/rollout`).
    rollout_name: String,
    tree: Tree,
    worlds: Determinizer,
    /// Worlds weighted by an opponent model's likelihood of the moves seen (none: uniform).
    belief: Option<Belief>,
    /// The world of the current simulation, drawn and played in place.
    world: RoundState,
    path: Vec<NodeId>,
    options: Vec<Candidate>,
    root: RootOptions,
    /// Simulations run, and player-turns simulated, over all decisions (for benchmarks).
    simulations: u64,
    turns: u64,
    /// The last search's iterations and simulations (worlds sampled), for [`Agent::explain`];
    /// its tree stays in `tree` until the next search.
    last_iterations: u32,
    last_simulations: u64,
    /// Whether the last search stopped before its budget because its choice was settled (a
    /// time limit also stops it early; the root's options say whether it had only one).
    last_settled: bool,
}

/// The visits of the root's most visited child and the most visits of any other, kept as
/// simulations end (each adds one visit to one root child), for
/// [`SearchParams::stop_when_decided`].
#[derive(Clone, Copy, Debug)]
struct Lead {
    leader: NodeId,
    first: u32,
    second: u32,
}

impl Lead {
    const NONE: Lead = Lead {
        leader: NodeId::MAX,
        first: 0,
        second: 0,
    };

    /// Root child `child` now has `visits` visits, one more than before.
    #[inline]
    fn visited(&mut self, child: NodeId, visits: u32) {
        if child == self.leader {
            self.first = visits;
        } else if visits > self.first {
            // The old leader had the most visits of all: now the most of any other.
            self.second = self.first;
            self.first = visits;
            self.leader = child;
        } else {
            self.second = self.second.max(visits);
        }
    }

    /// Whether the leader stays the most visited, strictly, whatever `left` more simulations
    /// do: even if every one of them went to the runner-up (or to an action not tried yet,
    /// which has none), it would end with fewer visits. The choice (most visits, then the
    /// better mean, then the lower key) is then the leader's already.
    #[inline]
    fn settled(&self, left: u64) -> bool {
        u64::from(self.first) > u64::from(self.second) + left
    }
}

/// The root's actions and their children. The root is the observer's own decision, whose
/// legal actions are the same in every world: they are listed, and their children looked up,
/// once per search instead of once per simulation.
#[derive(Debug, Default)]
struct RootOptions {
    /// Whether `options` holds the root's actions (after the search's first simulation).
    ready: bool,
    options: Vec<Candidate>,
}

/// One legal action at a tree node in the current world.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    key: u64,
    child: Option<NodeId>,
    discard: Discard,
}

impl SearchAgent {
    pub fn new(name: impl Into<String>, params: SearchParams, rollout: Rollout) -> Self {
        SearchAgent {
            name: name.into(),
            params,
            rollout_name: rollout.name().to_string(),
            rollout,
            tree: Tree::default(),
            worlds: Determinizer::new(),
            belief: None,
            world: RoundState::default(),
            path: Vec::with_capacity(64),
            options: Vec::with_capacity(64),
            root: RootOptions::default(),
            simulations: 0,
            turns: 0,
            last_iterations: 0,
            last_simulations: 0,
            last_settled: false,
        }
    }

    /// The agent with its rollout named `name` in its explanations.
    pub fn with_rollout_name(mut self, name: impl Into<String>) -> Self {
        self.rollout_name = name.into();
        self
    }

    /// The agent sampling its worlds through `belief` instead of uniformly.
    pub fn with_belief(mut self, belief: Belief) -> Self {
        self.belief = Some(belief);
        self
    }

    /// Its belief, if it infers the hidden hands.
    pub fn belief(&self) -> Option<&Belief> {
        self.belief.as_ref()
    }

    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Simulations run so far.
    pub fn simulations(&self) -> u64 {
        self.simulations
    }

    /// Player-turns played in simulations so far (from the decision's turn to the end).
    pub fn simulated_turns(&self) -> u64 {
        self.turns
    }

    /// Nodes in the last search's tree.
    pub fn tree_size(&self) -> usize {
        self.tree.len()
    }

    /// Searches from `obs` (the decision `at`) and returns the root child to play.
    fn search(
        &mut self,
        obs: &Observation<'_>,
        at: Resume<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<tree::Node, AgentError> {
        let p = self.params;
        // The decision's own ChaCha stream, keyed from the agent's stream: a concrete generator
        // (no dynamic dispatch, Lemire's `below`) for the many draws of the simulations.
        let key = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
        let rng = &mut chacha_stream(key, Purpose::Search, 0);
        // The simulated deal's own draws (reshuffles) come from a sibling stream.
        let mut world_stream = SimStreams(chacha_stream(key, Purpose::Search, 1));
        let table = Table::from_parts(obs.rules.clone(), obs.standings, obs.active, obs.round);
        self.tree.reset();
        self.root.ready = false;
        let deadline = (p.time_limit_ms > 0.0)
            .then(|| Duration::try_from_secs_f64(p.time_limit_ms / 1000.0).ok())
            .flatten()
            .and_then(|limit| Instant::now().checked_add(limit));
        let simulations_before = self.simulations;
        self.last_iterations = 0;
        // What every world shares, worked out once (the worlds then cannot fail).
        self.worlds
            .prepare(obs, p.oracle)
            .map_err(|e| AgentError(format!("{}: {e}", self.name)))?;
        if let Some(belief) = &mut self.belief {
            belief.weigh(obs, &mut self.worlds, rng, &table);
        }
        let settles = p.stop_when_decided && self.rollout.stateless();
        let budget = u64::from(p.iterations.max(1)) * u64::from(p.determinizations.max(1));
        let mut lead = Lead::NONE;
        self.last_settled = false;
        'outer: for _ in 0..p.iterations.max(1) {
            self.last_iterations += 1;
            for _ in 0..p.determinizations.max(1) {
                match &self.belief {
                    Some(belief) => belief.draw_into(&mut *rng, &mut self.world),
                    None => self.worlds.draw_into(obs, &mut *rng, &mut self.world),
                }
                self.path.clear();
                let mut sim = Sim {
                    tree: &mut self.tree,
                    node: ROOT,
                    path: &mut self.path,
                    options: &mut self.options,
                    root: &mut self.root,
                    in_tree: true,
                    chosen_discard: None,
                    rollout: &mut self.rollout,
                    rollout_from: 0,
                    params: &p,
                    me: obs.seat,
                    rng: &mut *rng,
                };
                let played = table.play_from(
                    &mut self.world,
                    obs.starter,
                    obs.seat,
                    at,
                    &mut sim,
                    &mut world_stream,
                );
                // Read in place (an outcome is some 700 bytes: each move of it was a copy).
                let outcome = match &played {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        return Err(AgentError(format!("{}: in a simulation: {e}", self.name)));
                    }
                };
                self.turns += u64::from(outcome.turns.saturating_sub(obs.turn)) + 1;
                let rewards = rewards(outcome, obs, &p);
                self.backpropagate(&rewards);
                self.simulations += 1;
                if let Some(&child) = self.path.first() {
                    lead.visited(child, self.tree.node(child).visits);
                }
            }
            let played = self.simulations - simulations_before;
            // One legal action (the root's actions are the same in every world): no choice.
            let only = self.root.ready && self.root.options.len() == 1;
            if settles && (only || lead.settled(budget - played)) {
                self.last_settled = played < budget;
                break 'outer;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break 'outer;
            }
        }
        self.last_simulations = self.simulations - simulations_before;
        // The most visited root action (the robust child); ties go to the better mean.
        let best = self
            .tree
            .children(ROOT)
            .map(|c| *self.tree.node(c))
            .max_by(|a, b| {
                a.visits
                    .cmp(&b.visits)
                    .then(a.mean().total_cmp(&b.mean()))
                    .then(b.key.cmp(&a.key))
            });
        best.ok_or_else(|| AgentError(format!("{}: the search found no action", self.name)))
    }

    /// The last search's root actions (its visits, mean reward and availability), ranked as
    /// the decision ranks them, and the worlds it sampled. Reads the tree the search left.
    fn explanation(&self, obs: &Observation<'_>) -> Option<Explanation> {
        if self.tree.is_empty() {
            return None;
        }
        let mut discards: Vec<(u64, Discard)> = Vec::new();
        if obs.phase != Phase::Pick {
            obs.for_each_legal_discard(|cards| {
                let k = key::discard(cards);
                if !discards.iter().any(|(d, _)| *d == k)
                    && let Some(d) = Discard::from_slice(cards)
                {
                    discards.push((k, d));
                }
                true
            });
        }
        let choice_of = |k: u64| -> Option<Choice> {
            if k == key::CALL {
                return Some(Choice::Call(true));
            }
            if k == key::STOCK {
                return Some(Choice::Pick(Pick::Stock));
            }
            if let Some(&c) = obs.pickable.iter().find(|&&c| key::pile(c) == k) {
                return Some(Choice::Pick(Pick::Pile(c)));
            }
            discards
                .iter()
                .find(|(d, _)| *d == k)
                .map(|(_, d)| Choice::Discard(*d))
        };
        let mut nodes: Vec<tree::Node> = self
            .tree
            .children(ROOT)
            .map(|c| *self.tree.node(c))
            .collect();
        // As `search` chooses: most visits, then the better mean, then the lower key.
        nodes.sort_by(|a, b| {
            b.visits
                .cmp(&a.visits)
                .then(b.mean().total_cmp(&a.mean()))
                .then(a.key.cmp(&b.key))
        });
        let p = &self.params;
        let mut notes = vec![format!(
            "{} worlds sampled ({} iterations x {} determinizations{}), one simulation each; {} nodes",
            self.last_simulations,
            self.last_iterations,
            p.determinizations.max(1),
            if p.oracle {
                ", the true world: oracle"
            } else {
                ""
            },
            self.tree.len()
        )];
        if let Some(belief) = &self.belief {
            notes.push(belief.explanation());
        }
        if self.last_settled {
            notes.push(format!(
                "stopped after {} of {} iterations: {} (the full budget plays the same)",
                self.last_iterations,
                p.iterations,
                if self.root.options.len() == 1 {
                    "the only legal action"
                } else {
                    "its choice was settled"
                }
            ));
        }
        notes.push(format!(
            "{} selection, exploration {}, reward {}, rollout {}{}; plays the most visited root action",
            match p.selection {
                Selection::Availability => "availability-count UCB (ISMCTS)",
                Selection::Legality => "legality-probability UCB (the paper's eq. 4)",
            },
            p.exploration,
            p.reward.name(),
            self.rollout_name,
            if p.rollout_turns > 0 {
                format!(" cut after {} turns", p.rollout_turns)
            } else {
                String::new()
            }
        ));
        let weighed = |choice: Choice, n: &tree::Node| {
            Weighed::new(choice, f64::from(n.visits))
                .with("mean_reward", n.mean())
                .with("available", f64::from(n.avail))
        };
        let mut candidates = Vec::with_capacity(nodes.len());
        let mut unknown = 0;
        if obs.phase == Phase::Call {
            // The root's actions are the call and every discard (the discard of a turn that
            // plays on is searched with its call): the decision's two choices are the call
            // and the best discard, ranked as the search ranks them.
            let tried: Vec<&tree::Node> = nodes.iter().filter(|n| n.key != key::CALL).collect();
            for n in &nodes {
                if n.key == key::CALL {
                    candidates.push(weighed(Choice::Call(true), n));
                } else if tried.first().is_some_and(|&b| std::ptr::eq(n, b)) {
                    let all: u32 = tried.iter().map(|d| d.visits).sum();
                    candidates.push(
                        weighed(Choice::Call(false), n)
                            .with("discard_visits", f64::from(all))
                            .with("discards_tried", tried.len() as f64),
                    );
                }
            }
            let shown: Vec<String> = tried
                .iter()
                .take(8)
                .map(|d| match choice_of(d.key) {
                    Some(c) => format!("{c} {} visits (mean {:.3})", d.visits, d.mean()),
                    None => format!("an unknown action {} visits", d.visits),
                })
                .collect();
            let call = nodes.iter().find(|n| n.key == key::CALL);
            notes.push(match (call, tried.first()) {
                (Some(c), Some(b)) if candidates[0].choice == Choice::Call(false) => format!(
                    "the call is searched together with every discard: plays on, as {} ({} visits) beats the call ({} visits)",
                    choice_of(b.key).map_or("a discard".into(), |c| c.to_string()),
                    b.visits,
                    c.visits
                ),
                (Some(_), _) => {
                    "the call is searched together with every discard: calls, the most visited"
                        .to_string()
                }
                _ => "the call was never tried: plays on".to_string(),
            });
            if !shown.is_empty() {
                notes.push(format!(
                    "playing on, the discards searched: {}{}",
                    shown.join(", "),
                    if tried.len() > shown.len() {
                        ", ..."
                    } else {
                        ""
                    }
                ));
            }
        } else {
            for n in &nodes {
                match choice_of(n.key) {
                    Some(choice) => candidates.push(weighed(choice, n)),
                    None => unknown += 1,
                }
            }
        }
        if unknown > 0 {
            notes.push(format!(
                "{unknown} root actions are not legal in this observation (not shown)"
            ));
        }
        Some(Explanation {
            score: Explanation::VISITS.into(),
            candidates,
            notes,
        })
    }

    fn backpropagate(&mut self, rewards: &[f64; MAX_PLAYERS]) {
        self.tree.node_mut(ROOT).record(0.0);
        for &id in self.path.iter() {
            let node = self.tree.node_mut(id);
            node.record(rewards[node.player as usize]);
        }
    }
}

/// Natural logarithms of small counts, computed once: UCB takes one per available child at
/// every tree step.
fn ln(table: &[f64], n: u32) -> f64 {
    match table.get(n as usize) {
        Some(&x) => x,
        None => f64::from(n).ln(),
    }
}

/// The table [`ln`] reads (looked up once per tree step, not once per child).
fn ln_table() -> &'static [f64] {
    static TABLE: std::sync::LazyLock<Vec<f64>> =
        std::sync::LazyLock::new(|| (0..4096u32).map(|i| f64::from(i).ln()).collect());
    &TABLE
}

/// Rewards of every seat for a simulated round.
fn rewards(o: &RoundOutcome, obs: &Observation<'_>, p: &SearchParams) -> [f64; MAX_PLAYERS] {
    let mut r = [0.0; MAX_PLAYERS];
    let points = matches!(obs.rules.variant().scoring, Scoring::Points(_));
    for (seat, reward) in r.iter_mut().enumerate().take(obs.players()) {
        *reward = match p.reward {
            Reward::Win => f64::from(u8::from(o.winner == Some(seat))),
            Reward::Score if points => {
                (1.0 - o.points_delta[seat] as f64 / p.reward_scale).clamp(0.0, 1.0)
            }
            Reward::Score => {
                (0.5 + o.coin_delta[seat] as f64 / (2.0 * p.reward_scale)).clamp(0.0, 1.0)
            }
        };
    }
    r
}

/// The simulated deal's stream (reshuffles). The seats of a simulation draw from the
/// decision's stream held by [`Sim`], so the stream handed to them here goes unused.
struct SimStreams(ChaChaSource);

impl Streams for SimStreams {
    fn deal(&mut self) -> &mut dyn RandomSource {
        &mut self.0
    }
    fn agent(&mut self, _seat: usize) -> &mut dyn RandomSource {
        &mut self.0
    }
}

/// Plays every seat of one simulation: UCB inside the tree, then the rollout policy.
struct Sim<'a> {
    tree: &'a mut Tree,
    node: NodeId,
    path: &'a mut Vec<NodeId>,
    options: &'a mut Vec<Candidate>,
    /// The root's actions, kept from the search's first simulation on.
    root: &'a mut RootOptions,
    in_tree: bool,
    /// The discard chosen in the tree together with the call decision, for the engine's next
    /// question.
    chosen_discard: Option<Discard>,
    rollout: &'a mut Rollout,
    /// The decision's stream: tree choices and rollouts (a concrete type, no dispatch).
    rng: &'a mut ChaChaSource,
    /// The turn at which the rollout began.
    rollout_from: u32,
    params: &'a SearchParams,
    /// The searcher's seat (with [`SearchParams::own_tree`], the only one the tree decides).
    me: usize,
}

impl Sim<'_> {
    /// Whether the tree decides for `seat` now: in the tree, and its own seat where only the
    /// searcher's decisions are searched.
    #[inline]
    fn tree_decides(&self, seat: usize) -> bool {
        self.in_tree && (seat == self.me || !self.params.own_tree)
    }

    /// Whether this step is at the root with its actions already listed: then the caller
    /// leaves `self.options` alone and [`Sim::step`] reads the root's own list.
    #[inline]
    fn root_ready(&self) -> bool {
        self.node == ROOT && self.root.ready
    }

    /// One tree step among `self.options` (the actions legal in this world), or the root's
    /// kept list, for `seat`: counts availability, expands an untried action if there is one
    /// (and hands over to the rollout), else descends to the best child by UCB. Returns the
    /// option chosen.
    fn step(&mut self, seat: usize, turn: u32) -> Candidate {
        let parent = self.node;
        let at_root = parent == ROOT;
        let kept = at_root && self.root.ready;
        let tree = &mut *self.tree;
        // Options without a child yet, counted in the same pass that counts availability.
        let mut untried = 0u32;
        let options: &mut Vec<Candidate> = if kept {
            // The children are those of the last simulation, kept up to date below.
            for o in self.root.options.iter() {
                match o.child {
                    Some(c) => tree.node_mut(c).avail += 1,
                    None => untried += 1,
                }
            }
            &mut self.root.options
        } else {
            // The child of each action legal here, if it was tried before (one hash probe
            // each; none at a node never expanded, the last of most simulations' paths).
            if tree.has_children(parent) {
                for o in self.options.iter_mut() {
                    o.child = tree.child(parent, o.key);
                    match o.child {
                        Some(c) => tree.node_mut(c).avail += 1,
                        None => untried += 1,
                    }
                }
            } else {
                for o in self.options.iter_mut() {
                    o.child = None;
                }
                untried = self.options.len() as u32;
            }
            &mut *self.options
        };
        let (chosen, id) = if untried > 0 {
            let pick = self.rng.below(untried);
            let (i, &chosen) = options
                .iter()
                .enumerate()
                .filter(|(_, o)| o.child.is_none())
                .nth(pick as usize)
                .expect("counted");
            let id = tree.add(parent, chosen.key, seat);
            tree.node_mut(id).avail = 1;
            options[i].child = Some(id);
            self.in_tree = false;
            self.rollout_from = turn;
            (chosen, id)
        } else {
            let i = best_child(tree, parent, options, self.params);
            let chosen = options[i];
            (chosen, chosen.child.expect("all tried"))
        };
        if at_root && !kept {
            self.root.options.clone_from(self.options);
            self.root.ready = true;
        }
        if self.params.one_step {
            self.in_tree = false;
            self.rollout_from = turn;
        }
        self.path.push(id);
        self.node = id;
        chosen
    }

    /// Every legal discard as an option.
    fn discard_options(&mut self, obs: &Observation<'_>) {
        self.options.clear();
        let options = &mut *self.options;
        obs.for_each_legal_discard(|cards| {
            options.push(Candidate {
                key: key::discard(cards),
                child: None,
                discard: Discard::from_slice(cards).expect("a discard fits a hand"),
            });
            true
        });
    }

    /// A call decision in the tree (see [`Seats::call`] for `Sim`): `true` to call, else
    /// the discard chosen with it is kept for the engine's next question. Out of line, so
    /// that the rollouts' calls stay short.
    #[inline(never)]
    fn tree_call(&mut self, seat: usize, obs: &Observation<'_>) -> bool {
        if !self.root_ready() {
            self.discard_options(obs);
            self.options.push(Candidate {
                key: key::CALL,
                child: None,
                discard: Discard::new(),
            });
        }
        let chosen = self.step(seat, obs.turn);
        if chosen.key == key::CALL {
            return true;
        }
        self.chosen_discard = Some(chosen.discard);
        false
    }

    /// A discard in the tree (when no call was offered).
    #[inline(never)]
    fn tree_discard(&mut self, seat: usize, obs: &Observation<'_>) -> Discard {
        if !self.root_ready() {
            self.discard_options(obs);
        }
        self.step(seat, obs.turn).discard
    }

    /// A pick in the tree: the stock or a card on offer.
    #[inline(never)]
    fn tree_pick(&mut self, seat: usize, obs: &Observation<'_>) -> Pick {
        if !self.root_ready() {
            self.options.clear();
            for k in std::iter::once(key::STOCK).chain(obs.pickable.iter().map(|&c| key::pile(c))) {
                self.options.push(Candidate {
                    key: k,
                    child: None,
                    discard: Discard::new(),
                });
            }
        }
        let chosen = self.step(seat, obs.turn).key;
        match obs.pickable.iter().find(|&&c| key::pile(c) == chosen) {
            Some(&card) => Pick::Pile(card),
            None => Pick::Stock,
        }
    }
}

/// The index of the option whose child (every option has one) has the best UCB score; the
/// first of equals.
#[inline]
fn best_child(tree: &Tree, parent: NodeId, options: &[Candidate], params: &SearchParams) -> usize {
    let c = params.exploration;
    let mut best = (f64::NEG_INFINITY, 0usize);
    let child = |o: &Candidate| tree.node(o.child.expect("all tried"));
    match params.selection {
        Selection::Availability => {
            let table = ln_table();
            for (i, o) in options.iter().enumerate() {
                let node = child(o);
                let visits = f64::from(node.visits.max(1));
                let score = node.mean() + c * (ln(table, node.avail.max(1)) / visits).sqrt();
                if score > best.0 {
                    best = (score, i);
                }
            }
        }
        // The parent's visits including this one, as the availability counts are.
        Selection::Legality => {
            let parent_visits = f64::from(tree.node(parent).visits + 1);
            let ln_parent = parent_visits.ln();
            for (i, o) in options.iter().enumerate() {
                let node = child(o);
                let visits = f64::from(node.visits.max(1));
                let avail = f64::from(node.avail.max(1));
                let score = node.mean() + c * (ln_parent / visits).sqrt() * (avail / parent_visits);
                if score > best.0 {
                    best = (score, i);
                }
            }
        }
    }
    best.1
}

impl Seats for Sim<'_> {
    #[inline]
    fn name(&self, _seat: usize) -> &str {
        self.rollout.name()
    }

    /// In the tree, a turn's call and discard are one decision: its options are the call and
    /// every legal discard. Whether a call is offered at all depends on the hand's value, which
    /// is hidden for an opponent; a separate call/no-call node would file the opponent's
    /// discards under different parents depending on its sampled hand, and the tree would be
    /// keyed on hidden information.
    #[inline]
    fn call(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        if !self.tree_decides(seat) {
            return self.rollout.call(obs, &mut *self.rng);
        }
        Ok(self.tree_call(seat, obs))
    }

    #[inline]
    fn discard(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let mut discard = Discard::new();
        self.discard_into(seat, obs, rng, &mut discard)?;
        Ok(discard)
    }

    /// What the engine asks: the discard written in place (see [`Seats::discard_into`]).
    #[inline]
    fn discard_into(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
        into: &mut Discard,
    ) -> Result<(), AgentError> {
        // Chosen with the call, in the same tree step (see `call`).
        if let Some(discard) = self.chosen_discard.take() {
            into.copy_cards_from(&discard);
        } else if self.tree_decides(seat) {
            into.copy_cards_from(&self.tree_discard(seat, obs));
        } else {
            match &mut self.rollout {
                Rollout::Random => {
                    into.copy_cards_from(&RandomAgent::choose_discard(obs, &mut *self.rng));
                }
                Rollout::Heuristic(h) => h.write_discard_of(obs, into),
                Rollout::Agent(a) => a.discard_into(obs, &mut *self.rng, into)?,
            }
        }
        Ok(())
    }

    #[inline]
    fn pick(
        &mut self,
        seat: usize,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        if !self.tree_decides(seat) {
            return self.rollout.pick(obs, &mut *self.rng);
        }
        Ok(self.tree_pick(seat, obs))
    }

    #[inline]
    fn enumerated(&self, seat: usize) -> bool {
        // In the tree, discards are the enumerator's; in a random rollout too; a heuristic's
        // are a card of its hand, a same-rank subset of it or one of its maximal runs in rank
        // order (`Heuristic::choose_discard`), which the engine's check would pass and leave
        // in that order. Any other rollout agent is checked like an agent at a table.
        self.tree_decides(seat) || matches!(self.rollout, Rollout::Random | Rollout::Heuristic(_))
    }

    /// Out of the tree, a random or heuristic rollout reads only its own hand to discard and
    /// pick (see `RandomAgent::discard_of`, `Heuristic::write_discard`, and their picks).
    #[inline]
    fn glances(&self) -> bool {
        !self.in_tree && matches!(self.rollout, Rollout::Random | Rollout::Heuristic(_))
    }

    #[inline]
    fn glance_discard(&mut self, g: &Glance<'_>, into: &mut Discard) -> Result<(), AgentError> {
        match self.rollout {
            Rollout::Random => {
                let discard = RandomAgent::discard_of(g.rules, g.hand.as_slice(), &mut *self.rng);
                into.copy_cards_from(&discard);
            }
            Rollout::Heuristic(h) => h.write_discard(
                g.rules,
                g.hand.as_slice(),
                g.hand_value,
                g.call_threshold,
                into,
            ),
            Rollout::Agent(_) => unreachable!("an agent's rollout does not glance"),
        }
        Ok(())
    }

    #[inline]
    fn glance_pick(&mut self, g: &Glance<'_>) -> Result<Pick, AgentError> {
        Ok(match self.rollout {
            Rollout::Random => RandomAgent::pick_of(g.pickable, &mut *self.rng),
            Rollout::Heuristic(h) => h.pick_of(g.rules, g.pickable, g.hand_value),
            Rollout::Agent(_) => unreachable!("an agent's rollout does not glance"),
        })
    }

    #[inline]
    fn stop(&mut self, turn: u32) -> bool {
        let cap = self.params.rollout_turns;
        cap > 0 && !self.in_tree && turn - self.rollout_from >= cap
    }
}

impl Agent for SearchAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn round_start(&mut self, _seat: usize, _standings: &[i64]) {
        if let Some(belief) = &mut self.belief {
            belief.start_round();
        }
    }

    fn witnesses(&self) -> bool {
        self.belief.is_some()
    }

    fn witness(&mut self, _seat: usize, event: &Event, drawn: Option<Card>) {
        if let Some(belief) = &mut self.belief {
            belief.record(event, drawn);
        }
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        self.explanation(obs)
    }

    fn oracle(&self) -> bool {
        self.params.oracle
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        Ok(self.search(obs, Resume::Call, rng)?.key == key::CALL)
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let chosen = self.search(obs, Resume::Discard, rng)?.key;
        let mut found = None;
        obs.for_each_legal_discard(|cards| {
            if key::discard(cards) == chosen {
                found = Discard::from_slice(cards);
                return false;
            }
            true
        });
        found.ok_or_else(|| AgentError(format!("{}: the chosen discard is not legal", self.name)))
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        let at = Resume::Pick {
            discarded: obs.discarded,
            pickable: obs.pickable,
        };
        let chosen = self.search(obs, at, rng)?.key;
        Ok(
            match obs.pickable.iter().find(|&&c| key::pile(c) == chosen) {
                Some(&card) => Pick::Pile(card),
                None => Pick::Stock,
            },
        )
    }
}

/// `ismcts` and `mcts` as families: the same parameters, a different selection rule.
#[derive(Clone, Copy)]
pub struct SearchFamily {
    name: &'static str,
    doc: &'static str,
    defaults: SearchParams,
}

impl SearchFamily {
    pub const ISMCTS: SearchFamily = SearchFamily {
        name: "ismcts",
        doc: "information-set MCTS (Cowling et al. 2012): sampled worlds, availability-count UCB",
        defaults: SearchParams::ismcts(),
    };
    pub const MCTS: SearchFamily = SearchFamily {
        name: "mcts",
        doc: "the paper's determinized MCTS with its legality-probability UCB (eq. 4), corrected",
        defaults: SearchParams::mcts(),
    };
}

impl crate::family::Family for SearchFamily {
    fn name(&self) -> &'static str {
        self.name
    }

    fn doc(&self) -> &'static str {
        self.doc
    }

    fn params(&self) -> Vec<crate::family::Param> {
        use crate::family::{Param, ParamType};
        let d = &self.defaults;
        vec![
            Param::new(
                "iterations",
                ParamType::Count,
                d.iterations,
                "search iterations per decision (the budget; deterministic)",
            )
            .checked(crate::family::at_least_one),
            Param::new(
                "determinizations",
                ParamType::Count,
                d.determinizations,
                "worlds sampled per iteration, one simulation each (the paper's ISMCTS: 3)",
            )
            .checked(crate::family::at_least_one),
            Param::new(
                "time_limit_ms",
                ParamType::Float,
                d.time_limit_ms,
                "also stop after this many ms per decision (0: none; makes runs depend on speed)",
            )
            .checked(crate::family::not_negative),
            Param::new(
                "exploration",
                ParamType::Float,
                d.exploration,
                "UCB exploration constant (rewards are in [0, 1])",
            )
            .checked(crate::family::not_negative),
            Param::new(
                "reward",
                ParamType::Choice(&Reward::NAMES),
                d.reward.name(),
                "win: 1 for the round's winner; score: coin or point change scaled by reward_scale",
            ),
            Param::new(
                "reward_scale",
                ParamType::Float,
                d.reward_scale,
                "coins or points that make a full reward swing (reward: score)",
            )
            .checked(crate::family::positive),
            Param::new(
                "rollout",
                ParamType::Agent,
                "random",
                "who plays after the tree: a kind name or {kind: ..., params: ...} or {script: ...}",
            ),
            Param::new(
                "rollout_turns",
                ParamType::Count,
                d.rollout_turns,
                "cut rollouts after this many turns, scored as if the lowest hand won (0: to the end of the round)",
            ),
            Param::new(
                "oracle",
                ParamType::Bool,
                d.oracle,
                "see every hand (full information): an upper bound on what hidden cards cost",
            ),
            // Changes no decision: runs made before it keep their scenario hash.
            Param::new(
                "stop_when_decided",
                ParamType::Bool,
                d.stop_when_decided,
                "stop once no other action can catch up with the most visited: the same decisions as the full budget, faster (false: play every iteration, as explanations then count)",
            )
            .silent_at_default(),
            Param::new(
                "own_tree",
                ParamType::Bool,
                d.own_tree,
                "search only its own decisions: the other seats play the rollout policy throughout (a best response to a known opponent)",
            )
            .silent_at_default(),
            Param::new(
                "one_step",
                ParamType::Bool,
                d.one_step,
                "the tree is the decision at hand alone: after it every seat, its own included, plays the rollout policy (a one-step look-ahead with a fixed continuation)",
            )
            .silent_at_default(),
            Param::new(
                "belief",
                ParamType::Any,
                "uniform",
                "how hidden hands are sampled: uniform, or {model: AGENT|self, particles: 64, softness: 0.05, min_ess: 0.1} to weigh each world by how likely that opponent model made the moves seen (self: the rollout policy)",
            )
            .silent_at_default(),
        ]
    }

    fn resolve(
        &self,
        entry: &crate::family::Entry<'_>,
        cx: &mut dyn crate::family::Resolve,
    ) -> Option<std::sync::Arc<dyn crate::family::Recipe>> {
        let params = self.settings(entry);
        let rollout = if entry.given("rollout") {
            let rollout = cx.agent(&entry.get("rollout"), "params.rollout")?;
            if rollout.searches() {
                cx.problem(
                    "params.rollout",
                    "a rollout policy cannot itself search: use `random`, a heuristic or a script"
                        .into(),
                );
                return None;
            }
            rollout
        } else {
            crate::random::RandomFamily::recipe()
        };
        let belief = if entry.given("belief") {
            Some(BeliefSpec::resolve(&entry.get("belief"), &params, cx)?)
        } else {
            None
        }
        .flatten();
        Some(std::sync::Arc::new(SearchRecipe {
            family: *self,
            params,
            rollout,
            belief,
        }))
    }
}

/// Who the opponents are assumed to play like, for a search that infers hidden hands.
#[derive(Clone)]
pub enum BeliefModel {
    /// The search's own rollout policy (`model: self`).
    Rollout,
    /// Another agent entry.
    Agent(std::sync::Arc<dyn crate::family::Recipe>),
}

/// A search's `belief:` parameter, resolved: how many worlds, how soft, and whose moves.
#[derive(Clone)]
pub struct BeliefSpec {
    pub params: BeliefParams,
    pub model: BeliefModel,
}

impl BeliefSpec {
    const FIELDS: [&'static str; 4] = ["model", "particles", "softness", "min_ess"];

    /// The parameter as written: `uniform` (`None`), or a mapping. Problems are reported at
    /// `params.belief...`; `None` (the outer) if there were any.
    fn resolve(
        value: &serde_json::Value,
        params: &SearchParams,
        cx: &mut dyn crate::family::Resolve,
    ) -> Option<Option<BeliefSpec>> {
        use serde_json::Value;
        const FIELD: &str = "params.belief";
        let map = match value {
            Value::String(s) if s == "uniform" => return Some(None),
            Value::Object(map) => map,
            other => {
                cx.problem(
                    FIELD,
                    format!(
                        "expected `uniform` or a mapping {{model: AGENT|self, particles, softness, min_ess}}, got {}",
                        crate::family::show(other)
                    ),
                );
                return None;
            }
        };
        let mut ok = true;
        for key in map.keys() {
            if !Self::FIELDS.contains(&key.as_str()) {
                cx.problem(
                    &format!("{FIELD}.{key}"),
                    format!("unknown field; valid: {}", Self::FIELDS.join(", ")),
                );
                ok = false;
            }
        }
        if params.oracle {
            cx.problem(
                FIELD,
                "an oracle sees every hand: it has nothing to infer (drop `belief` or `oracle`)"
                    .into(),
            );
            ok = false;
        }
        let d = BeliefParams::default();
        let mut number =
            |key: &str, default: f64, valid: fn(f64) -> bool, expect: &str| match map.get(key) {
                None => Some(default),
                Some(v) => match v.as_f64().filter(|&x| valid(x)) {
                    Some(x) => Some(x),
                    None => {
                        cx.problem(
                            &format!("{FIELD}.{key}"),
                            format!("expected {expect}, got {}", crate::family::show(v)),
                        );
                        None
                    }
                },
            };
        let particles = number(
            "particles",
            f64::from(d.particles),
            |x| (1.0..=100_000.0).contains(&x) && x.fract() == 0.0,
            "a whole number from 1 to 100000",
        );
        let softness = number(
            "softness",
            d.softness,
            |x| x > 0.0 && x <= 1.0,
            "a number in (0, 1]: a world's weight is softness^(moves the model would not have made)",
        );
        let min_ess = number(
            "min_ess",
            d.min_ess,
            |x| (0.0..=1.0).contains(&x),
            "a fraction in [0, 1]",
        );
        let model = match map.get("model") {
            None => {
                cx.problem(
                    &format!("{FIELD}.model"),
                    "missing: the opponent model, `self` (the rollout policy) or an agent entry"
                        .into(),
                );
                None
            }
            Some(Value::String(s)) if s == "self" => Some(BeliefModel::Rollout),
            Some(v) => {
                let field = format!("{FIELD}.model");
                match cx.agent(v, &field) {
                    Some(recipe) if recipe.searches() => {
                        cx.problem(
                            &field,
                            "an opponent model cannot itself search (it is asked about every move of many imagined worlds): use a heuristic, a script, a tuned file or a network"
                                .into(),
                        );
                        None
                    }
                    other => other.map(BeliefModel::Agent),
                }
            }
        };
        match (ok, particles, softness, min_ess, model) {
            (true, Some(particles), Some(softness), Some(min_ess), Some(model)) => {
                Some(Some(BeliefSpec {
                    params: BeliefParams {
                        particles: particles as u32,
                        softness,
                        min_ess,
                    },
                    model,
                }))
            }
            _ => None,
        }
    }

    /// As a scenario would write it, for the manifest.
    fn describe(&self) -> serde_json::Value {
        use serde_json::Value;
        let mut m = serde_json::Map::new();
        m.insert(
            "model".into(),
            match &self.model {
                BeliefModel::Rollout => Value::from("self"),
                BeliefModel::Agent(recipe) => Value::Object(recipe.describe()),
            },
        );
        m.insert("particles".into(), Value::from(self.params.particles));
        m.insert("softness".into(), Value::from(self.params.softness));
        m.insert("min_ess".into(), Value::from(self.params.min_ess));
        Value::Object(m)
    }
}

/// The policy a recipe plays, as a search calls it: through a tuned agent file to its entry,
/// so that a tuned heuristic plays as a heuristic (no dispatch, a glance instead of an
/// observation, the settled stop); `random` without building an agent.
fn rollout_of(recipe: &dyn crate::family::Recipe, id: &str) -> Rollout {
    let mut recipe = recipe;
    while let Some(inner) = recipe.inner() {
        recipe = inner;
    }
    if recipe.uniform_random() {
        Rollout::Random
    } else if let Some(h) = Heuristic::from_recipe(recipe, id) {
        Rollout::Heuristic(h)
    } else {
        Rollout::Agent(recipe.build(id))
    }
}

impl SearchFamily {
    /// The settings an entry's parameters give (already checked).
    fn settings(&self, entry: &crate::family::Entry<'_>) -> SearchParams {
        SearchParams {
            selection: self.defaults.selection,
            iterations: entry.u32("iterations"),
            determinizations: entry.u32("determinizations"),
            time_limit_ms: entry.f64("time_limit_ms"),
            exploration: entry.f64("exploration"),
            reward: Reward::parse(&entry.text("reward")).unwrap_or(self.defaults.reward),
            reward_scale: entry.f64("reward_scale"),
            rollout_turns: entry.u32("rollout_turns"),
            oracle: entry.bool("oracle"),
            stop_when_decided: entry.bool("stop_when_decided"),
            own_tree: entry.bool("own_tree"),
            one_step: entry.bool("one_step"),
        }
    }

    /// The settings for `params` as a scenario's `params:` would give them (the `rollout` is
    /// ignored): for callers that build a [`SearchAgent`] themselves, such as the benchmark.
    pub fn params_from(
        &self,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<SearchParams, Vec<(String, String)>> {
        let none = serde_json::Map::new();
        let entry = crate::family::check(self, &none, params)?;
        Ok(self.settings(&entry))
    }
}

/// A search's settings, its rollout policy and, where it infers hidden hands, its belief.
pub struct SearchRecipe {
    family: SearchFamily,
    pub params: SearchParams,
    pub rollout: std::sync::Arc<dyn crate::family::Recipe>,
    pub belief: Option<BeliefSpec>,
}

impl crate::family::Recipe for SearchRecipe {
    fn family(&self) -> &'static str {
        self.family.name
    }

    fn searches(&self) -> bool {
        true
    }

    /// A script rolling out, or modelling the opponents, is one of the run's inputs.
    fn sources(&self) -> Vec<(String, String)> {
        let mut sources = self.rollout.sources();
        if let Some(BeliefSpec {
            model: BeliefModel::Agent(model),
            ..
        }) = &self.belief
        {
            sources.extend(model.sources());
        }
        sources
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value;
        let p = &self.params;
        crate::family::describe_params(
            self.family.name,
            &crate::family::Family::params(&self.family),
            |param| match param.name {
                "iterations" => Value::from(p.iterations),
                "determinizations" => Value::from(p.determinizations),
                "time_limit_ms" => Value::from(p.time_limit_ms),
                "exploration" => Value::from(p.exploration),
                "reward" => Value::from(p.reward.name()),
                "reward_scale" => Value::from(p.reward_scale),
                "rollout" => Value::Object(self.rollout.describe()),
                "rollout_turns" => Value::from(p.rollout_turns),
                "oracle" => Value::from(p.oracle),
                "stop_when_decided" => Value::from(p.stop_when_decided),
                "own_tree" => Value::from(p.own_tree),
                "one_step" => Value::from(p.one_step),
                "belief" => self
                    .belief
                    .as_ref()
                    .map_or_else(|| Value::from("uniform"), BeliefSpec::describe),
                _ => Value::Null,
            },
        )
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        let rollout = rollout_of(&*self.rollout, &format!("{id}/rollout"));
        let agent =
            SearchAgent::new(id, self.params, rollout).with_rollout_name(self.rollout.default_id());
        Box::new(match &self.belief {
            None => agent,
            Some(spec) => {
                // The model is an agent of its own (its own state; the search's stream).
                let (recipe, name) = match &spec.model {
                    BeliefModel::Rollout => (&self.rollout, "self".to_string()),
                    BeliefModel::Agent(model) => (model, model.default_id()),
                };
                let model = rollout_of(&**recipe, &format!("{id}/model"));
                agent.with_belief(Belief::new(spec.params, model, name))
            }
        })
    }

    fn for_rules(
        &self,
        rules: &std::sync::Arc<dhumbal_game::Rules>,
    ) -> Result<Option<std::sync::Arc<dyn crate::family::Recipe>>, String> {
        let rollout = self.rollout.for_rules(rules)?;
        let model = match &self.belief {
            Some(BeliefSpec {
                model: BeliefModel::Agent(model),
                ..
            }) => model.for_rules(rules)?,
            _ => None,
        };
        if rollout.is_none() && model.is_none() {
            return Ok(None);
        }
        let belief = self.belief.clone().map(|mut spec| {
            if let Some(model) = model {
                spec.model = BeliefModel::Agent(model);
            }
            spec
        });
        Ok(Some(std::sync::Arc::new(SearchRecipe {
            family: self.family,
            params: self.params,
            rollout: rollout.unwrap_or_else(|| self.rollout.clone()),
            belief,
        })))
    }
}
