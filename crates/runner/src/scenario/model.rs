//! The checked scenario: what the runner plays. Built only by [`super::resolve`].

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use dhumbal_agents::{AgentLog, Recipe};
use dhumbal_game::rules::{Rules, Scoring};

/// The random streams a stage uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    /// A ChaCha8 stream per deal and per agent (the default).
    Chacha,
    /// CPython's MT19937, one shared stream per session, to reproduce the paper's run.
    Python,
}

/// How agents are seated: the one seating type of the project (scenario files, the runner,
/// the analysis and the manifest all use it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Seating {
    /// As listed.
    Fixed,
    /// Every deal once per cyclic rotation of the seats.
    Rotate,
    /// Every deal under every permutation of the seats (duplicate play).
    Permute,
    /// A fresh random seating per deal (per session or game).
    Random,
}

impl Seating {
    pub const ALL: [Seating; 4] = [
        Seating::Fixed,
        Seating::Rotate,
        Seating::Permute,
        Seating::Random,
    ];

    /// The name as a scenario spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Seating::Fixed => "fixed",
            Seating::Rotate => "rotate",
            Seating::Permute => "permute",
            Seating::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Option<Seating> {
        Seating::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Seatings each deal is played under, with `players` seats.
    pub fn arrangements(self, players: usize) -> u64 {
        let n = players as u64;
        match self {
            Seating::Fixed | Seating::Random => 1,
            Seating::Rotate => n,
            Seating::Permute => (1..=n).product(),
        }
    }

    /// Whether every deal is played under several arrangements (the deal is then the unit
    /// of analysis).
    pub fn blocks(self) -> bool {
        matches!(self, Seating::Rotate | Seating::Permute)
    }
}

/// A configured agent.
#[derive(Clone)]
pub struct AgentDef {
    pub id: String,
    /// The kind as records and summaries name it (`balanced`, `script:<path>`).
    pub kind: String,
    pub recipe: Arc<dyn Recipe>,
    /// As resolved, for the manifest.
    pub spec: Value,
}

/// What sits in a seat before the stage runs.
#[derive(Clone)]
pub enum SeatEntry {
    Agent(AgentDef),
    /// The winner of the stage with this index.
    WinnerOf(usize),
}

/// One resolved tournament.
#[derive(Clone)]
pub struct Stage {
    pub name: String,
    pub seed: u64,
    pub generator: Generator,
    pub rules: Arc<Rules>,
    pub seats: Vec<SeatEntry>,
    pub seating: Seating,
    /// Sessions (coins) or games (points).
    pub matches: u64,
    /// Rounds per session (coins); `None` for games, which run until one player is left.
    pub session: Option<u32>,
    /// The resolved stage, for the manifest.
    pub spec: Value,
    /// A sequential test: the stage plays until it decides, at most `matches`.
    pub sequential: Option<crate::sequential::Plan>,
    /// An `exploit:` responder's sequential test of its gain over the target's self-play: the
    /// stage plays until it decides, at most `matches`.
    pub gain_test: Option<crate::exploit::GainPlan>,
}

impl Stage {
    /// The sweep this stage is a point of (`scenario/sweep.rs` writes its name into the
    /// resolved spec), if any.
    pub fn sweep(&self) -> Option<&str> {
        self.spec
            .get("sweep")
            .and_then(|s| s.get("name"))
            .and_then(Value::as_str)
    }

    pub fn players(&self) -> usize {
        self.rules.players()
    }

    /// Whether it stops when a sequential test decides (`sequential:`, `decide:`, or an
    /// `exploit:` entry's test of gain), so that it is played in looks, in match order.
    pub fn tests_sequentially(&self) -> bool {
        self.sequential.is_some() || self.gain_test.is_some()
    }

    /// Seatings each deal is played under.
    pub fn arrangements(&self) -> u64 {
        self.seating.arrangements(self.players())
    }

    /// Deals (coins) or games (points) before seatings.
    pub fn deals(&self) -> u64 {
        self.matches * u64::from(self.session.unwrap_or(1))
    }

    /// Each seat's agent id, `None` for a `winner_of` seat (its agent is known only once the
    /// earlier stage is played).
    pub fn agent_ids(&self) -> Vec<Option<&str>> {
        self.seats
            .iter()
            .map(|s| match s {
                SeatEntry::Agent(d) => Some(d.id.as_str()),
                SeatEntry::WinnerOf(_) => None,
            })
            .collect()
    }

