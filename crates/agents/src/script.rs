//! Agents written by researchers as Rhai scripts.
//!
//! A script defines `fn call_jhyap(obs)`, `fn discard(obs)` and `fn pick(obs)` over an observation
//! map (see `docs/rhai.md`). It is compiled once per stage into a [`ScriptProgram`] shared by
//! every thread; each seat gets a cheap [`ScriptAgent`] handle.
//!
//! Sandbox: Rhai has no file or network access of its own and modules are compiled out
//! (`no_module`), `eval` is disabled, each call has an operation budget and call-depth and size
//! limits, and `print`/`debug` go to the run's script log, never the terminal.
//!
//! A script declares its parameters in `fn parameters()` (name, type, default, doc), evaluated
//! once when it is compiled; the entry's `params:` are checked against that declaration. After
//! compiling, resolution plays a short rehearsal (a few rounds with the script in every seat,
//! a fixed seed, the stage's rules), so that a runtime error (a misspelt helper, say) is a
//! problem of `dhumbal-run validate` rather than a failure at deal 0 of a long run.

use std::path::Path;
use std::sync::Arc;

use rhai::{
    AST, Array, CallFnOptions, Dynamic, Engine, EvalAltResult, FLOAT, INT, Map, Position, Scope,
};

use dhumbal_game::cards::{CARD_IDS, Card, Discard};
use dhumbal_game::decision::{
    Agent, AgentError, Candidate, Choice, Explanation, Observation, Phase, Pick, PlayError,
};
use dhumbal_game::discards::{Runs, classify, for_each_discard};
use dhumbal_game::rng::{ChaChaStreams, RandomSource};
use dhumbal_game::round::Table;
use dhumbal_game::rules::Rules;
use serde_json::Value;

use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve};
use crate::log::AgentLog;

/// Operations one call may take before it is stopped (a loop that never ends, say).
pub const DEFAULT_MAX_OPERATIONS: u64 = 1_000_000;

/// The functions the engine registers for scripts (docs/rhai.md), for "did you mean".
pub const HELPERS: &[&str] = &[
    "value",
    "rank",
    "suit",
    "is_joker",
    "card_name",
    "hand_value",
    "legal_discards",
    "candidate_discards",
    "is_legal",
    "unseen",
];

/// The keys of the observation map (`ScriptAgent::observation`), for "did you mean".
pub const OBS_KEYS: &[&str] = &[
    "phase",
    "seat",
    "players",
    "turn",
    "round",
    "starter",
    "threshold",
    "hand",
    "hand_value",
    "hand_sizes",
    "standings",
    "active",
    "scoring",
    "pile",
    "pickable",
    "discarded",
    "known",
    "seen",
    "stock_len",
    "params",
];

/// The functions the engine calls with the observation map.
const ENTRY_POINTS: &[&str] = &["call_jhyap", "discard", "pick", "explain"];

/// The keys of one parameter's declaration in `fn parameters()`.
const DECLARATION_KEYS: &[&str] = &["type", "default_value", "doc"];

/// The type of a parameter a script declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptType {
    Int,
    Float,
    Bool,
    String,
    /// Any value the scenario can write (a list, a mapping): the script checks it.
    Any,
}

impl ScriptType {
    const ALL: [ScriptType; 5] = [
        ScriptType::Int,
        ScriptType::Float,
        ScriptType::Bool,
        ScriptType::String,
        ScriptType::Any,
    ];

    /// The names a declaration writes, in the order messages list them.
    pub fn names() -> Vec<&'static str> {
        ScriptType::ALL.map(ScriptType::name).to_vec()
    }

    fn parse(name: &str) -> Option<ScriptType> {
        ScriptType::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            ScriptType::Int => "int",
            ScriptType::Float => "float",
            ScriptType::Bool => "bool",
            ScriptType::String => "string",
            ScriptType::Any => "any",
        }
    }

    /// What a value of this type looks like in a scenario, for messages.
    fn expected(self) -> &'static str {
        match self {
            ScriptType::Int => "a whole number",
            ScriptType::Float => "a number",
            ScriptType::Bool => "true or false",
            ScriptType::String => "a string",
            ScriptType::Any => "a value",
        }
    }

    /// A scenario's value as the script sees it, if it has this type (a whole number is a
    /// fine `float`).
    fn value_of(self, v: &Value) -> Option<Dynamic> {
        match (self, v) {
            (ScriptType::Int, Value::Number(n)) => n.as_i64().map(Dynamic::from_int),
            (ScriptType::Float, Value::Number(n)) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(|f| Dynamic::from_float(f as FLOAT)),
            (ScriptType::Bool, Value::Bool(b)) => Some(Dynamic::from_bool(*b)),
            (ScriptType::String, Value::String(s)) => Some(Dynamic::from(s.clone())),
            (ScriptType::Any, v) => Some(json_to_rhai(v)),
            _ => None,
        }
    }

    /// A declared default as the script will see it, if it has this type or is `()` (unset).
    fn default_of(self, v: &Dynamic) -> Option<Dynamic> {
        if v.is_unit() {
            return Some(Dynamic::UNIT);
        }
        match self {
            ScriptType::Int => v.is_int().then(|| v.clone()),
            // NaN or an infinity as a default would make every comparison with it false and
            // the agent silently wrong: not a float a parameter can hold.
            ScriptType::Float => v
                .as_float()
                .ok()
                .or_else(|| v.as_int().ok().map(|i| i as FLOAT))
                .filter(|f| f.is_finite())
                .map(Dynamic::from_float),
            ScriptType::Bool => v.is_bool().then(|| v.clone()),
            ScriptType::String => v.is_string().then(|| v.clone()),
            ScriptType::Any => Some(v.clone()),
        }
    }
}

/// One parameter a script declares in `fn parameters()`.
#[derive(Clone, Debug)]
pub struct Declared {
    pub name: String,
    pub ty: ScriptType,
    /// The value when the scenario gives none; `()`: unset (the script checks for it).
    pub default: Dynamic,
    pub doc: String,
}

/// A compiled script with its sandboxed engine.
pub struct ScriptProgram {
    /// The path as the scenario wrote it, for messages.
    display: String,
    /// The source as compiled (a later change to the file does not affect this run).
    source: String,
    log: Arc<AgentLog>,
    max_operations: u64,
    engine: Engine,
    ast: AST,
    /// What `fn parameters()` declares, in name order; `None`: the script has no such function.
    declared: Option<Vec<Declared>>,
    /// Whether it defines `fn explain(obs)` (asked only by a trace).
    explains: bool,
}

/// A compile error with the script's line and column.
#[derive(Debug, Clone)]
pub struct ScriptError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl ScriptProgram {
    /// Compiles `path` for the given rules. `display` names it in messages.
    pub fn compile(
        path: &Path,
        display: &str,
        rules: Arc<Rules>,
        log: Arc<AgentLog>,
        max_operations: u64,
    ) -> Result<ScriptProgram, ScriptError> {
        let source = std::fs::read_to_string(path).map_err(|e| ScriptError {
            line: None,
            column: None,
            message: format!("cannot read {}: {e}", path.display()),
        })?;
        ScriptProgram::from_source(display, source, rules, log, max_operations)
    }

    /// The same script compiled for other rules (a stage winner seated under new rules).
    pub fn for_rules(&self, rules: Arc<Rules>) -> Result<ScriptProgram, ScriptError> {
        ScriptProgram::from_source(
            &self.display,
            self.source.clone(),
            rules,
            self.log.clone(),
            self.max_operations,
        )
    }

    /// The script's name as the scenario gave it.
    pub fn name(&self) -> &str {
        &self.display
    }

