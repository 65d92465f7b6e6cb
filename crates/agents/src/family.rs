//! What an agent family is: a [`Family`] describes itself (name, parameters with types,
//! defaults and docs) and turns a checked scenario entry into a [`Recipe`]; a recipe builds
//! agents. The registry (`registry.rs`) is the list of families; everything else (the scenario
//! resolver, `dhumbal-run agents`, the JSON Schema, the manifest) reads these descriptions.
//!
//! Adding a family: one file with a type implementing [`Family`] and one implementing
//! [`Recipe`], and one line in [`crate::registry::FAMILIES`] (see ARCHITECTURE.md).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::{Agent, Rules};

use crate::log::AgentLog;

/// The type of a parameter, as a scenario writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A whole number, possibly negative.
    Int,
    /// A whole number, zero or more.
    Count,
    Float,
    /// true or false.
    Bool,
    /// One of a fixed list of names.
    Choice(&'static [&'static str]),
    /// A file, written relative to the scenario file, that must exist.
    Path,
    /// Another agent: a kind's name, or a mapping like an entry of `agents:`
    /// (`{kind: ..., params: ...}` or `{script: ...}`).
    Agent,
    /// Any value (a script's own parameters).
    Any,
}

impl ParamType {
    /// How `dhumbal-run agents` and messages name the type.
    pub fn describe(self) -> String {
        match self {
            ParamType::Int => "integer".into(),
            ParamType::Count => "integer >= 0".into(),
            ParamType::Float => "number".into(),
            ParamType::Bool => "true/false".into(),
            ParamType::Choice(names) => names.join("|"),
            ParamType::Path => "file path".into(),
            ParamType::Agent => "agent".into(),
            ParamType::Any => "any".into(),
        }
    }

    /// What a valid value looks like, for messages.
    fn expected(self) -> String {
        match self {
            ParamType::Int => "a whole number".into(),
            ParamType::Count => "a whole number, zero or more".into(),
            ParamType::Float => "a number".into(),
            ParamType::Bool => "true or false".into(),
            ParamType::Choice(names) => format!("one of {}", names.join(", ")),
            ParamType::Path => "a file path (relative to the scenario file)".into(),
            ParamType::Agent => "an agent".into(),
            ParamType::Any => "a value".into(),
        }
    }

    /// Whether `value` has this type (an agent is checked when it is resolved).
    pub fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (ParamType::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (ParamType::Count, Value::Number(n)) => n.is_u64(),
            (ParamType::Float, Value::Number(n)) => n.as_f64().is_some_and(f64::is_finite),
            (ParamType::Bool, Value::Bool(_)) => true,
            (ParamType::Choice(names), Value::String(s)) => names.contains(&s.as_str()),
            (ParamType::Path, Value::String(s)) => !s.is_empty(),
            (ParamType::Agent | ParamType::Any, _) => true,
            _ => false,
        }
    }

    /// The JSON Schema of a value of this type.
    pub fn schema(self) -> Value {
        match self {
            ParamType::Int => serde_json::json!({ "type": "integer" }),
            ParamType::Count => serde_json::json!({ "type": "integer", "minimum": 0 }),
            ParamType::Float => serde_json::json!({ "type": "number" }),
            ParamType::Bool => serde_json::json!({ "type": "boolean" }),
            ParamType::Choice(names) => serde_json::json!({ "type": "string", "enum": names }),
            ParamType::Path => serde_json::json!({ "type": "string" }),
            ParamType::Agent => serde_json::json!({
                "anyOf": [{ "type": "string" }, { "type": "object" }]
            }),
            ParamType::Any => serde_json::json!({}),
        }
    }
}

/// One documented parameter: `name: type = default`, and what it does.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: &'static str,
    pub ty: ParamType,
    /// The value when the scenario does not give one; `None`: the parameter is required.
    pub default: Option<Value>,
    pub doc: &'static str,
    /// A check beyond the type (a range): the problem with a value, if any.
    pub valid: Option<fn(&Value) -> Option<&'static str>>,
    /// Left out of an agent's description ([`describe_params`]) at its default: a parameter
    /// that changes no decision, added after runs were made, whose scenario hash (made of
    /// the descriptions) must stay so that they resume, shard and merge as before.
    pub silent_at_default: bool,
}

impl Param {
    /// The same parameter with a check beyond its type.
    pub fn checked(mut self, valid: fn(&Value) -> Option<&'static str>) -> Param {
        self.valid = Some(valid);
        self
    }