    pub fn is_points(&self) -> bool {
        matches!(self.rules.variant().scoring, Scoring::Points(_))
    }

    /// One line saying what the sample size counts (a sequential stage's: at most).
    pub fn describe_sample(&self) -> String {
        let line = self.describe_size();
        match &self.sequential {
            None if self.gain_test.is_some() => {
                format!("{line}, at most: stops when its test of the gain decides")
            }
            None => line,
            Some(p) if p.decide => format!("{line}, at most: stops when its winner is decided"),
            Some(_) => format!("{line}, at most: stops when its sequential test decides"),
        }
    }

    fn describe_size(&self) -> String {
        let a = self.arrangements();
        let seat_word = match self.seating {
            Seating::Fixed => "fixed seating".to_string(),
            Seating::Random => "random seating".to_string(),
            Seating::Rotate => format!("{a} rotations"),
            Seating::Permute => format!("{a} seat permutations"),
        };
        match self.session {
            None => format!(
                "{} games x {seat_word} = {} games (rounds until one player is left)",
                self.matches,
                self.matches * a
            ),
            Some(s) => format!(
                "{} deals x {seat_word} = {} rounds{}",
                self.deals(),
                self.deals() * a,
                if s > 1 {
                    format!(" (sessions of {s} rounds)")
                } else {
                    String::new()
                }
            ),
        }
    }
}

/// One deal in this many has its decisions timed, unless a scenario says otherwise.
pub const DEFAULT_DECISION_SAMPLE: u32 = 16;

/// Output settings, resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Output {
    pub dir: PathBuf,
    /// Also write `rounds.csv` for each finished stage.
    pub csv: bool,
    pub chunk_rounds: u64,
    /// Decisions are timed in one deal in this many (`None`: never).
    pub decision_sample: Option<u32>,
    /// The deals (games) whose every event is traced.
    pub trace: crate::trace::TraceSelection,
}

/// A checked scenario, ready to run.
#[derive(Clone)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub path: PathBuf,
    pub seed: u64,
    pub stages: Vec<Stage>,
    /// Whether the file had `stages:` (outputs then go to one subfolder per stage).
    pub staged: bool,
    pub output: Output,
    /// Where agents' text output goes (scripts' `print`); the runner attaches `scripts.log`.
    pub agent_log: Arc<AgentLog>,
    /// The `train:` entries, in file order.
    pub trainings: Vec<Training>,
    /// The `tune:` entries, in file order.
    pub tunings: Vec<Tuning>,
    /// The `exploit:` entries, in file order.
    pub exploits: Vec<Exploit>,
    /// The `study:` section (`dhumbal-run serve`).
    pub study: Option<Study>,
}

/// The order participants meet a study's agents in (`study.order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StudyOrder {
    /// A balanced Latin square (Williams' design): each agent in each position once per
    /// `n` participants, and each agent directly after every other once (with an odd number
    /// of agents, over `2n` participants, the rows and their mirror images).
    LatinSquare,
    /// Participant p meets agents p, p+1, ... (mod n): a cyclic Latin square.
    Rotate,
    /// Every participant as listed.
    Fixed,
}

impl StudyOrder {
    /// The agents' order (indices into the study's agents) of row `participant` for `n`
    /// agents.
    pub fn row(self, n: usize, participant: usize) -> Vec<usize> {
        match self {
            StudyOrder::Fixed => (0..n).collect(),
            StudyOrder::Rotate => (0..n).map(|j| (j + participant) % n).collect(),
            StudyOrder::LatinSquare => {
                // The first row 0, 1, n-1, 2, n-2, ...; row r adds r (mod n); with n odd, rows
                // n..2n are the first n reversed.
                let first: Vec<usize> = (0..n)
                    .map(|j| match j {
                        0 => 0,
                        j if j % 2 == 1 => j.div_ceil(2),
                        j => n - j / 2,
                    })
                    .collect();
                let rows = if n % 2 == 1 { 2 * n } else { n };
                let r = participant % rows.max(1);
                let mut row: Vec<usize> = first.iter().map(|&a| (a + r % n) % n).collect();
                if r >= n {
                    row.reverse();
                }
                row
            }
        }
    }
}

/// Where the person sits in a study's game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudySeat {
    Fixed(usize),
    /// Seat g mod players in game g.
    Rotate,
}

