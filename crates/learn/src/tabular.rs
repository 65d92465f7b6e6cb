//! The two-player tabular plan's two ways to learn over its 1,600-state abstraction (`dhumbal_agents::tabular`),
//! without libtorch: Q-learning, and Monte-Carlo estimates of the transitions under the
//! current policy followed by value or policy iteration, repeated until the policy stops
//! changing.
//!
//! An episode is a whole game to elimination at a table of the plan's rules (the
//! `simplified-2p` preset: a random first starter), the learner in a seat drawn per game and
//! its opponent drawn per game from the plan's list. A step runs from one of the learner's
//! turns to its next (or to the end of the game); its reward is 1 for winning the game, at the
//! end, and with `reward: points` also minus the points of every round the step saw, scaled.
//!
//! Everything random comes from streams keyed by (seed, game): seats and opponents from the
//! seating stream, the cards from each round's deal stream, the learner's exploration from its
//! agent stream. Q-learning is sequential by nature and runs on one thread; value iteration
//! plays its Monte-Carlo games in parallel and adds them up in game order. Either gives the
//! same table bit for bit on any number of threads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use dhumbal_agents::Recipe;
use dhumbal_agents::neural::checkpoint::{rules_fingerprint, rules_name};
use dhumbal_agents::tabular::{
    Chooser, Macro, MacroAgent, PolicyTable, STATES, State, TableChooser,
};
use dhumbal_game::rng::{ChaChaStreams, Purpose, RandomSource, chacha_stream, deal_id};
use dhumbal_game::{Agent, PlayError, RoundOutcome, Rules, Table};

use crate::episode::reward as round_reward;
use crate::hyper::{Expected, HyperError};
use crate::{EpisodeRecord, EvalRecord, Event};

/// How a tabular policy is learned.
#[derive(Clone, Debug, PartialEq)]
pub enum Method {
    QLearning(QParams),
    ValueIteration(ViParams),
}

impl Method {
    pub const NAMES: &'static [&'static str] = &["q-learning", "value-iteration"];

    pub fn name(&self) -> &'static str {
        match self {
            Method::QLearning(_) => "q-learning",
            Method::ValueIteration(_) => "value-iteration",
        }
    }

    /// The method's defaults (`episodes`: the plan's, for schedules that scale with it).
    pub fn default_for(name: &str, episodes: u64) -> Option<Method> {
        match name {
            "q-learning" => Some(Method::QLearning(QParams {
                alpha: 0.05,
                gamma: 1.0,
                epsilon_start: 0.3,
                epsilon_end: 0.02,
                epsilon_episodes: (episodes / 2).max(1),
                point_scale: 80.0,
            })),
            "value-iteration" => Some(Method::ValueIteration(ViParams {
                samples: (episodes / 10).max(1),
                explore: 0.2,
                gamma: 1.0,
                tolerance: 1e-9,
                solver: Solver::Value,
                max_sweeps: 100_000,
                point_scale: 80.0,
            })),
            _ => None,
        }
    }

    /// Sets one hyperparameter by name from YAML; the error says what is valid.
    pub fn set(&mut self, name: &str, value: &serde_json::Value) -> Result<(), HyperError> {
        let expected = |expected| HyperError::Expected {
            expected,
            got: value.clone(),
        };
        let num = |lo: f64, hi: f64| -> Result<f64, HyperError> {
            value
                .as_f64()
                .filter(|v| v.is_finite() && *v >= lo && *v <= hi)
                .ok_or_else(|| expected(Expected::Between(lo, hi)))
        };
        let count = || -> Result<u64, HyperError> {
            value
                .as_u64()
                .filter(|&v| v >= 1)
                .ok_or_else(|| expected(Expected::Count))
        };
        match self {
            Method::QLearning(q) => match name {
                "alpha" => q.alpha = num(1e-9, 1.0)?,
                "gamma" => q.gamma = num(0.0, 1.0)?,
                "epsilon_start" => q.epsilon_start = num(0.0, 1.0)?,
                "epsilon_end" => q.epsilon_end = num(0.0, 1.0)?,
                "epsilon_episodes" => q.epsilon_episodes = count()?,
                "point_scale" => q.point_scale = num(1e-9, 1e9)?,
                _ => return Err(unknown(name, Q_NAMES)),
            },
            Method::ValueIteration(v) => match name {
                "samples" => v.samples = count()?,
                "explore" => v.explore = num(0.0, 1.0)?,
                "gamma" => v.gamma = num(0.0, 1.0)?,
                "tolerance" => v.tolerance = num(1e-15, 1.0)?,
                "max_sweeps" => v.max_sweeps = count()?,
                "point_scale" => v.point_scale = num(1e-9, 1e9)?,
                "solver" => {
                    v.solver = match value.as_str() {
                        Some("value") => Solver::Value,
                        Some("policy") => Solver::Policy,
                        _ => return Err(expected(Expected::Solver)),
                    }
                }
                _ => return Err(unknown(name, VI_NAMES)),
            },
        }
        Ok(())
    }

    /// Every hyperparameter with its value, for the manifest and the hash.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Method::QLearning(q) => serde_json::json!({
                "alpha": q.alpha, "gamma": q.gamma, "epsilon_start": q.epsilon_start,
                "epsilon_end": q.epsilon_end, "epsilon_episodes": q.epsilon_episodes,
                "point_scale": q.point_scale,
            }),
            Method::ValueIteration(v) => serde_json::json!({
                "samples": v.samples, "explore": v.explore, "gamma": v.gamma,
                "tolerance": v.tolerance, "max_sweeps": v.max_sweeps,
                "solver": match v.solver { Solver::Value => "value", Solver::Policy => "policy" },
                "point_scale": v.point_scale,
            }),
        }
    }
}

