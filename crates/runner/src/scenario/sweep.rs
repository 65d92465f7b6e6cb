//! `sweep:` in a stage: one stage written once, played at every point of a grid (or a zip) of
//! rule fields and agent parameters.
//!
//! A sweep is expanded while the scenario resolves: each point is an ordinary stage named
//! `<stage>/<label>` (`threshold-sweep/threshold=7,call_at=4`, so a folder per point under the
//! stage's folder), resolved exactly as if its values were written by hand in the stage, so
//! every check a stage has applies to every point, and the runner, resume, shards, merge and
//! reports need to know nothing of sweeps. Every point keeps the stage's seed: the same deals
//! reach the same seats at every point (common random numbers), so that the differences
//! between points are paired by deal. A problem that only some points have is reported at the
//! value that makes the point (the list item, or the range) and names the point.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use dhumbal_agents::nearest;
use dhumbal_agents::registry::join as at;

use super::resolve::Resolver;
use super::spec::{StageSpec, TableSpec, json_schema, valid_keys};
use super::{Overrides, Problem, RulesSpec, Stage};

/// Most points one sweep may expand into.
pub const MAX_POINTS: usize = 1000;

/// `sweep:` as written: swept paths with their values, and `mode`, in file order (the first
/// path varies slowest in a grid, and comes first in point names).
#[derive(Clone, Debug, Default)]
pub struct SweepSpec(pub Vec<(String, Value)>);

impl Serialize for SweepSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for SweepSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = SweepSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a mapping of swept paths to values (`rules.threshold: [5, 7, 10]`) and `mode`",
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SweepSpec, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(SweepSpec(out))
            }
        }
        d.deserialize_map(InOrder)
    }
}

impl JsonSchema for SweepSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SweepSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let scalar = serde_json::json!({ "type": ["number", "string", "boolean", "null"] });
        schemars::json_schema!({
            "description": "Play the stage at every point of a sweep (docs/scenarios.md): `rules.<field>` or `agents.<id>.params.<name>`, each a list of values or a range `{from, to, step}`; `mode: grid` (default: every combination) or `zip` (the i-th values together). Each point is a stage of its own, `<stage>/<path>=<value>,...`, playing the same deals.",
            "type": "object",
            "properties": {
                "mode": { "enum": ["grid", "zip"], "description": "`grid` (default): every combination; `zip`: the i-th values of every path together (lists of equal length)." }
            },
            "patternProperties": {
                "^(rules\\.[a-z_]+|agents\\..+\\.params\\..+)$": {
                    "anyOf": [
                        { "type": "array", "items": scalar, "minItems": 1 },
                        {
                            "type": "object",
                            "properties": {
                                "from": { "type": "number" },
                                "to": { "type": "number" },
                                "step": { "type": "number", "description": "default 1" }
                            },
                            "required": ["from", "to"],
                            "additionalProperties": false
                        }
                    ]
                }
            },
            "additionalProperties": false,
        })
    }
}

/// What a swept path sets.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    /// A field of `rules:`.
    Rule(String),
    /// Parameter `name` of the agent with id `agent`.
    Param { agent: String, name: String },
}

/// One swept path.
struct Axis {
    /// As written (`rules.threshold`).
    key: String,
    target: Target,
    /// Its name in point labels (`threshold`).
    short: String,
    values: Vec<Value>,
    /// Where each value is written: its list item, or the range that makes it.
    places: Vec<String>,
    /// The seat of the agent whose parameter it sets, once the stage is resolved (`None`: a
    /// rule, or no such agent).
    seat: Option<usize>,
}

/// A sweep as read: its paths, its points in order, and whether it zips.
struct Plan {
    axes: Vec<Axis>,
    points: Vec<Point>,
    zip: bool,
}

/// One point: an index into each axis' values.
struct Point {
    picks: Vec<usize>,
    label: String,
}

