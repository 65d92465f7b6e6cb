//! `tune/<id>/manifest.json`: what a tuning searched and how, and what it found, written and
//! read through one type, [`Manifest`]. Every reader (the tuning's report, the command line,
//! Python) goes through [`Manifest::read`], so a field a reader needs is a field the writer
//! fills: the optimizer's method, say, is an enum set from the scenario's choice, not a key a
//! reader hopes to find (a reader that looked for `optimizer.method`, which the untyped file
//! never had, once labelled every SPSA tuning "NTBEA").
//!
//! A file of another [`FORMAT`] is refused with what to do, rather than read with guesses.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::optimize::Dim;
pub use crate::result_file::ReadError;
use crate::result_file::{self, Kind};
use crate::scenario::{Objective, OptimizerChoice, Seating, Tuning};

/// The format of `manifest.json` this build writes and reads. Format 1 (no `format` key)
/// was the untyped file before it.
pub const FORMAT: u32 = 2;

/// The file's name in a tuning's folder.
pub const FILE: &str = "manifest.json";

/// A tuning's manifest: written as the search starts (`status: running`, no `result`), and
/// again when it ends (`stopped` or `finished`, with its `result`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The `tune:` entry's id.
    pub id: String,
    /// The `tune:` entry as resolved (the scenario's own words, with defaults filled in).
    pub tuning: Value,
    /// The hash of what shapes the search ([`super::hash`]): a log of another hash is not
    /// resumed.
    pub hash: String,
    /// The agent entry as written (the start, which the confirmation plays against).
    pub start: Value,
    /// The agent entry at the grid point nearest the start, where the search began.
    pub search_start: Value,
    /// The tuned agent's seat count.
    pub players: usize,
    /// How seats were assigned in every evaluation.
    pub seating: Seating,
    /// Whether the rules score points (games are the unit) or coins (deals are).
    pub points: bool,
    /// What the search maximises.
    pub objective: Objective,
    /// The opponents' lineups, by agent id.
    pub lineups: Vec<Vec<String>>,
    /// The tuned parameters, in the order of a point's values.
    pub parameters: Vec<Parameter>,
    /// The search's budget in deals (games), deals per evaluation, and seed.
    pub budget: u64,
    pub batch: u64,
    pub seed: u64,
    /// The agent file, as the scenario names it.
    pub output: String,
    /// The confirmation stage's name, when there is one.
    pub confirm: Option<String>,
    pub status: Status,
    /// What the search found; absent while it runs.
    pub result: Option<Searched>,
}

/// Where a search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Running,
    /// Stopped by Ctrl-C (or a stop request) with its log kept: `--resume` goes on.
    Stopped,
    Finished,
}

/// One tuned parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub dim: Dim,
    /// For a choice, the values its indices stand for.
    pub choices: Vec<Value>,
}

/// The optimizer that searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Ntbea,
    Spsa,
}

impl Method {
    /// The scenario's choice.
    pub fn of(choice: &OptimizerChoice) -> Method {
        match choice {
            OptimizerChoice::Ntbea(_) => Method::Ntbea,
            OptimizerChoice::Spsa(_) => Method::Spsa,
        }
    }

    /// As a report names it.
    pub fn title(self) -> &'static str {
        match self {
            Method::Ntbea => "NTBEA",
            Method::Spsa => "SPSA",
        }
    }
}

/// What a search found and what it cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Searched {
    pub method: Method,
    /// The optimizer's own description of its settings and counters.
    pub optimizer: Value,
    pub evaluations: usize,
    /// Deals (games) played, before seatings.
    pub deals: u64,
    /// The agent entry written to the agent file, its point and its `name=value` label.
    pub best: Value,
    pub best_point: Vec<f64>,
    pub best_label: String,
    /// The point the search began at.
    pub start_point: Vec<f64>,
}

