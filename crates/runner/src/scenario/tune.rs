//! `tune:` entries (docs/tuning.md): the agent, the space of its parameters, the tables it is
//! evaluated at, the optimizer, the budget and the confirmation stage, each checked with its
//! place in the file. Every value of every range is tried on the agent as if written by hand
//! (its ends, every choice), so that a value the family refuses is a problem of `validate`, not
//! of evaluation 40.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use dhumbal_agents::registry;
use dhumbal_agents::registry::join as at;
use dhumbal_game::rules::{Rules, Scoring};

use super::resolve::Resolver;
use super::spec::{AgentSpec, ScenarioSpec, SequentialSpec, TableSpec, TuneSpec};
use super::{
    AgentDef, Objective, OptimizerChoice, Overrides, SeatEntry, Seating, TunedParam, Tuning,
    entry_at, param,
};
use crate::optimize::{Dim, NtbeaSettings, SpsaSettings};

/// An optimizer's setting: its name, what is valid, and how it is set (false: not valid).
type Setter<S> = (&'static str, &'static str, fn(&mut S, &Value) -> bool);

/// The most grid points of one parameter (a range with a tiny step is a mistake).
const MAX_LEVELS: u64 = 1000;

/// The agent of a `tune:` entry as written: the start of the search and the baseline of its
/// confirmation.
struct Written {
    /// The entry without its `id`.
    base: Value,
    /// The `id` it was given, if any.
    id: Option<String>,
    /// The entry resolved as a seat would be.
    agent: AgentDef,
}

