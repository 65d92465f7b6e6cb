//! An environment's configuration, as the Python side sends it (JSON), checked once: the
//! rules through the scenario's own `rules:` section, opponents through the agent registry,
//! with the messages `dhumbal-run validate` gives (the field's path, what would be valid).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_agents::Recipe;
use dhumbal_agents::neural::Encoding;
use dhumbal_agents::registry::{self, Standalone};
use dhumbal_game::Rules;
use dhumbal_game::rules::Scoring;
use dhumbal_learn::Reward;
use dhumbal_runner::scenario::RulesSpec;

/// Where the one Python player sits in each game (when Python does not play every seat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatChoice {
    /// Game `g` in seat `g mod players`.
    Rotate,
    /// Drawn per game from the seating stream of (seed, game).
    Random,
    Fixed(usize),
}

/// A checked configuration.
pub struct Setup {
    pub rules: Arc<Rules>,
    /// The rules as a scenario would write them in full (JSON), for Python's repr and metadata.
    pub rules_json: String,
    pub encoding: Encoding,
    /// Agents for the seats Python does not play, in seat order after the Python player's
    /// (empty: Python plays every seat).
    pub opponents: Vec<(String, Arc<dyn Recipe>)>,
    pub seat: SeatChoice,
    pub reward: Reward,
    /// `score` rewards are divided by this.
    pub reward_scale: f64,
    /// Points games: the game's winner gets this at its end, every other seat minus this
    /// divided by the others' number (zero-sum).
    pub game_reward: f64,
    /// Coin scoring: rounds per episode.
    pub rounds: u32,
}

const KEYS: &[&str] = &[
    "rules",
    "opponents",
    "seat",
    "encoding",
    "reward",
    "reward_scale",
    "game_reward",
    "rounds",
];

impl Setup {
    pub fn all_seats(&self) -> bool {
        self.opponents.is_empty()
    }

    pub fn points(&self) -> bool {
        matches!(self.rules.variant().scoring, Scoring::Points(_))
    }

    /// Checks the whole configuration and reports every problem at once, as scenario
    /// validation does: one problem alone as `field: message`, several as `N problems with
    /// the configuration:` and a line each.
    pub fn parse(config: &str, base: &Path) -> Result<Setup, ConfigError> {
        let v: Value = serde_json::from_str(config).map_err(ConfigError::Json)?;
        let o = v.as_object().ok_or(ConfigError::NotObject)?;
        let mut problems: Vec<String> = Vec::new();
        for k in o.keys() {
            if !KEYS.contains(&k.as_str()) {
                let hint = dhumbal_agents::nearest(k, KEYS)
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                problems.push(format!(
                    "unknown setting `{k}`; {hint}the settings are: {}",
                    KEYS.join(", ")
                ));
            }
        }
        let rules = match rules(o.get("rules").unwrap_or(&Value::Null)) {
            Ok(r) => Some(Arc::new(r)),
            Err(e) => {
                problems.extend(e);
                None
            }
        };
        let name = o.get("encoding").and_then(Value::as_str).unwrap_or("cards");
        let encoding = Encoding::from_name(name);
        if encoding.is_none() {
            problems.push(format!(
                "encoding: unknown encoding `{name}`; valid: {}",
                Encoding::NAMES.join(", ")
            ));
        }
        let players = rules.as_ref().map(|r| r.players());
        let entries = match o.get("opponents") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(other) => {
                problems.push(format!(
                    "opponents: expected a list of agent entries, got {other}"
                ));
                Vec::new()
            }
        };
        if let Some(players) = players
            && !entries.is_empty()
            && entries.len() != players - 1
        {
            problems.push(format!(
                "opponents: {} given for a table of {players} players: list one per seat the learner does not take ({}), or none to play every seat from Python",
                entries.len(),
                players - 1
            ));
        }
        // Every entry is checked, even when their number is wrong or the rules are: a
        // misspelt kind is named either way.
        let mut cx = Standalone::new(rules.clone(), base.to_path_buf());
        let mut opponents = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            // A bare kind name is an entry too, as in a scenario's lists of opponents.
            let entry = match e {
                Value::String(s) => Value::Object(Map::from_iter([(
                    "kind".to_string(),
                    Value::String(s.clone()),
                )])),
                other => other.clone(),
            };
            let at = format!("opponents.{i}");
            if let Some(recipe) = registry::resolve(&entry, &mut cx, &at) {
                let id = entry
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| recipe.default_id(), str::to_string);
                opponents.push((id, recipe));
            }
        }
        problems.extend(cx.problems.iter().map(|(field, m)| format!("{field}: {m}")));
        let seat = match o.get("seat") {
            None | Some(Value::Null) => Some(SeatChoice::Rotate),
            Some(Value::String(s)) if s == "rotate" => Some(SeatChoice::Rotate),
            Some(Value::String(s)) if s == "random" => Some(SeatChoice::Random),
            Some(Value::Number(n))
                if n.as_u64()
                    .is_some_and(|s| players.is_none_or(|p| (s as usize) < p)) =>
            {
                Some(SeatChoice::Fixed(n.as_u64().unwrap_or(0) as usize))
            }
            Some(other) => {
                problems.push(match players {
                    Some(p) => format!(
                        "seat: expected `rotate`, `random` or a seat from 0 to {}, got {other}",
                        p - 1
                    ),
                    None => format!("seat: expected `rotate`, `random` or a seat, got {other}"),
                });
                None
            }
        };
        let name = o.get("reward").and_then(Value::as_str).unwrap_or("score");
        let reward = Reward::from_name(name);
        if reward.is_none() {
            problems.push(format!(
                "reward: unknown reward `{name}`; valid: score (coins won or lost, minus the points taken), win (1 for the round's winner)"
            ));
        }
        let mut num = |key: &str, default: f64| -> f64 {
            match o.get(key) {
                None | Some(Value::Null) => default,
                Some(v) => v.as_f64().filter(|x| x.is_finite()).unwrap_or_else(|| {
                    problems.push(format!("{key}: expected a number, got {v}"));
                    default
                }),
            }
        };
        let reward_scale = num("reward_scale", 1.0);
        let game_reward = num("game_reward", 1.0);
        if reward_scale <= 0.0 {
            problems.push(format!("reward_scale: must be above 0, got {reward_scale}"));
        }
        let rounds = match o.get("rounds") {
            None | Some(Value::Null) => 1,
            Some(v) => match v.as_u64().filter(|&r| (1..=1 << 20).contains(&r)) {
                Some(r) => r as u32,
                None => {
                    problems.push(format!("rounds: expected a whole number from 1, got {v}"));
                    1
                }
            },
        };
        match (rules, encoding, seat, reward) {
            (Some(rules), Some(encoding), Some(seat), Some(reward)) if problems.is_empty() => {
                let rules_json = serde_json::to_string(&RulesSpec::from_variant(rules.variant()))
                    .unwrap_or_default();
                Ok(Setup {
                    rules,
                    rules_json,
                    encoding,
                    opponents,
                    seat,
                    reward,
                    reward_scale,
                    game_reward,
                    rounds,
                })
            }
            _ => Err(ConfigError::Problems(problems)),
        }
    }
}