const Q_NAMES: &[&str] = &[
    "alpha",
    "gamma",
    "epsilon_start",
    "epsilon_end",
    "epsilon_episodes",
    "point_scale",
];
const VI_NAMES: &[&str] = &[
    "samples",
    "explore",
    "gamma",
    "tolerance",
    "solver",
    "max_sweeps",
    "point_scale",
];

fn unknown(name: &str, names: &[&str]) -> HyperError {
    HyperError::NotOfMethod {
        name: name.to_string(),
        valid: names.join(", "),
    }
}

/// Q-learning: one-step updates at every learner turn, ε-greedy exploration decaying linearly.
#[derive(Clone, Debug, PartialEq)]
pub struct QParams {
    pub alpha: f64,
    pub gamma: f64,
    pub epsilon_start: f64,
    pub epsilon_end: f64,
    /// Games over which ε goes from start to end.
    pub epsilon_episodes: u64,
    /// With `reward: points`, a round's points are divided by this (80: the elimination limit).
    pub point_scale: f64,
}

/// Monte-Carlo transition estimates, then value or policy iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct ViParams {
    /// Games played per estimation (the transitions of the current policy).
    pub samples: u64,
    /// Probability of a uniformly random macro at a turn while estimating (so that every
    /// action of a visited state gets samples).
    pub explore: f64,
    pub gamma: f64,
    /// Value iteration stops when no value moves more than this in a sweep.
    pub tolerance: f64,
    pub solver: Solver,
    /// Most sweeps per solve.
    pub max_sweeps: u64,
    pub point_scale: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    Value,
    Policy,
}

/// What the learner is rewarded for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TabularReward {
    /// 1 for winning the game.
    Win,
    /// Winning the game, and minus each round's points divided by `point_scale`.
    Points,
}

/// A checked tabular `train:` entry.
#[derive(Clone)]
pub struct TabularPlan {
    pub id: String,
    pub method: Method,
    pub rules: Arc<Rules>,
    /// Games to learn from (value iteration: at most this many, in estimations of `samples`).
    pub episodes: u64,
    pub opponents: Vec<(String, Arc<dyn Recipe>)>,
    pub reward: TabularReward,
    pub seed: u64,
    /// Evaluation: every this many games, against these, on `games` fixed games of `seed`
    /// played once with the learner in each seat.
    pub evaluation: Option<TabularEvaluation>,
    pub policy: PathBuf,
    pub scenario_hash: String,
    pub program: String,
}

#[derive(Clone)]
pub struct TabularEvaluation {
    pub every: u64,
    pub games: u64,
    pub against: Vec<(String, Arc<dyn Recipe>)>,
    pub seed: u64,
}

/// One step: (state, macro, reward, the next state or `None` at the end of the game).
type Step = (u16, u8, f64, Option<u16>);

