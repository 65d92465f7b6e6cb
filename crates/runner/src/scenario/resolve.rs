//! Resolution: a parsed [`ScenarioSpec`] checked and turned into a [`Scenario`] once, every
//! problem collected with its place. Agent entries are handed to the agent registry, which
//! knows the families; this file knows none of them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use dhumbal_agents::nearest;
use dhumbal_agents::registry;
use dhumbal_agents::registry::join as at;
use dhumbal_agents::{AgentLog, Context};
use dhumbal_game::rules::{Rules, Scoring};

use super::locate::Locations;
use super::spec::{AgentSpec, OutputSpec, ScenarioSpec, SequentialSpec, StageSpec, TableSpec};
use super::{
    AgentDef, DEFAULT_DECISION_SAMPLE, Generator, Output, Overrides, Problem, RulesSpec, Scenario,
    SeatEntry, Seating, Stage,
};

/// Rounds of one session or game: a deal id holds the round in 20 bits.
const MAX_ROUNDS_PER_MATCH: u32 = (1 << 20) - 1;

pub(super) struct Resolver<'a> {
    pub(super) path: &'a Path,
    pub(super) locations: &'a Locations,
    pub(super) problems: Vec<Problem>,
    /// Problems found while resolving, including those left out of `problems` (see
    /// [`Resolver::problem`]): a stage with any is not built.
    pub(super) reported: usize,
    /// Values that did not read and were replaced by placeholders (see `repair.rs`).
    pub(super) repaired: Vec<String>,
    pub(super) log: Arc<AgentLog>,
    /// Checkpoints that `train:` entries write (agents may name them before they exist).
    pub(super) planned: Vec<PathBuf>,
    /// Names of the stages written with `sweep:` (expanded into one stage per point).
    pub(super) sweeps: Vec<String>,
}

