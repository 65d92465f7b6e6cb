//! The registry: the list of agent families, and how a scenario's agent entry becomes a
//! [`Recipe`] through them. `dhumbal-run agents`, the JSON Schema of agent entries and the
//! manifest all come from the families' own descriptions.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::Rules;

use crate::family::{Family, Recipe, Resolve, check, show};
use crate::log::AgentLog;

pub use crate::FAMILIES;

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// The recipe for an agent entry: a kind's name (`balanced`) or a mapping (`{kind: ismcts,
/// params: {...}}`, `{script: mine.rhai}`). Problems go to `cx`, their fields relative to
/// the entry; an `id` key is left to the caller (it names the agent, not how it plays).
pub fn resolve(entry: &Value, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
    let named;
    let map = match entry {
        Value::String(kind) => {
            named = Map::from_iter([("kind".to_string(), Value::from(kind.clone()))]);
            &named
        }
        Value::Object(map) => map,
        other => {
            cx.problem(
                "",
                format!(
                    "expected an agent: a kind name (e.g. `random`) or a mapping like `{{kind: balanced}}` or `{{script: file.rhai}}`, got {other}"
                ),
            );
            return None;
        }
    };
    let shorthands: Vec<&dyn Family> = FAMILIES
        .iter()
        .copied()
        .filter(|f| {
            f.shorthand()
                .is_some_and(|k| map.get(k).is_some_and(|v| !v.is_null()))
        })
        .collect();
    let kind = map.get("kind").filter(|v| !v.is_null());
    let family = match (kind, shorthands.as_slice()) {
        (Some(Value::String(kind)), []) => match family(kind) {
            Some(f) => f,
            None => {
                let names: Vec<&str> = FAMILIES.iter().map(|f| f.name()).collect();
                let hint = crate::nearest(kind, &names)
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                cx.problem(
                    "kind",
                    format!(
                        "unknown agent kind `{kind}`; {hint}known kinds: {}",
                        names.join(", ")
                    ),
                );
                return None;
            }
        },
        (Some(Value::String(kind)), [f]) if kind == f.name() => *f,
        (Some(other), []) if !other.is_string() => {
            cx.problem("kind", format!("expected a kind name, got {other}"));
            return None;
        }
        (None, [f]) => *f,
        _ => {
            cx.problem("", format!("give exactly one of {}", selectors()));
            return None;
        }
    };
    let empty = Map::new();
    let params = match map.get("params") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(p)) => p,
        Some(other) => {
            cx.problem(
                "params",
                format!("expected a mapping of parameter names to values, got {other}"),
            );
            return None;
        }
    };
    let fields: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "id" | "kind" | "params"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    match check(family, &fields, params) {
        Ok(entry) => family.resolve(&entry, cx),
        Err(problems) => {
            for (field, message) in problems {
                cx.problem(&field, message);
            }
            None
        }
    }
}

/// The ways an entry names its family: `kind` or a family's shorthand field, for messages.
pub fn selectors() -> String {
    let mut out = vec!["`kind` (an agent kind; `dhumbal-run agents` lists them)".to_string()];
    for f in FAMILIES.iter() {
        if let Some(key) = f.shorthand() {
            let doc = f
                .fields()
                .iter()
                .find(|p| p.name == key)
                .map_or(f.doc(), |p| p.doc);
            out.push(format!("`{key}` ({doc})"));
        }
    }
    out.join(", ")
}

/// How many of the keys that name a family (`kind`, shorthands) `entry` gives.
pub fn selectors_in(entry: &Map<String, Value>) -> usize {
    let given = |k: &str| entry.get(k).is_some_and(|v| !v.is_null());
    usize::from(given("kind"))
        + FAMILIES
            .iter()
            .filter_map(|f| f.shorthand())
            .filter(|k| given(k))
            .count()
}

