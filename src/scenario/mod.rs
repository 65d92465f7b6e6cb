//! Scenario files: the raw YAML types (`*Spec`, the serde boundary) and their resolution into a
//! checked [`Scenario`] that the tournament runner uses.
//!
//! Reading happens in two stages, as in ripgrep's flags: the spec is deserialized as written
//! (every unknown key collected, not just the first), then resolved once: presets expanded,
//! agent kinds and parameters checked, scripts compiled, sample sizes derived. Every problem is
//! collected with its file, line and column before anything runs.

pub mod locate;
pub mod rules_spec;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agents::registry::{self, Recipe};
use crate::agents::script::{DEFAULT_MAX_OPERATIONS, ScriptLog, ScriptProgram, resolve_path};
use crate::game::rules::{Rules, Scoring};
use locate::Locations;
pub use rules_spec::RulesSpec;

/// Declares a spec struct with the fields every tournament shares (rules, agents, seating,
/// sample size) plus its own; `table()` extracts the shared part. (Not `#[serde(flatten)]`,
/// which would hide unknown keys from the validator.)
macro_rules! with_table_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// `chacha` (default: a stream per deal and per agent) or `python` (CPython's
            /// MT19937, one shared stream per session, to reproduce the paper's run).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub generator: Option<GeneratorName>,
            /// Coin scoring: the number of deals; every deal is played once per seating.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub deals: Option<u64>,
            /// Coin scoring: the number of rounds in all (deals x seatings), instead of `deals`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rounds: Option<u64>,
            /// Point scoring: the number of games (each played until one player is left).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub games: Option<u64>,
            /// Coin scoring: rounds per session; coins carry over within a session (the paper
            /// played one session of 1024 rounds). Default 1: every deal starts afresh.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub session: Option<u32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rules: Option<RulesSpec>,
            /// The players, in seat order (before seating rotations).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub agents: Option<Vec<AgentSpec>>,
            /// `fixed`, `rotate` (each deal once per rotation), `permute` (each deal under every
            /// seat permutation) or `random` (a fresh seating per deal).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub seating: Option<SeatingName>,
        }

        impl $name {
            pub fn table(&self) -> TableSpec {
                TableSpec {
                    generator: self.generator,
                    deals: self.deals,
                    rounds: self.rounds,
                    games: self.games,
                    session: self.session,
                    rules: self.rules.clone(),
                    agents: self.agents.clone(),
                    seating: self.seating,
                }
            }
        }
    };
}

with_table_fields! {
    /// A scenario file as written.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields, title = "dhumbal-run scenario")]
    pub struct ScenarioSpec {
        /// Names the run and its output folder (`reports/<name>/`).
        pub name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// Master seed: every deal's and every agent's random stream derives from it.
        pub seed: u64,
        /// Several tournaments in one file, run in order; the fields above are their defaults.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stages: Option<Vec<StageSpec>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub output: Option<OutputSpec>,
    }
}

with_table_fields! {
    /// One stage of a multi-stage scenario.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct StageSpec {
        /// Names the stage and its output subfolder.
        pub name: String,
        /// Overrides the scenario seed for this stage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub seed: Option<u64>,
    }
}

/// The shared part of a scenario or a stage.
#[derive(Clone, Debug, Default)]
pub struct TableSpec {
    pub generator: Option<GeneratorName>,
    pub deals: Option<u64>,
    pub rounds: Option<u64>,
    pub games: Option<u64>,
    pub session: Option<u32>,
    pub rules: Option<RulesSpec>,
    pub agents: Option<Vec<AgentSpec>>,
    pub seating: Option<SeatingName>,
}

/// The fields a search's `rollout:` mapping may have.
const ROLLOUT_KEYS: [&str; 5] = ["id", "kind", "script", "params", "max_operations"];

/// An agent: a built-in `kind`, a Rhai `script`, or `winner_of` an earlier stage.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentSpec {
    /// Names the agent in records and reports; defaults to the kind or the script's file stem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A built-in kind; `dhumbal-run agents` lists them with their parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "agent_kind_schema")]
    pub kind: Option<String>,
    /// A Rhai script, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Parameters: a built-in kind's settings, or anything a script reads as `obs.params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, Value>>,
    /// Scripts: operations one decision may take (default 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_operations: Option<u64>,
    /// Seat the winner of an earlier stage (highest win rate, then economic performance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner_of: Option<String>,
}

