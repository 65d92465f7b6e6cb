//! The catalogue of built-in agent kinds: names, parameters with defaults, and how to build one
//! from a scenario's `kind` and `params`. `dhumbal-run agents` prints it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::heuristic::{Heuristic, HeuristicParams, Style};
use super::random::RandomAgent;
use super::script::ScriptAgent;
use super::script::ScriptProgram;
use crate::game::Agent;

/// The type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A whole number, possibly negative.
    Int,
    /// A whole number, zero or more.
    Count,
    Float,
}

/// One documented parameter of an agent kind.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub ty: ParamType,
    pub default: f64,
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
            vec![$(ParamInfo { name: stringify!($field), ty: ParamType::$ty, default: d.$field as f64, doc: $doc }),+]
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
    out
}

/// How to make fresh instances of one configured agent.
#[derive(Clone)]
pub enum Recipe {
    Random,
    Heuristic(Style, HeuristicParams),
    Script(Arc<ScriptProgram>, Arc<rhai::Map>),
}

impl Recipe {
    /// Every parameter as it will be used, defaults included (for the manifest).
    pub fn resolved_params(&self) -> BTreeMap<String, Value> {
        match self {
            Recipe::Random | Recipe::Script(..) => BTreeMap::new(),
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

    /// A new agent named `id`, with no state carried over from other games.
    pub fn build(&self, id: &str) -> Box<dyn Agent> {
        match self {
            Recipe::Random => Box::new(RandomAgent::new(id)),
            Recipe::Heuristic(style, params) => Box::new(Heuristic::new(id, *style, *params)),
            Recipe::Script(program, params) => {
                Box::new(ScriptAgent::new(id, program.clone(), params.clone()))
            }
        }
    }
}

/// A problem with one parameter: (parameter name, message).
pub type ParamProblem = (String, String);

/// The recipe for a built-in `kind` with `params`; `None` if the kind is unknown.
pub fn builtin(
    kind: &str,
    params: &BTreeMap<String, Value>,
) -> Option<Result<Recipe, Vec<ParamProblem>>> {
    let info = kinds().into_iter().find(|k| k.name == kind)?;
    let mut problems = Vec::new();
    let style = Style::ALL.into_iter().find(|s| s.name() == kind);
    let mut hp = style.map(HeuristicParams::paper);
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
        let number = match (p.ty, value) {
            (ParamType::Int, Value::Number(n)) if n.is_i64() || n.is_u64() => n.as_f64(),
            (ParamType::Count, Value::Number(n)) if n.is_u64() => n.as_f64(),
            (ParamType::Float, Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()),
            _ => None,
        };
        match (number, hp.as_mut()) {
            (Some(x), Some(hp)) => {
                set_heuristic_param(hp, name, x);
            }
            _ => problems.push((
                name.clone(),
                format!(
                    "expected {} (default {}), got {value}",
                    match p.ty {
                        ParamType::Int => "a whole number",
                        ParamType::Count => "a whole number, zero or more",
                        ParamType::Float => "a number",
                    },
                    p.default
                ),
            )),
        }
    }
    if !problems.is_empty() {
        return Some(Err(problems));
    }
    Some(Ok(match (style, hp) {
        (Some(style), Some(hp)) => Recipe::Heuristic(style, hp),
        _ => Recipe::Random,
    }))
}