    /// The same parameter, left out of descriptions at its default (see
    /// [`Param::silent_at_default`]).
    pub fn silent_at_default(mut self) -> Param {
        self.silent_at_default = true;
        self
    }

    pub fn new(
        name: &'static str,
        ty: ParamType,
        default: impl Into<Value>,
        doc: &'static str,
    ) -> Param {
        Param {
            name,
            ty,
            default: Some(default.into()),
            doc,
            valid: None,
            silent_at_default: false,
        }
    }

    /// A parameter without a default.
    pub fn required(name: &'static str, ty: ParamType, doc: &'static str) -> Param {
        Param {
            name,
            ty,
            default: None,
            doc,
            valid: None,
            silent_at_default: false,
        }
    }
}

/// An agent family: a kind a scenario can name, with its parameters, and how to make its
/// recipe from a scenario entry.
pub trait Family: Sync {
    /// The name a scenario gives as `kind:`.
    fn name(&self) -> &'static str;

    /// One line on what it plays like, for `dhumbal-run agents` and the JSON Schema.
    fn doc(&self) -> &'static str;

    /// The parameters it reads under `params:`.
    fn params(&self) -> Vec<Param>;

    /// Keys of the agent entry itself that it reads besides `id`, `kind` and `params` (a
    /// script's `script:` and `max_operations:`). Usually none.
    fn fields(&self) -> Vec<Param> {
        Vec::new()
    }

    /// A field whose presence names this family without `kind:` (`script: agent.rhai`).
    fn shorthand(&self) -> Option<&'static str> {
        None
    }

    /// Whether `params:` may hold names it does not declare here: the registry then passes
    /// them on unchecked, and the family checks them in [`Family::resolve`] (a script declares
    /// its own in `fn parameters()`).
    fn open_params(&self) -> bool {
        false
    }

    /// The recipe for a checked entry: every declared field and parameter has the declared
    /// type (or is absent and has its default), and no undeclared name is there. Problems go
    /// to `cx`, in which case the result is `None`.
    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>>;
}

/// How to make fresh agents of one configured kind. Shared by every thread of a run, so it
/// is also where expensive read-only state lives (a compiled script, model weights): built
/// once when the scenario is resolved, handed to each agent by `Arc`.
pub trait Recipe: Send + Sync {
    /// The family's name.
    fn family(&self) -> &'static str;

    /// How records and summaries name the kind (`balanced`, `script:agents/mine.rhai`).
    fn kind(&self) -> String {
        self.family().to_string()
    }

    /// The agent's id when the scenario gives none (then numbered if taken: `random-2`).
    fn default_id(&self) -> String {
        self.family().to_string()
    }

    /// The entry as resolved, every parameter with the value in force (for the manifest):
    /// `kind` (or the family's shorthand field) first, as a scenario would spell it.
    fn describe(&self) -> Map<String, Value>;

    /// A new agent named `id`, with no state carried over from other games.
    fn build(&self, id: &str) -> Box<dyn Agent>;

    /// Whether its agents search (simulate rounds at every decision), itself or through an
    /// agent it wraps: a search's rollout policy must not, or every rollout step would search.
    fn searches(&self) -> bool {
        false
    }

    /// Whether its agents play uniformly at random (`random`): a search then rolls out with
    /// its own allocation-free random policy instead of building an agent.
    fn uniform_random(&self) -> bool {
        false
    }

    /// The recipe whose agents this one builds, where it only wraps one (a `tuned:` agent
    /// file, once tuned): a search looks through it for the rollout policies it plays
    /// without building an agent (`random` and the paper's heuristics).
    fn inner(&self) -> Option<&dyn Recipe> {
        None
    }

    /// The recipe for playing under other rules (a stage winner seated in a later stage),
    /// when it depends on the rules (a script compiled against them); `None` if it does not.
    fn for_rules(&self, _rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        Ok(None)
    }