impl Resolver<'_> {
    /// Reports a problem at `path`, once: stages resolve the top-level entries they inherit
    /// (`agents:`, `rules:`, the sample size) each for itself, and a problem of such an entry
    /// is the same problem in every stage. A problem inside a value that did not read is the
    /// placeholder's, and is left out too (the value's own problem is reported).
    pub(super) fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.reported += 1;
        let message = message.into();
        if super::repair::covered(&self.repaired, path)
            || self
                .problems
                .iter()
                .any(|p| p.path == path && p.message == message)
        {
            return;
        }
        let pos = self.locations.find(path);
        self.problems.push(Problem {
            path: path.to_string(),
            message,
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
        });
    }

    /// Reports each of `fields` of `p` (a field's name, and whether it is given) that is
    /// given where it does not belong: `why(field)` says why.
    pub(super) fn misplaced(
        &mut self,
        p: &str,
        fields: &[(&str, bool)],
        why: impl Fn(&str) -> String,
    ) {
        for &(field, given) in fields {
            if given {
                self.problem(&at(p, field), why(field));
            }
        }
    }

    /// Whether a value at `path`, or one inside or around it, did not read: checks that
    /// depend on it would only report the placeholder.
    fn unread(&self, path: &str) -> bool {
        self.repaired
            .iter()
            .any(|r| super::repair::within(path, r) || super::repair::within(r, path))
    }

    pub(super) fn scenario(
        &mut self,
        spec: &ScenarioSpec,
        overrides: &Overrides,
    ) -> Option<Scenario> {
        let seed = overrides.seed.unwrap_or(spec.seed);
        if let Some(m) = folder_problem(&spec.name, " (it names the output folder)") {
            self.problem("name", m);
        }
        let staged = spec.stages.is_some();
        // The files that `train:` and `tune:` entries write, noted first: agents resolved after
        // (the stages' seats, opponents, a tuning's confirmation) may name them before they
        // exist, and the run makes each missing one before play.
        let folder = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        self.planned = (spec
            .train
            .iter()
            .flatten()
            .map(|t| folder.join(&t.checkpoint)))
        .chain(spec.tune.iter().flatten().map(|t| folder.join(&t.output)))
        .chain(super::exploit::responder_files(spec).map(|(_, _, file)| folder.join(file)))
        .collect();
        let mut trainings = self.trainings(spec, seed);
        let mut tunings = self.tunings(spec, seed);
        let exploits = self.exploits(
            spec,
            seed,
            &mut super::exploit::Made {
                tunings: &mut tunings,
                trainings: &mut trainings,
            },
        );
        let study = self.study(spec, seed);
        let stages = self.stages(spec, seed, overrides);
        let output = self.output(spec, overrides, &stages);
        if !self.problems.is_empty() {
            return None;
        }
        Some(Scenario {
            name: spec.name.clone(),
            description: spec.description.clone(),
            path: self.path.to_path_buf(),
            seed,
            stages,
            staged,
            output,
            agent_log: self.log.clone(),
            trainings,
            tunings,
            exploits,
            study,
        })
    }

    /// The scenario's stages: those of `stages:`, else one of the top level's fields (none in
    /// a file that only trains or tunes).
    fn stages(&mut self, spec: &ScenarioSpec, seed: u64, overrides: &Overrides) -> Vec<Stage> {
        let train_only = (spec.train.is_some()
            || spec.tune.is_some()
            || spec.exploit.is_some()
            || spec.study.is_some())
            && spec.stages.is_none()
            && spec.agents.is_none();
        match &spec.stages {
            None if train_only => Vec::new(),
            None => {
                let mut stages = Vec::new();
                let seq = spec.sequential.as_ref();
                let sized = seq.map(|q| ("sequential", q.max_deals, q.max_games));
                let (own, defaults) =
                    self.sequential_size("", sized, &spec.table(), &TableSpec::default());
                if let Some(mut s) =
                    self.stage(&spec.name, seed, "", &own, &defaults, &[], overrides)
                {
                    self.sequential_plan("", seq, &mut s);
                    stages.push(s);
                }
                stages
            }
            Some(list) => self.listed_stages(spec, list, seed, overrides),
        }
    }

    /// The stages of `stages:`, each over the top level's fields, a sweep expanded into its
    /// points.
    fn listed_stages(
        &mut self,
        spec: &ScenarioSpec,
        list: &[StageSpec],
        seed: u64,
        overrides: &Overrides,
    ) -> Vec<Stage> {
        let mut stages = Vec::new();
        if list.is_empty() {
            self.problem("stages", "lists no stages");
        }
        if spec.sequential.is_some() {
            self.problem(
                "sequential",
                "with `stages:`, a sequential test belongs in the stage it tests \
                 (`stages.N.sequential`)",
            );
        }
        let mut names: Vec<String> = Vec::new();
        for (i, st) in list.iter().enumerate() {
            let prefix = format!("stages.{i}");
            if names.contains(&st.name) || self.sweeps.contains(&st.name) {
                self.problem(
                    &format!("{prefix}.name"),
                    format!("stage `{}` is defined twice", st.name),
                );
            }
            if let Some(m) = folder_problem(&st.name, "") {
                self.problem(&format!("{prefix}.name"), m);
            }
            // `--seed` replaces the scenario seed and is mixed into stages' own seeds, so
            // that replicate runs differ in every stage.
            let stage_seed = match (st.seed, overrides.seed) {
                (Some(own), Some(cli)) => mix_seed(cli, own),
                (Some(own), None) => own,
                (None, _) => seed,
            };
            if let Some(sweep) = &st.sweep {
                let points = self.sweep_stages(
                    st,
                    sweep,
                    &prefix,
                    stage_seed,
                    &spec.table(),
                    &names,
                    overrides,
                );
                self.sweeps.push(st.name.clone());
                for (name, resolved) in points {
                    names.push(name);
                    stages.extend(resolved);
                }
                continue;
            }
            let seq = st.sequential.as_ref();
            if st.sequential.is_some() && st.decide.is_some() {
                self.problem(
                    &at(&prefix, "decide"),
                    "a stage has either `sequential:` (a test of two named agents) or \
                     `decide:` (a test of its leader against its second), not both",
                );
            }
            let sized = match (seq, &st.decide) {
                (Some(q), _) => Some(("sequential", q.max_deals, q.max_games)),
                (None, Some(d)) => Some(("decide", d.max_deals, d.max_games)),
                (None, None) => None,
            };
            let (own, defaults) = self.sequential_size(&prefix, sized, &st.table(), &spec.table());
            let resolved = self.stage(
                &st.name, stage_seed, &prefix, &own, &defaults, &names, overrides,
            );
            names.push(st.name.clone());
            if let Some(mut s) = resolved {
                self.sequential_plan(&prefix, seq, &mut s);
                if seq.is_none() {
                    self.decide_plan(&prefix, st.decide.as_ref(), &mut s);
                }
                stages.push(s);
            }
        }
        stages
    }

    /// The `output:` section, over the command line's `--out` and `--trace`.
    fn output(&mut self, spec: &ScenarioSpec, overrides: &Overrides, stages: &[Stage]) -> Output {
        let out = spec.output.clone().unwrap_or_default();
        let chunk_rounds = out.chunk_rounds.unwrap_or(16_384);
        if out.decision_sample == Some(0) {
            self.problem(
                "output.decision_sample",
                "must be at least 1 (1 times every deal, 16 one deal in 16)",
            );
        }
        if chunk_rounds == 0 {
            self.problem("output.chunk_rounds", "must be at least 1");
        }
        if out.parquet == Some(false) {
            self.problem(
                "output.parquet",
                "records are always written as the Parquet dataset rounds/ (it is also the \
                 journal that --resume continues); remove this line, and set `csv: true` for a \
                 rounds.csv beside it",
            );
        }
        let trace = self.trace_selection(&out, overrides, stages);
        let dir = overrides
            .out
            .clone()
            .or_else(|| out.dir.as_ref().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("reports").join(&spec.name));
        Output {
            dir,
            csv: out.csv.unwrap_or(false),
            chunk_rounds,
            decision_sample: out
                .decision_timing
                .unwrap_or(true)
                .then(|| out.decision_sample.unwrap_or(DEFAULT_DECISION_SAMPLE)),
            trace,
        }
    }

    /// The deals to trace: `output.trace` and `--trace` together, each played by some stage.
    fn trace_selection(
        &mut self,
        out: &OutputSpec,
        overrides: &Overrides,
        stages: &[Stage],
    ) -> crate::trace::TraceSelection {
        let mut trace = crate::trace::TraceSelection::default();
        if let Some(t) = &out.trace {
            trace.deals = t.deals.clone().unwrap_or_default();
            if t.every == Some(0) {
                self.problem(
                    "output.trace.every",
                    "must be at least 1 (1000 traces deals 0, 1000, 2000...)",
                );
            }
            trace.every = t.every;
        }
        trace.deals.extend(&overrides.trace);
        trace.deals.sort_unstable();
        trace.deals.dedup();
        // A deal no stage plays would trace nothing, silently.
        let largest = stages.iter().map(|s| s.matches).max().unwrap_or(0);
        if let Some(&beyond) = trace.deals.iter().find(|&&d| d >= largest) {
            self.problem(
                "output.trace.deals",
                format!(
                    "deal {beyond} is beyond every stage (the largest plays {largest}, numbered \
                     0 to {})",
                    largest.saturating_sub(1)
                ),
            );
        }
        trace
    }

    /// One stage: its own fields over the scenario's (the defaults).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stage(
        &mut self,
        name: &str,
        seed: u64,
        prefix: &str,
        own: &TableSpec,
        defaults: &TableSpec,
        earlier: &[String],
        overrides: &Overrides,
    ) -> Option<Stage> {
        let before = self.reported;
        let rules = self.stage_rules(prefix, own, defaults);
        let generator = own
            .generator
            .or(defaults.generator)
            .unwrap_or(Generator::Chacha);
        let seating = own.seating.or(defaults.seating).unwrap_or(Seating::Fixed);
        let seats = self.stage_agents(prefix, own, defaults, rules.as_ref(), earlier);
        let (matches, session_len) =
            self.sample_size(prefix, own, defaults, rules.as_ref(), seating, overrides);
        let from = |field: &str, own_has: bool| source(prefix, field, own_has);
        let (generator_at, seating_at) = (
            from("generator", own.generator.is_some()),
            from("seating", own.seating.is_some()),
        );
        if generator == Generator::Python
            && seating == Seating::Random
            && !self.unread(&generator_at)
            && !self.unread(&seating_at)
        {
            self.problem(&seating_at, "the python generator has one stream per session and cannot also draw seatings; use chacha, or fixed/rotate/permute");
        }
        if self.reported > before {
            return None;
        }
        let rules = rules?;
        let spec = serde_json::json!({
            "name": name,
            "seed": seed,
            "generator": generator,
            "seating": seating,
            "matches": matches,
            "session": session_len,
            "rules": RulesSpec::from_variant(rules.variant()),
            "agents": seats.iter().map(|s| match s {
                SeatEntry::Agent(d) => d.spec.clone(),
                SeatEntry::WinnerOf(i) => serde_json::json!({ "winner_of": earlier[*i] }),
            }).collect::<Vec<_>>(),
        });
        Some(Stage {
            name: name.to_string(),
            seed,
            generator,
            rules,
            seats,
            seating,
            matches,
            session: session_len,
            spec,
            sequential: None,
            gain_test: None,
        })
    }

    /// The sample size of a stage with a `sequential:` test: its maximum (`max_deals` or
    /// `max_games`) becomes the stage's own `deals` or `games`, and a sample size the stage
    /// gives itself is refused (one inherited from the top level gives way). Returns the
    /// stage's fields and its defaults as the rest of resolution reads them.
    pub(super) fn sequential_size(
        &mut self,
        prefix: &str,
        sized: Option<(&str, Option<u64>, Option<u64>)>,
        own: &TableSpec,
        defaults: &TableSpec,
    ) -> (TableSpec, TableSpec) {
        let Some((entry, max_deals, max_games)) = sized else {
            return (own.clone(), defaults.clone());
        };
        let at_seq = at(prefix, entry);
        let (mut own, mut defaults) = (own.clone(), defaults.clone());
        self.misplaced(
            prefix,
            &[
                ("deals", own.deals.is_some()),
                ("rounds", own.rounds.is_some()),
                ("games", own.games.is_some()),
            ],
            |field| {
                format!(
                    "a stage with `{entry}:` plays until its test decides, at most \
                     `{entry}.max_deals` deals (coins) or `{entry}.max_games` games \
                     (points); remove `{field}` and give the maximum in `{at_seq}`"
                )
            },
        );
        (own.deals, own.rounds, own.games) = (None, None, None);
        (defaults.deals, defaults.rounds, defaults.games) = (None, None, None);
        if self.unread(&at_seq) {
            return (own, defaults);
        }
        // Which sample size applies: the rules' scoring (unknown if they have problems of
        // their own, which resolution reports).
        let points = merge_rules(defaults.rules.as_ref(), own.rules.as_ref())
            .to_variant()
            .ok()
            .map(|v| matches!(v.scoring, Scoring::Points(_)));
        let (max_at, other_at) = (at(&at_seq, "max_deals"), at(&at_seq, "max_games"));
        match (points, max_deals, max_games) {
            (_, Some(_), Some(_)) => self.problem(
                &other_at,
                "give either `max_deals` (coin scoring) or `max_games` (point scoring), not both",
            ),
            (Some(true), Some(_), None) => self.problem(
                &max_at,
                "these rules score points: give the maximum as `max_games` (each game played \
                 until one player is left)",
            ),
            (Some(false), None, Some(_)) => self.problem(
                &other_at,
                "these rules score coins: give the maximum as `max_deals`",
            ),
            (_, None, None) => self.problem(
                &at_seq,
                format!(
                    "missing: the most {} to play (`{}`); the test stops earlier when it decides",
                    if points == Some(true) {
                        "games"
                    } else {
                        "deals"
                    },
                    if points == Some(true) {
                        "max_games"
                    } else {
                        "max_deals"
                    }
                ),
            ),
            (_, Some(0), _) => self.problem(&max_at, "must be at least 1"),
            (_, _, Some(0)) => self.problem(&other_at, "must be at least 1"),
            (Some(false) | None, Some(d), None) => own.deals = Some(d),
            (Some(true) | None, None, Some(g)) => own.games = Some(g),
        }
        // The maximum had a problem (reported above): the stage is resolved with a stand-in
        // size all the same, so that its agents and its test are checked too and every
        // problem is reported at once, not a second one about a sample size it may not give.
        if own.deals.is_none() && own.games.is_none() {
            if points == Some(true) {
                own.games = Some(1);
            } else {
                own.deals = Some(1);
            }
        }
        (own, defaults)
    }

    /// Checks a stage's `decide:` entry and sets its plan: a test of the leader against the
    /// second, chosen again at every look (added to the stage's resolved description).
    fn decide_plan(
        &mut self,
        prefix: &str,
        decide: Option<&super::spec::DecideSpec>,
        stage: &mut Stage,
    ) {
        let Some(d) = decide else { return };
        let at_d = at(prefix, "decide");
        if self.unread(&at_d) {
            return;
        }
        let before = self.reported;
        let elo = d.elo.unwrap_or(10.0);
        if !(elo.is_finite() && elo > 0.0) {
            self.problem(
                &at(&at_d, "elo"),
                format!("must be a lead above 0 (say 10, in `elo_model`'s scale), not {elo}"),
            );
        }
        let alpha = d.alpha.unwrap_or(0.05);
        if !(alpha > 0.0 && alpha < 0.5) {
            self.problem(
                &at(&at_d, "alpha"),
                format!("must be a probability between 0 and 0.5 (say 0.05), not {alpha}"),
            );
        }
        let Some(every) = self.look_interval(&at_d, d.every, stage, d.max_deals.or(d.max_games))
        else {
            return;
        };
        if self.reported > before {
            return;
        }
        let plan = crate::sequential::Plan {
            candidate: String::new(),
            baseline: String::new(),
            candidate_slot: 0,
            baseline_slot: 1,
            elo0: 0.0,
            elo1: elo,
            elo_model: d.elo_model.unwrap_or_default(),
            overshoot: d.overshoot.unwrap_or(true),
            alpha,
            beta: alpha,
            every,
            decide: true,
        };
        stage.spec["decide"] = serde_json::json!({
            "elo": elo,
            "elo_model": plan.elo_model.name(),
            "alpha": alpha,
            "overshoot": plan.overshoot,
            "every": every * u64::from(stage.session.unwrap_or(1)),
        });
        stage.sequential = Some(plan);
    }

    /// `every` deals (games) of a sequential entry at `at_entry`, checked, in matches.
    pub(super) fn look_interval(
        &mut self,
        at_entry: &str,
        every: Option<u64>,
        stage: &Stage,
        written_max: Option<u64>,
    ) -> Option<u64> {
        let per = u64::from(stage.session.unwrap_or(1));
        // The maximum as written is what `every` is checked against; `--rounds` may lower the
        // stage's maximum below it, and the looks then come at most at that maximum.
        // Without a maximum (reported where it is missing) the stage has a stand-in size:
        // there is nothing to check `every` against.
        let max = written_max?;
        let every = every.unwrap_or(100.min(max).max(per));
        let unit = if stage.is_points() { "games" } else { "deals" };
        if every == 0 || every > max {
            self.problem(
                &at(at_entry, "every"),
                format!("must be between 1 and the maximum ({max} {unit}), not {every}"),
            );
            None
        } else if !every.is_multiple_of(per) {
            self.problem(
                &at(at_entry, "every"),
                format!(
                    "{every} deals do not divide into sessions of {per} rounds; use a \
                     multiple of {per}"
                ),
            );
            None
        } else {
            Some((every / per).min(stage.matches).max(1))
        }
    }

    /// Checks a stage's `sequential:` entry against the resolved stage and sets its plan (the
    /// entry is added to the stage's resolved description, so that it is part of the hash).
    fn sequential_plan(&mut self, prefix: &str, seq: Option<&SequentialSpec>, stage: &mut Stage) {
        let Some(seq) = seq else { return };
        self.sequential_plan_at(&at(prefix, "sequential"), seq, stage);
    }

    /// [`Resolver::sequential_plan`] for a test written at `at_seq` (a tuning's `confirm:`).
    pub(super) fn sequential_plan_at(
        &mut self,
        at_seq: &str,
        seq: &SequentialSpec,
        stage: &mut Stage,
    ) {
        let at_seq = at_seq.to_string();
        if self.unread(&at_seq) {
            return;
        }
        let before = self.reported;
        let ids = stage.agent_ids();
        let named: Vec<&str> = ids.iter().flatten().copied().collect();
        let mut slot = |field: &str, id: &str| -> Option<usize> {
            let found = ids.iter().position(|i| *i == Some(id));
            if found.is_none() {
                let hint = nearest(id, &named)
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                self.problem(
                    &at(&at_seq, field),
                    format!(
                        "`{id}` is not an agent of this stage{hint}; its agents: {}{}",
                        named.join(", "),
                        if named.len() < ids.len() {
                            " (a `winner_of` seat cannot be named: the test needs agents \
                             known before the run)"
                        } else {
                            ""
                        }
                    ),
                );
            }
            found
        };
        let candidate = slot("candidate", &seq.candidate);
        let baseline = slot("baseline", &seq.baseline);
        if candidate.is_some() && candidate == baseline {
            self.problem(
                &at(&at_seq, "baseline"),
                "is the candidate itself: name two different agents of the stage",
            );
        }
        let (elo0, elo1) = (seq.elo0.unwrap_or(0.0), seq.elo1.unwrap_or(10.0));
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            self.problem(
                &at(&at_seq, if seq.elo1.is_some() { "elo1" } else { "elo0" }),
                format!(
                    "the bounds must satisfy elo0 < elo1 (normalized Elo, say elo0: 0, elo1: \
                     10), not {elo0} and {elo1}"
                ),
            );
        }
        let mut probability = |field: &str, v: Option<f64>| {
            let v = v.unwrap_or(0.05);
            if !(v > 0.0 && v < 0.5) {
                self.problem(
                    &at(&at_seq, field),
                    format!("must be a probability between 0 and 0.5 (say 0.05), not {v}"),
                );
            }
            v
        };
        let alpha = probability("alpha", seq.alpha);
        let beta = probability("beta", seq.beta);
        // Deals (coins) or games (points) between looks, in matches.
        let every = self.look_interval(&at_seq, seq.every, stage, seq.max_deals.or(seq.max_games));
        if self.reported > before {
            return;
        }
        let (Some(candidate), Some(baseline), Some(every)) = (candidate, baseline, every) else {
            return;
        };
        let per = u64::from(stage.session.unwrap_or(1));
        let plan = crate::sequential::Plan {
            candidate: seq.candidate.clone(),
            baseline: seq.baseline.clone(),
            candidate_slot: candidate,
            baseline_slot: baseline,
            elo0,
            elo1,
            elo_model: seq.elo_model.unwrap_or_default(),
            overshoot: seq.overshoot.unwrap_or(true),
            alpha,
            beta,
            every,
            decide: false,
        };
        stage.spec["sequential"] = serde_json::json!({
            "candidate": plan.candidate,
            "baseline": plan.baseline,
            "elo0": elo0,
            "elo1": elo1,
            "elo_model": plan.elo_model.name(),
            "overshoot": plan.overshoot,
            "alpha": alpha,
            "beta": beta,
            "every": every * per,
        });
        stage.sequential = Some(plan);
    }

    /// The stage's rules: its `rules:` fields over the scenario's, checked by the engine.
    pub(super) fn stage_rules(
        &mut self,
        prefix: &str,
        own: &TableSpec,
        defaults: &TableSpec,
    ) -> Option<Arc<Rules>> {
        // A `rules:` that did not read (`preset: papr`) gives no rules: checks against
        // the placeholder's would only mislead.
        if self.unread(&at(prefix, "rules")) || (defaults.rules.is_some() && self.unread("rules")) {
            return None;
        }
        // Rules: the stage's fields over the defaults' fields.
        let rules_spec = merge_rules(defaults.rules.as_ref(), own.rules.as_ref());
        let variant = match rules_spec.to_variant() {
            Ok(v) => Some(v),
            Err(list) => {
                for (field, msg) in list {
                    let path = rules_path(prefix, own, defaults, field);
                    self.problem(&path, msg);
                }
                None
            }
        };
        variant.and_then(|v| match Rules::new(v) {
            Ok(r) => Some(Arc::new(r)),
            Err(e) => {
                for p in e.0 {
                    let path = rules_path(prefix, own, defaults, rules_field(p.field));
                    self.problem(&path, p.message);
                }
                None
            }
        })
    }

    /// The stage's seats: each agent entry resolved, ids made unique, one per seat.
    fn stage_agents(
        &mut self,
        prefix: &str,
        own: &TableSpec,
        defaults: &TableSpec,
        rules: Option<&Arc<Rules>>,
        earlier: &[String],
    ) -> Vec<SeatEntry> {
        let at = |field: &str| at(prefix, field);
        let (agent_list, agents_path) = match (&own.agents, &defaults.agents) {
            (Some(a), _) => (a.clone(), at("agents")),
            (None, Some(a)) => (a.clone(), "agents".to_string()),
            (None, None) => {
                if !self.unread(&at("agents")) && !self.unread("agents") {
                    self.problem(&at("agents"), "no agents: list one per seat");
                }
                (Vec::new(), at("agents"))
            }
        };
        let mut seats = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        for (i, a) in agent_list.iter().enumerate() {
            let p = format!("{agents_path}.{i}");
            if let Some(mut entry) = self.agent(a, &p, rules, earlier) {
                let id = match &mut entry {
                    SeatEntry::Agent(d)
                        if a.0.get("id").is_none_or(Value::is_null) && ids.contains(&d.id) =>
                    {
                        // Unnamed agents of the same kind: `random`, `random-2`, `random-3`.
                        let base = d.id.clone();
                        let n = (2..)
                            .find(|n| !ids.contains(&format!("{base}-{n}")))
                            .expect("a free name");
                        d.id = format!("{base}-{n}");
                        d.spec["id"] = Value::from(d.id.clone());
                        d.id.clone()
                    }
                    SeatEntry::Agent(d) => d.id.clone(),
                    SeatEntry::WinnerOf(s) => format!("winner_of:{s}"),
                };
                if ids.contains(&id) {
                    self.problem(
                        &format!("{p}.id"),
                        format!("two agents are named `{id}`; ids in a stage must differ"),
                    );
                }
                ids.push(id);
                seats.push(entry);
            }
        }
        if let Some(r) = rules
            && agent_list.len() != r.players()
            && (own.agents.is_some() || defaults.agents.is_some())
        {
            self.problem(
                &agents_path,
                format!(
                    "{} agents for {} seats: list exactly one agent per seat (rules.players)",
                    agent_list.len(),
                    r.players()
                ),
            );
        }

        seats
    }

    /// The stage's sample size: (sessions or games, rounds per session for coins).
    fn sample_size(
        &mut self,
        prefix: &str,
        own: &TableSpec,
        defaults: &TableSpec,
        rules: Option<&Arc<Rules>>,
        seating: Seating,
        overrides: &Overrides,
    ) -> (u64, Option<u32>) {
        let sizes = ["deals", "rounds", "games", "session"];
        if sizes
            .iter()
            .any(|f| self.unread(&at(prefix, f)) || self.unread(f))
        {
            return (0, None);
        }
        let fields = SampleFields::new(prefix, own, defaults);
        let points = rules.map(|r| matches!(r.variant().scoring, Scoring::Points(_)));
        match points {
            Some(true) => (self.point_sample(&fields, rules, overrides), None),
            Some(false) => {
                // A seating that did not read says nothing of how many arrangements `rounds`
                // covers.
                let seating_unread = self.unread(&at(prefix, "seating")) || self.unread("seating");
                let arrangements = rules
                    .filter(|_| !seating_unread)
                    .map(|r| seating.arrangements(r.players()));
                self.coin_sample(&fields, arrangements, overrides)
            }
            None => {
                // Rules with problems of their own: which sample size applies is unknown, but
                // none may be zero.
                for (field, value) in [
                    ("deals", fields.deals),
                    ("rounds", fields.rounds),
                    ("games", overrides.rounds.or(fields.games)),
                    ("session", fields.session.map(u64::from)),
                ] {
                    if value == Some(0) {
                        self.problem(&fields.at(field), "must be at least 1");
                    }
                }
                (0, None)
            }
        }
    }

    /// The games of a stage whose rules score points: `games` (or `--rounds`), each played
    /// until one player is left.
    fn point_sample(
        &mut self,
        fields: &SampleFields,
        rules: Option<&Arc<Rules>>,
        overrides: &Overrides,
    ) -> u64 {
        let (deals, rounds, games, session) =
            (fields.deals, fields.rounds, fields.games, fields.session);
        if let Some(r) = rules
            && let Scoring::Points(p) = r.variant().scoring
            && p.max_rounds > MAX_ROUNDS_PER_MATCH
        {
            self.problem(
                &rules_path(fields.prefix, fields.own, fields.defaults, "max_rounds"),
                format!("at most {MAX_ROUNDS_PER_MATCH} rounds per game"),
            );
        }
        if deals.is_some() || rounds.is_some() {
            self.problem(&fields.at(if deals.is_some() { "deals" } else { "rounds" }), "these rules score points: give the sample size as `games` (each played until one player is left)");
        }
        if session.is_some() {
            self.problem(
                &fields.at("session"),
                "sessions apply to coin scoring; a point game is its own session",
            );
        }
        match overrides.rounds.or(games) {
            Some(0) => {
                self.problem(&fields.at("games"), "must be at least 1");
                0
            }
            Some(g) => g,
            None => {
                self.problem(&fields.stage_at("games"), "missing: how many games to play");
                0
            }
        }
    }

    /// The sessions of a stage whose rules score coins, and their rounds: `deals` (or
    /// `rounds`, deals times the seating's `arrangements`, or `--rounds`) in sessions of
    /// `session` rounds.
    fn coin_sample(
        &mut self,
        fields: &SampleFields,
        arrangements: Option<u64>,
        overrides: &Overrides,
    ) -> (u64, Option<u32>) {
        let (deals, rounds, games, session) =
            (fields.deals, fields.rounds, fields.games, fields.session);
        let mut matches = 0;
        let mut session_len = None;
        if games.is_some() {
            self.problem(&fields.at("games"), "these rules score coins: give the sample size as `deals` (or `rounds` = deals x seatings)");
        }
        let s = session.unwrap_or(1);
        if s == 0 {
            self.problem(&fields.at("session"), "must be at least 1");
        }
        if s > MAX_ROUNDS_PER_MATCH {
            self.problem(
                &fields.at("session"),
                format!("at most {MAX_ROUNDS_PER_MATCH} rounds per session"),
            );
        }
        let total_deals = match (overrides.rounds.or(deals), rounds) {
            (Some(d), None) => Some(d),
            (Some(_), Some(_)) if overrides.rounds.is_none() => {
                self.problem(
                    &fields.at("rounds"),
                    "give either `deals` or `rounds`, not both",
                );
                None
            }
            (Some(d), Some(_)) => Some(d),
            (None, Some(r)) => match arrangements {
                Some(a) if r % a != 0 => {
                    self.problem(&fields.at("rounds"), format!("{r} rounds cannot be split evenly over {a} seatings; use a multiple of {a}, or give `deals`"));
                    None
                }
                Some(a) => Some(r / a),
                None => None,
            },
            (None, None) => {
                self.problem(
                    &fields.stage_at("deals"),
                    "missing: how many deals to play (`deals`, or `rounds` = deals x seatings)",
                );
                None
            }
        };
        match total_deals {
            Some(0) => self.problem(&fields.at("deals"), "must be at least 1"),
            Some(d) if s > 0 && d % u64::from(s) != 0 => self.problem(
                &fields.at("session"),
                if overrides.rounds.is_some() {
                    format!("--rounds {d} does not divide into sessions of {s} rounds; give --rounds a multiple of {s}")
                } else {
                    format!("{d} deals do not divide into sessions of {s} rounds")
                },
            ),
            Some(d) if s > 0 => {
                matches = d / u64::from(s);
                session_len = Some(s);
            }
            _ => {}
        }
        (matches, session_len)
    }

    /// An agent written where a field takes one (`tune:`'s `agent` and `opponents`, an
    /// exploit's `target`, a study's `agents` and `hints`, a training's opponents): a kind's
    /// name, as `{kind: NAME}`, or a mapping as in `agents:`.
    /// Anything else is a problem at `path`, whose message names what the field takes
    /// besides an agent in `or_else` (`" or false"`, or nothing).
    pub(super) fn written_entry(
        &mut self,
        written: &Value,
        path: &str,
        or_else: &str,
    ) -> Option<serde_json::Map<String, Value>> {
        match written {
            Value::String(kind) => Some(serde_json::Map::from_iter([(
                "kind".to_string(),
                Value::from(kind.clone()),
            )])),
            Value::Object(m) => Some(m.clone()),
            other => {
                self.problem(
                    path,
                    format!("expected an agent (a kind's name, or a mapping as in `agents:`){or_else}, got {other}"),
                );
                None
            }
        }
    }

    pub(super) fn agent(
        &mut self,
        a: &AgentSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
        earlier: &[String],
    ) -> Option<SeatEntry> {
        let map = &a.0;
        if registry::selectors_in(map) == 0 && map.get("winner_of").is_none_or(Value::is_null) {
            self.problem(
                p,
                format!(
                    "give exactly one of {}, or `winner_of` (an earlier stage)",
                    registry::selectors()
                ),
            );
            return None;
        }
        if let Some(stage) = map.get("winner_of").filter(|v| !v.is_null()) {
            if map.iter().any(|(k, v)| k != "winner_of" && !v.is_null()) {
                self.problem(
                    p,
                    "`winner_of` takes no other fields: the winner keeps its own id and parameters",
                );
            }
            let Some(stage) = stage.as_str() else {
                self.problem(
                    &format!("{p}.winner_of"),
                    format!("expected a stage name, got {stage}"),
                );
                return None;
            };
            if let Some(sweep) =
                (self.sweeps.iter()).find(|s| *s == stage || stage.starts_with(&format!("{s}/")))
            {
                self.problem(
                    &format!("{p}.winner_of"),
                    format!("`{sweep}` is a sweep: each of its points is a stage with its own winner, and none is the sweep's; seat an agent, or `winner_of` a stage that is not swept"),
                );
                return None;
            }
            return match earlier.iter().position(|s| s == stage) {
                Some(i) => Some(SeatEntry::WinnerOf(i)),
                None => {
                    let refs: Vec<&str> = earlier.iter().map(String::as_str).collect();
                    let hint = nearest(stage, &refs)
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    self.problem(
                        &format!("{p}.winner_of"),
                        if earlier.is_empty() {
                            "names no earlier stage: `winner_of` can only refer to stages listed before this one".to_string()
                        } else {
                            format!("`{stage}` is not an earlier stage; {hint}earlier stages: {}", refs.join(", "))
                        },
                    );
                    None
                }
            };
        }
        let id = match map.get("id") {
            None | Some(Value::Null) => None,
            // A name shown in tables, terminals and pages: no tab, newline or escape code.
            Some(Value::String(id)) => match control_problem(id) {
                Some(m) => {
                    self.problem(&format!("{p}.id"), m);
                    None
                }
                None => Some(id.clone()),
            },
            Some(other) => {
                self.problem(&format!("{p}.id"), format!("expected a name, got {other}"));
                None
            }
        };
        let mut cx = EntryCx {
            resolver: self,
            rules: rules.cloned(),
        };
        let recipe = registry::resolve_map(&a.0, &mut cx, p)?;
        let id = id.unwrap_or_else(|| recipe.default_id());
        let mut spec = serde_json::Map::new();
        spec.insert("id".into(), Value::from(id.clone()));
        spec.extend(recipe.describe());
        Some(SeatEntry::Agent(AgentDef {
            id,
            kind: recipe.kind(),
            recipe,
            spec: Value::Object(spec),
        }))
    }
}