    /// A fingerprint of the source (FNV-1a), so that a changed script is a changed scenario.
    pub fn source_hash(&self) -> String {
        format!("{:016x}", dhumbal_game::hash::fnv1a(self.source.as_bytes()))
    }

    /// The source as compiled.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The parameters it declares in `fn parameters()` (`None` when it has no such function).
    pub fn declared(&self) -> Option<&[Declared]> {
        self.declared.as_deref()
    }

    fn from_source(
        display: &str,
        source: String,
        rules: Arc<Rules>,
        log: Arc<AgentLog>,
        max_operations: u64,
    ) -> Result<ScriptProgram, ScriptError> {
        let engine = sandboxed_engine(display, rules, log.clone(), max_operations);
        let ast = engine.compile(&source).map_err(|e| {
            let pos = e.position();
            let mut message = e.err_type().to_string();
            if let rhai::ParseErrorType::Reserved(word) = e.err_type()
                && word == "default"
            {
                message.push_str(
                    " (in `fn parameters()`, a parameter's default is written `default_value:`)",
                );
            }
            ScriptError {
                line: pos.line(),
                column: pos.position(),
                message,
            }
        })?;
        // `call` is a reserved word in Rhai, hence `call_jhyap`.
        for name in ["call_jhyap", "discard", "pick"] {
            if !ast
                .iter_functions()
                .any(|f| f.name == name && f.params.len() == 1)
            {
                return Err(ScriptError {
                    line: None,
                    column: None,
                    message: format!("the script must define `fn {name}(obs)` (see docs/rhai.md)"),
                });
            }
        }
        let explains = ast
            .iter_functions()
            .any(|f| f.name == "explain" && f.params.len() == 1);
        let mut program = ScriptProgram {
            display: display.to_string(),
            source,
            log,
            max_operations,
            explains,
            engine,
            ast,
            declared: None,
        };
        if program
            .ast
            .iter_functions()
            .any(|f| f.name == "parameters" && f.params.is_empty())
        {
            program.declared = Some(program.declaration()?);
        }
        Ok(program)
    }

    /// Evaluates `fn parameters()` (sandboxed, its output dropped) and checks what it returns.
    fn declaration(&self) -> Result<Vec<Declared>, ScriptError> {
        let value = {
            let _quiet = crate::log::muted();
            let mut scope = Scope::new();
            let options = CallFnOptions::new().eval_ast(false).rewind_scope(true);
            self.engine.call_fn_with_options::<Dynamic>(
                options,
                &mut scope,
                &self.ast,
                "parameters",
                (),
            )
        };
        let value = value.map_err(|e| {
            let failure = self.failure("parameters", "call", &e, None);
            ScriptError {
                line: failure.line,
                column: failure.column,
                message: format!("parameters() failed: {}", failure.message),
            }
        })?;
        let malformed = |message: String| ScriptError {
            line: None,
            column: None,
            message: format!("`fn parameters()` {message} (see docs/rhai.md)"),
        };
        let type_names = ScriptType::names().join(", ");
        let example = "#{ take_at_most: #{ type: \"int\", default_value: 3, doc: \"...\" } }";
        let Some(map) = value.clone().try_cast::<Map>() else {
            return Err(malformed(format!(
                "must return a map of parameter names to declarations, like {example}; it returned {} `{value}`",
                value.type_name()
            )));
        };
        let mut out = Vec::with_capacity(map.len());
        for (name, decl) in map {
            let Some(decl) = decl.clone().try_cast::<Map>() else {
                return Err(malformed(format!(
                    "declares `{name}` as {} `{decl}`; a declaration is a map like #{{ type: \"int\", default_value: 3, doc: \"...\" }}",
                    decl.type_name()
                )));
            };
            for key in decl.keys() {
                if !DECLARATION_KEYS.contains(&key.as_str()) {
                    let hint = crate::nearest(key, DECLARATION_KEYS)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    return Err(malformed(format!(
                        "declares `{name}` with an unknown key `{key}`; {hint}a declaration has {}",
                        DECLARATION_KEYS.join(", ")
                    )));
                }
            }
            let ty = match decl.get("type").map(|t| t.clone().into_string()) {
                Some(Ok(t)) => match ScriptType::parse(&t) {
                    Some(ty) => ty,
                    None => {
                        let alias = match t.as_str() {
                            "integer" | "i64" | "count" => Some("int"),
                            "number" | "double" | "f64" => Some("float"),
                            "boolean" => Some("bool"),
                            "str" | "text" => Some("string"),
                            _ => None,
                        };
                        let hint = alias
                            .or_else(|| crate::nearest(&t, &ScriptType::names()))
                            .map(|n| format!("did you mean \"{n}\"? "))
                            .unwrap_or_default();
                        return Err(malformed(format!(
                            "declares `{name}` of unknown type \"{t}\"; {hint}types: {type_names}"
                        )));
                    }
                },
                Some(Err(other)) => {
                    return Err(malformed(format!(
                        "declares `{name}` with a type that is a {other}, not a string (one of {type_names})"
                    )));
                }
                None => {
                    return Err(malformed(format!(
                        "declares `{name}` without a `type` (one of {type_names})"
                    )));
                }
            };
            let given_default = decl.get("default_value").cloned().unwrap_or(Dynamic::UNIT);
            let Some(default) = ty.default_of(&given_default) else {
                let finite = if given_default.as_float().is_ok_and(|f| !f.is_finite()) {
                    " (not a finite number)"
                } else {
                    ""
                };
                return Err(malformed(format!(
                    "declares `{name}` as {} but its default_value is {} `{given_default}`{finite}",
                    ty.name(),
                    given_default.type_name()
                )));
            };
            let doc = match decl.get("doc") {
                None => String::new(),
                Some(d) => d.clone().into_string().map_err(|t| {
                    malformed(format!(
                        "declares `{name}` with a doc that is a {t}, not a string"
                    ))
                })?,
            };
            out.push(Declared {
                name: name.to_string(),
                ty,
                default,
                doc,
            });
        }
        Ok(out)
    }

    /// Calls `function` with the observation map; `params` is what the map holds as
    /// `obs.params` (for the message when the script reads a key that is not there).
    fn run(&self, function: &str, obs: Map, params: &Map) -> Result<Dynamic, AgentError> {
        let mut scope = Scope::new();
        let options = CallFnOptions::new().eval_ast(false).rewind_scope(true);
        self.engine
            .call_fn_with_options::<Dynamic>(options, &mut scope, &self.ast, function, (obs,))
            .map_err(|e| AgentError(self.describe(function, &e, params)))
    }

    fn describe(&self, function: &str, e: &EvalAltResult, params: &Map) -> String {
        let failure = self.failure(function, "decision", e, Some(params));
        let mut out = format!("script {}, in {function}()", self.display);
        if let Some(via) = &failure.via {
            out.push_str(&format!(" via {via}"));
        }
        if let Some(line) = failure.line {
            out.push_str(&format!(", line {line}"));
            if let Some(column) = failure.column {
                out.push_str(&format!(", column {column}"));
            }
        }
        out.push_str(": ");
        out.push_str(&failure.message);
        out
    }

