//! The catalogue of built-in agent kinds: names, parameters with defaults, and how to build one
//! from a scenario's `kind` and `params`. `dhumbal-run agents` prints it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::heuristic::{Heuristic, HeuristicParams, Style};
use super::random::RandomAgent;
use super::script::ScriptAgent;
use super::script::ScriptProgram;
use super::search::{Reward, Rollout, SearchAgent, SearchParams};
use crate::game::Agent;

/// The type of a parameter.
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
    /// Another agent: a built-in kind's name, or a mapping like an entry of `agents:`
    /// (`{kind: ..., params: ...}` or `{script: ...}`).
    Agent,
}

impl ParamType {
    /// How `dhumbal-run agents` and error messages name the type.
    pub fn describe(self) -> String {
        match self {
            ParamType::Int => "integer".into(),
            ParamType::Count => "integer >= 0".into(),
            ParamType::Float => "number".into(),
            ParamType::Bool => "true/false".into(),
            ParamType::Choice(names) => names.join("|"),
            ParamType::Agent => "agent".into(),
        }
    }
}

/// A parameter's default, as it reads in a scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamDefault {
    Number(f64),
    Text(&'static str),
    Bool(bool),
}

impl std::fmt::Display for ParamDefault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamDefault::Number(x) => write!(f, "{x}"),
            ParamDefault::Text(t) => write!(f, "{t}"),
            ParamDefault::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// One documented parameter of an agent kind.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub ty: ParamType,
    pub default: ParamDefault,
    pub doc: &'static str,
}

/// One agent kind.
#[derive(Clone, Debug)]
pub struct KindInfo {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: Vec<ParamInfo>,
}

macro_rules! heuristic_params {
    ($( $field:ident : $ty:ident = $doc:literal ),+ $(,)?) => {
        fn heuristic_param_infos(style: Style) -> Vec<ParamInfo> {
            let d = HeuristicParams::paper(style);
            vec![$(ParamInfo { name: stringify!($field), ty: ParamType::$ty, default: ParamDefault::Number(d.$field as f64), doc: $doc }),+]
        }

        fn heuristic_param_values(p: &HeuristicParams) -> Vec<(&'static str, f64)> {
            vec![$((stringify!($field), p.$field as f64)),+]
        }

        fn set_heuristic_param(p: &mut HeuristicParams, name: &str, value: f64) -> bool {
            match name {
                $(stringify!($field) => { p.$field = value as _; true })+
                _ => false,
            }
        }
    };
}

heuristic_params! {
    pickup_threshold: Int = "take an offered card worth at most this (adjusted by the hand value)",
    pickup_high_hand: Count = "hand value above which the pickup threshold rises",
    pickup_high_raise: Int = "how much it rises",
    pickup_low_hand: Count = "hand value at or below which the pickup threshold falls",
    pickup_low_drop: Int = "how much it falls",
    high_preference: Float = "p_h: weight of the discarded value (paper eq. 2)",
    multi_card_bonus: Float = "b_m: bonus per card of a multi-card discard",
    sequence_bonus: Float = "b_s: bonus for a run",
    call_bonus: Float = "bonus when the discard leaves a callable hand",
    improvement_weight: Float = "weight of the relative improvement (V - Vr) / V (paper eq. 3)",
    risk_adjustment: Float = "r: scales every score (no effect on choices, as in the paper's code)",
    expected_draw: Count = "expected value of the next card, for discards near the threshold",
    strict_threshold: Count = "Conservative/Opportunistic: call at or below; Balanced: upper edge of its middle band",
    sure_threshold: Count = "Balanced: always call at or below",
    call_probability: Float = "Balanced: call probability in its middle band",
    late_call_probability: Float = "Balanced: call probability above strict_threshold",
    ahead_call_probability: Float = "Opportunistic: base call probability when ahead of the table mean",
    ahead_risk: Float = "Opportunistic: r when ahead",
    behind_call_probability: Float = "Opportunistic: base call probability otherwise",
    behind_risk: Float = "Opportunistic: r otherwise",
    per_point_probability: Float = "Opportunistic: added per point below the threshold",
    late_turn: Count = "Opportunistic: after this many player-turns add late_turn_bonus",
    late_turn_bonus: Float = "Opportunistic: added late in the round",
}