/// What the agent registry asks of the scenario while an entry is resolved: the scenario's
/// folder for paths, the stage's rules, the problem list (with file positions) and the log.
struct EntryCx<'r, 'a> {
    resolver: &'r mut Resolver<'a>,
    rules: Option<Arc<Rules>>,
}

impl Context for EntryCx<'_, '_> {
    fn rules(&self) -> Option<&Arc<Rules>> {
        self.rules.as_ref()
    }

    fn path(&self, written: &str) -> PathBuf {
        self.resolver
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .join(written)
    }

    fn problem(&mut self, field: &str, message: String) {
        self.resolver.problem(field, message);
    }

    fn log(&self) -> Arc<AgentLog> {
        self.resolver.log.clone()
    }

    fn planned(&self, path: &Path) -> bool {
        self.resolver.planned.iter().any(|p| p == path)
    }
}
/// Field names of [`dhumbal_game::rules::Variant`] errors, as spelled in `rules:`.
fn rules_field(engine_field: &str) -> &str {
    match engine_field {
        "deck.jokers" => "jokers",
        "deck.joker_value" => "joker_value",
        "deck.ranks" => "ranks",
        "deck.suits" => "suits",
        "discards.min_run" => "min_run",
        "call.threshold" => "threshold",
        "scoring.limit" => "elimination_limit",
        "scoring.max_rounds" => "max_rounds",
        "scoring.cap" => "cap",
        other => other,
    }
}