    /// What went wrong in `function` (a `what`: a decision, a call): the innermost error says
    /// what and where (line and column in the script), and the functions it went through.
    /// `params`: the map `obs.params` held, when the function was given one.
    fn failure(
        &self,
        function: &str,
        what: &str,
        e: &EvalAltResult,
        params: Option<&Map>,
    ) -> Failure {
        let mut inner: &EvalAltResult = e;
        let mut chain = Vec::new();
        while let EvalAltResult::ErrorInFunctionCall(name, _, err, _) = inner {
            if name != function || !chain.is_empty() {
                chain.push(format!("{name}()"));
            }
            inner = err;
        }
        let pos = inner.position();
        let message = match inner {
            EvalAltResult::ErrorTooManyOperations(_) => format!(
                "too many operations: the {what} took more than {} operations (`max_operations` in the agent entry raises the budget)",
                thousands(self.max_operations)
            ),
            EvalAltResult::ErrorStackOverflow(_) => format!(
                "too deep: more than {MAX_CALL_LEVELS} nested function calls (a recursion that never stops?)"
            ),
            EvalAltResult::ErrorDataTooLarge(what, _) => format!(
                "{what} is over the sandbox's limit (strings: {} characters, arrays: {} items, \
                 maps: {} entries)",
                thousands(MAX_STRING as u64),
                thousands(MAX_ARRAY as u64),
                thousands(MAX_MAP as u64)
            ),
            EvalAltResult::ErrorFunctionNotFound(signature, _) => self.not_found(signature),
            EvalAltResult::ErrorPropertyNotFound(key, _) => self.missing_key(key, pos, params),
            EvalAltResult::ErrorVariableNotFound(name, _) => self.unknown_variable(name),
            other => {
                let text = other.to_string();
                let suffix = format!(" ({pos})");
                text.strip_suffix(&suffix).unwrap_or(&text).to_string()
            }
        };
        Failure {
            line: pos.line(),
            column: pos.position(),
            via: (!chain.is_empty()).then(|| chain.join(" → ")),
            message,
        }
    }

    /// A call to a function that does not exist (`legal_discard (array)`), with the nearest
    /// helper or function of the script.
    fn not_found(&self, signature: &str) -> String {
        let (name, args) = match signature.split_once(" (") {
            Some((name, args)) => (name, args.strip_suffix(')').unwrap_or(args)),
            None => (signature, ""),
        };
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if !is_name {
            // An operator on values it does not apply to: most often `()`, which is what a
            // missing map key reads as.
            let hint = if args.split(", ").any(|a| a == "()") {
                " (`()` is what a missing map key reads as: a misspelt `obs` field or parameter?)"
            } else {
                ""
            };
            return format!("operator `{name}` does not apply to ({args}){hint}");
        }
        let own: Vec<String> = self
            .ast
            .iter_functions()
            .map(|f| f.name.to_string())
            .collect();
        let mut names: Vec<&str> = HELPERS.to_vec();
        names.extend(own.iter().map(String::as_str));
        names.sort_unstable();
        names.dedup();
        if names.contains(&name) {
            return format!("no function `{name}` takes these arguments ({args})");
        }
        let hint = crate::nearest(name, &names)
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_else(|| " (docs/rhai.md lists the helpers)".into());
        format!("unknown function `{name}` (called with {args}){hint}")
    }

    /// A key the script read from a map that does not hold it (the engine fails on a missing
    /// key, `set_fail_on_invalid_map_property`): which map, from the expression before the key
    /// in the source (`obs.`, `obs.params.`, `obs.params.weights.`), and the nearest key it
    /// has, or its keys.
    fn missing_key(&self, key: &str, pos: Position, params: Option<&Map>) -> String {
        let chain = self.receiver(pos);
        let empty = Map::new();
        let params = params.unwrap_or(&empty);
        // The map the chain names, when it starts at the observation: its path and keys.
        let mut known: Option<(String, Map)> = None;
        if let Some(first) = chain.first()
            && self.observation_names().contains(&first.as_str())
        {
            let mut obs: Map = OBS_KEYS
                .iter()
                .map(|k| ((*k).into(), Dynamic::UNIT))
                .collect();
            obs.insert("params".into(), Dynamic::from_map(params.clone()));
            known = Some((first.clone(), obs));
            for segment in &chain[1..] {
                known = known.and_then(|(path, m)| {
                    m.get(segment.as_str())
                        .and_then(|v| v.clone().try_cast::<Map>())
                        .map(|m| (format!("{path}.{segment}"), m))
                });
            }
        }
        let optional = format!(
            "a key that may be absent is tested with `\"{key}\" in map` before it is read, or read with `map.get(\"{key}\")`, which gives `()`"
        );
        let Some((path, map)) = known else {
            // Another map (the script's own, or one of the engine's under another name): the
            // nearest key of the observation or of its parameters, if one is near.
            let own: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
            let hint = crate::nearest(key, OBS_KEYS)
                .map(|n| format!("; did you mean `obs.{n}`?"))
                .or_else(|| {
                    crate::nearest(key, &own).map(|n| format!("; did you mean `obs.params.{n}`?"))
                })
                .unwrap_or_default();
            let map = if chain.is_empty() {
                "the map".to_string()
            } else {
                format!("`{}`", chain.join("."))
            };
            return format!("{map} has no key `{key}`{hint} ({optional})");
        };
        let names: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
        if names.is_empty() && path.ends_with(".params") {
            return format!(
                "`{path}` has no key `{key}`: the script declares no parameters (a script declares them in `fn parameters()`, see docs/rhai.md)"
            );
        }
        match crate::nearest(key, &names) {
            Some(n) => format!("`{path}` has no key `{key}`; did you mean `{n}`?"),
            None => format!(
                "`{path}` has no key `{key}`; its keys: {} ({optional})",
                names.join(", ")
            ),
        }
    }

    /// The names the script gives the observation map: `obs`, and the parameter of each
    /// function the engine calls with it.
    fn observation_names(&self) -> Vec<&str> {
        let mut names = vec!["obs"];
        for f in self.ast.iter_functions() {
            if ENTRY_POINTS.contains(&f.name)
                && let Some(p) = f.params.first()
            {
                names.push(p);
            }
        }
        names
    }

    /// The chain of names before the key at `pos` in the source: `["obs", "params"]` for
    /// `obs.params.callat` or `obs.params["callat"]`; empty when it is not a plain chain of
    /// names (a function's result, an array element).
    fn receiver(&self, pos: Position) -> Vec<String> {
        let (Some(line), Some(column)) = (pos.line(), pos.position()) else {
            return Vec::new();
        };
        let Some(text) = self.source.lines().nth(line.saturating_sub(1)) else {
            return Vec::new();
        };
        let before: String = text.chars().take(column.saturating_sub(1)).collect();
        let rest = before.trim_end();
        let mut rest = match rest.strip_suffix('[') {
            Some(r) => r.strip_suffix('?').unwrap_or(r).trim_end(),
            None => match rest.strip_suffix('.') {
                Some(r) => r.strip_suffix('?').unwrap_or(r),
                None => return Vec::new(),
            },
        };
        let mut chain = Vec::new();
        loop {
            let start = rest
                .char_indices()
                .rev()
                .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
                .last()
                .map(|(i, _)| i);
            let Some(start) = start else { break };
            chain.push(rest[start..].to_string());
            rest = &rest[..start];
            match rest.strip_suffix('.') {
                Some(r) => rest = r.strip_suffix('?').unwrap_or(r),
                None => break,
            }
        }
        chain.reverse();
        chain
    }

    /// A variable that is not set where it is read: most often one set by top-level code,
    /// which is not run (a function sees its arguments and its own variables only).
    fn unknown_variable(&self, name: &str) -> String {
        match top_level_variable(&self.source, name) {
            Some(line) => format!(
                "variable `{name}` not found: it is set by top-level code (line {line}), which is not run when the engine calls a function; a function sees only its arguments and its own variables. Make the value a parameter (`fn parameters()`, read as `obs.params.{name}`) or a function (`fn {name}() {{ ... }}`), see docs/rhai.md"
            ),
            None => format!(
                "variable `{name}` not found (a function sees only its arguments and its own variables; top-level code is not run)"
            ),
        }
    }