/// A value as it appears in a point's name.
fn label_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The values of a range `{from, to, step}`, `to` included when a step lands on it.
fn range(m: &serde_json::Map<String, Value>) -> Result<Vec<Value>, (Option<&'static str>, String)> {
    for k in m.keys() {
        if !["from", "to", "step"].contains(&k.as_str()) {
            return Err((
                None,
                format!(
                    "unknown field `{k}` in a range; a range is {{from: A, to: B, step: C}} (step default 1)"
                ),
            ));
        }
    }
    let number = |field: &'static str| -> Result<Option<&serde_json::Number>, (Option<&'static str>, String)> {
        match m.get(field) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n)),
            Some(other) => Err((Some(field), format!("expected a number, got {other}"))),
        }
    };
    let (Some(from), Some(to)) = (number("from")?, number("to")?) else {
        return Err((
            None,
            "a range needs `from` and `to` (and optionally `step`, default 1): {from: 4, to: 10, step: 2}".into(),
        ));
    };
    let step = number("step")?;
    let integers = from.is_i64() && to.is_i64() && step.is_none_or(|s| s.is_i64());
    if integers {
        let (a, b, s) = (
            from.as_i64().expect("integer"),
            to.as_i64().expect("integer"),
            step.map_or(1, |s| s.as_i64().expect("integer")),
        );
        if s == 0 || (b - a).signum() * s.signum() < 0 {
            return Err((
                Some("step"),
                format!("a step of {s} never goes from {a} to {b}"),
            ));
        }
        let n = (b - a) / s + 1;
        if n as usize > MAX_POINTS {
            return Err((
                None,
                format!("{n} values: a sweep has at most {MAX_POINTS} points"),
            ));
        }
        return Ok((0..n).map(|i| Value::from(a + i * s)).collect());
    }
    let (a, b, s) = (
        from.as_f64().expect("number"),
        to.as_f64().expect("number"),
        step.map_or(1.0, |s| s.as_f64().expect("number")),
    );
    if s == 0.0 || !s.is_finite() || (b - a) * s < 0.0 {
        return Err((
            Some("step"),
            format!("a step of {s} never goes from {a} to {b}"),
        ));
    }
    let n = ((b - a) / s + 1e-9).floor() as usize + 1;
    if n > MAX_POINTS {
        return Err((
            None,
            format!("{n} values: a sweep has at most {MAX_POINTS} points"),
        ));
    }
    // Rounded to 9 decimals so that 0.1 + 2 x 0.1 names its point `0.3`.
    Ok((0..n)
        .map(|i| Value::from(((a + i as f64 * s) * 1e9).round() / 1e9))
        .collect())
}

/// A serde error about a rule value, in the words the file reader uses.
fn value_message(e: &serde_json::Error, v: &Value) -> String {
    let text = e.to_string();
    if let Some(i) = text.find("unknown variant") {
        let rest = &text[i..];
        let rest = rest.split(" at line").next().unwrap_or(rest);
        return rest.to_string();
    }
    let expected = if text.contains("expected u8") {
        "a whole number, 0 to 255"
    } else if text.contains("expected u32") || text.contains("expected u64") {
        "a whole number, 0 or more"
    } else if text.contains("expected i64") {
        "a whole number"
    } else if text.contains("expected a boolean") {
        "true or false"
    } else {
        return format!(
            "{}, got {v}",
            text.split(" at line").next().unwrap_or(&text)
        );
    };
    format!("expected {expected}, got {v}")
}