/// One step's experience, and the Q-learning update when there is a table to update.
struct Steps {
    /// The last turn's state and macro, and the reward gathered since.
    prev: Option<(usize, Macro)>,
    acc: f64,
    seat: usize,
    reward: TabularReward,
    point_scale: f64,
    rules: Arc<Rules>,
    /// The steps as they happen.
    log: Vec<Step>,
}

impl Steps {
    fn step(&mut self, next: Option<usize>) {
        if let Some((s, a)) = self.prev.take() {
            self.log
                .push((s as u16, a.index() as u8, self.acc, next.map(|n| n as u16)));
        }
        self.acc = 0.0;
    }

    fn round_end(&mut self, outcome: &RoundOutcome) {
        if self.reward == TabularReward::Points {
            self.acc += round_reward(&self.rules, outcome, self.seat) / self.point_scale;
        }
    }
}

/// How the learner acts.
enum Acting<'a> {
    /// ε-greedy on a Q-table, updated online.
    Q {
        q: &'a mut [[f64; 3]],
        visits: &'a mut [u64],
        alpha: f64,
        gamma: f64,
        epsilon: f64,
    },
    /// The policy's macro, or a uniformly random one with probability `explore`.
    Explore { policy: &'a [Macro], explore: f64 },
}

struct Learner<'a> {
    acting: Acting<'a>,
    steps: Steps,
}

impl Learner<'_> {
    fn update(&mut self) {
        if let Acting::Q {
            q, alpha, gamma, ..
        } = &mut self.acting
            && let Some((s, a, r, next)) = self.steps.log.pop()
        {
            // Q-learning uses each step once, as it happens.
            let target = r + next.map_or(0.0, |n| {
                let v = q[n as usize];
                *gamma * v[0].max(v[1]).max(v[2])
            });
            let cell = &mut q[s as usize][a as usize];
            *cell += *alpha * (target - *cell);
        }
    }
}

impl Chooser for Learner<'_> {
    fn choose(&mut self, state: State, may_call: bool, rng: &mut dyn RandomSource) -> Macro {
        let i = state.index();
        if self.steps.prev.is_some() {
            self.steps.step(Some(i));
            self.update();
        }
        let n = if may_call { 3 } else { 2 };
        let m = match &mut self.acting {
            Acting::Q {
                q, visits, epsilon, ..
            } => {
                visits[i] += 1;
                if rng.random() < *epsilon {
                    Macro::ALL[rng.below(n) as usize]
                } else {
                    Macro::best(&q[i], may_call)
                }
            }
            Acting::Explore { policy, explore } => {
                if rng.random() < *explore {
                    Macro::ALL[rng.below(n) as usize]
                } else {
                    let m = policy[i];
                    if m == Macro::Call && !may_call {
                        Macro::GreedyDecrease
                    } else {
                        m
                    }
                }
            }
        };
        self.steps.prev = Some((i, m));
        m
    }

    fn round_end(&mut self, _seat: usize, outcome: &RoundOutcome) {
        self.steps.round_end(outcome);
    }

    fn game_end(&mut self, _seat: usize, _standings: &[i64], won: bool) {
        self.steps.acc += f64::from(u8::from(won));
        if self.steps.prev.is_some() {
            self.steps.step(None);
            self.update();
        }
    }
}

/// What one game gave the learner.
struct GameResult {
    /// Its points over the game, as a reward (minus the points taken).
    reward: f64,
    won: bool,
    calls: u32,
    successful_calls: u32,
    turns: u32,
    rounds: u32,
}