    /// The line of `fn name(` in the source (1-based), for messages about what it returned.
    fn function_line(&self, name: &str) -> Option<usize> {
        self.source
            .lines()
            .position(|l| {
                let l = l.trim_start();
                let l = l.strip_prefix("private ").map_or(l, str::trim_start);
                l.strip_prefix("fn ")
                    .map(str::trim_start)
                    .and_then(|l| l.strip_prefix(name))
                    .is_some_and(|l| l.trim_start().starts_with('('))
            })
            .map(|i| i + 1)
    }

    /// What the script's `function` answered wrong (a return value of the wrong type, an
    /// illegal choice), naming the line of its `fn`.
    fn error(&self, function: &str, message: String) -> AgentError {
        let line = self
            .function_line(function)
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        AgentError(format!(
            "script {}, {function}(){line} {message}",
            self.display
        ))
    }
}

/// A runtime error, taken apart.
struct Failure {
    line: Option<usize>,
    column: Option<usize>,
    /// The script's functions it happened in, outermost first, past the one called.
    via: Option<String>,
    message: String,
}

/// The line (1-based) of a top-level `let name` or `const name` in `source`: outside every
/// `{ }`, strings and comments skipped.
fn top_level_variable(source: &str, name: &str) -> Option<usize> {
    let chars: Vec<char> = source.chars().collect();
    let (mut i, mut line, mut depth) = (0, 1, 0usize);
    let mut after_keyword = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => line += 1,
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            '"' | '`' | '\'' => {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' {
                        i += 1;
                    } else if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if depth == 0 && after_keyword && word == name {
                    return Some(line);
                }
                after_keyword = depth == 0 && (word == "let" || word == "const");
                continue;
            }
            c if c.is_whitespace() => {}
            _ => after_keyword = false,
        }
        i += 1;
    }
    None
}

/// For a function that returned `()` where a value was due: the usual cause.
fn unit_hint(type_name: &str) -> &'static str {
    if type_name == "()" {
        " (a function's value is that of its last statement, or what `return` gives: an `if` without `else` gives `()` when its condition is false)"
    } else {
        ""
    }
}

/// `1000000` as `1,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The sandbox's limits (docs/rhai.md, "Sandbox and errors"): nested function calls, and the
/// largest string (characters), array and object map (entries) a script may build.
const MAX_CALL_LEVELS: usize = 64;
const MAX_STRING: usize = 64 * 1024;
const MAX_ARRAY: usize = 64 * 1024;
const MAX_MAP: usize = 4 * 1024;

fn sandboxed_engine(
    display: &str,
    rules: Arc<Rules>,
    log: Arc<AgentLog>,
    max_operations: u64,
) -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(max_operations);
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_expr_depths(64, 64);
    engine.set_max_string_size(MAX_STRING);
    engine.set_max_array_size(MAX_ARRAY);
    engine.set_max_map_size(MAX_MAP);
    engine.disable_symbol("eval");
    // A misspelt key (`obs.hand_vlaue`, `obs.params.callat`) is an error with its line, not a
    // silent `()` that makes every comparison false (docs/rhai.md, "A key that is not there").
    engine.set_fail_on_invalid_map_property(true);
    // Each line also goes to the deciding agent's capture, if it keeps one (an explanation
    // shows what a decision printed).
    let (name, print_log) = (display.to_string(), log.clone());
    engine.on_print(move |text| {
        crate::log::captured(|| format!("print: {text}"));
        print_log.write(&name, text)
    });
    let name = display.to_string();
    engine.on_debug(move |text, _source, pos| {
        // As errors say where they are: "line 8, column 9".
        let line = match (pos.line(), pos.position()) {
            (Some(l), Some(c)) => format!("debug at line {l}, column {c}: {text}"),
            (Some(l), None) => format!("debug at line {l}: {text}"),
            _ => format!("debug: {text}"),
        };
        crate::log::captured(|| line.clone());
        log.write(&name, &line)
    });

    let r = rules.clone();
    engine.register_fn("value", move |card: INT| -> INT {
        card_of(card).map_or(0, |c| r.value(c) as INT)
    });
    engine.register_fn("rank", |card: INT| -> INT {
        card_of(card).map_or(-1, |c| c.rank() as INT)
    });
    engine.register_fn("suit", |card: INT| -> INT {
        card_of(card).map_or(-1, |c| c.suit_index() as INT)
    });
    engine.register_fn("is_joker", |card: INT| -> bool {
        card_of(card).is_some_and(Card::is_joker)
    });
    engine.register_fn("card_name", |card: INT| -> String {
        card_of(card).map_or("?".into(), |c| c.to_string())
    });
    let r = rules.clone();
    engine.register_fn("hand_value", move |cards: Array| -> INT {
        cards
            .iter()
            .filter_map(|c| c.as_int().ok().and_then(card_of))
            .map(|c| r.value(c) as INT)
            .sum()
    });
    let r = rules.clone();
    engine.register_fn("legal_discards", move |hand: Array| -> Array {
        discards(&r, &hand, Runs::All)
    });
    let r = rules.clone();
    engine.register_fn("candidate_discards", move |hand: Array| -> Array {
        discards(&r, &hand, Runs::Maximal)
    });
    let r = rules.clone();
    engine.register_fn("is_legal", move |hand: Array, discard: Array| -> bool {
        classify(&r, &cards(&hand), &cards(&discard)).is_ok()
    });
    let r = rules;
    engine.register_fn("unseen", move |obs: Map| -> Array {
        let mut known = [false; CARD_IDS];
        for key in ["hand", "seen"] {
            if let Some(list) = obs
                .get(key)
                .and_then(|v| v.read_lock::<Array>().map(|a| a.clone()))
            {
                for c in cards(&list) {
                    known[c.id() as usize] = true;
                }
            }
        }
        r.deck()
            .iter()
            .filter(|c| !known[c.id() as usize])
            .map(|c| Dynamic::from_int(c.id() as INT))
            .collect()
    });
    engine
}

fn card_of(id: INT) -> Option<Card> {
    (0..CARD_IDS as INT)
        .contains(&id)
        .then(|| Card::from_id(id as u8))
}

fn cards(list: &Array) -> Vec<Card> {
    list.iter()
        .filter_map(|c| c.as_int().ok().and_then(card_of))
        .collect()
}

fn ids(cards: &[Card]) -> Array {
    cards
        .iter()
        .map(|c| Dynamic::from_int(c.id() as INT))
        .collect()
}

fn discards(rules: &Rules, hand: &Array, runs: Runs) -> Array {
    let hand = cards(hand);
    let mut out = Array::new();
    for_each_discard(rules, &hand, runs, |d| {
        out.push(Dynamic::from_array(ids(d)));
        true
    });
    out
}

