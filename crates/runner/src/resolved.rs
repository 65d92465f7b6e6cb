//! Entries a result file keeps as resolved (the scenario and its stages in a run's
//! `manifest.json`, the agents each stage seated, a `train:` entry in a training's
//! `manifest.json`): written as the resolver made them, JSON whose shape is the resolver's, and
//! read back with what readers use of them typed ([`Resolved`]). A reader asks the type for a
//! stage's seating or a sweep's point, never the value for a key, so a field the writer does
//! not fill fails when the file is read (or, through [`Resolved::new`], when it is written),
//! not as a silent `null` in a report.

use std::collections::BTreeMap;
use std::ops::Deref;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::scenario::{RulesSpec, Seating};

/// A resolved entry as a file keeps it (`json`, written unchanged) with `T`, what readers use
/// of it, read from the same value. Dereferences to `T`.
#[derive(Clone, Debug)]
pub struct Resolved<T> {
    json: Value,
    typed: T,
}

impl<T: DeserializeOwned> Resolved<T> {
    /// `json` as the resolver made it; an error when it does not read as `T` (so a file is
    /// never written that its readers would refuse).
    pub fn new(json: Value) -> Result<Resolved<T>, serde_json::Error> {
        let typed = T::deserialize(&json)?;
        Ok(Resolved { json, typed })
    }
}

impl<T> Resolved<T> {
    /// The entry as written.
    pub fn json(&self) -> &Value {
        &self.json
    }
}

impl<T> Deref for Resolved<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.typed
    }
}

/// Two entries are the same when they were written the same.
impl<T> PartialEq for Resolved<T> {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl<T> Serialize for Resolved<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(s)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Resolved<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Resolved::new(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The resolved scenario a run's manifest keeps (`Scenario::resolved_json`), as readers of
/// the run's folder use it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ResolvedScenario {
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    /// Every stage of the scenario, in its order (sweeps expanded into their points).
    pub stages: Vec<ResolvedStage>,
}

/// A stage as resolved (`Stage::spec`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ResolvedStage {
    pub name: String,
    pub seed: u64,
    pub seating: Seating,
    /// Coin scoring: rounds per session; `None` for point games.
    pub session: Option<u32>,
    pub rules: RulesSpec,
    /// What sits in each seat, in slot order.
    pub agents: Vec<ResolvedSeat>,
    /// The sweep this stage is a point of, if any (`scenario/sweep.rs`).
    pub sweep: Option<SweepPoint>,
}

/// A seat of a resolved stage: an agent entry, or the winner of an earlier stage.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ResolvedSeat {
    /// The earlier stage whose winner sits here.
    pub winner_of: Option<String>,
}

/// A point of a sweep, as the resolver marks each of its stages.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SweepPoint {
    /// The sweep (the stage as written).
    pub name: String,
    pub mode: SweepMode,
    /// The point's label: `threshold=7,call_at=4`.
    pub point: String,
    /// The swept paths, in the sweep's order.
    pub parameters: Vec<SweptParameter>,
    /// The value of each swept path at this point.
    pub values: BTreeMap<String, Value>,
}

/// One swept path and its short name in labels.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SweptParameter {
    pub path: String,
    pub name: String,
}

/// How a sweep combines its values: every combination, or the lists in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepMode {
    Grid,
    Zip,
}

/// An agent entry as resolved (`AgentDef::spec`): its id, and its kind (or, for a script
/// written without one, its file) to label it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ResolvedAgent {
    pub id: String,
    pub kind: Option<String>,
    pub script: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Overrides, SeatEntry, parse};
    use std::path::Path;

    /// What the resolver writes reads back typed: a sweep's points, a winner's seat, sessions.
    #[test]
    fn a_resolved_scenario_reads_back_typed() {
        let text = "name: t
description: two stages
seed: 3
stages:
  - name: first
    deals: 4
    session: 2
    seating: rotate
    rules: {players: 2}
    sweep: {rules.threshold: [5, 7]}
    agents: [{kind: aggressive}, {kind: random, id: r}]
  - name: other
    deals: 4
    rules: {players: 2}
    agents: [{kind: aggressive}, {kind: random}]
  - name: final
    games: 2
    rules: {preset: jhyap, players: 2}
    agents: [{winner_of: other}, {kind: conservative}]
";
        let scenario = parse(Path::new("t.yaml"), text, &Overrides::default()).unwrap();
        let resolved: Resolved<ResolvedScenario> = Resolved::new(scenario.resolved_json()).unwrap();
        assert_eq!(resolved.json(), &scenario.resolved_json());
        assert_eq!(
            (resolved.name.as_str(), resolved.description.as_deref()),
            ("t", Some("two stages"))
        );
        let names: Vec<&str> = resolved.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["first/threshold=5", "first/threshold=7", "other", "final"]
        );
        let point = resolved.stages[1].sweep.as_ref().unwrap();
        assert_eq!(
            (point.name.as_str(), point.mode, point.point.as_str()),
            ("first", SweepMode::Grid, "threshold=7")
        );
        assert_eq!(point.parameters[0].path, "rules.threshold");
        assert_eq!(point.values["rules.threshold"], Value::from(7));
        let first = &resolved.stages[0];
        assert_eq!((first.seating, first.session), (Seating::Rotate, Some(2)));
        let last = &resolved.stages[3];
        assert_eq!(last.session, None);
        assert!(last.sweep.is_none());
        let seats: Vec<Option<&str>> = last.agents.iter().map(|a| a.winner_of.as_deref()).collect();
        assert_eq!(seats, [Some("other"), None]);
        let SeatEntry::Agent(def) = &scenario.stages[0].seats[1] else {
            panic!("an agent sits in the second seat");
        };
        let agent: Resolved<ResolvedAgent> = Resolved::new(def.spec.clone()).unwrap();
        assert_eq!(
            (agent.id.as_str(), agent.kind.as_deref()),
            ("r", Some("random"))
        );
        // A field the readers need and the value lacks is refused, by name.
        let mut json = scenario.resolved_json();
        let first = json.pointer_mut("/stages/0").and_then(Value::as_object_mut);
        first.unwrap().remove("seating");
        let e = Resolved::<ResolvedScenario>::new(json).unwrap_err();
        assert!(e.to_string().contains("seating"), "{e}");
    }
}