fn style_doc(style: Style) -> &'static str {
    match style {
        Style::Aggressive => {
            "the paper's Aggressive: always calls when allowed; high-value and multi-card discards"
        }
        Style::Conservative => "the paper's Conservative: calls at or below strict_threshold (7)",
        Style::Balanced => {
            "the paper's Balanced: calls surely at <= 5, with probability 0.7 up to 8 and 0.4 above"
        }
        Style::Opportunistic => {
            "the paper's Opportunistic: call probability set by standing against the table mean"
        }
    }
}

/// Every built-in kind with its parameters and defaults.
pub fn kinds() -> Vec<KindInfo> {
    let mut out = vec![KindInfo {
        name: "random",
        doc: "uniform over legal actions (the paper's random baseline)",
        params: Vec::new(),
    }];
    for style in Style::ALL {
        out.push(KindInfo {
            name: style.name(),
            doc: style_doc(style),
            params: heuristic_param_infos(style),
        });
    }
    out.push(KindInfo {
        name: "ismcts",
        doc: "information-set MCTS (Cowling et al. 2012): sampled worlds, availability-count UCB",
        params: search_param_infos(&SearchParams::ismcts()),
    });
    out.push(KindInfo {
        name: "mcts",
        doc: "the paper's determinized MCTS with its legality-probability UCB (eq. 4), corrected",
        params: search_param_infos(&SearchParams::mcts()),
    });
    out
}

fn search_param_infos(d: &SearchParams) -> Vec<ParamInfo> {
    use ParamDefault::{Bool, Number, Text};
    let p = |name, ty, default, doc| ParamInfo {
        name,
        ty,
        default,
        doc,
    };
    vec![
        p(
            "iterations",
            ParamType::Count,
            Number(f64::from(d.iterations)),
            "search iterations per decision (the budget; deterministic)",
        ),
        p(
            "determinizations",
            ParamType::Count,
            Number(f64::from(d.determinizations)),
            "worlds sampled per iteration, one simulation each (the paper's ISMCTS: 3)",
        ),
        p(
            "time_limit_ms",
            ParamType::Float,
            Number(d.time_limit_ms),
            "also stop after this many ms per decision (0: none; makes runs depend on speed)",
        ),
        p(
            "exploration",
            ParamType::Float,
            Number(d.exploration),
            "UCB exploration constant (rewards are in [0, 1])",
        ),
        p(
            "reward",
            ParamType::Choice(&Reward::NAMES),
            Text(d.reward.name()),
            "win: 1 for the round's winner; score: coin or point change scaled by reward_scale",
        ),
        p(
            "reward_scale",
            ParamType::Float,
            Number(d.reward_scale),
            "coins or points that make a full reward swing (reward: score)",
        ),
        p(
            "rollout",
            ParamType::Agent,
            Text("random"),
            "who plays after the tree: a kind name or {kind: ..., params: ...} or {script: ...}",
        ),
        p(
            "rollout_turns",
            ParamType::Count,
            Number(f64::from(d.rollout_turns)),
            "cut rollouts after this many turns, scored as if the lowest hand won (0: to the end of the round)",
        ),
        p(
            "oracle",
            ParamType::Bool,
            Bool(d.oracle),
            "see every hand (full information): an upper bound on what hidden cards cost",
        ),
    ]
}