impl Resolver<'_> {
    /// The `tune:` entries.
    pub(super) fn tunings(&mut self, spec: &ScenarioSpec, seed: u64) -> Vec<Tuning> {
        let Some(list) = &spec.tune else {
            return Vec::new();
        };
        let folder = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut out = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        // What every section writes, as one path (`tuned/x.json` and `./tuned/x.json` are one
        // file): two sections writing one file would overwrite each other.
        let written = |w: &str| crate::tune::absolute(&folder.join(w));
        let mut outputs: Vec<(PathBuf, String)> = spec
            .train
            .iter()
            .flatten()
            .map(|tr| (written(&tr.checkpoint), format!("training `{}`", tr.id)))
            .collect();
        for (i, t) in list.iter().enumerate() {
            let p = format!("tune.{i}");
            let file = written(&t.output);
            if let Some((_, who)) = outputs.iter().find(|(f, _)| *f == file) {
                self.problem(
                    &at(&p, "output"),
                    format!(
                        "{who} writes {} too: give each section its own file",
                        file.display()
                    ),
                );
            }
            outputs.push((file, format!("tuning `{}`", t.id)));
            if ids.contains(&t.id.as_str()) || spec.train.iter().flatten().any(|tr| tr.id == t.id) {
                self.problem(
                    &at(&p, "id"),
                    format!("`{}` names another training or tuning", t.id),
                );
            }
            ids.push(&t.id);
            if let Some(tuning) = self.tuning(spec, t, &p, seed, &folder) {
                out.push(tuning);
            }
        }
        out
    }

    /// One `tune:` entry, each field checked and its problems reported at its place; `None`
    /// if the entry has any.
    pub(super) fn tuning(
        &mut self,
        spec: &ScenarioSpec,
        t: &TuneSpec,
        p: &str,
        seed: u64,
        folder: &Path,
    ) -> Option<Tuning> {
        let before = self.reported;
        self.tuning_names(t, p);
        let table = TableSpec {
            rules: t.rules.clone(),
            ..TableSpec::default()
        };
        let rules = self.stage_rules(p, &table, &spec.table());
        let players = rules.as_ref().map_or(2, |r| r.players());
        let points = rules
            .as_ref()
            .map(|r| matches!(r.variant().scoring, Scoring::Points(_)));

        // The agent as written is the start and the baseline.
        let written = self.written_agent(t, p, rules.as_ref())?;
        let (params, start) = self.space(t, p, &written);
        if let Some(rules) = &rules {
            self.check_ranges(p, &params, &written.base, rules, folder);
        }
        let opponents = self.opponents(t, p, rules.as_ref());
        let seating = t.seating.or(spec.seating).unwrap_or(Seating::Rotate);
        let objective = self.objective(p, t.objective.as_deref(), points);
        let batch = t.batch.unwrap_or(100);
        let optimizer = self.tuning_optimizer(t, p, batch);
        let lineups = lineups(&opponents, players, &t.id);
        self.check_batch(p, batch, players, &lineups);
        self.check_budget(p, t.budget, batch, optimizer.as_ref());
        let tune_seed = t.seed.unwrap_or(seed);
        let output = folder.join(&t.output);
        if output.is_dir() {
            self.problem(
                &at(p, "output"),
                format!(
                    "{} is a folder: name the agent file to write",
                    output.display()
                ),
            );
        }
        // The confirmation's own fields are checked in any case; the stage it makes only when
        // the entry itself is sound (its problems would otherwise be reported a second time, at
        // the confirmation's place).
        self.confirm_fields(p, t.confirm.as_ref());
        let sound = self.reported == before;
        let confirm = sound.then(|| self.confirmation(spec, t, p, &written, &opponents, tune_seed));
        if self.reported > before {
            return None;
        }
        let (rules, optimizer) = (rules?, optimizer?);
        let spec_json = serde_json::json!({
            "id": t.id,
            "agent": written.base,
            "params": t.params,
            "rules": super::RulesSpec::from_variant(rules.variant()),
            "opponents": opponents.iter().map(|o| o.spec.clone()).collect::<Vec<_>>(),
            "seating": seating,
            "objective": objective,
            "optimizer": optimizer_json(&optimizer),
            "budget": t.budget,
            "batch": batch,
            "seed": tune_seed,
            "confirm": t.confirm,
            "output": t.output,
        });
        Some(Tuning {
            id: t.id.clone(),
            output,
            written: t.output.clone(),
            folder: folder.to_path_buf(),
            base: written.base,
            start_agent: written.agent,
            params,
            start,
            rules,
            lineups,
            seating,
            objective,
            optimizer,
            budget: t.budget,
            batch,
            seed: tune_seed,
            confirm: confirm.flatten().flatten(),
            spec: spec_json,
        })
    }

    /// The entry's `id` (it names the records folder) and `output` (an agent file, JSON).
    fn tuning_names(&mut self, t: &TuneSpec, p: &str) {
        if let Some(m) = super::resolve::folder_problem(&t.id, " (it names the records folder)") {
            self.problem(&at(p, "id"), m);
        }
        if !t.output.ends_with(".json") {
            self.problem(
                &at(p, "output"),
                format!(
                    "`{}`: the agent file is JSON (a seat names it with `tuned: FILE`); end the name with .json",
                    t.output
                ),
            );
        }
    }

    /// `agent:`, the agent as written (a kind's name or an entry as in `agents:`), resolved as
    /// a seat would be; `None` when it is not an agent entry or does not resolve.
    fn written_agent(
        &mut self,
        t: &TuneSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
    ) -> Option<Written> {
        let written_agent = self.written_entry(&t.agent, &at(p, "agent"), "")?;
        let mut base = Value::Object(written_agent.clone());
        let id = base
            .as_object_mut()
            .and_then(|m| m.remove("id"))
            .and_then(|v| v.as_str().map(String::from));
        if base.get("winner_of").is_some() {
            self.problem(
                &at(p, "agent"),
                "tunes an agent entry (a kind or a script with its params), not `winner_of`",
            );
            return None;
        }
        let agent = self.entry_def(&AgentSpec(written_agent), &at(p, "agent"), rules)?;
        Some(Written { base, id, agent })
    }

    /// `params:`, the space: each parameter's range, and the starting point (the value in
    /// force in the agent as written, on the grid, else the middle of the range).
    fn space(&mut self, t: &TuneSpec, p: &str, written: &Written) -> (Vec<TunedParam>, Vec<f64>) {
        let described = Value::Object(written.agent.recipe.describe());
        if t.params.is_empty() {
            self.problem(
                &at(p, "params"),
                "tunes nothing: give each parameter with its range, `name: {from: 1, to: 9, step: 1}`, `{min: 0.1, max: 2}` or a list of choices",
            );
        }
        let mut params = Vec::new();
        let mut start = Vec::new();
        for (name, range) in &t.params {
            let pp = format!("{p}.params.{name}");
            let Some((dim, choices)) = self.dimension(&pp, range) else {
                continue;
            };
            let in_force = param(&written.base, name).or_else(|| param(&described, name));
            let s = match (&dim, &in_force) {
                (Dim::Choice { .. }, Some(v)) => {
                    choices.iter().position(|c| c == v).unwrap_or(0) as f64
                }
                (Dim::Choice { .. }, None) => 0.0,
                (_, Some(v)) if v.as_f64().is_some() => {
                    dim.grid_value(dim.nearest_index(v.as_f64().unwrap_or(0.0)))
                }
                _ => dim.grid_value(dim.grid_len() / 2),
            };
            params.push(TunedParam {
                name: name.clone(),
                dim,
                choices,
            });
            start.push(s);
        }
        (params, start)
    }

    /// Every value a range allows, checked as the agent would get it: each end of each range,
    /// and every choice, one parameter at a time on the agent as written (so that a problem is
    /// reported at the parameter that has it, once).
    fn check_ranges(
        &mut self,
        p: &str,
        params: &[TunedParam],
        base: &Value,
        rules: &Arc<Rules>,
        folder: &Path,
    ) {
        for tp in params {
            let values: Vec<f64> = match tp.dim {
                Dim::Choice { n } => (0..n).map(|i| i as f64).collect(),
                _ => vec![
                    tp.dim.grid_value(0),
                    tp.dim.grid_value(tp.dim.grid_len() - 1),
                ],
            };
            for v in values {
                let entry = entry_at(base, std::slice::from_ref(tp), &[v]);
                let problems = self.try_entry(&entry, rules, folder);
                for (field, message) in problems {
                    let shown = param(&entry, &tp.name).unwrap_or(Value::Null);
                    let field = if field.is_empty() {
                        String::new()
                    } else {
                        format!(" (`{field}`)")
                    };
                    self.problem(
                        &format!("{p}.params.{}", tp.name),
                        format!("at {shown}: {message}{field}"),
                    );
                }
            }
        }
    }

    /// `opponents:`, the other seats (`random` when not given), each resolved as a seat.
    fn opponents(&mut self, t: &TuneSpec, p: &str, rules: Option<&Arc<Rules>>) -> Vec<AgentDef> {
        let given = t
            .opponents
            .clone()
            .unwrap_or_else(|| vec![Value::from("random")]);
        if given.is_empty() {
            self.problem(&at(p, "opponents"), "lists no opponents");
        }
        let mut opponents: Vec<AgentDef> = Vec::new();
        for (j, o) in given.iter().enumerate() {
            let Some(entry) = self
                .written_entry(o, &format!("{p}.opponents.{j}"), "")
                .map(AgentSpec)
            else {
                continue;
            };
            if let Some(d) = self.entry_def(&entry, &format!("{p}.opponents.{j}"), rules) {
                opponents.push(d);
            }
        }
        opponents
    }

    /// `objective:`, which must suit the rules' scoring (`points`: whether they score points;
    /// `None` when the rules have problems); by default games won under points, else the win
    /// rate.
    fn objective(&mut self, p: &str, given: Option<&str>, points: Option<bool>) -> Objective {
        match given {
            None => {
                if points == Some(true) {
                    Objective::Games
                } else {
                    Objective::Win
                }
            }
            Some(name) => match Objective::from_name(name) {
                Some(Objective::Games) if points == Some(false) => {
                    self.problem(
                        &at(p, "objective"),
                        "`games` is for point scoring; these rules score coins: `win` or `economic`",
                    );
                    Objective::Win
                }
                Some(Objective::Economic) if points == Some(true) => {
                    self.problem(
                        &at(p, "objective"),
                        "`economic` (coins per round) is for coin scoring; these rules score points: `games` or `win`",
                    );
                    Objective::Games
                }
                Some(o) => o,
                None => {
                    self.problem(
                        &at(p, "objective"),
                        format!(
                            "expected one of {}, got `{name}`",
                            Objective::NAMES.join(", ")
                        ),
                    );
                    Objective::Win
                }
            },
        }
    }

    /// `optimizer:`, with what follows from the entry's batch and budget: NTBEA's exploration
    /// and SPSA's iterations.
    fn tuning_optimizer(&mut self, t: &TuneSpec, p: &str, batch: u64) -> Option<OptimizerChoice> {
        let mut optimizer = self.optimizer(&at(p, "optimizer"), t.optimizer.as_ref());
        // NTBEA's exploration follows the noise of one evaluation (a win rate over `batch`
        // deals) unless the entry sets it.
        if let Some(OptimizerChoice::Ntbea(s)) = &mut optimizer
            && !t
                .optimizer
                .as_ref()
                .is_some_and(|m| m.contains_key("k_explore"))
        {
            s.k_explore = NtbeaSettings::k_explore_for_games(batch.max(1));
        }
        // SPSA's gains are scaled to the iterations the budget allows (two evaluations each).
        if let Some(OptimizerChoice::Spsa(s)) = &mut optimizer {
            let search = t.budget - super::model::final_budget(t.budget, batch);
            s.iterations = (search / (2 * batch.max(1))).max(1) as usize;
        }
        optimizer
    }

    /// `batch:`, at least 1 and shared equally by the tables of the opponents' mix.
    fn check_batch(&mut self, p: &str, batch: u64, players: usize, lineups: &[Vec<AgentDef>]) {
        if batch == 0 {
            self.problem(&at(p, "batch"), "must be at least 1");
        }
        if batch > 0 && !lineups.is_empty() && !batch.is_multiple_of(lineups.len() as u64) {
            self.problem(
                &at(p, "batch"),
                format!(
                    "{batch} deals cannot be shared equally by the {} tables of the opponents' mix (every window of {} of them); give a multiple of {}",
                    lineups.len(),
                    players - 1,
                    lineups.len()
                ),
            );
        }
    }

    /// `budget:`, at least two evaluations (of one ask each).
    fn check_budget(
        &mut self,
        p: &str,
        budget: u64,
        batch: u64,
        optimizer: Option<&OptimizerChoice>,
    ) {
        let per_ask = match optimizer {
            Some(OptimizerChoice::Spsa(_)) => 2 * batch,
            _ => batch,
        };
        if budget < per_ask.max(1) * 2 {
            self.problem(
                &at(p, "budget"),
                format!(
                    "{} deals allow fewer than two evaluations of {batch}; give at least {}",
                    budget,
                    per_ask.max(1) * 2
                ),
            );
        }
    }

    /// An agent entry resolved as a seat would be.
    pub(super) fn entry_def(
        &mut self,
        a: &AgentSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
    ) -> Option<AgentDef> {
        match self.agent(a, p, rules, &[])? {
            SeatEntry::Agent(d) => Some(d),
            SeatEntry::WinnerOf(_) => None,
        }
    }

    /// The problems of `entry` under `rules` (field, message), resolved apart from the file.
    pub(super) fn try_entry(
        &mut self,
        entry: &Value,
        rules: &Arc<Rules>,
        folder: &Path,
    ) -> Vec<(String, String)> {
        let mut cx = crate::tune::Plain {
            rules: Some(rules.clone()),
            folder: folder.to_path_buf(),
            problems: Vec::new(),
            log: self.log.clone(),
            planned: self.planned.clone(),
        };
        let _ = registry::resolve(entry, &mut cx, "");
        cx.problems
    }

    /// A parameter's range: `{from, to, step}`, `{min, max, levels}` or a list of choices.
    fn dimension(&mut self, p: &str, range: &Value) -> Option<(Dim, Vec<Value>)> {
        // A field given must be a number (a quoted "2" is not silently replaced by a default).
        for (k, v) in range.as_object().into_iter().flatten() {
            if !v.is_number() {
                self.problem(&at(p, k), format!("expected a number, got {v}"));
                return None;
            }
        }
        match range {
            Value::Array(list) => self.choices(p, list),
            Value::Object(m) if m.contains_key("from") || m.contains_key("to") => {
                Some((self.grid(p, m)?, Vec::new()))
            }
            Value::Object(m) if m.contains_key("min") || m.contains_key("max") => {
                Some((self.real_range(p, m)?, Vec::new()))
            }
            other => {
                self.problem(
                    p,
                    format!("expected a range: `{{from: 1, to: 9, step: 1}}`, `{{min: 0.1, max: 2}}` or a list of choices, got {other}"),
                );
                None
            }
        }
    }

    /// A list of choices: two or more, each once.
    fn choices(&mut self, p: &str, list: &[Value]) -> Option<(Dim, Vec<Value>)> {
        if list.len() < 2 {
            self.problem(p, "lists fewer than two choices: there is nothing to tune");
            return None;
        }
        for (j, v) in list.iter().enumerate() {
            if list[..j].contains(v) {
                self.problem(&format!("{p}.{j}"), format!("{v} is listed twice"));
                return None;
            }
        }
        Some((Dim::Choice { n: list.len() }, list.to_vec()))
    }

    /// A grid `{from, to, step}`: integers when all three are whole numbers, else reals.
    fn grid(&mut self, p: &str, m: &Map<String, Value>) -> Option<Dim> {
        for k in m.keys() {
            if !["from", "to", "step"].contains(&k.as_str()) {
                self.problem(&at(p, k), "unknown field; a grid is `{from, to, step}`");
                return None;
            }
        }
        let (Some(from), Some(to)) = (number(m, "from"), number(m, "to")) else {
            self.problem(
                p,
                "a grid needs numbers `from` and `to` (and `step`, default 1)",
            );
            return None;
        };
        let step = number(m, "step").unwrap_or(1.0);
        if step.is_nan() || step <= 0.0 || to <= from {
            self.problem(
                p,
                format!("a grid goes up from `from` to `to` by a positive `step`: {from} to {to} by {step} does not"),
            );
            return None;
        }
        let levels = ((to - from) / step + 1e-9).floor() as u64 + 1;
        if levels > MAX_LEVELS {
            self.problem(p, format!("{levels} grid points: at most {MAX_LEVELS}"));
            return None;
        }
        // Whole numbers (8.0 included) make an integer grid; any fraction, reals.
        let whole = [from, to, step].iter().all(|x| x.fract() == 0.0);
        Some(if whole {
            Dim::Int {
                lo: from as i64,
                hi: to as i64,
                step: step as i64,
            }
        } else {
            Dim::Real {
                lo: from,
                hi: from + step * (levels - 1) as f64,
                levels: levels as usize,
            }
        })
    }

    /// A real range `{min, max, levels}` (11 levels by default).
    fn real_range(&mut self, p: &str, m: &Map<String, Value>) -> Option<Dim> {
        for k in m.keys() {
            if !["min", "max", "levels"].contains(&k.as_str()) {
                self.problem(
                    &at(p, k),
                    "unknown field; a real range is `{min, max}` (and `levels`, default 11)",
                );
                return None;
            }
        }
        let (Some(lo), Some(hi)) = (number(m, "min"), number(m, "max")) else {
            self.problem(p, "a real range needs numbers `min` and `max`");
            return None;
        };
        if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
            self.problem(
                p,
                format!("needs min < max, a finite width apart, not {lo:?} and {hi:?}"),
            );
            return None;
        }
        let levels = match m.get("levels") {
            None => 11,
            Some(v) => match v.as_u64() {
                Some(n) => n,
                None => {
                    self.problem(
                        &at(p, "levels"),
                        format!("expected a whole number of grid points, got {v}"),
                    );
                    return None;
                }
            },
        };
        if !(2..=MAX_LEVELS).contains(&levels) {
            self.problem(
                &at(p, "levels"),
                format!("the grid points NTBEA picks from: 2 to {MAX_LEVELS}, not {levels}"),
            );
            return None;
        }
        Some(Dim::Real {
            lo,
            hi,
            levels: levels as usize,
        })
    }

    /// `optimizer: {method: ntbea | spsa, ...settings}`.
    fn optimizer(
        &mut self,
        p: &str,
        given: Option<&Map<String, Value>>,
    ) -> Option<OptimizerChoice> {
        let empty = Map::new();
        let m = given.unwrap_or(&empty);
        let method = m.get("method").and_then(Value::as_str).unwrap_or("ntbea");
        fn f(v: &Value, ok: fn(f64) -> bool) -> Option<f64> {
            v.as_f64().filter(|x| x.is_finite() && ok(*x))
        }
        fn n(v: &Value, min: u64) -> Option<u64> {
            v.as_u64().filter(|x| *x >= min)
        }
        let before = self.reported;
        let choice = match method {
            "ntbea" => {
                let mut s = NtbeaSettings::default();
                let settings: [Setter<NtbeaSettings>; 3] = [
                    ("k_explore", "a number, 0 or more", |s, v| {
                        f(v, |x| x >= 0.0).map(|x| s.k_explore = x).is_some()
                    }),
                    ("neighbours", "a whole number, 1 or more", |s, v| {
                        n(v, 1).map(|x| s.neighbours = x as usize).is_some()
                    }),
                    ("epsilon", "a number above 0", |s, v| {
                        f(v, |x| x > 0.0).map(|x| s.epsilon = x).is_some()
                    }),
                ];
                self.settings(p, m, "NTBEA", &settings, &mut s);
                OptimizerChoice::Ntbea(s)
            }
            "spsa" => {
                let mut s = SpsaSettings::default();
                let settings: [Setter<SpsaSettings>; 4] = [
                    (
                        "c",
                        "a fraction of each range, above 0 and at most 0.5",
                        |s, v| f(v, |x| x > 0.0 && x <= 0.5).map(|x| s.c = x).is_some(),
                    ),
                    ("a", "the gain, above 0", |s, v| {
                        f(v, |x| x > 0.0).map(|x| s.a = Some(x)).is_some()
                    }),
                    (
                        "initial_step",
                        "a fraction of each range, above 0 and at most 0.5",
                        |s, v| {
                            f(v, |x| x > 0.0 && x <= 0.5)
                                .map(|x| s.initial_step = x)
                                .is_some()
                        },
                    ),
                    (
                        "calibration",
                        "a whole number of iterations, 1 or more",
                        |s, v| n(v, 1).map(|x| s.calibration = x as usize).is_some(),
                    ),
                ];
                self.settings(p, m, "SPSA", &settings, &mut s);
                OptimizerChoice::Spsa(s)
            }
            other => {
                self.problem(
                    &at(p, "method"),
                    format!("expected `ntbea` (few discrete or heuristic parameters) or `spsa` (many continuous ones), got `{other}`"),
                );
                return None;
            }
        };
        (self.reported == before).then_some(choice)
    }

    /// Sets an optimizer's settings from `given` (besides `method`), reporting each unknown or
    /// invalid one with the list of valid ones.
    fn settings<S>(
        &mut self,
        p: &str,
        given: &Map<String, Value>,
        name: &str,
        settings: &[Setter<S>],
        into: &mut S,
    ) {
        let names: Vec<String> = settings
            .iter()
            .map(|(k, what, _)| format!("{k} ({what})"))
            .collect();
        let names = format!("{name}'s settings: {}", names.join(", "));
        for (k, v) in given.iter().filter(|(k, _)| *k != "method") {
            match settings.iter().find(|(setting, _, _)| setting == k) {
                Some((_, _, set)) if set(into, v) => {}
                Some(_) => self.problem(&at(p, k), format!("invalid value {v}; {names}")),
                None => self.problem(&at(p, k), format!("unknown setting; {names}")),
            }
        }
    }

    /// Reports each field of `confirm:` that is not a field of a sequential test.
    fn confirm_fields(&mut self, p: &str, confirm: Option<&Value>) {
        let Some(Value::Object(m)) = confirm else {
            return;
        };
        let at_c = at(p, "confirm");
        const KEYS: [&str; 9] = [
            "elo0",
            "elo1",
            "elo_model",
            "overshoot",
            "alpha",
            "beta",
            "max_deals",
            "max_games",
            "every",
        ];
        for k in m.keys() {
            if !KEYS.contains(&k.as_str()) {
                let hint = dhumbal_agents::nearest(k, &KEYS)
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                self.problem(
                    &at(&at_c, k),
                    format!(
                        "unknown field; {hint}valid fields here: {}",
                        KEYS.join(", ")
                    ),
                );
            }
        }
    }

    /// The confirmation stage: the tuned agent (`tuned:` the output) against the start on
    /// fresh deals, a sequential test, with opponents filling the other seats. `Some(None)`
    /// with `confirm: false`; `None` when it has problems.
    fn confirmation(
        &mut self,
        spec: &ScenarioSpec,
        t: &TuneSpec,
        p: &str,
        start: &Written,
        opponents: &[AgentDef],
        seed: u64,
    ) -> Option<Option<super::Stage>> {
        let given = t.confirm.clone().unwrap_or(Value::Object(Map::new()));
        if given == Value::Bool(false) {
            return Some(None);
        }
        let at_c = at(p, "confirm");
        let Value::Object(m) = given else {
            self.problem(&at_c, "expected the test's settings (`{elo1: 10, max_deals: 20000}`, all optional) or `false`");
            return None;
        };
        let seq: SequentialSpec = match serde_json::from_value(Value::Object({
            let mut m = m.clone();
            m.insert("candidate".into(), Value::from(t.id.clone()));
            m.insert("baseline".into(), Value::from(String::new()));
            m
        })) {
            Ok(s) => s,
            Err(e) => {
                self.problem(&at_c, format!("{e}; its fields are elo0, elo1, elo_model, overshoot, alpha, beta, max_deals (or max_games), every"));
                return None;
            }
        };
        let baseline =
            (start.id.as_deref()).map_or_else(|| format!("{}-start", start.agent.id), String::from);
        let table_rules = self.stage_rules(
            p,
            &TableSpec {
                rules: t.rules.clone(),
                ..TableSpec::default()
            },
            &spec.table(),
        );
        // The default maximum: 20,000 deals (coins) or 4,000 games (points).
        let points =
            (table_rules.as_ref()).map(|r| matches!(r.variant().scoring, Scoring::Points(_)));
        let unsized_ = seq.max_deals.is_none() && seq.max_games.is_none();
        let seq = SequentialSpec {
            baseline: baseline.clone(),
            max_deals: seq
                .max_deals
                .or((unsized_ && points != Some(true)).then_some(20_000)),
            max_games: seq
                .max_games
                .or((unsized_ && points == Some(true)).then_some(4_000)),
            ..seq
        };
        let players = table_rules.map_or(2, |r| r.players());
        let mut seats = vec![
            AgentSpec(Map::from_iter([
                ("tuned".to_string(), Value::from(t.output.clone())),
                ("id".to_string(), Value::from(t.id.clone())),
            ])),
            AgentSpec({
                let mut m = start.base.as_object().cloned().unwrap_or_default();
                m.insert("id".into(), Value::from(baseline.clone()));
                m
            }),
        ];
        let mut taken = vec![t.id.clone(), baseline];
        for o in opponents.iter().cycle().take(players.saturating_sub(2)) {
            let mut m = o.spec.as_object().cloned().unwrap_or_default();
            m.insert("id".into(), Value::from(fresh_id(&o.id, &mut taken)));
            seats.push(AgentSpec(m));
        }
        let own = TableSpec {
            rules: t.rules.clone(),
            agents: Some(seats),
            seating: Some(t.seating.or(spec.seating).unwrap_or(Seating::Rotate)),
            ..TableSpec::default()
        };
        let sized = Some(("confirm", seq.max_deals, seq.max_games));
        let (own, defaults) = self.sequential_size(p, sized, &own, &spec.table());
        let name = format!("confirm-{}", t.id);
        let mut stage = self.stage(
            &name,
            seed ^ 0xC0F1_4A11,
            &at_c,
            &own,
            &defaults,
            &[],
            &Overrides::default(),
        )?;
        self.sequential_plan_at(&at_c, &seq, &mut stage);
        Some(Some(stage))
    }
}