/// One game to elimination of `seed`'s game `game`, `learner` in `seat` and `opponent` in the
/// other; the learner keeps agent slot 0 whatever its seat, so a game is the same cards and
/// streams in both seats.
fn play_game(
    rules: &Arc<Rules>,
    seed: u64,
    game: u64,
    seat: usize,
    learner: &mut dyn Agent,
    opponent: &mut dyn Agent,
) -> Result<GameResult, PlayError> {
    let slots: Vec<u32> = (0..2).map(|s| u32::from(s != seat)).collect();
    let mut streams = ChaChaStreams::new(seed, deal_id(game, 0), &slots);
    let mut table = Table::new((**rules).clone());
    let mut seats: [&mut dyn Agent; 2] = if seat == 0 {
        [learner, opponent]
    } else {
        [opponent, learner]
    };
    table.start_game(&mut seats);
    let mut r = GameResult {
        reward: 0.0,
        won: false,
        calls: 0,
        successful_calls: 0,
        turns: 0,
        rounds: 0,
    };
    while !table.game_over() {
        streams.set_deal(deal_id(game, table.rounds_played()));
        let o = table.play_round(&mut seats, &mut streams, &mut ())?;
        r.reward += round_reward(rules, &o, seat);
        if o.caller == Some(seat) {
            r.calls += 1;
            r.successful_calls += u32::from(o.call_success);
        }
        r.turns += o.turns;
        r.rounds += 1;
    }
    table.end_game(&mut seats);
    r.won = table.leader() == seat;
    Ok(r)
}

/// A training game's record.
fn record(game: u64, seat: usize, opponent: &str, r: &GameResult, epsilon: f64) -> EpisodeRecord {
    EpisodeRecord {
        episode: game,
        seat,
        opponents: if seat == 0 {
            format!("learner {opponent}")
        } else {
            format!("{opponent} learner")
        },
        reward: r.reward,
        win: r.won,
        called: r.calls > 0,
        call_success: r.calls > 0 && r.successful_calls == r.calls,
        steps: r.rounds,
        turns: r.turns,
        loss: f64::NAN,
        epsilon,
        entropy: f64::NAN,
    }
}

/// The learner's seat and opponent for game `game` (from the seating stream).
fn draw(plan: &TabularPlan, game: u64) -> (usize, usize) {
    let mut seating = chacha_stream(plan.seed, Purpose::Seating, game);
    let seat = seating.below(2) as usize;
    let k = seating.below(plan.opponents.len() as u32) as usize;
    (seat, k)
}

/// Plays training game `game`: the learner acting by `acting`, seat and opponent drawn from
/// the seating stream. Returns its record and the learner's steps (empty for Q-learning,
/// which uses each step as it happens).
fn train_game(
    plan: &TabularPlan,
    game: u64,
    point_scale: f64,
    acting: Acting<'_>,
    epsilon: f64,
) -> Result<(EpisodeRecord, Vec<Step>), PlayError> {
    let (seat, k) = draw(plan, game);
    let (name, recipe) = &plan.opponents[k];
    let mut other = recipe.build(name);
    let steps = Steps {
        prev: None,
        acc: 0.0,
        seat,
        reward: plan.reward,
        point_scale,
        rules: plan.rules.clone(),
        log: Vec::new(),
    };
    let mut learner = MacroAgent::new("learner", Learner { acting, steps });
    let r = play_game(
        &plan.rules,
        plan.seed,
        game,
        seat,
        &mut learner,
        other.as_mut(),
    )?;
    Ok((
        record(game, seat, name, &r, epsilon),
        std::mem::take(&mut learner.chooser.steps.log),
    ))
}

/// Evaluates a policy table: against each opponent, `games` games, the learner once in each
/// seat of every game (the same cards and starters), the win rate with its 95% interval by
/// game (the two seats of a game averaged first).
pub fn evaluate(
    rules: &Arc<Rules>,
    table: &Arc<PolicyTable>,
    ev: &TabularEvaluation,
    episode: u64,
) -> Result<Vec<EvalRecord>, PlayError> {
    let mut out = Vec::new();
    for (name, recipe) in &ev.against {
        let results: Vec<(u32, f64)> = (0..ev.games)
            .into_par_iter()
            .map(|g| {
                let (mut wins, mut total) = (0, 0.0);
                for seat in 0..2 {
                    let mut me = MacroAgent::new("learner", TableChooser(table.clone()));
                    let mut other = recipe.build(name);
                    let r = play_game(rules, ev.seed, g, seat, &mut me, other.as_mut())?;
                    wins += u32::from(r.won);
                    total += r.reward;
                }
                Ok((wins, total))
            })
            .collect::<Result<_, PlayError>>()?;
        let per: Vec<f64> = results.iter().map(|r| f64::from(r.0) / 2.0).collect();
        let (mean, low, high) = crate::evaluate::mean_interval(&per);
        let n = ev.games.max(1) as f64;
        out.push(EvalRecord {
            episode,
            opponent: name.clone(),
            rounds: ev.games * 2,
            deals: ev.games,
            win_rate: mean,
            low,
            high,
            mean_reward: results.iter().map(|r| r.1).sum::<f64>() / (n * 2.0),
        });
    }
    Ok(out)
}