/// Why a configuration is refused (Python's `ValueError`).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Json(serde_json::Error),
    #[error("configuration: expected an object")]
    NotObject,
    /// Every problem found: one alone as `field: message`, several as `N problems with the
    /// configuration:` and a line each.
    #[error("{}", match .0.as_slice() {
        [one] => one.clone(),
        all => format!("{} problems with the configuration:\n  {}", all.len(), all.join("\n  ")),
    })]
    Problems(Vec<String>),
}

/// The `rules:` section: a preset name, or a mapping as in a scenario. Every problem, each
/// as `rules...: message`.
fn rules(v: &Value) -> Result<Rules, Vec<String>> {
    let spec: RulesSpec = match v {
        Value::Null => RulesSpec::default(),
        Value::String(preset) => serde_json::from_value(serde_json::json!({ "preset": preset }))
            .map_err(|e| vec![format!("rules: {e}")])?,
        Value::Object(o) => {
            // Unknown fields are named, as `validate` does.
            let known = RulesSpec::field_names();
            let names: Vec<&str> = known.iter().map(String::as_str).collect();
            let unknown: Vec<String> = o
                .keys()
                .filter(|k| !names.contains(&k.as_str()))
                .map(|k| {
                    let hint = dhumbal_agents::nearest(k, &names)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    format!(
                        "rules: unknown field `{k}`; {hint}the fields: {} (docs/scenarios.md)",
                        names.join(", ")
                    )
                })
                .collect();
            if !unknown.is_empty() {
                return Err(unknown);
            }
            serde_json::from_value(v.clone()).map_err(|e| vec![format!("rules: {e}")])?
        }
        other => {
            return Err(vec![format!(
                "rules: expected a preset name or a mapping, got {other}"
            )]);
        }
    };
    let variant = spec.to_variant().map_err(|problems| {
        problems
            .iter()
            .map(|(f, m)| format!("rules.{f}: {m}"))
            .collect::<Vec<_>>()
    })?;
    Rules::new(variant).map_err(|e| vec![format!("rules: {e}")])
}
