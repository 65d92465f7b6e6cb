//! The registry: the list of agent families, and how a scenario's agent entry becomes a
//! [`Recipe`] through them. `dhumbal-run agents`, the JSON Schema of agent entries and the
//! manifest all come from the families' own descriptions.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_game::Rules;

use crate::family::{Context, Family, Param, Recipe, Resolve, check, show};
use crate::log::AgentLog;

pub use crate::FAMILIES;

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// `field` under the dotted path `prefix` (`stages.1` and `agents` make `stages.1.agents`);
/// either may be empty. The one way field paths are joined in messages.
pub fn join(prefix: &str, field: &str) -> String {
    match (prefix.is_empty(), field.is_empty()) {
        (true, _) => field.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{field}"),
    }
}

/// The recipe for an agent entry at field path `at`: a kind's name (`balanced`) or a mapping
/// (`{kind: ismcts, params: {...}}`, `{script: mine.rhai}`). Problems go to `cx` with their
/// full field paths; an `id` key is left to the caller (it names the agent, not how it plays).
pub fn resolve(entry: &Value, cx: &mut dyn Context, at: &str) -> Option<Arc<dyn Recipe>> {
    resolve_in(entry, &mut Scope::new(cx, at))
}

/// An entry being resolved: the caller's context and the field path of the entry, which
/// moves down into nested agents and back.
struct Scope<'c> {
    cx: &'c mut dyn Context,
    prefix: String,
    /// Fields of the entry at `prefix` (not of its nested agents) whose problems are not
    /// reported: fields left out of an entry with problems, already reported (a default
    /// stands in for them while the family checks the rest).
    quiet: Vec<String>,
}

impl<'c> Scope<'c> {
    fn new(cx: &'c mut dyn Context, at: &str) -> Scope<'c> {
        Scope {
            cx,
            prefix: at.to_string(),
            quiet: Vec::new(),
        }
    }
}

impl Resolve for Scope<'_> {
    fn rules(&self) -> Option<&Arc<Rules>> {
        self.cx.rules()
    }

    fn path(&self, written: &str) -> PathBuf {
        self.cx.path(written)
    }

    fn planned(&self, path: &std::path::Path) -> bool {
        self.cx.planned(path)
    }

    fn problem(&mut self, field: &str, message: String) {
        let quiet = self
            .quiet
            .iter()
            .any(|f| field == f || field.starts_with(&format!("{f}.")));
        if !quiet {
            let at = join(&self.prefix, field);
            self.cx.problem(&at, message);
        }
    }

    fn agent(&mut self, value: &Value, field: &str) -> Option<Arc<dyn Recipe>> {
        let inner = join(&self.prefix, field);
        let outer = std::mem::replace(&mut self.prefix, inner);
        let quiet = std::mem::take(&mut self.quiet);
        let recipe = resolve_in(value, self);
        self.prefix = outer;
        self.quiet = quiet;
        recipe
    }

    fn log(&self) -> Arc<AgentLog> {
        self.cx.log()
    }
}

/// `kind` (if given) and the families whose shorthand field `map` gives: what names the family.
fn named(map: &Map<String, Value>) -> (Option<&Value>, Vec<&'static dyn Family>) {
    let given = |k: &str| map.get(k).filter(|v| !v.is_null());
    let shorthands = FAMILIES
        .iter()
        .copied()
        .filter(|f| f.shorthand().is_some_and(|k| given(k).is_some()))
        .collect();
    (given("kind"), shorthands)
}