/// The number at `k` of a range, if any.
fn number(m: &Map<String, Value>, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64)
}

/// The other seats of each evaluation table: with `players - 1` of them per table, one
/// lineup when the opponents are that many or fewer (repeated to fill), else every window of
/// `players - 1` consecutive opponents (cyclically). Ids are made unique in each lineup, and
/// distinct from the tuned agent's.
fn lineups(opponents: &[AgentDef], players: usize, tune_id: &str) -> Vec<Vec<AgentDef>> {
    let k = players.saturating_sub(1);
    if opponents.is_empty() || k == 0 {
        return Vec::new();
    }
    let windows: Vec<Vec<&AgentDef>> = if opponents.len() <= k {
        vec![opponents.iter().cycle().take(k).collect()]
    } else {
        (0..opponents.len())
            .map(|i| {
                (0..k)
                    .map(|j| &opponents[(i + j) % opponents.len()])
                    .collect()
            })
            .collect()
    };
    windows
        .into_iter()
        .map(|w| {
            let mut taken = vec![tune_id.to_string()];
            w.into_iter()
                .map(|d| AgentDef {
                    id: fresh_id(&d.id, &mut taken),
                    ..d.clone()
                })
                .collect()
        })
        .collect()
}

fn optimizer_json(o: &OptimizerChoice) -> Value {
    match o {
        OptimizerChoice::Ntbea(s) => serde_json::json!({
            "method": "ntbea", "k_explore": s.k_explore, "neighbours": s.neighbours,
            "epsilon": s.epsilon,
        }),
        OptimizerChoice::Spsa(s) => serde_json::json!({
            "method": "spsa", "c": s.c, "a": s.a, "initial_step": s.initial_step,
            "calibration": s.calibration, "iterations": s.iterations,
        }),
    }
}

/// `id`, or the first of `id-2`, `id-3`, ... not in `taken`: a seat's id at a table where
/// `taken` are the others', added to them.
fn fresh_id(id: &str, taken: &mut Vec<String>) -> String {
    let mut fresh = id.to_string();
    let mut k = 2;
    while taken.contains(&fresh) {
        fresh = format!("{id}-{k}");
        k += 1;
    }
    taken.push(fresh.clone());
    fresh
}