impl Resolver<'_> {
    /// The sweep's paths, values and points; `None` (with its problems reported) if they do
    /// not read.
    fn sweep_plan(&mut self, sweep: &SweepSpec, prefix: &str) -> Option<Plan> {
        let sweep_at = at(prefix, "sweep");
        let (axes, zip) = self.sweep_axes(sweep, &sweep_at);
        // The paths that read are still expanded, so that their values are checked too.
        if axes.is_empty() {
            return None;
        }
        let picks = if zip {
            self.zip_picks(&axes, &sweep_at)?
        } else {
            self.grid_picks(&axes, &sweep_at)?
        };
        let points = picks
            .into_iter()
            .map(|picks| {
                let label = axes
                    .iter()
                    .zip(&picks)
                    .map(|(a, &i)| format!("{}={}", a.short, label_of(&a.values[i])))
                    .collect::<Vec<_>>()
                    .join(",");
                Point { picks, label }
            })
            .collect();
        Some(Plan { axes, points, zip })
    }

    /// The paths of `sweep:` that read, in file order, with their names in point labels;
    /// and whether it zips (`mode: zip`).
    fn sweep_axes(&mut self, sweep: &SweepSpec, sweep_at: &str) -> (Vec<Axis>, bool) {
        let schema = json_schema();
        let rule_fields = valid_keys(&schema, &["rules"]);
        let mut zip = false;
        let mut axes: Vec<Axis> = Vec::new();
        for (key, value) in &sweep.0 {
            let key_at = at(sweep_at, key);
            if key == "mode" {
                match value.as_str() {
                    Some("grid") => zip = false,
                    Some("zip") => zip = true,
                    _ => self.problem(
                        &key_at,
                        format!("expected `grid` (every combination of the values) or `zip` (the i-th values of every path together), got {value}"),
                    ),
                }
                continue;
            }
            let Some(target) = self.sweep_target(key, &key_at, &rule_fields) else {
                continue;
            };
            let Some((values, places)) = self.swept_values(value, &key_at) else {
                continue;
            };
            if axes.iter().any(|a| a.target == target) {
                self.problem(&key_at, "is swept twice");
                continue;
            }
            if !self.folder_names(&values, &places) {
                continue;
            }
            let short = match &target {
                Target::Rule(f) => f.clone(),
                Target::Param { name, .. } => name.clone(),
            };
            axes.push(Axis {
                key: key.clone(),
                target,
                short,
                values,
                places,
                seat: None,
            });
        }
        if sweep.0.iter().all(|(k, _)| k == "mode") {
            self.problem(
                sweep_at,
                "sweeps nothing: give `rules.<field>: [values]` or `agents.<id>.params.<name>: [values]`",
            );
        }
        // Names in labels: the field or parameter, or `<id>.<name>` where two would be alike.
        let shorts: Vec<String> = axes.iter().map(|a| a.short.clone()).collect();
        for a in &mut axes {
            if shorts.iter().filter(|s| **s == a.short).count() > 1 {
                a.short = match &a.target {
                    Target::Rule(f) => format!("rules.{f}"),
                    Target::Param { agent, name } => format!("{agent}.{name}"),
                };
            }
        }
        (axes, zip)
    }

    /// What a swept path `key` sets: a rule field or an agent's parameter.
    fn sweep_target(&mut self, key: &str, key_at: &str, rule_fields: &[String]) -> Option<Target> {
        if let Some(field) = key.strip_prefix("rules.") {
            if !rule_fields.iter().any(|f| f == field) {
                let refs: Vec<&str> = rule_fields.iter().map(String::as_str).collect();
                let hint = nearest(field, &refs)
                    .map(|n| format!("did you mean `rules.{n}`? "))
                    .unwrap_or_default();
                self.problem(
                    key_at,
                    format!(
                        "`{field}` is not a rule field; {hint}rule fields: {}",
                        refs.join(", ")
                    ),
                );
                return None;
            }
            Some(Target::Rule(field.to_string()))
        } else if let Some((agent, name)) = key
            .strip_prefix("agents.")
            .and_then(|rest| rest.rsplit_once(".params."))
            .filter(|(a, n)| !a.is_empty() && !n.is_empty() && !n.contains('.'))
        {
            Some(Target::Param {
                agent: agent.to_string(),
                name: name.to_string(),
            })
        } else {
            self.problem(
                key_at,
                format!("cannot sweep `{key}`: a swept path is `rules.<field>` (`rules.threshold`) or `agents.<id>.params.<name>` (`agents.mine.params.call_at`); `mode` is `grid` or `zip`"),
            );
            None
        }
    }

    /// A swept path's values (a list, or a range) and where each is written.
    fn swept_values(&mut self, value: &Value, key_at: &str) -> Option<(Vec<Value>, Vec<String>)> {
        match value {
            Value::Array(list) if list.is_empty() => {
                self.problem(key_at, "lists no values");
                None
            }
            Value::Array(list) => {
                let mut ok = true;
                for (j, v) in list.iter().enumerate() {
                    if v.is_object() || v.is_array() {
                        self.problem(
                            &at(key_at, &j.to_string()),
                            format!("a swept value is a number, a name, true/false or null (it names the point's folder), got {v}"),
                        );
                        ok = false;
                    }
                }
                if !ok {
                    return None;
                }
                let places = (0..list.len())
                    .map(|j| at(key_at, &j.to_string()))
                    .collect();
                Some((list.clone(), places))
            }
            Value::Object(m) => match range(m) {
                Ok(values) => {
                    let places = vec![key_at.to_string(); values.len()];
                    Some((values, places))
                }
                Err((field, message)) => {
                    let place = field.map_or(key_at.to_string(), |f| at(key_at, f));
                    self.problem(&place, message);
                    None
                }
            },
            other => {
                self.problem(
                    key_at,
                    format!("expected a list of values ([5, 7, 10]) or a range ({{from: 4, to: 10, step: 2}}), got {other}"),
                );
                None
            }
        }
    }

    /// Whether every value can name its point's folder (each that cannot is reported).
    fn folder_names(&mut self, values: &[Value], places: &[String]) -> bool {
        let mut ok = true;
        for (v, place) in values.iter().zip(places) {
            let label = label_of(v);
            if label.is_empty() || label.contains(['/', '\\']) {
                self.problem(place, format!("`{label}` cannot name a folder: a swept value names its point's folder, so it may not be empty or hold a slash"));
                ok = false;
            } else if let Some(m) = super::resolve::control_problem(&label) {
                self.problem(place, m);
                ok = false;
            }
        }
        ok
    }

    /// The points of a grid: every combination, the first path varying slowest. Every point
    /// needs its own name (and folder), so no path may list a value twice.
    fn grid_picks(&mut self, axes: &[Axis], sweep_at: &str) -> Option<Vec<Vec<usize>>> {
        let mut twice = false;
        for a in axes {
            for (j, v) in a.values.iter().enumerate() {
                let label = label_of(v);
                if a.values[..j].iter().any(|w| label_of(w) == label) {
                    self.problem(
                        &a.places[j],
                        format!("{label} is listed twice: every point needs its own name"),
                    );
                    twice = true;
                }
            }
        }
        if twice {
            return None;
        }
        let total = (axes.iter()).try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
        if total.is_none_or(|n| n > MAX_POINTS) {
            let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
            self.problem(
                sweep_at,
                format!(
                    "{} points: a sweep has at most {MAX_POINTS}",
                    sizes.join(" x ")
                ),
            );
            return None;
        }
        let mut all = vec![Vec::new()];
        for a in axes {
            all = all
                .into_iter()
                .flat_map(|p| {
                    (0..a.values.len()).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        Some(all)
    }

    /// The points of a zip: the i-th values of every path together. Every point needs its
    /// own name (and folder), so no two points may have the same values.
    fn zip_picks(&mut self, axes: &[Axis], sweep_at: &str) -> Option<Vec<Vec<usize>>> {
        let mut n = axes[0].values.len();
        if let Some(other) = axes.iter().find(|a| a.values.len() != n) {
            let lengths: Vec<String> = axes
                .iter()
                .map(|a| format!("{} has {}", a.key, a.values.len()))
                .collect();
            self.problem(
                &at(sweep_at, &other.key),
                format!(
                    "`mode: zip` pairs the i-th values of every path, so every path needs as many values: {}",
                    lengths.join(", ")
                ),
            );
            // The points the paths have in common are still resolved, so that a problem
            // of a path itself (an unknown agent, parameter or value) is reported too.
            n = axes.iter().map(|a| a.values.len()).min().unwrap_or(0);
        }
        let tuple =
            |i: usize| -> Vec<String> { axes.iter().map(|a| label_of(&a.values[i])).collect() };
        if let Some(i) = (1..n).find(|&i| (0..i).any(|j| tuple(j) == tuple(i))) {
            self.problem(
                sweep_at,
                format!(
                    "the zipped values {} come twice: every point needs its own name",
                    tuple(i).join(", ")
                ),
            );
            return None;
        }
        Some((0..n).map(|i| vec![i; axes.len()]).collect())
    }

    /// The stages of a swept stage, one per point: each point's name (for `winner_of` and the
    /// order of stages) and, if it resolved, the stage. Every point plays the stage's `seed`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sweep_stages(
        &mut self,
        st: &StageSpec,
        sweep: &SweepSpec,
        prefix: &str,
        seed: u64,
        defaults: &TableSpec,
        earlier: &[String],
        overrides: &Overrides,
    ) -> Vec<(String, Option<Stage>)> {
        let Some(mut plan) = self.sweep_plan(sweep, prefix) else {
            // The stage's own problems are still worth reporting.
            self.stage(
                &st.name,
                seed,
                prefix,
                &st.table(),
                defaults,
                earlier,
                overrides,
            );
            return Vec::new();
        };
        let own = st.table();
        // The stage as written (without the sweep), resolved for its agents' ids: its problems
        // are reported only if it does not resolve (each point reports its own otherwise, so
        // that a value the sweep replaces is not blamed).
        let (count, reported) = (self.problems.len(), self.reported);
        let Some(base) = self.stage(&st.name, seed, prefix, &own, defaults, earlier, overrides)
        else {
            return Vec::new();
        };
        self.problems.truncate(count);
        self.reported = reported;
        self.sweep_seats(&mut plan.axes, &base.agent_ids(), prefix);
        let parameters: Vec<Value> = (plan.axes.iter())
            .map(|a| serde_json::json!({ "path": a.key, "name": a.short }))
            .collect();
        let mut out = Vec::with_capacity(plan.points.len());
        // Each point's problems, and whether each was moved to a swept value's place.
        let mut found: Vec<Vec<(Problem, bool)>> = Vec::with_capacity(plan.points.len());
        for (k, point) in plan.points.iter().enumerate() {
            let name = format!("{}/{}", st.name, point.label);
            let (mut own, mut defaults) = (own.clone(), defaults.clone());
            let Some(written) = self.set_point(&plan.axes, point, prefix, &mut own, &mut defaults)
            else {
                found.push(Vec::new());
                out.push((name, None));
                continue;
            };
            let count = self.problems.len();
            let mut stage = self.stage(&name, seed, prefix, &own, &defaults, earlier, overrides);
            found.push(self.point_problems(count, &plan.axes, point, &written));
            if let Some(s) = stage.as_mut() {
                let values: serde_json::Map<String, Value> = (plan.axes.iter())
                    .zip(&point.picks)
                    .map(|(a, &i)| (a.key.clone(), a.values[i].clone()))
                    .collect();
                s.spec["sweep"] = serde_json::json!({
                    "name": st.name,
                    "mode": if plan.zip { "zip" } else { "grid" },
                    "point": point.label,
                    "index": k,
                    "parameters": parameters,
                    "values": values,
                });
            }
            out.push((name, stage));
        }
        self.report_point_problems(&plan, &found);
        out
    }

    /// Each agent axis' seat among the stage's agents (`ids`, `None` for a `winner_of` seat);
    /// one of no such agent is reported and keeps `None` (the other paths are still checked at
    /// every point).
    fn sweep_seats(&mut self, axes: &mut [Axis], ids: &[Option<&str>], prefix: &str) {
        for a in axes {
            let Target::Param { agent, .. } = &a.target else {
                continue;
            };
            match ids.iter().position(|id| *id == Some(agent.as_str())) {
                Some(i) => a.seat = Some(i),
                None => {
                    let known: Vec<&str> = ids.iter().flatten().copied().collect();
                    let hint = nearest(agent, &known)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    let winners = if ids.iter().any(Option::is_none) {
                        " (a `winner_of` seat keeps the parameters it won with, and cannot be swept)"
                    } else {
                        ""
                    };
                    self.problem(
                        &at(&at(prefix, "sweep"), &a.key),
                        format!(
                            "no agent `{agent}` in this stage; {hint}its agents: {}{winners}",
                            known.join(", ")
                        ),
                    );
                }
            }
        }
    }

    /// Writes a point's values into the stage (`own`, or `defaults` where the stage takes its
    /// agents from the top level) as if written by hand; where each value lands, `""` for a
    /// parameter of no agent. `None` (reported) when a rule value does not read.
    fn set_point(
        &mut self,
        axes: &[Axis],
        point: &Point,
        prefix: &str,
        own: &mut TableSpec,
        defaults: &mut TableSpec,
    ) -> Option<Vec<String>> {
        let agents_at = if own.agents.is_some() {
            at(prefix, "agents")
        } else {
            "agents".to_string()
        };
        let mut written = Vec::with_capacity(axes.len());
        let mut ok = true;
        for (a, &i) in axes.iter().zip(&point.picks) {
            let value = &a.values[i];
            match &a.target {
                Target::Rule(field) => {
                    let mut rules = serde_json::to_value(own.rules.clone().unwrap_or_default())
                        .expect("rules are JSON");
                    rules[field.as_str()] = value.clone();
                    match serde_json::from_value::<RulesSpec>(rules) {
                        Ok(r) => own.rules = Some(r),
                        Err(e) => {
                            self.problem(&a.places[i], value_message(&e, value));
                            ok = false;
                        }
                    }
                    written.push(at(prefix, &format!("rules.{field}")));
                }
                Target::Param { name: param, .. } => {
                    let Some(seat) = a.seat else {
                        // No such agent (reported): nothing to set.
                        written.push(String::new());
                        continue;
                    };
                    let list = if own.agents.is_some() {
                        own.agents.as_mut()
                    } else {
                        defaults.agents.as_mut()
                    };
                    let entry = &mut list.expect("the stage has agents")[seat].0;
                    let params = entry
                        .entry("params")
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Value::Object(m) = params {
                        m.insert(param.clone(), value.clone());
                    }
                    written.push(format!("{agents_at}.{seat}.params.{param}"));
                }
            }
        }
        ok.then_some(written)
    }

    /// The problems a point's stage reported (those from `count` on), taken back, each with
    /// whether it was moved to a swept value's place.
    fn point_problems(
        &mut self,
        count: usize,
        axes: &[Axis],
        point: &Point,
        written: &[String],
    ) -> Vec<(Problem, bool)> {
        let mut mine: Vec<(Problem, bool)> = Vec::new();
        for mut p in self.problems.drain(count..) {
            // A problem at a swept value is the value's, at its place in the sweep (a
            // value of a range is named, as the range's line holds them all).
            let mut moved = false;
            for (w, (a, &i)) in written.iter().zip(axes.iter().zip(&point.picks)) {
                if !moved && !w.is_empty() && (p.path == *w || p.path.starts_with(&format!("{w}.")))
                {
                    p.path = a.places[i].clone();
                    let pos = self.locations.find(&p.path);
                    p.line = pos.map(|x| x.line);
                    p.column = pos.map(|x| x.column);
                    if a.places.iter().filter(|x| **x == a.places[i]).count() > 1 {
                        p.message =
                            format!("at {}={}: {}", a.short, label_of(&a.values[i]), p.message);
                    }
                    moved = true;
                }
            }
            mine.push((p, moved));
        }
        mine
    }

    /// Reports the points' problems: one every point has is the stage's, reported once as it
    /// is; one that only some points have names its point.
    fn report_point_problems(&mut self, plan: &Plan, found: &[Vec<(Problem, bool)>]) {
        let common = |p: &Problem, found: &[Vec<(Problem, bool)>]| {
            found.iter().all(|f| {
                f.iter()
                    .any(|(q, _)| q.path == p.path && q.message == p.message)
            })
        };
        for (point, mine) in plan.points.iter().zip(found) {
            for (p, moved) in mine {
                let mut p = p.clone();
                if !moved && !common(&p, found) {
                    if let [axis] = plan.axes.as_slice() {
                        // One path: its value is what makes the point fail; the problem goes
                        // to the value's line and says where it shows.
                        let place = axis.places[point.picks[0]].clone();
                        p.message = format!(
                            "at sweep point `{}`: `{}`: {}",
                            point.label, p.path, p.message
                        );
                        let pos = self.locations.find(&place);
                        p.line = pos.map(|x| x.line);
                        p.column = pos.map(|x| x.column);
                        p.path = place;
                    } else {
                        p.message = format!("at sweep point `{}`: {}", point.label, p.message);
                    }
                }
                if !self
                    .problems
                    .iter()
                    .any(|q| q.path == p.path && q.message == p.message)
                {
                    self.problems.push(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_include_their_end_and_name_their_values_cleanly() {
        let m = |v: Value| v.as_object().cloned().unwrap();
        let ints = range(&m(serde_json::json!({"from": 4, "to": 10, "step": 2}))).unwrap();
        assert_eq!(ints, vec![Value::from(4), 6.into(), 8.into(), 10.into()]);
        let down = range(&m(serde_json::json!({"from": 3, "to": 1, "step": -1}))).unwrap();
        assert_eq!(down, vec![Value::from(3), 2.into(), 1.into()]);
        let floats = range(&m(serde_json::json!({"from": 0.1, "to": 0.5, "step": 0.1}))).unwrap();
        let labels: Vec<String> = floats.iter().map(label_of).collect();
        assert_eq!(labels, ["0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert!(range(&m(serde_json::json!({"from": 1, "to": 5, "step": -1}))).is_err());
        assert!(range(&m(serde_json::json!({"from": 1, "to": 5, "stride": 1}))).is_err());
        assert!(range(&m(serde_json::json!({"to": 5}))).is_err());
    }
}