/// Reads what `fn explain(obs)` returned into `e` (docs/rhai.md, "Explaining a decision"):
/// nothing (`()`); a string (a note); an array of notes (strings) and candidates (maps
/// `#{choice: ..., score: ...}`, kept in the script's order); a map of choices to scores
/// (ranked by score, best first); or a map `#{score: "what it measures", candidates: ...,
/// notes: ...}`. What cannot be read is said in `problems` and left out.
fn read_explanation(
    value: &Dynamic,
    obs: &Observation<'_>,
    e: &mut Explanation,
    problems: &mut Vec<String>,
) {
    if value.is_unit() {
        return;
    }
    if let Ok(s) = value.clone().into_string() {
        e.notes.push(s);
        return;
    }
    if let Some(items) = value.clone().try_cast::<Array>() {
        read_items(&items, obs, e, problems);
        return;
    }
    let Some(map) = value.clone().try_cast::<Map>() else {
        problems.push(format!(
            "returned {} `{value}`; return a map of choices to scores, a string, or an array of notes and #{{choice: ..., score: ...}} maps",
            value.type_name()
        ));
        return;
    };
    let whole = ["score", "candidates", "notes"];
    let is_whole = map.keys().all(|k| whole.contains(&k.as_str()))
        && (map.contains_key("candidates") || map.contains_key("notes"));
    if !is_whole {
        read_scores(&map, obs, e, problems);
        return;
    }
    if let Some(label) = map.get("score") {
        match label.clone().into_string() {
            Ok(s) => e.score = s,
            Err(t) => problems.push(format!(
                "`score` (what the scores measure) must be a string, not {t}"
            )),
        }
    }
    match map.get("candidates") {
        None => {}
        Some(c) if c.is_map() => read_scores(&c.clone().cast::<Map>(), obs, e, problems),
        Some(c) if c.is_array() => read_items(&c.clone().cast::<Array>(), obs, e, problems),
        Some(c) => problems.push(format!(
            "`candidates` must be a map of choices to scores or an array of #{{choice: ..., score: ...}}, not {}",
            c.type_name()
        )),
    }
    match map.get("notes") {
        None => {}
        Some(n) if n.is_string() => e.notes.push(n.to_string()),
        Some(n) if n.is_array() => {
            for item in n.clone().cast::<Array>() {
                match item.clone().into_string() {
                    Ok(s) => e.notes.push(s),
                    Err(_) => e.notes.push(item.to_string()),
                }
            }
        }
        Some(n) => problems.push(format!(
            "`notes` must be a string or an array of strings, not {}",
            n.type_name()
        )),
    }
}

/// An array of notes (strings) and candidates (`#{choice: ..., score: ..., other: number}`).
fn read_items(
    items: &Array,
    obs: &Observation<'_>,
    e: &mut Explanation,
    problems: &mut Vec<String>,
) {
    for (i, item) in items.iter().enumerate() {
        if let Ok(s) = item.clone().into_string() {
            e.notes.push(s);
            continue;
        }
        let Some(m) = item
            .clone()
            .try_cast::<Map>()
            .filter(|m| m.contains_key("choice"))
        else {
            problems.push(format!(
                "item {i} is {} `{item}`: an item is a note (a string) or a candidate #{{choice: ..., score: ...}}",
                item.type_name()
            ));
            continue;
        };
        let choice = m.get("choice").expect("checked");
        match choice_of(choice, obs) {
            Ok(c) => {
                if let Some(candidate) = candidate(c, &m, &format!("item {i}"), problems) {
                    e.candidates.push(candidate);
                }
            }
            Err(why) => problems.push(format!("item {i}: {why}")),
        }
    }
}