/// Who may play a study.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StudyCodes {
    /// These codes, each one person's.
    Listed(Vec<String>),
    /// Codes issued on request (to those who give the access code, if there is one).
    SignUp,
}

/// A resolved `study:` section (docs/studies.md).
#[derive(Clone)]
pub struct Study {
    pub rules: Arc<Rules>,
    /// The seed of every game's deals and agents' streams.
    pub seed: u64,
    /// The conditions: the agent a game seats in every seat but the person's.
    pub agents: Vec<AgentDef>,
    pub order: StudyOrder,
    /// Games per participant.
    pub games: u32,
    /// Coin scoring: rounds per game; `None` for point games.
    pub rounds: Option<u32>,
    pub seat: StudySeat,
    /// The agent that answers hints.
    pub advisor: Option<AgentDef>,
    pub instructions: String,
    pub consent: String,
    pub codes: StudyCodes,
    pub access_code: Option<String>,
    /// The section as resolved (its hash names the study in its files).
    pub spec: Value,
}

impl Study {
    /// The agent (an index into `agents`) participant number `participant` meets in each
    /// of its games.
    pub fn schedule(&self, participant: usize) -> Vec<usize> {
        let row = self.order.row(self.agents.len(), participant);
        (0..self.games as usize)
            .map(|g| row[g % row.len()])
            .collect()
    }

    /// The person's seat in game `game`.
    pub fn seat_in(&self, game: u32) -> usize {
        match self.seat {
            StudySeat::Fixed(s) => s,
            StudySeat::Rotate => game as usize % self.rules.players(),
        }
    }

    pub fn players(&self) -> usize {
        self.rules.players()
    }

    /// Whether games are scored in points (played until one player is left).
    pub fn is_points(&self) -> bool {
        self.rounds.is_none()
    }
}

/// A resolved `exploit:` entry (docs/exploitability.md): the target, and the stages that
/// measure it: its self-play first, then each responder at the target's table, all on the
/// same deals (the same seed), each deal under every rotation of the seats. Slot 0 is the
/// target in the first and the responder in the others, so that a responder's result in a
/// seat of a deal pairs with the target's own in the same seat of the same deal.
#[derive(Clone)]
pub struct Exploit {
    pub id: String,
    pub target: AgentDef,
    pub rules: Arc<Rules>,
    /// The gain the test asks about, in the measure's units.
    pub margin: f64,
    /// `self-play`, then one stage per method, named after it.
    pub stages: Vec<Stage>,
    /// The entry as resolved, for the manifest.
    pub spec: Value,
    /// The tuning its `tune` method runs (an entry of the scenario's tunings), if it has one.
    pub tuning: Option<String>,
    /// The training its `learn` method runs (an entry of the scenario's trainings), if any.
    pub training: Option<String>,
    /// The stages of a search responder given several budgets (`iterations: [...]`), each
    /// with its iterations per decision: the gain against the budget.
    pub budgets: Vec<(String, u64)>,
}

impl Exploit {
    /// The stage's name of the target's self-play.
    pub const SELF_PLAY: &'static str = "self-play";

    /// Where its records go.
    pub fn dir(&self, scenario: &Scenario) -> PathBuf {
        scenario.output.dir.join("exploit").join(&self.id)
    }

    /// The methods measured, in the order played.
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        self.stages.iter().skip(1).map(|s| s.name.as_str())
    }
}

/// A resolved `train:` entry: a network (DQN, Double DQN, PPO) or a tabular policy (seed
/// 001's Q-learning or value iteration).
#[derive(Clone)]
pub struct Training {
    pub plan: Plan,
    /// The entry as resolved, for the manifest (its hash is the plan's `scenario_hash`).
    pub spec: Value,
}

/// What a training learns.
#[derive(Clone)]
// A plan per `train:` entry, made once when the scenario resolves: the size of its variants
// costs nothing, and a box would only add a step to every use.
#[allow(clippy::large_enum_variant)]
pub enum Plan {
    Neural(dhumbal_learn::TrainPlan),
    Tabular(dhumbal_learn::tabular::TabularPlan),
}

impl Training {
    /// Where its records go.
    pub fn dir(&self, scenario: &Scenario) -> PathBuf {
        scenario.output.dir.join("train").join(self.id())
    }