fn agent_kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<Value> = registry::kinds()
        .iter()
        .map(|k| Value::from(k.name))
        .collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// Output options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutputSpec {
    /// Output folder (default `reports/<name>`); `--out` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Write `rounds.csv` (default true; it is also the journal that `--resume` continues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<bool>,
    /// Write `rounds.parquet` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parquet: Option<bool>,
    /// Roughly how many rounds make one chunk of records written at once (default 16384).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_rounds: Option<u64>,
    /// Time agents' decisions (default true); `decision_ns` is empty when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_timing: Option<bool>,
    /// Time the decisions of one deal in this many, chosen by a hash of the deal number
    /// (default 16; 1 times every deal). Reading the clock twice per decision costs about a
    /// tenth of a heuristic round; a sample gives the same mean at a fraction of the cost.
    /// Untimed rows have an empty `decision_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_sample: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GeneratorName {
    Chacha,
    Python,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeatingName {
    /// As listed.
    Fixed,
    /// Every deal once per cyclic rotation of the seats.
    Rotate,
    /// Every deal under every permutation of the seats (duplicate play).
    Permute,
    /// A fresh random seating per deal (per session or game).
    Random,
}

/// The random streams a stage uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    Chacha,
    Python,
}

/// How agents are seated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Seating {
    Fixed,
    Rotate,
    Permute,
    Random,
}

impl Seating {
    /// Seatings each deal is played under, with `players` seats.
    pub fn arrangements(self, players: usize) -> u64 {
        let n = players as u64;
        match self {
            Seating::Fixed | Seating::Random => 1,
            Seating::Rotate => n,
            Seating::Permute => (1..=n).product(),
        }
    }
}

/// A configured agent.
#[derive(Clone)]
pub struct AgentDef {
    pub id: String,
    /// The kind, or `script:<path>`.
    pub kind: String,
    pub recipe: Recipe,
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

    pub fn is_points(&self) -> bool {
        matches!(self.rules.variant().scoring, Scoring::Points(_))
    }

    /// One line saying what the sample size counts.
    pub fn describe_sample(&self) -> String {
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
    pub csv: bool,
    pub parquet: bool,
    pub chunk_rounds: u64,
    /// Decisions are timed in one deal in this many (`None`: never).
    pub decision_sample: Option<u32>,
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
    /// The script log every compiled script writes to.
    pub script_log: Arc<ScriptLog>,
}

impl Scenario {
    /// The scenario as resolved, as JSON (for the manifest and the hash).
    pub fn resolved_json(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "stages": self.stages.iter().map(|s| s.spec.clone()).collect::<Vec<_>>(),
            // What the records contain depends on these too (`--resume` compares the hash).
            "records": { "csv": self.output.csv, "decision_sample": self.output.decision_sample },
        })
    }

    /// A stable 64-bit FNV-1a hash of the resolved scenario, in hex.
    pub fn hash(&self) -> String {
        let text = serde_json::to_string(&self.resolved_json()).expect("JSON");
        format!("{:016x}", fnv1a(text.as_bytes()))
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

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where in the document, as a dotted path (`stages.1.agents.0.kind`); empty for the file.
    pub path: String,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// Every problem found in a scenario file.
#[derive(Clone, Debug)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub problems: Vec<Problem>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "{} has {n} problem{}:",
            self.file.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "  {}", self.file.display())?;
            if let Some(line) = p.line {
                write!(f, ":{line}")?;
                if let Some(col) = p.column {
                    write!(f, ":{col}")?;
                }
            }
            if p.path.is_empty() {
                writeln!(f, ": {}", p.message)?;
            } else {
                writeln!(f, ": `{}`: {}", p.path, p.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Overrides given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    /// Replaces the sample size of every stage (deals for coins, games for points).
    pub rounds: Option<u64>,
    pub out: Option<PathBuf>,
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// Rounds of one session or game: a deal id holds the round in 20 bits.
const MAX_ROUNDS_PER_MATCH: u32 = (1 << 20) - 1;

/// The closest of `candidates` to `name`, if close enough to be a likely typo.
pub fn nearest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let best = candidates
        .iter()
        .map(|c| (levenshtein(name, c), *c))
        .min()?;
    let limit = (name.chars().count() / 3).max(2);
    (best.0 <= limit).then_some(best.1)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j]))
                .min(row[j] + 1)
                .min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The JSON Schema of scenario files (`schemas/scenario.schema.json`).