/// The JSON Schema of one agent entry: one alternative per family (and per shorthand).
pub fn entry_schemas() -> Vec<Value> {
    let mut out = Vec::new();
    for f in FAMILIES.iter() {
        let params: Map<String, Value> = f
            .params()
            .iter()
            .map(|p| (p.name.to_string(), param_schema(p)))
            .collect();
        let mut properties = Map::new();
        properties.insert(
            "id".into(),
            serde_json::json!({
                "type": "string",
                "description": "Names the agent in records and reports; defaults to the kind or the script's file stem."
            }),
        );
        properties.insert(
            "kind".into(),
            serde_json::json!({ "const": f.name(), "description": f.doc() }),
        );
        let required_params: Vec<&str> = f
            .params()
            .iter()
            .filter(|p| p.default.is_none())
            .map(|p| p.name)
            .collect();
        let mut params_schema = serde_json::json!({
            "type": "object",
            "properties": params,
            "additionalProperties": f.open_params(),
        });
        if !required_params.is_empty() {
            params_schema["required"] = serde_json::json!(required_params);
        }
        properties.insert("params".into(), params_schema);
        for p in f.fields() {
            properties.insert(p.name.to_string(), param_schema(&p));
        }
        let required: Vec<&str> = f
            .fields()
            .iter()
            .filter(|p| p.default.is_none())
            .map(|p| p.name)
            .collect();
        let variant = |selector: &str| {
            let mut req = vec![selector];
            req.extend(required.iter().filter(|r| **r != selector));
            if !required_params.is_empty() {
                req.push("params");
            }
            serde_json::json!({
                "type": "object",
                "title": f.name(),
                "description": f.doc(),
                "properties": properties,
                "required": req,
                "additionalProperties": false,
            })
        };
        out.push(variant("kind"));
        if let Some(key) = f.shorthand() {
            let mut v = variant(key);
            v["properties"]
                .as_object_mut()
                .expect("an object")
                .remove("kind");
            out.push(v);
        }
    }
    out
}

fn param_schema(p: &crate::family::Param) -> Value {
    let mut s = p.ty.schema();
    let mut doc = p.doc.to_string();
    if let Some(d) = &p.default {
        doc.push_str(&format!(" (default {})", show(d)));
    }
    s["description"] = Value::from(doc);
    s
}

/// A [`Resolve`] for library callers (tests, benchmarks, notebooks): paths relative to the
/// working folder, no log, problems kept to be returned.
pub struct Standalone {
    rules: Option<Arc<Rules>>,
    prefix: String,
    problems: Vec<(String, String)>,
    log: Arc<AgentLog>,
}

impl Standalone {
    /// Resolves `entry` (as [`resolve`] takes it) for agents playing under `rules`.
    pub fn recipe(entry: &Value, rules: &Rules) -> Result<Arc<dyn Recipe>, Vec<(String, String)>> {
        let mut cx = Standalone {
            rules: Some(Arc::new(rules.clone())),
            prefix: String::new(),
            problems: Vec::new(),
            log: Arc::new(AgentLog::default()),
        };
        let recipe = resolve(entry, &mut cx);
        match recipe {
            Some(r) if cx.problems.is_empty() => Ok(r),
            _ => Err(cx.problems),
        }
    }

    fn at(&self, field: &str) -> String {
        match (self.prefix.is_empty(), field.is_empty()) {
            (true, _) => field.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}.{field}", self.prefix),
        }
    }
}

impl Resolve for Standalone {
    fn rules(&self) -> Option<&Arc<Rules>> {
        self.rules.as_ref()
    }

    fn path(&self, written: &str) -> PathBuf {
        PathBuf::from(written)
    }

    fn problem(&mut self, field: &str, message: String) {
        let at = self.at(field);
        self.problems.push((at, message));
    }

    fn agent(&mut self, value: &Value, field: &str) -> Option<Arc<dyn Recipe>> {
        let outer = std::mem::take(&mut self.prefix);
        self.prefix = if outer.is_empty() {
            field.to_string()
        } else {
            format!("{outer}.{field}")
        };
        let recipe = resolve(value, self);
        self.prefix = outer;
        recipe
    }

    fn log(&self) -> Arc<AgentLog> {
        self.log.clone()
    }
}