/// What [`Manifest::read`] expects.
pub const KIND: Kind = Kind::new(
    "tuning manifest",
    FORMAT,
    "run the tuning again with `dhumbal-run tune FILE --force`, or report it with the \
             version that wrote it",
);

impl Manifest {
    /// The manifest of tuning `t` as its search starts.
    pub fn running(t: &Tuning, hash: &str) -> Manifest {
        Manifest {
            format: FORMAT,
            id: t.id.clone(),
            tuning: t.spec.clone(),
            hash: hash.to_string(),
            start: t.base.clone(),
            search_start: t.entry_at(&t.start),
            players: t.rules.players(),
            seating: t.seating,
            points: matches!(
                t.rules.variant().scoring,
                dhumbal_game::rules::Scoring::Points(_)
            ),
            objective: t.objective,
            lineups: t
                .lineups
                .iter()
                .map(|l| l.iter().map(|d| d.id.clone()).collect())
                .collect(),
            parameters: t
                .params
                .iter()
                .map(|p| Parameter {
                    name: p.name.clone(),
                    dim: p.dim.clone(),
                    choices: p.choices.clone(),
                })
                .collect(),
            budget: t.budget,
            batch: t.batch,
            seed: t.seed,
            output: t.written.clone(),
            confirm: t.confirm.as_ref().map(|s| s.name.clone()),
            status: Status::Running,
            result: None,
        }
    }

    /// Reads `dir/manifest.json`, refusing another format with what to do.
    pub fn read(dir: &Path) -> Result<Manifest, ReadError> {
        result_file::read(&dir.join(FILE), &KIND)
    }

    /// The unit the objective is counted over: `games` under point scoring, else `deals`.
    pub fn deal_word(&self) -> &'static str {
        if self.points || self.objective == Objective::Games {
            "games"
        } else {
            "deals"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            format: FORMAT,
            id: "t".into(),
            tuning: serde_json::json!({"id": "t"}),
            hash: "00".into(),
            start: serde_json::json!({"kind": "aggressive"}),
            search_start: serde_json::json!({"kind": "aggressive"}),
            players: 2,
            seating: Seating::Rotate,
            points: false,
            objective: Objective::Win,
            lineups: vec![vec!["balanced".into()]],
            parameters: vec![Parameter {
                name: "threshold".into(),
                dim: Dim::Int {
                    lo: 1,
                    hi: 9,
                    step: 1,
                },
                choices: vec![],
            }],
            budget: 100,
            batch: 10,
            seed: 7,
            output: "tuned/t.json".into(),
            confirm: None,
            status: Status::Finished,
            result: Some(Searched {
                method: Method::Spsa,
                optimizer: serde_json::json!({"optimizer": "spsa"}),
                evaluations: 10,
                deals: 100,
                best: serde_json::json!({"kind": "aggressive"}),
                best_point: vec![3.0],
                best_label: "threshold=3".into(),
                start_point: vec![5.0],
            }),
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let m = sample();
        let text = serde_json::to_string_pretty(&m).unwrap();
        assert_eq!(
            result_file::parse::<Manifest>(&text, &KIND, Path::new(FILE)).ok(),
            Some(m)
        );
    }

    #[test]
    fn another_format_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        // Format 1: the untyped file, which had no `format` key.
        std::fs::write(
            dir.path().join(FILE),
            r#"{"tuning": {"id": "t"}, "status": "finished"}"#,
        )
        .unwrap();
        let e = Manifest::read(dir.path()).unwrap_err();
        assert_eq!(e.other_format(), Some(1), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        let mut v = serde_json::to_value(sample()).unwrap();
        v["format"] = 3.into();
        std::fs::write(dir.path().join(FILE), v.to_string()).unwrap();
        let e = Manifest::read(dir.path()).unwrap_err();
        assert_eq!(e.other_format(), Some(3), "{e}");
        // A field missing is named.
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().remove("seating");
        std::fs::write(dir.path().join(FILE), v.to_string()).unwrap();
        let e = Manifest::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("seating"), "{e}");
    }
}