/// A map of choices (as text) to scores, or to maps `#{score: ..., other: number}`; ranked
/// by score, best first (equal scores in the map's order).
fn read_scores(map: &Map, obs: &Observation<'_>, e: &mut Explanation, problems: &mut Vec<String>) {
    let first = e.candidates.len();
    for (text, score) in map {
        let choice = match choice_of(&Dynamic::from(text.to_string()), obs) {
            Ok(c) => c,
            Err(why) => {
                problems.push(why);
                continue;
            }
        };
        let scored = match score.clone().try_cast::<Map>() {
            Some(m) => candidate(choice, &m, &format!("`{text}`"), problems),
            None => match number(score) {
                Some(x) => Some(Candidate::new(choice, x)),
                None => {
                    problems.push(format!(
                        "`{text}` scores {} `{score}`, not a number",
                        score.type_name()
                    ));
                    None
                }
            },
        };
        e.candidates.extend(scored);
    }
    e.candidates[first..].sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// A candidate from a map `#{score: number, other: number, ...}` (`choice` aside): the other
/// numbers are its details.
fn candidate(choice: Choice, m: &Map, what: &str, problems: &mut Vec<String>) -> Option<Candidate> {
    let Some(score) = m.get("score").and_then(number) else {
        problems.push(format!("{what} has no number `score`"));
        return None;
    };
    let mut c = Candidate::new(choice, score);
    for (k, v) in m {
        if k == "score" || k == "choice" {
            continue;
        }
        match number(v) {
            Some(x) => c.details.push((k.to_string(), x)),
            None => problems.push(format!(
                "{what}: detail `{k}` is {} `{v}`, not a number",
                v.type_name()
            )),
        }
    }
    Some(c)
}

fn number(v: &Dynamic) -> Option<f64> {
    v.as_float()
        .ok()
        .or_else(|| v.as_int().ok().map(|i| i as FLOAT))
}

/// The legal choice of this decision that `v` names: the text a trace writes ("discard 9♥
/// 9♠", "take 9♥", "draw", "call", "play on"), that text without its verb ("9♥ 9♠", cards
/// also as `9H`), or what the decision's function returns (a card id or an array of them,
/// -1 or "stock" for the stock, true or false for a call).
fn choice_of(v: &Dynamic, obs: &Observation<'_>) -> Result<Choice, String> {
    let phase = match obs.phase {
        Phase::Call => "call",
        Phase::Discard => "discard",
        Phase::Pick => "pick",
    };
    let not_legal = || format!("`{v}` is not a legal choice of this {phase} decision");
    let mut legal = Vec::new();
    match obs.phase {
        Phase::Call => legal.extend([Choice::Call(false), Choice::Call(true)]),
        Phase::Discard => obs.for_each_legal_discard(|d| {
            legal.extend(Discard::from_slice(d).map(Choice::Discard));
            true
        }),
        Phase::Pick => {
            legal.push(Choice::Pick(Pick::Stock));
            legal.extend(obs.pickable.iter().map(|&c| Choice::Pick(Pick::Pile(c))));
        }
    }
    // The cards a discard or a pick names, as a set, matched against the legal choices.
    let by_cards = |named: &[Card]| -> Result<Choice, String> {
        let set: dhumbal_game::CardSet = named.iter().copied().collect();
        legal
            .iter()
            .find(|c| match c {
                Choice::Discard(d) => d.len() == named.len() && d.to_set() == set,
                Choice::Pick(Pick::Pile(p)) => named == [*p],
                _ => false,
            })
            .cloned()
            .ok_or_else(not_legal)
    };
    if let Ok(b) = v.as_bool() {
        return match obs.phase {
            Phase::Call => Ok(Choice::Call(b)),
            _ => Err(not_legal()),
        };
    }
    if let Ok(id) = v.as_int() {
        if id == -1 && obs.phase == Phase::Pick {
            return Ok(Choice::Pick(Pick::Stock));
        }
        let card = card_of(id).ok_or_else(not_legal)?;
        return by_cards(&[card]);
    }
    if let Some(list) = v.clone().try_cast::<Array>() {
        let named = cards(&list);
        if named.len() != list.len() {
            return Err(not_legal());
        }
        return by_cards(&named);
    }
    let Ok(text) = v.clone().into_string() else {
        return Err(format!(
            "a choice is text, a card id, an array of card ids or a bool, not {}",
            v.type_name()
        ));
    };
    let text = text.trim();
    if let Some(c) = legal.iter().find(|c| c.to_string() == text) {
        return Ok(*c);
    }
    match (obs.phase, text) {
        (Phase::Pick, "stock" | "draw" | "-1") => return Ok(Choice::Pick(Pick::Stock)),
        (Phase::Call, "true" | "yes") => return Ok(Choice::Call(true)),
        (Phase::Call, "false" | "no" | "no call") => return Ok(Choice::Call(false)),
        _ => {}
    }
    let rest = text
        .strip_prefix("discard ")
        .or_else(|| text.strip_prefix("take "))
        .unwrap_or(text);
    let named: Result<Vec<Card>, _> = rest.split_whitespace().map(str::parse::<Card>).collect();
    match named {
        Ok(named) if !named.is_empty() && obs.phase != Phase::Call => by_cards(&named),
        _ => Err(not_legal()),
    }
}

/// One seat's handle on a shared program.
pub struct ScriptAgent {
    name: Arc<str>,
    program: Arc<ScriptProgram>,
    params: Arc<Map>,
    /// What the last decision printed (`print` and `debug`), for its explanation: cleared at
    /// each decision, filled only by lines (a decision that prints nothing allocates nothing).
    printed: Vec<String>,
}

impl ScriptAgent {
    pub fn new(name: &str, program: Arc<ScriptProgram>, params: Arc<Map>) -> ScriptAgent {
        ScriptAgent {
            name: Arc::from(name),
            program,
            params,
            printed: Vec::new(),
        }
    }

    /// Calls `function` with the observation; what it prints names this seat and agent, and
    /// is kept for the decision's explanation.
    fn ask(&mut self, function: &str, obs: &Observation<'_>) -> Result<Dynamic, AgentError> {
        let _speaking = crate::log::speaking(obs.seat, &self.name);
        self.printed.clear();
        let map = self.observation(obs);
        let (program, params) = (&self.program, &self.params);
        crate::log::capture(&mut self.printed, || program.run(function, map, params))
    }

    /// The explanation of the decision just made: what `fn explain(obs)` returns (when the
    /// script has one), and what the decision printed. Its second part is what was wrong with
    /// `explain` (it failed, or returned something that is not an explanation), also noted in
    /// the explanation itself. `explain`'s own output goes to no log (a traced run's
    /// `scripts.log` is an untraced run's), only into the notes.
    fn explanation(&mut self, obs: &Observation<'_>) -> (Option<Explanation>, Option<String>) {
        let mut e = Explanation {
            score: "script score".into(),
            ..Explanation::default()
        };
        let mut problem = None;
        let mut own = Vec::new();
        if self.program.explains {
            let map = self.observation(obs);
            let out = {
                let _quiet = crate::log::muted();
                crate::log::capture(&mut own, || self.program.run("explain", map, &self.params))
            };
            match out {
                Ok(value) => {
                    let mut problems = Vec::new();
                    read_explanation(&value, obs, &mut e, &mut problems);
                    for p in &problems {
                        e.notes.push(format!("explain(): {p}"));
                    }
                    if let Some(first) = problems.into_iter().next() {
                        problem = Some(self.program.error("explain", first).0);
                    }
                }
                Err(err) => {
                    e.notes.push(format!("explain() failed: {}", err.0));
                    problem = Some(err.0);
                }
            }
        }
        e.notes.extend(self.printed.iter().cloned());
        e.notes
            .extend(own.into_iter().map(|l| format!("in explain(), {l}")));
        let empty = e.candidates.is_empty() && e.notes.is_empty();
        ((!empty).then_some(e), problem)
    }

    fn observation(&self, obs: &Observation<'_>) -> Map {
        let mut m = Map::new();
        let mut put = |k: &str, v: Dynamic| {
            m.insert(k.into(), v);
        };
        put(
            "phase",
            match obs.phase {
                Phase::Call => "call",
                Phase::Discard => "discard",
                Phase::Pick => "pick",
            }
            .into(),
        );
        put("seat", (obs.seat as INT).into());
        put("players", (obs.players() as INT).into());
        put("turn", (obs.turn as INT).into());
        put("round", (obs.round as INT).into());
        put("starter", (obs.starter as INT).into());
        put("threshold", (obs.call_threshold as INT).into());
        put("hand", ids(obs.hand.as_slice()).into());
        put("hand_value", (obs.hand_value() as INT).into());
        put(
            "hand_sizes",
            obs.hand_sizes
                .iter()
                .map(|&n| Dynamic::from_int(n as INT))
                .collect::<Array>()
                .into(),
        );
        put(
            "standings",
            obs.standings
                .iter()
                .map(|&n| Dynamic::from_int(n as INT))
                .collect::<Array>()
                .into(),
        );
        put(
            "active",
            obs.active
                .iter()
                .map(|&a| Dynamic::from_bool(a))
                .collect::<Array>()
                .into(),
        );
        put(
            "scoring",
            if obs.is_points() { "points" } else { "coins" }.into(),
        );
        put("pile", ids(obs.pile).into());
        put("pickable", ids(obs.pickable).into());
        put("discarded", ids(obs.discarded).into());
        put(
            "known",
            obs.known
                .iter()
                .map(|k| Dynamic::from_array(ids(&k.iter().collect::<Vec<_>>())))
                .collect::<Array>()
                .into(),
        );
        put("seen", ids(&obs.seen.iter().collect::<Vec<_>>()).into());
        put("stock_len", (obs.stock_len as INT).into());
        put("params", Dynamic::from_map((*self.params).clone()));
        m
    }
}

impl Agent for ScriptAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn explain(&mut self, obs: &Observation<'_>) -> Option<Explanation> {
        self.explanation(obs).0
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        let out = self.ask("call_jhyap", obs)?;
        out.as_bool().map_err(|t| {
            self.program.error(
                "call_jhyap",
                format!("must return true or false, not {t}{}", unit_hint(t)),
            )
        })
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let out = self.ask("discard", obs)?;
        let list: Vec<Dynamic> = if out.is_int() {
            vec![out]
        } else if out.is_array() {
            out.cast::<Array>()
        } else {
            return Err(self.program.error(
                "discard",
                format!(
                    "must return a card id or an array of card ids, not {}{}",
                    out.type_name(),
                    unit_hint(out.type_name())
                ),
            ));
        };
        let mut d = Discard::new();
        for item in list {
            let card = item.as_int().ok().and_then(card_of).ok_or_else(|| {
                self.program.error(
                    "discard",
                    format!(
                        "returned {item}, which is not a card id (0 to {})",
                        CARD_IDS - 1
                    ),
                )
            })?;
            if d.is_full() {
                return Err(self
                    .program
                    .error("discard", "returned more cards than a hand holds".into()));
            }
            d.push(card);
        }
        Ok(d)
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        let out = self.ask("pick", obs)?;
        if out.is_unit() {
            return Ok(Pick::Stock);
        }
        if let Ok(s) = out.clone().into_string()
            && s == "stock"
        {
            return Ok(Pick::Stock);
        }
        match out.as_int() {
            Ok(-1) => Ok(Pick::Stock),
            Ok(id) => card_of(id).map(Pick::Pile).ok_or_else(|| {
                self.program
                    .error("pick", format!("returned {id}, which is not a card id"))
            }),
            Err(t) => Err(self.program.error(
                "pick",
                format!(
                    "must return a card id, -1 or \"stock\", not {t}{}",
                    unit_hint(t)
                ),
            )),
        }
    }
}

/// The family of Rhai agents: `script: path/to/agent.rhai` in an agent entry.
pub struct ScriptFamily;