fn set_search_param(p: &mut SearchParams, name: &str, value: &Value) -> bool {
    match (name, value) {
        ("iterations", Value::Number(n)) => {
            p.iterations = n.as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32
        }
        ("determinizations", Value::Number(n)) => {
            p.determinizations = n.as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32
        }
        ("time_limit_ms", Value::Number(n)) => p.time_limit_ms = n.as_f64().unwrap_or(0.0),
        ("exploration", Value::Number(n)) => p.exploration = n.as_f64().unwrap_or(0.0),
        ("reward", Value::String(s)) => match Reward::parse(s) {
            Some(r) => p.reward = r,
            None => return false,
        },
        ("reward_scale", Value::Number(n)) => p.reward_scale = n.as_f64().unwrap_or(0.0),
        ("rollout_turns", Value::Number(n)) => {
            p.rollout_turns = n.as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32
        }
        ("oracle", Value::Bool(b)) => p.oracle = *b,
        _ => return false,
    }
    true
}

/// How to make fresh instances of one configured agent.
#[derive(Clone)]
pub enum Recipe {
    Random,
    Heuristic(Style, HeuristicParams),
    Script(Arc<ScriptProgram>, Arc<rhai::Map>),
    /// A search agent and its rollout policy.
    Search(&'static str, SearchParams, Arc<Recipe>),
}

impl Recipe {
    /// Every parameter as it will be used, defaults included (for the manifest).
    pub fn resolved_params(&self) -> BTreeMap<String, Value> {
        match self {
            Recipe::Random | Recipe::Script(..) => BTreeMap::new(),
            Recipe::Search(_, p, rollout) => {
                let mut m = BTreeMap::new();
                m.insert("iterations".into(), Value::from(p.iterations));
                m.insert("determinizations".into(), Value::from(p.determinizations));
                m.insert("time_limit_ms".into(), Value::from(p.time_limit_ms));
                m.insert("exploration".into(), Value::from(p.exploration));
                m.insert("reward".into(), Value::from(p.reward.name()));
                m.insert("reward_scale".into(), Value::from(p.reward_scale));
                m.insert("rollout".into(), rollout.describe());
                m.insert("rollout_turns".into(), Value::from(p.rollout_turns));
                m.insert("oracle".into(), Value::from(p.oracle));
                m
            }
            Recipe::Heuristic(style, params) => {
                let infos = heuristic_param_infos(*style);
                heuristic_param_values(params)
                    .into_iter()
                    .map(|(name, v)| {
                        let int = infos
                            .iter()
                            .any(|i| i.name == name && i.ty != ParamType::Float);
                        let value = if int {
                            Value::from(v as i64)
                        } else {
                            Value::from(v)
                        };
                        (name.to_string(), value)
                    })
                    .collect()
            }
        }
    }

    /// The recipe as a scenario would spell it (for the manifest).
    pub fn describe(&self) -> Value {
        match self {
            Recipe::Random => serde_json::json!({ "kind": "random" }),
            Recipe::Heuristic(style, _) => {
                serde_json::json!({ "kind": style.name(), "params": self.resolved_params() })
            }
            Recipe::Script(program, _) => serde_json::json!({
                "script": program.name(),
                "source_fnv1a": program.source_hash(),
            }),
            Recipe::Search(kind, ..) => {
                serde_json::json!({ "kind": kind, "params": self.resolved_params() })
            }
        }
    }

    /// The same recipe for other rules: scripts (also a search's scripted rollout) are
    /// compiled against the rules they play under.
    pub fn for_rules(
        &self,
        rules: Arc<crate::game::Rules>,
    ) -> Result<Recipe, super::script::ScriptError> {
        Ok(match self {
            Recipe::Script(program, params) => {
                Recipe::Script(Arc::new(program.for_rules(rules)?), params.clone())
            }
            Recipe::Search(kind, params, rollout) => {
                Recipe::Search(kind, *params, Arc::new(rollout.for_rules(rules)?))
            }
            other => other.clone(),
        })
    }