    /// The files it was made from, as (the path as the scenario wrote it, the text): a
    /// script's source, say, which the runner copies into the results folder. A recipe that
    /// wraps others lists theirs too.
    fn sources(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// What a family's [`Family::resolve`] may ask while its entry is resolved. The registry
/// implements it (`registry::resolve`): field paths and nested agents are handled there once,
/// and the rest is handed to the caller's [`Context`].
pub trait Resolve {
    /// The rules the agent will play under; `None` when they had problems of their own.
    fn rules(&self) -> Option<&Arc<Rules>>;

    /// A path as the scenario wrote it, made relative to the scenario file.
    fn path(&self, written: &str) -> PathBuf;

    /// Reports a problem with `field` of the entry (`params.iterations`, `script`).
    fn problem(&mut self, field: &str, message: String);

    /// Resolves the agent given as `value` at `field` of the entry (a parameter of type
    /// [`ParamType::Agent`]).
    fn agent(&mut self, value: &Value, field: &str) -> Option<Arc<dyn Recipe>>;

    /// Where agents' text output goes (a script's `print`).
    fn log(&self) -> Arc<AgentLog>;

    /// Whether `path` (as [`Resolve::path`] made it) is a checkpoint that a training section
    /// of this scenario writes: it may not exist yet, and the run trains it before play.
    fn planned(&self, _path: &std::path::Path) -> bool {
        false
    }
}

/// `recipe`, unless the rules its agents will play under are ones it refuses
/// ([`Recipe::for_rules`]): then the refusal is reported at `field`. For families whose
/// recipe reads a file learned under some rules (a checkpoint, a policy table).
pub(crate) fn fitting(
    cx: &mut dyn Resolve,
    field: &str,
    recipe: Arc<dyn Recipe>,
) -> Option<Arc<dyn Recipe>> {
    if let Some(rules) = cx.rules()
        && let Err(e) = recipe.for_rules(rules)
    {
        cx.problem(field, e);
        return None;
    }
    Some(recipe)
}

/// What whoever resolves agent entries provides (the scenario resolver, or
/// `registry::Standalone` for library callers).
pub trait Context {
    /// The rules the agents will play under; `None` when they had problems of their own.
    fn rules(&self) -> Option<&Arc<Rules>>;

    /// A path as the scenario wrote it, made relative to the scenario file.
    fn path(&self, written: &str) -> PathBuf;

    /// A problem at `field`, the dotted path from where resolution started
    /// (`stages.1.agents.0.params.rollout.kind`).
    fn problem(&mut self, field: &str, message: String);

    /// Where agents' text output goes.
    fn log(&self) -> Arc<AgentLog>;

    /// Whether `path` is a checkpoint that a training section of the scenario writes (see
    /// [`Resolve::planned`]). None by default.
    fn planned(&self, _path: &std::path::Path) -> bool {
        false
    }
}

/// A checked agent entry, as a family resolves it.
pub struct Entry<'a> {
    pub(crate) values: BTreeMap<&'a str, &'a Value>,
    pub(crate) params: &'a Map<String, Value>,
    pub(crate) declared: Vec<Param>,
}

impl<'a> Entry<'a> {
    /// The value given for field or parameter `name`, or its default; `Value::Null` for a
    /// required one that is missing (the check has reported it already).
    pub fn get(&self, name: &str) -> Value {
        if let Some(v) = self.values.get(name) {
            return (*v).clone();
        }
        self.declared
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.default.clone())
            .unwrap_or(Value::Null)
    }