impl Family for ScriptFamily {
    fn name(&self) -> &'static str {
        "script"
    }

    fn doc(&self) -> &'static str {
        "your own agent as a Rhai script, sandboxed (docs/rhai.md); `params:` are the ones the script declares in `fn parameters()` (name, type, default), checked by `validate`, and reach it as `obs.params`"
    }

    fn params(&self) -> Vec<Param> {
        Vec::new()
    }

    fn fields(&self) -> Vec<Param> {
        vec![
            Param::required(
                "script",
                ParamType::Path,
                "the Rhai file, relative to the scenario file",
            ),
            Param::new(
                "max_operations",
                ParamType::Count,
                DEFAULT_MAX_OPERATIONS,
                "operations one decision may take before it is stopped",
            ),
        ]
    }

    fn shorthand(&self) -> Option<&'static str> {
        Some("script")
    }

    /// The registry passes `params:` on; [`ScriptFamily::resolve`] checks them against the
    /// script's own declaration.
    fn open_params(&self) -> bool {
        true
    }

    fn resolve(&self, entry: &Entry<'_>, cx: &mut dyn Resolve) -> Option<Arc<dyn Recipe>> {
        let script = entry.text("script");
        let file = cx.path(&script);
        if !file.is_file() {
            cx.problem(
                "script",
                format!(
                    "no such file: {} (paths are relative to the scenario file)",
                    file.display()
                ),
            );
            return None;
        }
        let max_operations = entry.u64("max_operations");
        if max_operations == 0 {
            cx.problem("max_operations", "must be at least 1".into());
            return None;
        }
        let rules = cx.rules()?.clone();
        let program =
            match ScriptProgram::compile(&file, &script, rules.clone(), cx.log(), max_operations) {
                Ok(program) => program,
                Err(e) => {
                    let mut msg = script.clone();
                    if let Some(line) = e.line {
                        msg.push_str(&format!(", line {line}"));
                        if let Some(col) = e.column {
                            msg.push_str(&format!(", column {col}"));
                        }
                    }
                    cx.problem("script", format!("{msg}: {}", e.message));
                    return None;
                }
            };
        let given: serde_json::Map<String, Value> = entry
            .raw_params()
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let script_params = script_params(&program, &script, &given, cx)?;
        let recipe = ScriptRecipe {
            program: Arc::new(program),
            given,
            script_params: Arc::new(script_params),
        };
        if let Err(why) = recipe.rehearse(&rules) {
            cx.problem("script", why);
            return None;
        }
        Some(Arc::new(recipe))
    }
}

/// The parameters the script sees (`obs.params`): every declared one, given or default. A
/// name it does not declare, or a value not of the declared type, is a problem at
/// `params.<name>`.
fn script_params(
    program: &ScriptProgram,
    script: &str,
    given: &serde_json::Map<String, Value>,
    cx: &mut dyn Resolve,
) -> Option<Map> {
    let Some(declared) = program.declared() else {
        if given.is_empty() {
            return Some(Map::new());
        }
        let names: Vec<&str> = given.keys().map(String::as_str).collect();
        cx.problem(
            "params",
            format!(
                "{script} declares no parameters, so it cannot take {}; declare them in the script: fn parameters() {{ #{{ {}: #{{ type: \"int\", default_value: 3, doc: \"...\" }} }} }} (see docs/rhai.md)",
                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                names[0]
            ),
        );
        return None;
    };
    let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
    let mut ok = true;
    for (name, value) in given {
        let field = crate::registry::join("params", name);
        let Some(d) = declared.iter().find(|d| d.name == *name) else {
            let hint = crate::nearest(name, &names)
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            let valid = if names.is_empty() {
                "it declares none".to_string()
            } else {
                format!("declared: {}", names.join(", "))
            };
            cx.problem(
                &field,
                format!("unknown parameter of {script}; {hint}{valid}"),
            );
            ok = false;
            continue;
        };
        if d.ty.value_of(value).is_none() {
            let default = if d.default.is_unit() {
                String::new()
            } else {
                format!(", default {}", d.default)
            };
            cx.problem(
                &field,
                format!(
                    "expected {} (`{}`, as {script} declares it{default}), got {value}",
                    d.ty.expected(),
                    d.ty.name()
                ),
            );
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    Some(
        declared
            .iter()
            .map(|d| {
                let value = given
                    .get(&d.name)
                    .and_then(|v| d.ty.value_of(v))
                    .unwrap_or_else(|| d.default.clone());
                (d.name.as_str().into(), value)
            })
            .collect(),
    )
}

/// Rounds of the rehearsal at most, and the decisions after which it may stop early (once
/// every function has been asked).
const REHEARSAL_ROUNDS: u64 = 8;
const REHEARSAL_DECISIONS: u32 = 24;
/// The rehearsal's seed: fixed, so that validation says the same every time.
const REHEARSAL_SEED: u64 = 0x5c41_7e4e_a85a_1d00;

/// A script agent that counts what it is asked (call, discard, pick), and asks its
/// `explain(obs)` after each decision, as a trace would, keeping the first problem.
struct Rehearsing {
    agent: ScriptAgent,
    asked: [u32; 3],
    problem: Option<String>,
}

impl Rehearsing {
    fn explained<T>(
        &mut self,
        obs: &Observation<'_>,
        out: Result<T, AgentError>,
    ) -> Result<T, AgentError> {
        if out.is_ok() && self.agent.program.explains && self.problem.is_none() {
            self.problem = self.agent.explanation(obs).1;
        }
        out
    }
}

impl Agent for Rehearsing {
    fn name(&self) -> &str {
        self.agent.name()
    }

    fn call(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        self.asked[0] += 1;
        let out = self.agent.call(obs, rng);
        self.explained(obs, out)
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        self.asked[1] += 1;
        let out = self.agent.discard(obs, rng);
        self.explained(obs, out)
    }

    fn pick(
        &mut self,
        obs: &Observation<'_>,
        rng: &mut dyn RandomSource,
    ) -> Result<Pick, AgentError> {
        self.asked[2] += 1;
        let out = self.agent.pick(obs, rng);
        self.explained(obs, out)
    }
}

/// A compiled script and its parameters: every agent of it shares both.
struct ScriptRecipe {
    program: Arc<ScriptProgram>,
    /// As the scenario gave them.
    given: serde_json::Map<String, Value>,
    /// Every declared parameter, given or default (`obs.params`).
    script_params: Arc<Map>,
}

impl ScriptRecipe {
    /// Plays a few rounds under `rules` with the script in every seat and a fixed seed, its
    /// output dropped, until each of its functions has been asked (where the rules asked) and
    /// a few dozen decisions made: a runtime error or an illegal answer, as a message.
    fn rehearse(&self, rules: &Arc<Rules>) -> Result<(), String> {
        let _quiet = crate::log::muted();
        let n = rules.players();
        let mut agents: Vec<Rehearsing> = (0..n)
            .map(|_| Rehearsing {
                agent: ScriptAgent::new(
                    &self.default_id(),
                    self.program.clone(),
                    self.script_params.clone(),
                ),
                asked: [0; 3],
                problem: None,
            })
            .collect();
        let slots: Vec<u32> = (0..n as u32).collect();
        let mut table = Table::new((**rules).clone());
        table.start_game(&mut agents);
        for deal in 0..REHEARSAL_ROUNDS {
            if table.game_over() {
                table = Table::new((**rules).clone());
            }
            let mut streams = ChaChaStreams::new(REHEARSAL_SEED, deal, &slots);
            table
                .play_round(&mut agents, &mut streams, &mut ())
                .map_err(|e| {
                    let what = match e {
                        PlayError::Agent { error, .. } => error.0,
                        other => format!("{} ({})", other, self.program.name()),
                    };
                    format!(
                        "failed in the rehearsal (a few rounds played at validation, the script in every seat, seed fixed): {what}"
                    )
                })?;
            if let Some(problem) = agents.iter().find_map(|a| a.problem.clone()) {
                return Err(format!(
                    "failed in the rehearsal (a few rounds played at validation, the script in every seat, seed fixed): {problem}"
                ));
            }
            let mut asked = [0u32; 3];
            for a in &agents {
                for (total, k) in asked.iter_mut().zip(a.asked) {
                    *total += k;
                }
            }
            if asked.iter().all(|&k| k > 0) && asked.iter().sum::<u32>() >= REHEARSAL_DECISIONS {
                break;
            }
        }
        Ok(())
    }
}

impl Recipe for ScriptRecipe {
    fn family(&self) -> &'static str {
        "script"
    }

    fn kind(&self) -> String {
        format!("script:{}", self.program.name())
    }

    /// The script's file stem.
    fn default_id(&self) -> String {
        let name = self.program.name();
        Path::new(name)
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned())
    }

    /// `params`: every parameter the script declares, with the value in force (`null`:
    /// unset); as the scenario gave them when the script declares none.
    fn describe(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("script".into(), Value::from(self.program.name()));
        m.insert(
            "source_fnv1a".into(),
            Value::from(self.program.source_hash()),
        );
        let params = match self.program.declared() {
            Some(_) => self
                .script_params
                .iter()
                .map(|(k, v)| (k.to_string(), rhai_to_json(v)))
                .collect(),
            None => self.given.clone(),
        };
        m.insert("params".into(), Value::Object(params));
        m.insert(
            "max_operations".into(),
            Value::from(self.program.max_operations),
        );
        m
    }

    fn build(&self, id: &str) -> Box<dyn Agent> {
        Box::new(ScriptAgent::new(
            id,
            self.program.clone(),
            self.script_params.clone(),
        ))
    }

    fn sources(&self) -> Vec<(String, String)> {
        vec![(
            self.program.name().to_string(),
            self.program.source().to_string(),
        )]
    }

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        let program = self
            .program
            .for_rules(rules.clone())
            .map_err(|e| e.message)?;
        Ok(Some(Arc::new(ScriptRecipe {
            program: Arc::new(program),
            given: self.given.clone(),
            script_params: self.script_params.clone(),
        })))
    }
}