    pub fn id(&self) -> &str {
        match &self.plan {
            Plan::Neural(p) => &p.id,
            Plan::Tabular(p) => &p.id,
        }
    }

    /// The file it writes: the checkpoint, or the policy table.
    pub fn output(&self) -> &std::path::Path {
        match &self.plan {
            Plan::Neural(p) => &p.checkpoint,
            Plan::Tabular(p) => &p.policy,
        }
    }

    pub fn episodes(&self) -> u64 {
        match &self.plan {
            Plan::Neural(p) => p.episodes,
            Plan::Tabular(p) => p.episodes,
        }
    }

    pub fn hash(&self) -> &str {
        match &self.plan {
            Plan::Neural(p) => &p.scenario_hash,
            Plan::Tabular(p) => &p.scenario_hash,
        }
    }

    /// The network plan, for a neural training.
    pub fn neural(&self) -> Option<&dhumbal_learn::TrainPlan> {
        match &self.plan {
            Plan::Neural(p) => Some(p),
            Plan::Tabular(_) => None,
        }
    }
}

impl Scenario {
    /// The scenario as resolved, as JSON (for the manifest and the hash).
    pub fn resolved_json(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "stages": self.stages.iter().map(|s| s.spec.clone()).collect::<Vec<_>>(),
            // What the records contain depends on the sample too, and where parts are cut on
            // the grid (which shards, resume and merge rely on): `--resume`, shards and
            // `merge` compare the hash.
            "records": {
                "decision_sample": self.output.decision_sample,
                "trace": self.output.trace,
                "chunk_rounds": self.output.chunk_rounds,
            },
        })
    }

    /// A stable 64-bit FNV-1a hash of the resolved scenario, in hex.
    pub fn hash(&self) -> String {
        let text = serde_json::to_string(&self.resolved_json()).expect("JSON");
        format!("{:016x}", dhumbal_game::hash::fnv1a(text.as_bytes()))
    }

    /// The output folder of a stage.
    pub fn stage_dir(&self, stage: usize) -> PathBuf {
        if self.staged {
            self.output.dir.join(&self.stages[stage].name)
        } else {
            self.output.dir.clone()
        }
    }
}

/// A resolved `tune:` entry (docs/tuning.md): the agent whose parameters are searched, the
/// space, the tables it is evaluated at, the optimizer and the budget, and the confirmation.
#[derive(Clone)]
pub struct Tuning {
    pub id: String,
    /// The agent file it writes, and as the scenario wrote it.
    pub output: PathBuf,
    pub written: String,
    /// The scenario's folder: paths in the agent entry are relative to it.
    pub folder: PathBuf,
    /// The agent entry as written (no `id`): the starting point and the baseline.
    pub base: Value,
    /// The starting agent, as resolved.
    pub start_agent: AgentDef,
    pub params: Vec<TunedParam>,
    /// The starting point: each parameter's value in force in `base` (on the grid), or the
    /// middle of its range when the agent has none.
    pub start: Vec<f64>,
    pub rules: Arc<Rules>,
    /// The other seats of each table of an evaluation (one lineup per window of the
    /// opponents); every evaluation plays `batch / lineups` deals (games) at each.
    pub lineups: Vec<Vec<AgentDef>>,
    pub seating: Seating,
    pub objective: Objective,
    pub optimizer: OptimizerChoice,
    /// Deals (games) the search may play, and per evaluation.
    pub budget: u64,
    pub batch: u64,
    pub seed: u64,
    /// The confirmation stage (tuned against the start on fresh deals, a sequential test);
    /// `None` with `confirm: false`.
    pub confirm: Option<Stage>,
    /// The entry as resolved, for the manifest (its hash names the search).
    pub spec: Value,
}

/// One tuned parameter: its dotted name under the agent's `params:`, its domain, and for a
/// choice the values (the optimizer sees their index).
#[derive(Clone, Debug)]
pub struct TunedParam {
    pub name: String,
    pub dim: crate::optimize::Dim,
    pub choices: Vec<Value>,
}

/// What a tuning maximises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// The share of rounds won.
    Win,
    /// The share of games won (point scoring).
    Games,
    /// Coins per round.
    Economic,
}

impl Objective {
    pub const NAMES: [&'static str; 3] = ["win", "games", "economic"];

    pub fn name(self) -> &'static str {
        match self {
            Objective::Win => "win",
            Objective::Games => "games",
            Objective::Economic => "economic",
        }
    }