pub fn json_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ScenarioSpec)).expect("schema is JSON")
}

/// Valid keys of the object at `path` (dotted, array indices as numbers) per the schema.
fn valid_keys(schema: &Value, path: &[&str]) -> Vec<String> {
    fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
        while let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            match root.get("$defs").and_then(|d| d.get(name)) {
                Some(n) => node = n,
                None => break,
            }
        }
        node
    }
    fn alternatives<'a>(root: &'a Value, node: &'a Value, out: &mut Vec<&'a Value>) {
        let node = resolve(root, node);
        out.push(node);
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = node.get(key).and_then(Value::as_array) {
                for n in list {
                    alternatives(root, n, out);
                }
            }
        }
    }
    let mut nodes = vec![schema];
    for segment in path {
        let mut next = Vec::new();
        for n in nodes {
            let mut alts = Vec::new();
            alternatives(schema, n, &mut alts);
            for a in alts {
                if segment.parse::<usize>().is_ok() {
                    if let Some(items) = a.get("items") {
                        next.push(items);
                    }
                } else if let Some(p) = a.get("properties").and_then(|p| p.get(*segment)) {
                    next.push(p);
                }
            }
        }
        nodes = next;
    }
    let mut keys = Vec::new();
    for n in nodes {
        let mut alts = Vec::new();
        alternatives(schema, n, &mut alts);
        for a in alts {
            if let Some(props) = a.get("properties").and_then(Value::as_object) {
                keys.extend(props.keys().cloned());
            }
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

/// Reads, checks and resolves a scenario file.
pub fn load(path: &Path, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
    let fail = |message: String| ScenarioError {
        file: path.to_path_buf(),
        problems: vec![Problem {
            path: String::new(),
            message,
            line: None,
            column: None,
        }],
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    parse(path, &text, overrides)
}

/// Checks and resolves scenario text read from `path`.
pub fn parse(path: &Path, text: &str, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
    let locations = Locations::of(text);
    let mut problems = Vec::new();
    let mut unknown = Vec::new();
    let spec: Result<ScenarioSpec, _> = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_ignored::deserialize(de, |p| {
            // `?` marks an `Option` layer in serde_ignored's paths; YAML has no such level.
            let path: Vec<String> = p
                .to_string()
                .split('.')
                .filter(|s| *s != "?")
                .map(String::from)
                .collect();
            unknown.push(path.join("."))
        })
    });
    let spec = match spec {
        Ok(spec) => Some(spec),
        Err(e) => {
            problems.push(syntax_problem(&e, &locations));
            None
        }
    };
    let schema = json_schema();
    for key_path in unknown {
        let (parent, key) = match key_path.rfind('.') {
            Some(i) => (&key_path[..i], &key_path[i + 1..]),
            None => ("", key_path.as_str()),
        };
        let segments: Vec<&str> = if parent.is_empty() {
            Vec::new()
        } else {
            parent.split('.').collect()
        };
        let valid = valid_keys(&schema, &segments);
        let refs: Vec<&str> = valid.iter().map(String::as_str).collect();
        let hint = nearest(key, &refs)
            .map(|n| format!("did you mean `{n}`? "))
            .unwrap_or_default();
        let pos = locations.find_key(&key_path);
        problems.push(Problem {
            path: key_path.clone(),
            message: format!(
                "unknown field; {hint}valid fields here: {}",
                refs.join(", ")
            ),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
        });
    }
    let Some(spec) = spec else {
        return Err(ScenarioError {
            file: path.to_path_buf(),
            problems,
        });
    };
    let mut ctx = Resolver {
        path,
        locations: &locations,
        problems,
        log: Arc::new(ScriptLog::default()),
    };
    let scenario = ctx.scenario(&spec, overrides);
    if ctx.problems.is_empty() {
        Ok(scenario.expect("resolution succeeds without problems"))
    } else {
        Err(ScenarioError {
            file: path.to_path_buf(),
            problems: ctx.problems,
        })
    }
}

fn syntax_problem(e: &serde_saphyr::Error, locations: &Locations) -> Problem {
    let location = e.location();
    let (line, column) = (
        location.map(|l| l.line() as usize),
        location.map(|l| l.column() as usize),
    );
    // The crate's message ends with a rendered snippet and starts with its own position; keep
    // the message itself, in plainer words for the common cases.
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("invalid YAML").trim();
    let mut message = first.trim_start_matches("error: ");
    if let Some(rest) = message.strip_prefix("line ")
        && let Some(i) = rest.find(": ")
    {
        message = &rest[i + 2..];
    }
    let message = match message {
        "invalid u64" | "invalid u32" | "invalid u8" => {
            "expected a whole number, 0 or more".to_string()
        }
        "invalid i64" => "expected a whole number".to_string(),
        "invalid f64" => "expected a number".to_string(),
        "invalid bool" => "expected true or false".to_string(),
        other => other.to_string(),
    };
    let path = match (line, column) {
        (Some(l), Some(c)) => locations.path_at(l, c).unwrap_or_default(),
        _ => String::new(),
    };
    Problem {
        path,
        message,
        line,
        column,
    }
}

struct Resolver<'a> {
    path: &'a Path,
    locations: &'a Locations,
    problems: Vec<Problem>,
    log: Arc<ScriptLog>,
}