fn merge_rules(defaults: Option<&RulesSpec>, own: Option<&RulesSpec>) -> RulesSpec {
    let mut base = serde_json::to_value(defaults.cloned().unwrap_or_default()).expect("JSON");
    if let (Some(obj), Ok(Value::Object(over))) = (
        base.as_object_mut(),
        serde_json::to_value(own.cloned().unwrap_or_default()),
    ) {
        // `threshold` and `threshold_by_players` replace each other.
        for (set, drop) in [
            ("threshold", "threshold_by_players"),
            ("threshold_by_players", "threshold"),
        ] {
            if over.contains_key(set) {
                obj.remove(drop);
            }
        }
        for (k, v) in over {
            obj.insert(k, v);
        }
    }
    serde_json::from_value(base).expect("a merge of two valid specs is valid")
}

/// A stage seed under a command-line seed (SplitMix64 of their combination).
fn mix_seed(cli: u64, own: u64) -> u64 {
    dhumbal_game::hash::splitmix64_mix(
        cli ^ own.rotate_left(32) ^ dhumbal_game::hash::SPLITMIX64_GAMMA,
    )
}

/// Where a stage's `field` is written: the stage (`stages.1.deals`) when it gives the field
/// itself (`own_has`), else the top level, which it inherits.
fn source(prefix: &str, field: &str, own_has: bool) -> String {
    if own_has {
        at(prefix, field)
    } else {
        field.to_string()
    }
}