    pub fn from_name(name: &str) -> Option<Objective> {
        match name {
            "win" => Some(Objective::Win),
            "games" => Some(Objective::Games),
            "economic" => Some(Objective::Economic),
            _ => None,
        }
    }
}

/// The optimizer of a tuning, with its settings.
#[derive(Clone, Debug)]
pub enum OptimizerChoice {
    Ntbea(crate::optimize::NtbeaSettings),
    Spsa(crate::optimize::SpsaSettings),
}

/// Candidates re-evaluated at the end of a search.
pub const FINAL_CANDIDATES: usize = 5;

impl Tuning {
    /// The deals (games) kept for the final round, which re-evaluates the best candidates on
    /// fresh deals: a fifth of the budget, in whole rounds of one evaluation per candidate
    /// (none when the budget is under 25 evaluations).
    pub fn final_budget(&self) -> u64 {
        final_budget(self.budget, self.batch)
    }

    /// Where its records go.
    pub fn dir(&self, scenario: &Scenario) -> PathBuf {
        scenario.output.dir.join("tune").join(&self.id)
    }

    /// The deals (games) an evaluation plays against each of its lineups: its `batch`
    /// shared out evenly.
    pub fn deals_per_lineup(&self) -> u64 {
        self.batch / self.lineups.len().max(1) as u64
    }

    /// The agent entry at `point`: the base entry with each tuned parameter set.
    pub fn entry_at(&self, point: &[f64]) -> Value {
        entry_at(&self.base, &self.params, point)
    }

    /// A point's values as shown to people: `pickup_threshold=5, high_preference=1.2`.
    pub fn label(&self, point: &[f64]) -> String {
        let entry = self.entry_at(point);
        self.params
            .iter()
            .map(|p| {
                format!(
                    "{}={}",
                    p.name,
                    param(&entry, &p.name).unwrap_or(Value::Null)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `base` (an agent entry) with each of `params` set to its value in `point`: a whole number,
/// a real to a ten-thousandth of its range, or the choice at that index.
pub fn entry_at(base: &Value, params: &[TunedParam], point: &[f64]) -> Value {
    let mut entry = base.clone();
    for (p, &v) in params.iter().zip(point) {
        let value = match p.dim {
            crate::optimize::Dim::Int { .. } => Value::from(v.round() as i64),
            crate::optimize::Dim::Real { lo, hi, .. } => Value::from(round_real(v, hi - lo)),
            crate::optimize::Dim::Choice { .. } => p.choices[v as usize].clone(),
        };
        set_param(&mut entry, &p.name, value);
    }
    entry
}

/// [`Tuning::final_budget`] for a budget and a batch.
pub fn final_budget(budget: u64, batch: u64) -> u64 {
    let round = batch.max(1) * FINAL_CANDIDATES as u64;
    (budget / 5) / round * round
}

/// A real parameter's value to a ten-thousandth of its range (SPSA moves continuously; more
/// digits are noise, and would make the agent file unreadable).
fn round_real(v: f64, range: f64) -> f64 {
    let decimals = (-(range / 1e4).log10().floor()).clamp(0.0, 12.0) as i32;
    let scale = 10f64.powi(decimals);
    (v * scale).round() / scale
}

/// Sets `name` (dotted: `rollout.params.pickup_threshold`) under `entry`'s `params:`, making
/// the maps on the way (a nested agent given by its kind's name becomes `{kind: NAME}`).
pub fn set_param(entry: &mut Value, name: &str, value: Value) {
    fn map(v: &mut Value) -> &mut serde_json::Map<String, Value> {
        if let Value::String(kind) = v {
            *v = serde_json::json!({ "kind": kind.clone() });
        }
        if !v.is_object() {
            *v = Value::Object(serde_json::Map::new());
        }
        v.as_object_mut().expect("made an object")
    }
    let mut at = map(entry)
        .entry("params")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let parts: Vec<&str> = name.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        at = map(at)
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    map(at).insert(parts[parts.len() - 1].to_string(), value);
}

/// The value of `name` under `entry`'s `params:` (as [`set_param`] names it), if given.
pub fn param(entry: &Value, name: &str) -> Option<Value> {
    let mut at = entry.get("params")?;
    for part in name.split('.') {
        at = at.get(part)?;
    }
    Some(at.clone())
}
