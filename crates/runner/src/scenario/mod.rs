//! Scenario files: the raw YAML types ([`spec`], the serde boundary) and their resolution
//! ([`resolve`]) into a checked [`Scenario`] ([`model`]) that the tournament runner uses.
//!
//! Reading happens in two stages, as in ripgrep's flags: the spec is deserialized as written
//! (every unknown key collected, not just the first), then resolved once: presets expanded,
//! agents handed to their families, sample sizes derived. Every problem is collected with its
//! file, line and column ([`problem`]) before anything runs.

pub mod locate;
mod model;
mod problem;
mod resolve;
pub mod rules_spec;
pub mod spec;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dhumbal_agents::{AgentLog, nearest};

use locate::Locations;
pub use model::*;
use problem::syntax_problem;
pub use problem::{Problem, ScenarioError};
use resolve::Resolver;
pub use rules_spec::RulesSpec;
use spec::valid_keys;
pub use spec::{AgentSpec, OutputSpec, ScenarioSpec, StageSpec, json_schema};

/// Overrides given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    /// Replaces the sample size of every stage (deals for coins, games for points).
    pub rounds: Option<u64>,
    pub out: Option<PathBuf>,
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
        log: Arc::new(AgentLog::default()),
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
