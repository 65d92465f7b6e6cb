//! The `study:` section (docs/studies.md): the agents a participant faces and in which order,
//! the table, the hints, the texts shown before play, and who may play; each field checked
//! with its place in the file.

use serde_json::Value;

use dhumbal_agents::registry::join as at;
use dhumbal_game::rules::Scoring;

use super::resolve::Resolver;
use super::spec::{AgentSpec, ScenarioSpec, StudySpec, TableSpec};
use super::{Study, StudyCodes, StudyOrder, StudySeat};

/// Rounds of a coin-scored game when `study.rounds` is not given.
pub const DEFAULT_ROUNDS: u32 = 5;

/// The longest participant code or access code.
pub const MAX_CODE: usize = 64;

/// Whether `code` may be a participant code: letters, digits, `-` and `_`, at most
/// [`MAX_CODE`] (it names the participant's folder).
pub fn valid_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= MAX_CODE
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Resolver<'_> {
    /// The `study:` section, if any; `None` also when it has problems.
    pub(super) fn study(&mut self, spec: &ScenarioSpec, seed: u64) -> Option<Study> {
        let s = spec.study.as_ref()?;
        let p = "study";
        let before = self.reported;
        let table = TableSpec {
            rules: s.rules.clone(),
            ..TableSpec::default()
        };
        let rules = self.stage_rules(p, &table, &spec.table());
        let points = rules
            .as_ref()
            .map(|r| matches!(r.variant().scoring, Scoring::Points(_)));
        let agents = self.study_agents(s, p, rules.as_ref());
        let games = match s.games {
            Some(0) => {
                self.problem(
                    &at(p, "games"),
                    "expected at least one game per participant",
                );
                1
            }
            Some(g) => g,
            None => agents.len().max(1) as u32,
        };
        let rounds = match (points, s.rounds) {
            (Some(true), Some(_)) => {
                self.problem(
                    &at(p, "rounds"),
                    "these rules score points: a game goes on until one player is left; \
                     `rounds` is for coin scoring",
                );
                None
            }
            (_, Some(0)) => {
                self.problem(&at(p, "rounds"), "expected at least one round per game");
                None
            }
            (Some(true), None) => None,
            (_, r) => Some(r.unwrap_or(DEFAULT_ROUNDS)),
        };
        let players = rules.as_ref().map_or(2, |r| r.players());
        let seat = self.study_seat(s, p, players);
        let advisor = self.study_advisor(s, p, rules.as_ref());
        let codes = self.study_codes(s, p);
        if let Some(code) = &s.access_code
            && !valid_code(code)
        {
            self.problem(
                &at(p, "access_code"),
                format!("expected letters, digits, `-` or `_` (at most {MAX_CODE}), got `{code}`"),
            );
        }
        if self.reported > before {
            return None;
        }
        Some(Study {
            rules: rules?,
            seed: s.seed.unwrap_or(seed),
            spec: serde_json::json!({
                "agents": agents.iter().map(|a| a.spec.clone()).collect::<Vec<_>>(),
                "order": s.order.unwrap_or(StudyOrder::LatinSquare),
                "games": games,
                "rounds": rounds,
                "seat": s.seat.clone().unwrap_or(Value::from(0)),
                "hints": advisor.as_ref().map(|a| a.spec.clone()),
                "seed": s.seed.unwrap_or(seed),
            }),
            agents,
            order: s.order.unwrap_or(StudyOrder::LatinSquare),
            games,
            rounds,
            seat,
            advisor,
            instructions: s.instructions.clone().unwrap_or_default(),
            consent: s.consent.clone().unwrap_or_default(),
            codes,
            access_code: s.access_code.clone(),
        })
    }

    fn study_agents(
        &mut self,
        s: &StudySpec,
        p: &str,
        rules: Option<&std::sync::Arc<dhumbal_game::Rules>>,
    ) -> Vec<super::AgentDef> {
        if s.agents.is_empty() {
            self.problem(
                &at(p, "agents"),
                "lists no agents: give at least one for participants to face",
            );
        }
        let mut out: Vec<super::AgentDef> = Vec::new();
        for (i, a) in s.agents.iter().enumerate() {
            let pa = at(&at(p, "agents"), &i.to_string());
            let Some(a) = self.written_entry(a, &pa, "").map(AgentSpec) else {
                continue;
            };
            if a.0.contains_key("winner_of") {
                self.problem(
                    &pa,
                    "a study faces agent entries (a kind, a script, a tuned file, a network), \
                     not `winner_of`",
                );
                continue;
            }
            let Some(def) = self.entry_def(&a, &pa, rules) else {
                continue;
            };
            if def.id == "human" {
                self.problem(
                    &pa,
                    "the id `human` is the participant's: give the agent another",
                );
            } else if out.iter().any(|o| o.id == def.id) {
                self.problem(
                    &pa,
                    format!("`{}` is listed twice: give one an `id` of its own", def.id),
                );
            } else if def.recipe.build(&def.id).oracle() {
                self.problem(
                    &pa,
                    "an oracle sees every hand, the participant's included: a study seats \
                     agents that see only their own",
                );
            } else if bounded_by_time(&def.spec) {
                self.problem(
                    &pa,
                    "a search bounded by time (`time_limit_ms`) would not choose the same \
                     again when a participant's game is replayed from its journal: bound it \
                     by `iterations`",
                );
            } else {
                out.push(def);
            }
        }
        out
    }

    fn study_seat(&mut self, s: &StudySpec, p: &str, players: usize) -> StudySeat {
        match &s.seat {
            None => StudySeat::Fixed(0),
            Some(Value::String(r)) if r == "rotate" => StudySeat::Rotate,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| (n as usize) < players) => {
                StudySeat::Fixed(n.as_u64().unwrap_or(0) as usize)
            }
            Some(other) => {
                self.problem(
                    &at(p, "seat"),
                    format!(
                        "expected a seat from 0 to {} or `rotate`, got {other}",
                        players - 1
                    ),
                );
                StudySeat::Fixed(0)
            }
        }
    }

    fn study_advisor(
        &mut self,
        s: &StudySpec,
        p: &str,
        rules: Option<&std::sync::Arc<dhumbal_game::Rules>>,
    ) -> Option<super::AgentDef> {
        let entry = match s.hints.as_ref()? {
            Value::Bool(false) | Value::Null => return None,
            written => self.written_entry(written, &at(p, "hints"), " or false")?,
        };
        let def = self.entry_def(&AgentSpec(entry), &at(p, "hints"), rules)?;
        if def.recipe.build(&def.id).oracle() {
            self.problem(
                &at(p, "hints"),
                "an oracle sees every hand: the advisor sees only the participant's",
            );
            return None;
        }
        Some(def)
    }

    fn study_codes(&mut self, s: &StudySpec, p: &str) -> StudyCodes {
        match (&s.participants, s.signup) {
            (Some(_), Some(true)) => {
                self.problem(
                    &at(p, "signup"),
                    "either listed `participants` or open `signup`, not both",
                );
                StudyCodes::SignUp
            }
            (Some(list), _) => {
                if list.is_empty() {
                    self.problem(&at(p, "participants"), "lists no codes");
                }
                for (i, code) in list.iter().enumerate() {
                    let pc = at(&at(p, "participants"), &i.to_string());
                    if !valid_code(code) {
                        self.problem(
                            &pc,
                            format!("expected letters, digits, `-` or `_` (at most {MAX_CODE}), got `{code}`"),
                        );
                    } else if list[..i].contains(code) {
                        self.problem(&pc, format!("`{code}` is listed twice"));
                    }
                }
                StudyCodes::Listed(list.clone())
            }
            (None, Some(true)) => StudyCodes::SignUp,
            (None, _) => {
                self.problem(
                    p,
                    "says nobody may play: list the codes (`participants: [A1, A2]`) or open \
                     sign-up (`signup: true`)",
                );
                StudyCodes::SignUp
            }
        }
    }
}

/// Whether an agent entry as resolved (or an agent inside it: a rollout, a belief's model)
/// stops its search by the clock: its choices then depend on the machine, and a game
/// replayed from a participant's journal would not be the game played.
fn bounded_by_time(spec: &Value) -> bool {
    match spec {
        Value::Object(m) => m.iter().any(|(k, v)| {
            (k == "time_limit_ms" && v.as_f64().is_some_and(|t| t > 0.0)) || bounded_by_time(v)
        }),
        Value::Array(a) => a.iter().any(bounded_by_time),
        _ => false,
    }
}