/// How a tabular learning ended.
pub struct Learned {
    pub episodes: u64,
    pub stopped: bool,
    /// Value iteration: estimation rounds made, and whether the policy stopped changing.
    pub iterations: u32,
    pub converged: bool,
}

/// Learns `plan`'s policy, writes it to `plan.policy`, and reports as it goes (episodes in
/// batches, evaluations, and a `Checkpoint` when the table is written).
pub fn learn(
    plan: &TabularPlan,
    stop: &AtomicBool,
    event: &mut dyn FnMut(Event<'_>),
) -> Result<Learned, LearnError> {
    let mut learning = Learning { plan, stop, event };
    match &plan.method {
        Method::QLearning(q) => learning.q_learning(q),
        Method::ValueIteration(v) => learning.value_iteration(v),
    }
}

/// Why a tabular learning stopped short.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error(transparent)]
    Play(#[from] PlayError),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A learning under way: its plan, the flag that stops it, and where it reports.
struct Learning<'a> {
    plan: &'a TabularPlan,
    stop: &'a AtomicBool,
    event: &'a mut dyn FnMut(Event<'_>),
}

impl Learning<'_> {
    /// Evaluates `table` after `episode` games, when the plan evaluates.
    fn evaluate(&mut self, table: &PolicyTable, episode: u64) -> Result<(), PlayError> {
        if let Some(ev) = &self.plan.evaluation {
            let t = Arc::new(table.clone());
            for r in evaluate(&self.plan.rules, &t, ev, episode)? {
                (self.event)(Event::Evaluation(&r));
            }
        }
        Ok(())
    }

    /// Writes the learned table after `episodes` games, with its metadata (and `extra`).
    fn finish(
        &mut self,
        table: &mut PolicyTable,
        episodes: u64,
        extra: &[(&str, String)],
    ) -> Result<(), LearnError> {
        let plan = self.plan;
        table.set_meta("program", plan.program.clone());
        table.set_meta(
            "kind",
            "tabular policy (two-player plan: 1,600 states, 3 macro actions)",
        );
        table.set_meta("method", plan.method.name());
        table.set_meta("hyper", plan.method.to_json().to_string());
        table.set_meta("rules", rules_fingerprint(&plan.rules));
        table.set_meta("rules_name", rules_name(&plan.rules));
        table.set_meta("scenario_hash", plan.scenario_hash.clone());
        table.set_meta("episodes", episodes.to_string());
        for (k, v) in extra {
            table.set_meta(k, v.clone());
        }
        table
            .write(&plan.policy)
            .map_err(|source| LearnError::Write {
                path: plan.policy.clone(),
                source,
            })?;
        (self.event)(Event::Checkpoint(episodes));
        Ok(())
    }

    /// Q-learning: one game after another, each step learned from as it happens.
    fn q_learning(&mut self, p: &QParams) -> Result<Learned, LearnError> {
        let plan = self.plan;
        let mut table = PolicyTable::new();
        self.evaluate(&table, 0)?;
        let mut batch = Vec::with_capacity(1000);
        let mut done = 0;
        let mut stopped = false;
        while done < plan.episodes {
            if self.stop.load(Ordering::Relaxed) {
                stopped = true;
                break;
            }
            let game = done;
            let frac = (game as f64 / p.epsilon_episodes as f64).min(1.0);
            let epsilon = p.epsilon_start + (p.epsilon_end - p.epsilon_start) * frac;
            let PolicyTable { values, visits, .. } = &mut table;
            let acting = Acting::Q {
                q: values,
                visits,
                alpha: p.alpha,
                gamma: p.gamma,
                epsilon,
            };
            let (record, _) = train_game(plan, game, p.point_scale, acting, epsilon)?;
            batch.push(record);
            done += 1;
            if batch.len() == 1000 || done == plan.episodes {
                (self.event)(Event::Episodes(&batch));
                batch.clear();
            }
            if due(plan, game, done) {
                if !batch.is_empty() {
                    (self.event)(Event::Episodes(&batch));
                    batch.clear();
                }
                table.play_greedy();
                self.evaluate(&table, done)?;
            }
        }
        if !batch.is_empty() {
            (self.event)(Event::Episodes(&batch));
        }
        table.play_greedy();
        if plan.evaluation.is_some() && !stopped && !due(plan, done - 1, done) {
            self.evaluate(&table, done)?;
        }
        self.finish(&mut table, done, &[])?;
        Ok(Learned {
            episodes: done,
            stopped,
            iterations: 0,
            converged: false,
        })
    }

    /// Estimations of the current policy's transitions (games in parallel), each followed
    /// by a solve, until the policy stops changing or the games are spent.
    fn value_iteration(&mut self, p: &ViParams) -> Result<Learned, LearnError> {
        let plan = self.plan;
        let mut table = PolicyTable::new();
        // The starting policy: greedy-decrease, calling where a call is within the threshold.
        let safe = plan.rules.call_threshold(2);
        for (i, a) in table.actions.iter_mut().enumerate() {
            if u32::from(State::from_index(i).value) <= safe {
                *a = Macro::Call;
            }
        }
        self.evaluate(&table, 0)?;
        let mut counts: Vec<Counts> = vec![Counts::default(); STATES * 3];
        let mut done = 0u64;
        let mut iterations = 0u32;
        let mut converged = false;
        let mut stopped = false;
        // States whose macro changed, per estimation (how far from converged it is).
        let mut changes: Vec<String> = Vec::new();
        let mut v = vec![0.0f64; STATES];
        while done < plan.episodes {
            if self.stop.load(Ordering::Relaxed) {
                stopped = true;
                break;
            }
            let n = p.samples.min(plan.episodes - done);
            let games: Vec<(EpisodeRecord, Vec<Step>)> = (done..done + n)
                .into_par_iter()
                .map(|game| {
                    let acting = Acting::Explore {
                        policy: &table.actions,
                        explore: p.explore,
                    };
                    train_game(plan, game, p.point_scale, acting, p.explore)
                })
                .collect::<Result<_, PlayError>>()?;
            let mut records = Vec::with_capacity(games.len());
            for (r, log) in games {
                for (s, a, rew, next) in log {
                    let c = &mut counts[s as usize * 3 + a as usize];
                    c.n += 1;
                    c.reward += rew;
                    *c.next.entry(next.unwrap_or(STATES as u16)).or_insert(0) += 1;
                }
                records.push(r);
            }
            for chunk in records.chunks(1000) {
                (self.event)(Event::Episodes(chunk));
            }
            let before = done;
            done += n;
            iterations += 1;
            let q = solve(&counts, p, &mut v);
            let mut changed = 0;
            for i in 0..STATES {
                table.values[i] = q[i];
                table.visits[i] = (0..3).map(|a| counts[i * 3 + a].n).sum();
                let seen = table.visits[i] > 0;
                if seen {
                    let m = Macro::best(&q[i], true);
                    if m != table.actions[i] {
                        changed += 1;
                        table.actions[i] = m;
                    }
                }
            }
            changes.push(changed.to_string());
            if due(plan, before, done) || done >= plan.episodes || changed == 0 {
                self.evaluate(&table, done)?;
            }
            if changed == 0 {
                converged = true;
                break;
            }
        }
        self.finish(
            &mut table,
            done,
            &[
                ("iterations", iterations.to_string()),
                ("converged", converged.to_string()),
                ("changes", changes.join(" ")),
            ],
        )?;
        Ok(Learned {
            episodes: done,
            stopped,
            iterations,
            converged,
        })
    }
}