/// Whether a stage (or the top level) gives a sample-size field.
fn gives_size(table: &TableSpec, field: &str) -> bool {
    match field {
        "deals" => table.deals.is_some(),
        "rounds" => table.rounds.is_some(),
        "games" => table.games.is_some(),
        "session" => table.session.is_some(),
        _ => false,
    }
}

/// A stage's sample-size fields as it reads them (its own over the top level's), and where a
/// problem with each goes.
struct SampleFields<'s> {
    prefix: &'s str,
    own: &'s TableSpec,
    defaults: &'s TableSpec,
    deals: Option<u64>,
    rounds: Option<u64>,
    games: Option<u64>,
    session: Option<u32>,
}

impl<'s> SampleFields<'s> {
    fn new(prefix: &'s str, own: &'s TableSpec, defaults: &'s TableSpec) -> Self {
        SampleFields {
            prefix,
            own,
            defaults,
            deals: own.deals.or(defaults.deals),
            rounds: own.rounds.or(defaults.rounds),
            games: own.games.or(defaults.games),
            session: own.session.or(defaults.session),
        }
    }

    /// Each problem goes where its value is written: the stage, or the top level it inherits.
    fn at(&self, field: &str) -> String {
        let on_stage = gives_size(self.own, field) || !gives_size(self.defaults, field);
        source(self.prefix, field, on_stage)
    }

