//! Agents written by researchers as Rhai scripts.
//!
//! A script defines `fn call_jhyap(obs)`, `fn discard(obs)` and `fn pick(obs)` over an observation
//! map (see `docs/rhai.md`). It is compiled once per stage into a [`ScriptProgram`] shared by
//! every thread; each seat gets a cheap [`ScriptAgent`] handle.
//!
//! Sandbox: Rhai has no file or network access of its own and modules are compiled out
//! (`no_module`), `eval` is disabled, each call has an operation budget and call-depth and size
//! limits, and `print`/`debug` go to the run's script log, never the terminal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rhai::{AST, Array, CallFnOptions, Dynamic, Engine, EvalAltResult, INT, Map, Scope};

use crate::game::cards::{CARD_IDS, Card, Discard};
use crate::game::decision::{Agent, AgentError, Observation, Phase, Pick};
use crate::game::discards::{Runs, classify, for_each_discard};
use crate::game::rules::Rules;
use crate::rng::RandomSource;

/// Operations one call may take before it is stopped (a loop that never ends, say).
pub const DEFAULT_MAX_OPERATIONS: u64 = 1_000_000;

/// Where scripts' `print` and `debug` output goes: a file of the run, or nowhere.
#[derive(Default)]
pub struct ScriptLog {
    sink: Mutex<Option<Box<dyn Write + Send>>>,
}

impl ScriptLog {
    /// Sends further output to `path` (appending).
    pub fn attach(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        if let Ok(mut guard) = self.sink.lock() {
            *guard = Some(Box::new(std::io::LineWriter::new(file)));
        }
        Ok(())
    }

    fn write(&self, script: &str, text: &str) {
        if let Ok(mut guard) = self.sink.lock()
            && let Some(w) = guard.as_mut()
        {
            let _ = writeln!(w, "[{script}] {text}");
        }
    }
}

/// A compiled script with its sandboxed engine.
pub struct ScriptProgram {
    /// The path as the scenario wrote it, for messages.
    display: String,
    /// The source as compiled (a later change to the file does not affect this run).
    source: String,
    log: Arc<ScriptLog>,
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
        log: Arc<ScriptLog>,
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
        format!("{:016x}", crate::scenario::fnv1a(self.source.as_bytes()))
    }

    fn from_source(
        display: &str,
        source: String,
        rules: Arc<Rules>,
        log: Arc<ScriptLog>,
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
    log: Arc<ScriptLog>,
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

/// Resolves a script path written in a scenario, relative to the scenario file's folder.
pub fn resolve_path(scenario: &Path, script: &str) -> PathBuf {
    let base = scenario.parent().unwrap_or(Path::new("."));
    base.join(script)
}