/// A Rhai value (a parameter in force) as JSON, for the manifest.
fn rhai_to_json(v: &Dynamic) -> Value {
    if v.is_unit() {
        Value::Null
    } else if let Ok(b) = v.as_bool() {
        Value::Bool(b)
    } else if let Ok(i) = v.as_int() {
        Value::from(i)
    } else if let Ok(f) = v.as_float() {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    } else if v.is_string() {
        Value::String(v.clone().into_string().unwrap_or_default())
    } else if let Some(a) = v.clone().try_cast::<Array>() {
        Value::Array(a.iter().map(rhai_to_json).collect())
    } else if let Some(m) = v.clone().try_cast::<Map>() {
        Value::Object(
            m.iter()
                .map(|(k, v)| (k.to_string(), rhai_to_json(v)))
                .collect(),
        )
    } else {
        Value::String(v.to_string())
    }
}

/// A JSON value (a script parameter) as a Rhai value.
fn json_to_rhai(v: &Value) -> Dynamic {
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

#[cfg(test)]
mod tests {
    //! What `fn explain(obs)` may return, read into an explanation.

    use super::*;
    use dhumbal_game::cards::{CardSet, Hand};
    use dhumbal_game::{Oracle, Preset};

    fn card(s: &str) -> Card {
        s.parse().unwrap()
    }

    /// Reads `rhai` (an expression, evaluated) as `explain` would return it, at a decision of
    /// `phase` holding 9♥ 9♠ K♣ 2♦ A♠ with 7♦ on offer; the explanation and the problems.
    fn read(rhai: &str, phase: Phase) -> (Explanation, Vec<String>) {
        let rules = Rules::preset(Preset::Paper);
        let mut hand = Hand::new();
        for c in ["9H", "9S", "KC", "2D", "AS"] {
            hand.push(card(c));
        }
        let pickable = [card("7D")];
        let (active, sizes, standings) = ([true; 4], [5u8; 4], [0i64; 4]);
        let known = [CardSet::default(); 4];
        let obs = Observation {
            rules: &rules,
            phase,
            seat: 0,
            hand: &hand,
            hand_value: rules.hand_value(hand.as_slice()),
            turn: 3,
            round: 0,
            starter: 0,
            active: &active,
            hand_sizes: &sizes,
            standings: &standings,
            pile: &pickable,
            pickable: if phase == Phase::Pick { &pickable } else { &[] },
            discarded: &[],
            known: &known,
            seen: pickable.iter().copied().collect(),
            stock_len: 30,
            call_threshold: 10,
            top_set: 1,
            restocked: None,
            oracle: Oracle::none(),
        };
        let value: Dynamic = Engine::new().eval(rhai).unwrap();
        let mut e = Explanation::default();
        let mut problems = Vec::new();
        read_explanation(&value, &obs, &mut e, &mut problems);
        (e, problems)
    }

    fn texts(e: &Explanation) -> Vec<String> {
        e.candidates.iter().map(|c| c.choice.to_string()).collect()
    }

    #[test]
    fn a_map_of_choices_to_scores_is_ranked_best_first() {
        let (e, problems) = read(
            r#"#{"discard 9♥ 9♠": 18, "K♣": 13.5, "discard 2D": #{score: 2, shed: 2}, "discard Q♥": 1}"#,
            Phase::Discard,
        );
        assert_eq!(texts(&e), ["discard 9♥ 9♠", "discard K♣", "discard 2♦"]);
        assert_eq!(e.candidates[1].score, 13.5);
        assert_eq!(e.candidates[2].details, [("shed".to_string(), 2.0)]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("not a legal choice"), "{problems:?}");
    }

    #[test]
    fn an_array_holds_notes_and_candidates_named_as_the_decision_answers() {
        let nine_spades = card("9S").id();
        let nine_hearts = card("9H").id();
        let (e, problems) = read(
            &format!(
                r#"[#{{choice: [{nine_spades}, {nine_hearts}], score: 1, shed: 18}}, "a note", #{{choice: {nine_spades}, score: 2.5}}, 42]"#
            ),
            Phase::Discard,
        );
        // The script's order; the pair as the engine lists it.
        assert_eq!(texts(&e), ["discard 9♥ 9♠", "discard 9♠"]);
        assert_eq!(e.notes, ["a note"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("item 3"), "{problems:?}");
    }

    #[test]
    fn the_whole_form_names_what_scores_measure() {
        let (e, problems) = read(
            r#"#{score: "margin", candidates: #{"call": 3, "play on": -3}, notes: ["one", "two"]}"#,
            Phase::Call,
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(e.score, "margin");
        assert_eq!(texts(&e), ["call", "play on"]);
        assert_eq!(e.notes, ["one", "two"]);
        let (e, _) = read(
            r#"[#{choice: false, score: 1}, #{choice: true, score: 0}]"#,
            Phase::Call,
        );
        assert_eq!(texts(&e), ["play on", "call"]);
    }

    #[test]
    fn picks_are_named_by_card_or_stock() {
        let seven = card("7D").id();
        let (e, problems) = read(
            &format!(
                r#"[#{{choice: -1, score: 1}}, #{{choice: {seven}, score: 2}}, #{{choice: "take 7♦", score: 3}}, #{{choice: "stock", score: 4}}, #{{choice: "K♣", score: 5}}]"#
            ),
            Phase::Pick,
        );
        assert_eq!(texts(&e), ["draw", "take 7♦", "take 7♦", "draw"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn a_value_that_is_no_explanation_is_a_problem() {
        for rhai in ["42", "true", "#{notes: 3}", r#"#{"call": "high"}"#] {
            let (_, problems) = read(rhai, Phase::Call);
            assert_eq!(problems.len(), 1, "{rhai}: {problems:?}");
        }
        let (e, problems) = read("()", Phase::Call);
        assert!(problems.is_empty() && e.candidates.is_empty() && e.notes.is_empty());
        let (e, _) = read(r#""just a note""#, Phase::Call);
        assert_eq!(e.notes, ["just a note"]);
    }
}
