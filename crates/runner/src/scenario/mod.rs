//! Scenario files: the raw YAML types ([`spec`], the serde boundary) and their resolution
//! ([`resolve`]) into a checked [`Scenario`] ([`model`]) that the tournament runner uses.
//!
//! Reading happens in two stages, as in ripgrep's flags: the spec is deserialized as written
//! (every unknown key collected, not just the first), then resolved once: presets expanded,
//! agents handed to their families, sample sizes derived. Every problem is collected with its
//! file, line and column ([`problem`]) before anything runs.

mod exploit;
pub mod locate;
mod model;
mod problem;
mod repair;
mod resolve;
pub mod rules_spec;
pub mod spec;
pub mod study;
mod sweep;
mod train;
mod tune;

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
    /// Deals to trace besides the scenario's `output.trace` (`--trace`).
    pub trace: Vec<u64>,
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
///
/// Every problem of the file is reported in one pass, in file order. The serde types stop at
/// their first bad value (a misspelt `seating: rotat`), so when deserialization fails the bad
/// value is reported and replaced in a copy of the text by a placeholder, and the copy is read
/// again, until it reads; then the scenario is resolved as usual, leaving out what the
/// placeholders stand for (no problem is reported twice, nor one that only a placeholder causes).
pub fn parse(path: &Path, text: &str, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
    let locations = Locations::of(text);
    // An alias bomb is refused where it goes off, before anything expands it.
    if let Some(x) = &locations.expansion {
        return Err(x.refusal(path));
    }
    let Read {
        spec,
        mut problems,
        unknown,
        repaired,
    } = read_spec(text, &locations);
    // Reading stops at the first problem; a YAML syntax error further down is one more.
    if let Some((pos, message)) = &locations.syntax
        && !problems
            .iter()
            .any(|p| p.line == Some(pos.line) && p.column == Some(pos.column))
    {
        problems.push(Problem {
            path: String::new(),
            message: format!("not valid YAML: {message}"),
            line: Some(pos.line),
            column: Some(pos.column),
        });
    }
    unknown_fields(&unknown, &repaired, &locations, &mut problems);
    let fail = |mut problems: Vec<Problem>| {
        // File order; problems without a place (the file as a whole) first.
        problems.sort_by_key(|p| (p.line.unwrap_or(0), p.column.unwrap_or(0)));
        ScenarioError {
            file: path.to_path_buf(),
            problems,
        }
    };
    let Some(spec) = spec else {
        return Err(fail(problems));
    };
    let mut ctx = Resolver {
        path,
        locations: &locations,
        problems,
        reported: 0,
        repaired,
        log: Arc::new(AgentLog::default()),
        planned: Vec::new(),
        sweeps: Vec::new(),
    };
    let scenario = ctx.scenario(&spec, overrides);
    if ctx.problems.is_empty() {
        Ok(scenario.expect("resolution succeeds without problems"))
    } else {
        Err(fail(ctx.problems))
    }
}

/// The text as deserialized, its bad values set aside ([`parse`]).
struct Read {
    /// `None` when it does not read even so (a YAML syntax error).
    spec: Option<ScenarioSpec>,
    /// The bad values, and the syntax error, at their places in the file.
    problems: Vec<Problem>,
    /// The paths of unknown keys, each once.
    unknown: Vec<String>,
    /// The paths replaced by placeholders.
    repaired: Vec<String>,
}

/// Deserializes `text` (whose places are `locations`), replacing each bad value by a
/// placeholder in a copy and reading it again, until it reads or cannot be repaired.
fn read_spec(text: &str, locations: &Locations) -> Read {
    let mut problems = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut repaired: Vec<String> = Vec::new();
    let mut current = text.to_string();
    let mut current_locations: Option<Locations> = None;
    let mut passes = 0;
    let spec = loop {
        passes += 1;
        let here = current_locations.as_ref().unwrap_or(locations);
        let mut seen = Vec::new();
        let read = deserialize(&current, &mut seen);
        for key in seen {
            if !unknown.contains(&key) {
                unknown.push(key);
            }
        }
        let e = match read {
            Ok(spec) => break Some(spec),
            Err(e) => e,
        };
        let fix = repair::failure(&e, here);
        let Some(fix) = fix.filter(|_| passes <= repair::MAX_PASSES) else {
            // Not a bad value that can be set aside (a YAML syntax error): report it as read.
            let mut p = syntax_problem(&e, here);
            if passes > 1 {
                // Positions in the repaired copy are not the file's.
                let pos = locations.find(&p.path);
                p.line = pos.map(|p| p.line);
                p.column = pos.map(|p| p.column);
            }
            if !repair::covered(&repaired, &p.path) || passes == 1 {
                problems.push(p);
            }
            break None;
        };
        if !repair::covered(&repaired, &fix.target) {
            let mut p = syntax_problem(&e, here);
            p.path = fix.target.clone();
            if fix.missing || passes > 1 {
                let pos = locations.find(&fix.target);
                p.line = pos.map(|p| p.line);
                p.column = pos.map(|p| p.column);
            }
            problems.push(p);
        }
        let tries = repaired.iter().filter(|r| **r == fix.target).count();
        match repair::apply(&current, here, &fix, tries) {
            Some(text) => {
                repaired.push(fix.target);
                current_locations = Some(Locations::of(&text));
                current = text;
            }
            None => break None,
        }
    };
    repaired.dedup();
    Read {
        spec,
        problems,
        unknown,
        repaired,
    }
}

/// Reports each unknown key (not under a placeholder) with the valid ones at its place.
fn unknown_fields(
    unknown: &[String],
    repaired: &[String],
    locations: &Locations,
    problems: &mut Vec<Problem>,
) {
    let schema = json_schema();
    for key_path in unknown {
        if repair::covered(repaired, key_path) {
            continue;
        }
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
        let pos = locations.find_key(key_path);
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
}

/// The spec of `text`, each unknown key's path pushed to `unknown`.
fn deserialize(text: &str, unknown: &mut Vec<String>) -> Result<ScenarioSpec, serde_saphyr::Error> {
    serde_saphyr::with_deserializer_from_str(text, |de| {
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
    })
}