fn due(plan: &TabularPlan, before: u64, after: u64) -> bool {
    plan.evaluation
        .as_ref()
        .is_some_and(|e| before / e.every != after / e.every)
}

/// Transition estimates: per (state, action), the samples, the reward summed, and where they
/// went (`STATES` stands for the end of the game).
#[derive(Default, Clone)]
struct Counts {
    n: u64,
    reward: f64,
    next: BTreeMap<u16, u64>,
}

/// Q-values of the estimated MDP: value iteration to `tolerance`, or policy iteration (each
/// policy evaluated by sweeps to `tolerance`, improved until stable). Pairs never sampled get
/// value minus infinity so that they are never chosen where another action was tried; a
/// state never met keeps 0 everywhere.
fn solve(counts: &[Counts], p: &ViParams, v: &mut [f64]) -> Vec<[f64; 3]> {
    let end = STATES as u16;
    let q_of = |v: &[f64], s: usize, a: usize| -> f64 {
        let c = &counts[s * 3 + a];
        if c.n == 0 {
            return f64::NEG_INFINITY;
        }
        let mut x = c.reward;
        for (&next, &k) in &c.next {
            if next != end {
                x += p.gamma * k as f64 * v[next as usize];
            }
        }
        x / c.n as f64
    };
    let sampled = |s: usize| (0..3).any(|a| counts[s * 3 + a].n > 0);
    match p.solver {
        Solver::Value => {
            for _ in 0..p.max_sweeps {
                let mut delta: f64 = 0.0;
                for s in 0..STATES {
                    if !sampled(s) {
                        continue;
                    }
                    let best = (0..3)
                        .map(|a| q_of(v, s, a))
                        .fold(f64::NEG_INFINITY, f64::max);
                    delta = delta.max((best - v[s]).abs());
                    v[s] = best;
                }
                if delta <= p.tolerance {
                    break;
                }
            }
        }
        Solver::Policy => {
            let mut pi: Vec<usize> = (0..STATES)
                .map(|s| (0..3).find(|&a| counts[s * 3 + a].n > 0).unwrap_or(0))
                .collect();
            for _ in 0..1000 {
                // Evaluate pi.
                for _ in 0..p.max_sweeps {
                    let mut delta: f64 = 0.0;
                    for s in 0..STATES {
                        if !sampled(s) {
                            continue;
                        }
                        let x = q_of(v, s, pi[s]);
                        delta = delta.max((x - v[s]).abs());
                        v[s] = x;
                    }
                    if delta <= p.tolerance {
                        break;
                    }
                }
                // Improve it (keeping the current action on ties, so that it terminates).
                let mut stable = true;
                for (s, action) in pi.iter_mut().enumerate() {
                    if !sampled(s) {
                        continue;
                    }
                    let mut best = *action;
                    let mut best_q = q_of(v, s, best);
                    for a in 0..3 {
                        let x = q_of(v, s, a);
                        if x > best_q + 1e-12 {
                            best = a;
                            best_q = x;
                        }
                    }
                    if best != *action {
                        *action = best;
                        stable = false;
                    }
                }
                if stable {
                    break;
                }
            }
        }
    }
    (0..STATES)
        .map(|s| {
            if !sampled(s) {
                return [0.0; 3];
            }
            std::array::from_fn(|a| q_of(v, s, a))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-built MDP through `solve`: from state A, action 0 ends with reward 1; action 1
    /// goes to B with reward 0. From B, action 0 ends with reward 2; action 1 goes to C with
    /// reward 0.5, and C's only action ends with reward 1. With γ = 0.9: V(C) = 1, Q(B,1) =
    /// 0.5 + 0.9 = 1.4, V(B) = 2, Q(A,1) = 1.8, V(A) = 1.8.
    #[test]
    fn value_iteration_on_a_three_state_mdp_gives_the_known_values() {
        let (a, b, c) = (0usize, 1usize, 2usize);
        let end = STATES as u16;
        let mut counts = vec![Counts::default(); STATES * 3];
        let mut add = |s: usize, act: usize, r: f64, next: u16| {
            let x = &mut counts[s * 3 + act];
            x.n += 1;
            x.reward += r;
            *x.next.entry(next).or_insert(0) += 1;
        };
        add(a, 0, 1.0, end);
        add(a, 1, 0.0, b as u16);
        add(b, 0, 2.0, end);
        add(b, 1, 0.5, c as u16);
        add(c, 0, 1.0, end);
        for solver in [Solver::Value, Solver::Policy] {
            let p = ViParams {
                samples: 1,
                explore: 0.0,
                gamma: 0.9,
                tolerance: 1e-12,
                solver,
                max_sweeps: 10_000,
                point_scale: 1.0,
            };
            let mut v = vec![0.0; STATES];
            let q = solve(&counts, &p, &mut v);
            assert!((v[c] - 1.0).abs() < 1e-9, "{solver:?}");
            assert!((v[b] - 2.0).abs() < 1e-9, "{solver:?}");
            assert!((v[a] - 1.8).abs() < 1e-9, "{solver:?}");
            assert!((q[b][1] - 1.4).abs() < 1e-9);
            assert!((q[a][0] - 1.0).abs() < 1e-9);
            assert_eq!(q[c][1], f64::NEG_INFINITY, "an action never tried");
            assert_eq!(q[5], [0.0; 3], "a state never met");
        }
    }

    /// Q-learning, driven through the same learner the games use, on a small stochastic MDP
    /// whose exact transitions are known, converges to what value iteration computes for it.
    #[test]
    fn q_learning_on_a_tiny_problem_converges_to_the_value_iteration_answer() {
        // States 0, 1, 2; each of the three actions: (probability, reward, next) outcomes.
        type Outcomes = &'static [(f64, f64, Option<usize>)];
        const MDP: [[Outcomes; 3]; 3] = [
            [
                &[(1.0, 0.2, None)],
                &[(0.5, 0.0, Some(1)), (0.5, 0.0, Some(2))],
                &[(1.0, 0.1, Some(2))],
            ],
            [
                &[(1.0, 1.0, None)],
                &[(0.25, 0.3, Some(0)), (0.75, 0.0, None)],
                &[(1.0, 0.0, Some(2))],
            ],
            [
                &[(0.5, 0.6, None), (0.5, 0.0, Some(1))],
                &[(1.0, 0.4, None)],
                &[(1.0, -1.0, None)],
            ],
        ];
        let gamma = 0.9;
        // The exact answer: counts in proportion to the probabilities.
        let mut counts = vec![Counts::default(); STATES * 3];
        for (s, actions) in MDP.iter().enumerate() {
            for (a, outcomes) in actions.iter().enumerate() {
                for &(p, r, next) in *outcomes {
                    let k = (p * 4.0) as u64;
                    let c = &mut counts[s * 3 + a];
                    c.n += k;
                    c.reward += r * k as f64;
                    *c.next
                        .entry(next.map_or(STATES as u16, |n| n as u16))
                        .or_insert(0) += k;
                }
            }
        }
        let vi = ViParams {
            samples: 1,
            explore: 0.0,
            gamma,
            tolerance: 1e-13,
            solver: Solver::Value,
            max_sweeps: 100_000,
            point_scale: 1.0,
        };
        let exact = solve(&counts, &vi, &mut vec![0.0; STATES]);

        let mut q = vec![[0.0; 3]; STATES];
        let mut visits = vec![0; STATES];
        let rules = Arc::new(Rules::new(dhumbal_game::Preset::Simplified2p.variant()).unwrap());
        let mut env = chacha_stream(7, Purpose::Learn, 0);
        let mut rng = chacha_stream(7, Purpose::Agent(0), 0);
        for episode in 0..200_000u64 {
            let alpha = 0.2 / (1.0 + episode as f64 / 2_000.0);
            let mut learner = Learner {
                acting: Acting::Q {
                    q: &mut q,
                    visits: &mut visits,
                    alpha,
                    gamma,
                    epsilon: 1.0,
                },
                steps: Steps {
                    prev: None,
                    acc: 0.0,
                    seat: 0,
                    reward: TabularReward::Win,
                    point_scale: 1.0,
                    rules: rules.clone(),
                    log: Vec::new(),
                },
            };
            let mut s = 0usize;
            loop {
                let m = learner.choose(State::from_index(s), true, &mut rng);
                let outcomes = MDP[s][m.index()];
                let mut x = env.random();
                let mut pick = outcomes[outcomes.len() - 1];
                for &o in outcomes {
                    if x < o.0 {
                        pick = o;
                        break;
                    }
                    x -= o.0;
                }
                learner.steps.acc += pick.1;
                match pick.2 {
                    Some(n) => s = n,
                    None => {
                        learner.game_end(0, &[], false);
                        break;
                    }
                }
            }
        }
        for s in 0..3 {
            for a in 0..3 {
                assert!(
                    (q[s][a] - exact[s][a]).abs() < 0.02,
                    "Q({s},{a}) = {} but value iteration gives {}",
                    q[s][a],
                    exact[s][a]
                );
            }
            assert_eq!(Macro::best(&q[s], true), Macro::best(&exact[s], true));
        }
    }
}