impl Resolver<'_> {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        let pos = self.locations.find(path);
        self.problems.push(Problem {
            path: path.to_string(),
            message: message.into(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
        });
    }

    fn scenario(&mut self, spec: &ScenarioSpec, overrides: &Overrides) -> Option<Scenario> {
        let seed = overrides.seed.unwrap_or(spec.seed);
        if spec.name.trim().is_empty() || spec.name.contains(['/', '\\']) {
            self.problem(
                "name",
                "needs a non-empty name without slashes (it names the output folder)",
            );
        }
        let staged = spec.stages.is_some();
        let mut stages = Vec::new();
        match &spec.stages {
            None => {
                if let Some(s) = self.stage(
                    &spec.name,
                    seed,
                    "",
                    &spec.table(),
                    &TableSpec::default(),
                    &[],
                    overrides,
                ) {
                    stages.push(s);
                }
            }
            Some(list) => {
                if list.is_empty() {
                    self.problem("stages", "lists no stages");
                }
                let mut names: Vec<String> = Vec::new();
                for (i, st) in list.iter().enumerate() {
                    let prefix = format!("stages.{i}");
                    if names.contains(&st.name) {
                        self.problem(
                            &format!("{prefix}.name"),
                            format!("stage `{}` is defined twice", st.name),
                        );
                    }
                    if st.name.trim().is_empty() || st.name.contains(['/', '\\']) {
                        self.problem(
                            &format!("{prefix}.name"),
                            "needs a non-empty name without slashes",
                        );
                    }
                    // `--seed` replaces the scenario seed and is mixed into stages' own seeds, so
                    // that replicate runs differ in every stage.
                    let stage_seed = match (st.seed, overrides.seed) {
                        (Some(own), Some(cli)) => mix_seed(cli, own),
                        (Some(own), None) => own,
                        (None, _) => seed,
                    };
                    let resolved = self.stage(
                        &st.name,
                        stage_seed,
                        &prefix,
                        &st.table(),
                        &spec.table(),
                        &names,
                        overrides,
                    );
                    names.push(st.name.clone());
                    if let Some(s) = resolved {
                        stages.push(s);
                    }
                }
            }
        }
        let out = spec.output.clone().unwrap_or_default();
        let chunk_rounds = out.chunk_rounds.unwrap_or(16_384);
        if out.decision_sample == Some(0) {
            self.problem(
                "output.decision_sample",
                "must be at least 1 (1 times every deal, 16 one deal in 16)",
            );
        }
        if chunk_rounds == 0 {
            self.problem("output.chunk_rounds", "must be at least 1");
        }
        let dir = overrides
            .out
            .clone()
            .or_else(|| out.dir.as_ref().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("reports").join(&spec.name));
        let output = Output {
            dir,
            csv: out.csv.unwrap_or(true),
            parquet: out.parquet.unwrap_or(true),
            chunk_rounds,
            decision_sample: out
                .decision_timing
                .unwrap_or(true)
                .then(|| out.decision_sample.unwrap_or(DEFAULT_DECISION_SAMPLE)),
        };
        if !self.problems.is_empty() {
            return None;
        }
        Some(Scenario {
            name: spec.name.clone(),
            description: spec.description.clone(),
            path: self.path.to_path_buf(),
            seed,
            stages,
            staged,
            output,
            script_log: self.log.clone(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn stage(
        &mut self,
        name: &str,
        seed: u64,
        prefix: &str,
        own: &TableSpec,
        defaults: &TableSpec,
        earlier: &[String],
        overrides: &Overrides,
    ) -> Option<Stage> {
        let at = |field: &str| {
            if prefix.is_empty() {
                field.to_string()
            } else {
                format!("{prefix}.{field}")
            }
        };
        let before = self.problems.len();
        // Rules: the stage's fields over the defaults' fields.
        let rules_spec = merge_rules(defaults.rules.as_ref(), own.rules.as_ref());
        let variant = match rules_spec.to_variant() {
            Ok(v) => Some(v),
            Err(list) => {
                for (field, msg) in list {
                    self.problem(&at(&format!("rules.{field}")), msg);
                }
                None
            }
        };
        let rules = variant.and_then(|v| match Rules::new(v) {
            Ok(r) => Some(Arc::new(r)),
            Err(e) => {
                for p in e.0 {
                    self.problem(&at(&format!("rules.{}", rules_field(p.field))), p.message);
                }
                None
            }
        });

        let generator = match own
            .generator
            .or(defaults.generator)
            .unwrap_or(GeneratorName::Chacha)
        {
            GeneratorName::Chacha => Generator::Chacha,
            GeneratorName::Python => Generator::Python,
        };
        let seating = match own
            .seating
            .or(defaults.seating)
            .unwrap_or(SeatingName::Fixed)
        {
            SeatingName::Fixed => Seating::Fixed,
            SeatingName::Rotate => Seating::Rotate,
            SeatingName::Permute => Seating::Permute,
            SeatingName::Random => Seating::Random,
        };

        // Agents.
        let (agent_list, agents_path) = match (&own.agents, &defaults.agents) {
            (Some(a), _) => (a.clone(), at("agents")),
            (None, Some(a)) => (a.clone(), "agents".to_string()),
            (None, None) => {
                self.problem(&at("agents"), "no agents: list one per seat");
                (Vec::new(), at("agents"))
            }
        };
        let mut seats = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        for (i, a) in agent_list.iter().enumerate() {
            let p = format!("{agents_path}.{i}");
            if let Some(mut entry) = self.agent(a, &p, rules.as_ref(), earlier) {
                let id = match &mut entry {
                    SeatEntry::Agent(d) if a.id.is_none() && ids.contains(&d.id) => {
                        // Unnamed agents of the same kind: `random`, `random-2`, `random-3`.
                        let base = d.id.clone();
                        let n = (2..)
                            .find(|n| !ids.contains(&format!("{base}-{n}")))
                            .expect("a free name");
                        d.id = format!("{base}-{n}");
                        d.spec["id"] = Value::from(d.id.clone());
                        d.id.clone()
                    }
                    SeatEntry::Agent(d) => d.id.clone(),
                    SeatEntry::WinnerOf(s) => format!("winner_of:{s}"),
                };
                if ids.contains(&id) {
                    self.problem(
                        &format!("{p}.id"),
                        format!("two agents are named `{id}`; ids in a stage must differ"),
                    );
                }
                ids.push(id);
                seats.push(entry);
            }
        }
        if let Some(r) = &rules
            && agent_list.len() != r.players()
            && (own.agents.is_some() || defaults.agents.is_some())
        {
            self.problem(
                &agents_path,
                format!(
                    "{} agents for {} seats: list exactly one agent per seat (rules.players)",
                    agent_list.len(),
                    r.players()
                ),
            );
        }

        // Sample size.
        let points = rules
            .as_ref()
            .map(|r| matches!(r.variant().scoring, Scoring::Points(_)));
        let pick = |o: Option<u64>, d: Option<u64>| o.or(d);
        let (deals, rounds, games) = (
            pick(own.deals, defaults.deals),
            pick(own.rounds, defaults.rounds),
            pick(own.games, defaults.games),
        );
        let session = own.session.or(defaults.session);
        let arrangements = rules.as_ref().map(|r| seating.arrangements(r.players()));
        let mut matches = 0;
        let mut session_len = None;
        match points {
            Some(true) => {
                if let Some(r) = &rules
                    && let Scoring::Points(p) = r.variant().scoring
                    && p.max_rounds > MAX_ROUNDS_PER_MATCH
                {
                    self.problem(
                        &at("rules.max_rounds"),
                        format!("at most {MAX_ROUNDS_PER_MATCH} rounds per game"),
                    );
                }
                if deals.is_some() || rounds.is_some() {
                    self.problem(&at(if deals.is_some() { "deals" } else { "rounds" }), "these rules score points: give the sample size as `games` (each played until one player is left)");
                }
                if session.is_some() {
                    self.problem(
                        &at("session"),
                        "sessions apply to coin scoring; a point game is its own session",
                    );
                }
                match overrides.rounds.or(games) {
                    Some(0) => self.problem(&at("games"), "must be at least 1"),
                    Some(g) => matches = g,
                    None => self.problem(&at("games"), "missing: how many games to play"),
                }
            }
            Some(false) => {
                if games.is_some() {
                    self.problem(&at("games"), "these rules score coins: give the sample size as `deals` (or `rounds` = deals x seatings)");
                }
                let s = session.unwrap_or(1);
                if s == 0 {
                    self.problem(&at("session"), "must be at least 1");
                }
                if s > MAX_ROUNDS_PER_MATCH {
                    self.problem(
                        &at("session"),
                        format!("at most {MAX_ROUNDS_PER_MATCH} rounds per session"),
                    );
                }
                let total_deals = match (overrides.rounds.or(deals), rounds) {
                    (Some(d), None) => Some(d),
                    (Some(_), Some(_)) if overrides.rounds.is_none() => {
                        self.problem(&at("rounds"), "give either `deals` or `rounds`, not both");
                        None
                    }
                    (Some(d), Some(_)) => Some(d),
                    (None, Some(r)) => match arrangements {
                        Some(a) if r % a != 0 => {
                            self.problem(&at("rounds"), format!("{r} rounds cannot be split evenly over {a} seatings; use a multiple of {a}, or give `deals`"));
                            None
                        }
                        Some(a) => Some(r / a),
                        None => None,
                    },
                    (None, None) => {
                        self.problem(&at("deals"), "missing: how many deals to play (`deals`, or `rounds` = deals x seatings)");
                        None
                    }
                };
                match total_deals {
                    Some(0) => self.problem(&at("deals"), "must be at least 1"),
                    Some(d) if s > 0 && d % u64::from(s) != 0 => self.problem(
                        &at("session"),
                        format!("{d} deals do not divide into sessions of {s} rounds"),
                    ),
                    Some(d) if s > 0 => {
                        matches = d / u64::from(s);
                        session_len = Some(s);
                    }
                    _ => {}
                }
            }
            None => {}
        }
        if generator == Generator::Python && seating == Seating::Random {
            self.problem(&at("seating"), "the python generator has one stream per session and cannot also draw seatings; use chacha, or fixed/rotate/permute");
        }
        if self.problems.len() > before {
            return None;
        }
        let rules = rules?;
        let spec = serde_json::json!({
            "name": name,
            "seed": seed,
            "generator": generator,
            "seating": seating,
            "matches": matches,
            "session": session_len,
            "rules": RulesSpec::from_variant(rules.variant()),
            "agents": seats.iter().map(|s| match s {
                SeatEntry::Agent(d) => d.spec.clone(),
                SeatEntry::WinnerOf(i) => serde_json::json!({ "winner_of": earlier[*i] }),
            }).collect::<Vec<_>>(),
        });
        Some(Stage {
            name: name.to_string(),
            seed,
            generator,
            rules,
            seats,
            seating,
            matches,
            session: session_len,
            spec,
        })
    }

    /// A search agent's rollout policy: a kind's name, or a mapping like an `agents:` entry.
    fn rollout(&mut self, value: &Value, p: &str, rules: Option<&Arc<Rules>>) -> Option<Recipe> {
        let spec: AgentSpec = match value {
            Value::String(kind) => AgentSpec {
                id: None,
                kind: Some(kind.clone()),
                script: None,
                params: None,
                max_operations: None,
                winner_of: None,
            },
            Value::Object(map) => match serde_json::from_value(value.clone()) {
                Ok(_) if map.keys().any(|k| !ROLLOUT_KEYS.contains(&k.as_str())) => {
                    for k in map.keys().filter(|k| !ROLLOUT_KEYS.contains(&k.as_str())) {
                        self.problem(
                            &format!("{p}.{k}"),
                            format!("unknown field; valid: {}", ROLLOUT_KEYS.join(", ")),
                        );
                    }
                    return None;
                }
                Ok(spec) => spec,
                Err(e) => {
                    self.problem(
                        p,
                        format!("expected an agent like `{{kind: random}}` or `{{script: file.rhai}}`: {e}"),
                    );
                    return None;
                }
            },
            _ => {
                self.problem(
                    p,
                    format!("expected a kind name (e.g. `random`) or a mapping like `{{kind: balanced}}` or `{{script: file.rhai}}`, got {value}"),
                );
                return None;
            }
        };
        if spec.winner_of.is_some() {
            self.problem(p, "a rollout policy cannot be `winner_of` a stage");
            return None;
        }
        match self.agent(&spec, p, rules, &[])? {
            SeatEntry::Agent(def) => match def.recipe {
                Recipe::Search(..) => {
                    self.problem(p, "a rollout policy cannot itself search: use `random`, a heuristic or a script");
                    None
                }
                recipe => Some(recipe),
            },
            SeatEntry::WinnerOf(_) => None,
        }
    }

    fn agent(
        &mut self,
        a: &AgentSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
        earlier: &[String],
    ) -> Option<SeatEntry> {
        let given = [a.kind.is_some(), a.script.is_some(), a.winner_of.is_some()]
            .iter()
            .filter(|&&b| b)
            .count();
        if given != 1 {
            self.problem(p, "give exactly one of `kind` (a built-in agent), `script` (a Rhai file) or `winner_of` (an earlier stage)");
            return None;
        }
        if let Some(stage) = &a.winner_of {
            if a.params.is_some() || a.id.is_some() || a.max_operations.is_some() {
                self.problem(
                    p,
                    "`winner_of` takes no other fields: the winner keeps its own id and parameters",
                );
            }
            return match earlier.iter().position(|s| s == stage) {
                Some(i) => Some(SeatEntry::WinnerOf(i)),
                None => {
                    let refs: Vec<&str> = earlier.iter().map(String::as_str).collect();
                    let hint = nearest(stage, &refs)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    self.problem(
                        &format!("{p}.winner_of"),
                        if earlier.is_empty() {
                            "names no earlier stage: `winner_of` can only refer to stages listed before this one".to_string()
                        } else {
                            format!("`{stage}` is not an earlier stage; {hint}earlier stages: {}", refs.join(", "))
                        },
                    );
                    None
                }
            };
        }
        let params = a.params.clone().unwrap_or_default();
        if let Some(kind) = &a.kind {
            if a.max_operations.is_some() {
                self.problem(&format!("{p}.max_operations"), "applies to scripts only");
            }
            let recipe = match registry::builtin(kind, &params) {
                None => {
                    let names: Vec<&str> = registry::kinds().iter().map(|k| k.name).collect();
                    let hint = nearest(kind, &names)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    self.problem(
                        &format!("{p}.kind"),
                        format!(
                            "unknown agent kind `{kind}`; {hint}known kinds: {}",
                            names.join(", ")
                        ),
                    );
                    return None;
                }
                Some(Err(list)) => {
                    for (name, msg) in list {
                        self.problem(&format!("{p}.params.{name}"), msg);
                    }
                    return None;
                }
                Some(Ok(r)) => r,
            };
            let recipe = match (recipe, params.get("rollout")) {
                (Recipe::Search(kind, sp, _), Some(rollout)) => {
                    let rollout = self.rollout(rollout, &format!("{p}.params.rollout"), rules)?;
                    Recipe::Search(kind, sp, Arc::new(rollout))
                }
                (recipe, _) => recipe,
            };
            let id = a.id.clone().unwrap_or_else(|| kind.clone());
            let spec =
                serde_json::json!({ "id": id, "kind": kind, "params": recipe.resolved_params() });
            return Some(SeatEntry::Agent(AgentDef {
                id,
                kind: kind.clone(),
                recipe,
                spec,
            }));
        }
        let script = a.script.as_ref().expect("one of the three");
        let file = resolve_path(self.path, script);
        if !file.is_file() {
            self.problem(
                &format!("{p}.script"),
                format!(
                    "no such file: {} (paths are relative to the scenario file)",
                    file.display()
                ),
            );
            return None;
        }
        let rules = rules?;
        let max_ops = a.max_operations.unwrap_or(DEFAULT_MAX_OPERATIONS);
        if max_ops == 0 {
            self.problem(&format!("{p}.max_operations"), "must be at least 1");
            return None;
        }
        let program =
            match ScriptProgram::compile(&file, script, rules.clone(), self.log.clone(), max_ops) {
                Ok(prog) => prog,
                Err(e) => {
                    let mut msg = format!("{script}");
                    if let Some(line) = e.line {
                        msg.push_str(&format!(", line {line}"));
                        if let Some(col) = e.column {
                            msg.push_str(&format!(", column {col}"));
                        }
                    }
                    self.problem(&format!("{p}.script"), format!("{msg}: {}", e.message));
                    return None;
                }
            };
        let map: rhai::Map = params
            .iter()
            .map(|(k, v)| (k.as_str().into(), json_to_rhai(v)))
            .collect();
        let id = a.id.clone().unwrap_or_else(|| {
            Path::new(script)
                .file_stem()
                .map_or_else(|| script.clone(), |s| s.to_string_lossy().into_owned())
        });
        let spec = serde_json::json!({
            "id": id,
            "script": script,
            "source_fnv1a": program.source_hash(),
            "params": params,
            "max_operations": max_ops,
        });
        Some(SeatEntry::Agent(AgentDef {
            id,
            kind: format!("script:{script}"),
            recipe: Recipe::Script(Arc::new(program), Arc::new(map)),
            spec,
        }))
    }
}

/// Field names of [`crate::game::rules::Variant`] errors, as spelled in `rules:`.
fn rules_field(engine_field: &str) -> &str {
    match engine_field {
        "deck.jokers" => "jokers",
        "deck.joker_value" => "joker_value",
        "discards.min_run" => "min_run",
        "call.threshold" => "threshold",
        "scoring.limit" => "elimination_limit",
        "scoring.max_rounds" => "max_rounds",
        "scoring.cap" => "cap",
        other => other,
    }
}

fn merge_rules(defaults: Option<&RulesSpec>, own: Option<&RulesSpec>) -> RulesSpec {
    let mut base = serde_json::to_value(defaults.cloned().unwrap_or_default()).expect("JSON");
    if let (Some(obj), Ok(Value::Object(over))) = (
        base.as_object_mut(),
        serde_json::to_value(own.cloned().unwrap_or_default()),
    ) {
        // `threshold` and `threshold_by_players` replace each other.
        for (set, drop) in [
            ("threshold", "threshold_by_players"),
            ("threshold_by_players", "threshold"),
        ] {
            if over.contains_key(set) {
                obj.remove(drop);
            }
        }
        for (k, v) in over {
            obj.insert(k, v);
        }
    }
    serde_json::from_value(base).expect("a merge of two valid specs is valid")
}

/// A stage seed under a command-line seed (SplitMix64 of their combination).
fn mix_seed(cli: u64, own: u64) -> u64 {
    let mut z = cli ^ own.rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A JSON value (a script parameter) as a Rhai value.
fn json_to_rhai(v: &Value) -> rhai::Dynamic {
    use rhai::Dynamic;
    match v {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i),
            None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(a) => Dynamic::from_array(a.iter().map(json_to_rhai).collect()),
        Value::Object(o) => Dynamic::from_map(
            o.iter()
                .map(|(k, v)| (k.as_str().into(), json_to_rhai(v)))
                .collect(),
        ),
    }
}
