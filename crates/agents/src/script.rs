//! Agents written by researchers as Rhai scripts.
//!
//! A script defines `fn call_jhyap(obs)`, `fn discard(obs)` and `fn pick(obs)` over an observation
//! map (see `docs/rhai.md`). It is compiled once per stage into a [`ScriptProgram`] shared by
//! every thread; each seat gets a cheap [`ScriptAgent`] handle.
//!
//! Sandbox: Rhai has no file or network access of its own and modules are compiled out
//! (`no_module`), `eval` is disabled, each call has an operation budget and call-depth and size
//! limits, and `print`/`debug` go to the run's script log, never the terminal.

use std::path::Path;
use std::sync::Arc;

use rhai::{AST, Array, CallFnOptions, Dynamic, Engine, EvalAltResult, INT, Map, Scope};

use dhumbal_game::cards::{CARD_IDS, Card, Discard};
use dhumbal_game::decision::{Agent, AgentError, Observation, Phase, Pick};
use dhumbal_game::discards::{Runs, classify, for_each_discard};
use dhumbal_game::rules::Rules;
use dhumbal_game::rng::RandomSource;
use serde_json::Value;

use crate::family::{Entry, Family, Param, ParamType, Recipe, Resolve};
use crate::log::AgentLog;

/// Operations one call may take before it is stopped (a loop that never ends, say).
pub const DEFAULT_MAX_OPERATIONS: u64 = 1_000_000;

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
            ScriptError {
                line: pos.line(),
                column: pos.position(),
                message: e.err_type().to_string(),
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
        Ok(ScriptProgram {
            display: display.to_string(),
            source,
            log,
            max_operations,
            engine,
            ast,
        })
    }

    fn run(&self, function: &str, obs: Map) -> Result<Dynamic, AgentError> {
        let mut scope = Scope::new();
        let options = CallFnOptions::new().eval_ast(false).rewind_scope(true);
        self.engine
            .call_fn_with_options::<Dynamic>(options, &mut scope, &self.ast, function, (obs,))
            .map_err(|e| AgentError(self.describe(function, &e)))
    }

    fn describe(&self, function: &str, e: &EvalAltResult) -> String {
        // The innermost error says what went wrong and where (line and position in the script).
        let mut inner: &EvalAltResult = e;
        while let EvalAltResult::ErrorInFunctionCall(_, _, err, _) = inner {
            inner = err;
        }
        format!("script {}, in {function}(): {inner}", self.display)
    }

    fn error(&self, function: &str, message: String) -> AgentError {
        AgentError(format!("script {}, {function}() {message}", self.display))
    }
}

fn sandboxed_engine(
    display: &str,
    rules: Arc<Rules>,
    log: Arc<AgentLog>,
    max_operations: u64,
) -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(max_operations);
    engine.set_max_call_levels(64);
    engine.set_max_expr_depths(64, 64);
    engine.set_max_string_size(64 * 1024);
    engine.set_max_array_size(64 * 1024);
    engine.set_max_map_size(4 * 1024);
    engine.disable_symbol("eval");
    let (name, print_log) = (display.to_string(), log.clone());
    engine.on_print(move |text| print_log.write(&name, text));
    let name = display.to_string();
    engine.on_debug(move |text, _source, pos| log.write(&name, &format!("debug at {pos}: {text}")));

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

/// One seat's handle on a shared program.
pub struct ScriptAgent {
    name: String,
    program: Arc<ScriptProgram>,
    params: Arc<Map>,
}

impl ScriptAgent {
    pub fn new(name: &str, program: Arc<ScriptProgram>, params: Arc<Map>) -> ScriptAgent {
        ScriptAgent {
            name: name.to_string(),
            program,
            params,
        }
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

    fn call(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<bool, AgentError> {
        let out = self.program.run("call_jhyap", self.observation(obs))?;
        out.as_bool().map_err(|t| {
            self.program
                .error("call_jhyap", format!("must return true or false, not {t}"))
        })
    }

    fn discard(
        &mut self,
        obs: &Observation<'_>,
        _rng: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        let out = self.program.run("discard", self.observation(obs))?;
        let list: Vec<Dynamic> = if out.is_int() {
            vec![out]
        } else if out.is_array() {
            out.cast::<Array>()
        } else {
            return Err(self.program.error(
                "discard",
                format!(
                    "must return a card id or an array of card ids, not {}",
                    out.type_name()
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
        let out = self.program.run("pick", self.observation(obs))?;
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
                format!("must return a card id, -1 or \"stock\", not {t}"),
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
        "your own agent as a Rhai script, sandboxed (docs/rhai.md); `params:` are the script's `obs.params`"
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
        let program = match ScriptProgram::compile(&file, &script, rules, cx.log(), max_operations) {
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
        Some(Arc::new(ScriptRecipe {
            program: Arc::new(program),
            params: entry.raw_params().clone(),
            script_params: Arc::new(
                entry
                    .raw_params()
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), json_to_rhai(v)))
                    .collect(),
            ),
        }))
    }
}

/// A compiled script and its parameters: every agent of it shares both.
struct ScriptRecipe {
    program: Arc<ScriptProgram>,
    /// As the scenario gave them (for the manifest).
    params: serde_json::Map<String, Value>,
    script_params: Arc<Map>,
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

    fn describe(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("script".into(), Value::from(self.program.name()));
        m.insert("source_fnv1a".into(), Value::from(self.program.source_hash()));
        m.insert("params".into(), Value::Object(self.params.clone()));
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

    fn for_rules(&self, rules: &Arc<Rules>) -> Result<Option<Arc<dyn Recipe>>, String> {
        let program = self.program.for_rules(rules.clone()).map_err(|e| e.message)?;
        Ok(Some(Arc::new(ScriptRecipe {
            program: Arc::new(program),
            params: self.params.clone(),
            script_params: self.script_params.clone(),
        })))
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