fn resolve_in(entry: &Value, cx: &mut Scope<'_>) -> Option<Arc<dyn Recipe>> {
    let named_kind;
    let map = match entry {
        Value::String(kind) => {
            named_kind = Map::from_iter([("kind".to_string(), Value::from(kind.clone()))]);
            &named_kind
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
    resolve_entry(map, cx)
}

/// [`resolve`] for an entry already read as a mapping (no copy of it is made).
pub fn resolve_map(
    map: &Map<String, Value>,
    cx: &mut dyn Context,
    at: &str,
) -> Option<Arc<dyn Recipe>> {
    resolve_entry(map, &mut Scope::new(cx, at))
}

fn resolve_entry(map: &Map<String, Value>, cx: &mut Scope<'_>) -> Option<Arc<dyn Recipe>> {
    let (kind, shorthands) = named(map);
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
    // A parameter of another family (`sure_threshold` on `aggressive`) is not a typo: say
    // whose it is, and check the rest as usual, so that every problem of the entry is reported.
    let foreign = foreign_params(family, params);
    let own: Map<String, Value>;
    let params = if foreign.is_empty() {
        params
    } else {
        own = params
            .iter()
            .filter(|(k, _)| !foreign.iter().any(|(name, _)| name == *k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        &own
    };
    for (name, message) in &foreign {
        cx.problem(&join("params", name), message.clone());
    }
    match check(family, &fields, params) {
        Ok(entry) => {
            let recipe = family.resolve(&entry, cx);
            recipe.filter(|_| foreign.is_empty())
        }
        Err(problems) => {
            // The family still checks the rest (a nested agent, a script), with the bad
            // values left out, so that one pass reports every problem of the entry.
            let bad = |place: &str, name: &str| {
                problems
                    .iter()
                    .any(|(field, _)| *field == join(place, name))
            };
            let fields_left: Map<String, Value> = fields
                .iter()
                .filter(|(k, _)| !bad("", k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let params_left: Map<String, Value> = params
                .iter()
                .filter(|(k, _)| !bad("params", k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (field, message) in problems {
                cx.problem(&field, message);
            }
            // A missing required value fails the check again: nothing more to learn then.
            if let Ok(entry) = check(family, &fields_left, &params_left) {
                cx.quiet = fields
                    .keys()
                    .filter(|k| !fields_left.contains_key(*k))
                    .cloned()
                    .chain(
                        params
                            .keys()
                            .filter(|k| !params_left.contains_key(*k))
                            .map(|k| join("params", k)),
                    )
                    .collect();
                family.resolve(&entry, cx);
                cx.quiet.clear();
            }
            None
        }
    }
}

/// The parameters given to `family` that it does not read but other families do, each with
/// a message naming the families that read it and what `family` does instead.
fn foreign_params(family: &dyn Family, params: &Map<String, Value>) -> Vec<(String, String)> {
    if family.open_params() {
        return Vec::new();
    }
    let own = family.params();
    let mut out = Vec::new();
    for (name, _) in params.iter().filter(|(_, v)| !v.is_null()) {
        if own.iter().any(|p| p.name == name) {
            continue;
        }
        let readers: Vec<String> = FAMILIES
            .iter()
            .filter(|f| f.params().iter().any(|p| p.name == name))
            .map(|f| format!("`{}`", f.name()))
            .collect();
        if readers.is_empty() {
            continue;
        }
        out.push((
            name.clone(),
            format!(
                "`{name}` is read only by {}, not by `{}` ({}); remove it, or use one of those kinds",
                and_list(&readers),
                family.name(),
                family.doc()
            ),
        ));
    }
    out
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
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

/// The names of the fields and parameters that hold a file's path, in any family (`script`,
/// `checkpoint`, ...): a caller that moves an entry to another folder rewrites them.
pub fn path_fields() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = FAMILIES
        .iter()
        .flat_map(|f| f.params().into_iter().chain(f.fields()))
        .filter(|p| matches!(p.ty, crate::family::ParamType::Path))
        .map(|p| p.name)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// How many of the keys that name a family (`kind`, shorthands) `entry` gives.
pub fn selectors_in(entry: &Map<String, Value>) -> usize {
    let (kind, shorthands) = named(entry);
    usize::from(kind.is_some()) + shorthands.len()
}

/// The names of `params` without a default: those an entry must give.
fn required(params: &[Param]) -> Vec<&'static str> {
    params
        .iter()
        .filter(|p| p.default.is_none())
        .map(|p| p.name)
        .collect()
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
        let required_params = required(&f.params());
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
        let required_fields = required(&f.fields());
        let variant = |selector: &str| {
            let mut req = vec![selector];
            req.extend(required_fields.iter().filter(|r| **r != selector));
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

/// A [`Context`] apart from a scenario's problem list: paths relative to `folder`, problems
/// kept to be returned as (field, message). Library callers (tests, benchmarks, notebooks)
/// resolve with [`Standalone::recipe`]; the Python package checks an environment's opponents
/// with one, and the tuning resolver each value of a parameter's range.
pub struct Standalone {
    pub rules: Option<Arc<Rules>>,
    /// Where relative paths start from (empty: the working folder).
    pub folder: PathBuf,
    pub problems: Vec<(String, String)>,
    pub log: Arc<AgentLog>,
    /// Files that sections of the scenario write (they may not exist yet).
    pub planned: Vec<PathBuf>,
}

impl Standalone {
    /// For agents playing under `rules`, paths relative to `folder`.
    pub fn new(rules: Option<Arc<Rules>>, folder: PathBuf) -> Standalone {
        Standalone {
            rules,
            folder,
            problems: Vec::new(),
            log: Arc::new(AgentLog::default()),
            planned: Vec::new(),
        }
    }

    /// Resolves `entry` (as [`resolve`] takes it) for agents playing under `rules`, paths
    /// relative to the working folder.
    pub fn recipe(entry: &Value, rules: &Rules) -> Result<Arc<dyn Recipe>, Vec<(String, String)>> {
        let mut cx = Standalone::new(Some(Arc::new(rules.clone())), PathBuf::new());
        match resolve(entry, &mut cx, "") {
            Some(r) if cx.problems.is_empty() => Ok(r),
            _ => Err(cx.problems),
        }
    }
}

impl Context for Standalone {
    fn rules(&self) -> Option<&Arc<Rules>> {
        self.rules.as_ref()
    }

    fn path(&self, written: &str) -> PathBuf {
        self.folder.join(written)
    }

    fn problem(&mut self, field: &str, message: String) {
        self.problems.push((field.to_string(), message));
    }

    fn log(&self) -> Arc<AgentLog> {
        self.log.clone()
    }

    fn planned(&self, path: &std::path::Path) -> bool {
        self.planned.iter().any(|p| p == path)
    }
}