    /// A new agent named `id`, with no state carried over from other games.
    pub fn build(&self, id: &str) -> Box<dyn Agent> {
        match self {
            Recipe::Random => Box::new(RandomAgent::new(id)),
            Recipe::Heuristic(style, params) => Box::new(Heuristic::new(id, *style, *params)),
            Recipe::Script(program, params) => {
                Box::new(ScriptAgent::new(id, program.clone(), params.clone()))
            }
            Recipe::Search(_, params, rollout) => {
                let rollout = match rollout.as_ref() {
                    Recipe::Random => Rollout::Random,
                    other => Rollout::Agent(other.build(&format!("{id}/rollout"))),
                };
                Box::new(SearchAgent::new(id, *params, rollout))
            }
        }
    }
}

/// A problem with one parameter: (parameter name, message).
pub type ParamProblem = (String, String);

/// The recipe for a built-in `kind` with `params`; `None` if the kind is unknown.
///
/// A search's `rollout` parameter names another agent, possibly a script file, so it is not
/// resolved here: the recipe comes with a random rollout, and `scenario` replaces it (a library
/// caller builds `Recipe::Search(kind, params, Arc::new(rollout_recipe))` itself).
pub fn builtin(
    kind: &str,
    params: &BTreeMap<String, Value>,
) -> Option<Result<Recipe, Vec<ParamProblem>>> {
    let info = kinds().into_iter().find(|k| k.name == kind)?;
    let mut problems = Vec::new();
    let style = Style::ALL.into_iter().find(|s| s.name() == kind);
    let mut hp = style.map(HeuristicParams::paper);
    let mut sp = match kind {
        "ismcts" => Some(SearchParams::ismcts()),
        "mcts" => Some(SearchParams::mcts()),
        _ => None,
    };
    for (name, value) in params {
        let Some(p) = info.params.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = info.params.iter().map(|p| p.name).collect();
            let msg = if names.is_empty() {
                format!("`{kind}` takes no parameters")
            } else {
                let hint = crate::scenario::nearest(name, &names)
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                format!(
                    "unknown parameter of `{kind}`; {hint}valid: {}",
                    names.join(", ")
                )
            };
            problems.push((name.clone(), msg));
            continue;
        };
        let valid = match (p.ty, value) {
            (ParamType::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (ParamType::Count, Value::Number(n)) => n.is_u64(),
            (ParamType::Float, Value::Number(n)) => n.as_f64().is_some_and(f64::is_finite),
            (ParamType::Bool, Value::Bool(_)) => true,
            (ParamType::Choice(names), Value::String(s)) => names.contains(&s.as_str()),
            // Resolved by the scenario, which knows scripts and paths.
            (ParamType::Agent, _) => continue,
            _ => false,
        };
        if !valid {
            problems.push((
                name.clone(),
                format!(
                    "expected {} (default {}), got {value}",
                    match p.ty {
                        ParamType::Int => "a whole number".to_string(),
                        ParamType::Count => "a whole number, zero or more".to_string(),
                        ParamType::Float => "a number".to_string(),
                        ParamType::Bool => "true or false".to_string(),
                        ParamType::Choice(names) => format!("one of {}", names.join(", ")),
                        ParamType::Agent => "an agent".to_string(),
                    },
                    p.default
                ),
            ));
            continue;
        }
        if let Some(hp) = hp.as_mut() {
            set_heuristic_param(hp, name, value.as_f64().expect("checked: a number"));
        } else if let Some(sp) = sp.as_mut() {
            set_search_param(sp, name, value);
            let bad = match name.as_str() {
                "iterations" | "determinizations" => {
                    (value.as_u64() == Some(0)).then_some("must be at least 1")
                }
                "exploration" | "time_limit_ms" => {
                    (value.as_f64().unwrap_or(0.0) < 0.0).then_some("must not be negative")
                }
                "reward_scale" => {
                    (value.as_f64().unwrap_or(0.0) <= 0.0).then_some("must be greater than 0")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                problems.push((name.clone(), format!("{msg}, got {value}")));
            }
        }
    }
    if !problems.is_empty() {
        return Some(Err(problems));
    }
    Some(Ok(match (style, hp, sp) {
        (Some(style), Some(hp), _) => Recipe::Heuristic(style, hp),
        (_, _, Some(sp)) => Recipe::Search(info.name, sp, Arc::new(Recipe::Random)),
        _ => Recipe::Random,
    }))
}