    /// Whether the scenario gave `name`.
    pub fn given(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    pub fn f64(&self, name: &str) -> f64 {
        self.get(name).as_f64().unwrap_or(0.0)
    }

    pub fn i64(&self, name: &str) -> i64 {
        self.get(name).as_i64().unwrap_or(0)
    }

    pub fn u64(&self, name: &str) -> u64 {
        self.get(name).as_u64().unwrap_or(0)
    }

    /// A count that fits 32 bits (larger values saturate).
    pub fn u32(&self, name: &str) -> u32 {
        self.u64(name).min(u64::from(u32::MAX)) as u32
    }

    pub fn bool(&self, name: &str) -> bool {
        self.get(name).as_bool().unwrap_or(false)
    }

    pub fn text(&self, name: &str) -> String {
        self.get(name).as_str().unwrap_or_default().to_string()
    }

    /// Everything under `params:` as written (for families with open parameters).
    pub fn raw_params(&self) -> &Map<String, Value> {
        self.params
    }
}

/// Checks an entry against a family's declarations: each given field and parameter has its
/// type, required ones are there, no unknown names (unless the family's parameters are open).
/// Problems are `(field, message)`, the field relative to the entry.
pub(crate) fn check<'a>(
    family: &dyn Family,
    fields: &'a Map<String, Value>,
    params: &'a Map<String, Value>,
) -> Result<Entry<'a>, Vec<(String, String)>> {
    let kind = family.name();
    let declared_fields = family.fields();
    let declared_params = family.params();
    let mut problems = Vec::new();
    let mut values = BTreeMap::new();
    let mut take = |place: &str, declared: &[Param], given: &'a Map<String, Value>, open: bool| {
        // A null (`key: ~`) is as good as not given.
        for (name, value) in given.iter().filter(|(_, v)| !v.is_null()) {
            let field = crate::registry::join(place, name);
            let Some(p) = declared.iter().find(|p| p.name == name) else {
                if open {
                    continue;
                }
                let mut names: Vec<&str> = declared.iter().map(|p| p.name).collect();
                if place.is_empty() {
                    // The keys every entry may have, besides the family's own fields.
                    names.extend(["id", "kind", "params"]);
                    names.sort_unstable();
                }
                let message = if names.is_empty() {
                    format!("`{kind}` takes no parameters")
                } else {
                    let hint = crate::nearest(name, &names)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    // A field another family reads (`max_operations` on a built-in kind).
                    let owner = crate::FAMILIES
                        .iter()
                        .find(|f| f.fields().iter().any(|p| p.name == name));
                    if let (true, Some(owner)) = (place.is_empty(), owner) {
                        format!("applies to `{}` agents only, not `{kind}`", owner.name())
                    } else if place.is_empty() {
                        format!(
                            "unknown field for `{kind}`; {hint}valid fields here: {}",
                            names.join(", ")
                        )
                    } else {
                        format!(
                            "unknown parameter of `{kind}`; {hint}valid: {}",
                            names.join(", ")
                        )
                    }
                };
                problems.push((field, message));
                continue;
            };
            if !p.ty.admits(value) {
                let default = p
                    .default
                    .as_ref()
                    .map(|d| format!(" (default {})", show(d)))
                    .unwrap_or_default();
                problems.push((
                    field,
                    format!("expected {}{default}, got {value}", p.ty.expected()),
                ));
                continue;
            }
            if let Some(problem) = p.valid.and_then(|valid| valid(value)) {
                problems.push((field, format!("{problem}, got {value}")));
                continue;
            }
            values.insert(name.as_str(), value);
        }
        for p in declared.iter().filter(|p| p.default.is_none()) {
            if given.get(p.name).is_none_or(Value::is_null) {
                let field = crate::registry::join(place, p.name);
                problems.push((field, format!("missing: {}", p.doc)));
            }
        }
    };
    take("", &declared_fields, fields, false);
    take("params", &declared_params, params, family.open_params());
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut declared = declared_fields;
    declared.extend(declared_params);
    Ok(Entry {
        values,
        params,
        declared,
    })
}

/// A check for [`Param::checked`]: at least 1.
pub fn at_least_one(v: &Value) -> Option<&'static str> {
    (v.as_f64().unwrap_or(0.0) < 1.0).then_some("must be at least 1")
}

/// A check for [`Param::checked`]: 0 or more.
pub fn not_negative(v: &Value) -> Option<&'static str> {
    (v.as_f64().unwrap_or(0.0) < 0.0).then_some("must not be negative")
}

/// A check for [`Param::checked`]: more than 0.
pub fn positive(v: &Value) -> Option<&'static str> {
    (v.as_f64().unwrap_or(0.0) <= 0.0).then_some("must be greater than 0")
}

/// A check for [`Param::checked`]: a probability.
pub fn probability(v: &Value) -> Option<&'static str> {
    (!(0.0..=1.0).contains(&v.as_f64().unwrap_or(-1.0)))
        .then_some("must be a probability in [0, 1]")
}

/// A default as a scenario would write it.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => format!("{}", n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

/// `kind` and every declared parameter with the value in force, as a manifest shows a
/// built-in agent: the usual [`Recipe::describe`] of a family without fields.
pub fn describe_params(
    kind: &str,
    params: &[Param],
    value: impl Fn(&Param) -> Value,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("kind".into(), Value::from(kind));
    let p: Map<String, Value> = params
        .iter()
        .map(|p| (p, value(p)))
        .filter(|(p, v)| !(p.silent_at_default && p.default.as_ref() == Some(v)))
        .map(|(p, v)| (p.name.to_string(), v))
        .collect();
    m.insert("params".into(), Value::Object(p));
    m
}