    /// A missing value is the stage's.
    fn stage_at(&self, field: &str) -> String {
        at(self.prefix, field)
    }
}

/// Where a problem with rule `field` of a stage goes: the `rules:` that sets the field (the
/// stage's, or the top level's that it inherits); for a field set by neither (the preset's),
/// the top level's `rules:` when the stage only inherits it, else the stage's.
fn rules_path(prefix: &str, own: &TableSpec, defaults: &TableSpec, field: &str) -> String {
    let sets = |r: Option<&RulesSpec>| {
        r.is_some_and(|r| {
            serde_json::to_value(r)
                .ok()
                .is_some_and(|v| v.get(field).is_some())
        })
    };
    let top = if sets(own.rules.as_ref()) {
        false
    } else {
        sets(defaults.rules.as_ref()) || (own.rules.is_none() && defaults.rules.is_some())
    };
    at(if top { "" } else { prefix }, &format!("rules.{field}"))
}

/// The problem with a name that is shown in tables, terminals and pages, if it holds a control
/// character (a tab, a newline, an escape code), which a terminal would obey.
pub(super) fn control_problem(name: &str) -> Option<String> {
    name.chars().any(char::is_control).then(|| {
        format!(
            "expected a name without control characters (tabs, newlines, escape codes: it is \
             shown in tables, terminals and pages), got \"{}\"",
            dhumbal_agents::escape_controls(name)
        )
    })
}

/// The problem with a name that also names a folder (the scenario's, a stage's, a training's
/// or a tuning's), if any: empty, a slash (`why` says what the folder is), a control character.
pub(super) fn folder_problem(name: &str, why: &str) -> Option<String> {
    if name.trim().is_empty() || name.contains(['/', '\\']) {
        Some(format!("needs a non-empty name without slashes{why}"))
    } else {
        control_problem(name)
    }
}
