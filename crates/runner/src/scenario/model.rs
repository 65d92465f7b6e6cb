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
}

impl Stage {
    pub fn players(&self) -> usize {
        self.rules.players()
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
