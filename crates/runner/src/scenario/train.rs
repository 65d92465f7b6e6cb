//! `train:` entries (docs/learning.md, docs/tabular.md): a network (DQN, Double DQN, PPO) or
//! a tabular policy, the rules it learns under, its opponents, reward, evaluation and
//! checkpoint, each checked with its place in the file. The checkpoints are planned before any
//! agent is resolved, so that the stages' seats, and opponents that are other trainings'
//! checkpoints, may name them before they exist.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use dhumbal_agents::neural::{Algorithm, Encoding};
use dhumbal_agents::registry::join as at;
use dhumbal_game::rules::Rules;
use dhumbal_learn::tabular::{Method, TabularEvaluation, TabularPlan, TabularReward};
use dhumbal_learn::{DeviceChoice, Evaluation, Hyper, Opponent, Reward, TrainPlan, TrainSeating};

use super::resolve::Resolver;
use super::spec::{AgentSpec, EvaluateSpec, ScenarioSpec, TableSpec, TrainSpec};
use super::{Plan, RulesSpec, SeatEntry, Training};

/// An agent as a training meets it: its id and its recipe.
type Named = (String, Arc<dyn dhumbal_agents::Recipe>);

impl Resolver<'_> {
    /// The `train:` entries. Their checkpoints are noted first, so that agents resolved after
    /// (the stages' seats, and opponents that are other trainings' checkpoints) may name them
    /// before they exist.
    pub(super) fn trainings(&mut self, spec: &ScenarioSpec, seed: u64) -> Vec<Training> {
        let Some(list) = &spec.train else {
            return Vec::new();
        };
        let folder = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut out = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        for (i, t) in list.iter().enumerate() {
            let p = format!("train.{i}");
            if ids.contains(&t.id.as_str()) {
                self.problem(
                    &format!("{p}.id"),
                    format!("two trainings are named `{}`", t.id),
                );
            }
            ids.push(&t.id);
            if let Some(training) = self.training(spec, t, &p, seed, &folder) {
                out.push(training);
            }
        }
        out
    }

    /// A training's evaluation opponents (default [random]); also checks `every`.
    fn evaluation_against(
        &mut self,
        ev: &EvaluateSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
    ) -> Vec<Named> {
        let mut against = Vec::new();
        let given = ev
            .against
            .clone()
            .unwrap_or_else(|| vec![Value::from("random")]);
        for (j, a) in given.iter().enumerate() {
            if let Some(x) = self.short_agent(a, &format!("{p}.evaluate.against.{j}"), rules) {
                against.push(x);
            }
        }
        if ev.every == Some(0) {
            self.problem(&format!("{p}.evaluate.every"), "must be at least 1");
        }
        against
    }

    /// An agent given as a kind's name or as an entry (a mapping as in `agents:`).
    fn short_agent(&mut self, value: &Value, p: &str, rules: Option<&Arc<Rules>>) -> Option<Named> {
        let entry = AgentSpec(self.written_entry(value, p, "")?);
        match self.agent(&entry, p, rules, &[])? {
            SeatEntry::Agent(d) => Some((d.id, d.recipe)),
            SeatEntry::WinnerOf(_) => None,
        }
    }

    /// A `train:` entry: a network's or, for a tabular method, a tabular policy's. An entry
    /// with any problem (its id's too) is not trained.
    pub(super) fn training(
        &mut self,
        spec: &ScenarioSpec,
        t: &TrainSpec,
        p: &str,
        seed: u64,
        folder: &Path,
    ) -> Option<Training> {
        let before = self.reported;
        if let Some(m) = super::resolve::folder_problem(&t.id, " (it names the records folder)") {
            self.problem(&at(p, "id"), m);
        }
        let training = if Method::NAMES.contains(&t.algorithm.as_str()) {
            self.tabular_training(spec, t, p, seed, folder)
        } else {
            self.network_training(spec, t, p, seed, folder)
        };
        training.filter(|_| self.reported == before)
    }

    /// A network's `train:` entry (`dqn`, `ddqn` or `ppo`; docs/learning.md).
    fn network_training(
        &mut self,
        spec: &ScenarioSpec,
        t: &TrainSpec,
        p: &str,
        seed: u64,
        folder: &Path,
    ) -> Option<Training> {
        let before = self.reported;
        let (algorithm, encoding, hidden, preset, hyper) = self.network(t, p);
        if t.episodes == 0 {
            self.problem(&at(p, "episodes"), "must be at least 1");
        }
        let table = TableSpec {
            rules: t.rules.clone(),
            ..TableSpec::default()
        };
        let rules = self.stage_rules(p, &table, &spec.table());
        let players = rules.as_ref().map_or(2, |r| r.players());
        let seating = self.train_seating(t, p, players);
        let reward_name = t.reward.clone().unwrap_or_else(|| "score".into());
        let reward = Reward::from_name(&reward_name);
        if reward.is_none() {
            self.problem(
                &at(p, "reward"),
                format!(
                    "expected one of {}, got `{reward_name}`",
                    Reward::NAMES.join(", ")
                ),
            );
        }
        let (given, opponents) = self.network_opponents(t, p, rules.as_ref());
        let teacher = self.network_teacher(t, p, algorithm, encoding, rules.as_ref());
        let train_seed = t.seed.unwrap_or(seed);
        let evaluation = self.network_evaluation(t, p, rules.as_ref(), train_seed);
        let device_name = t.device.clone().unwrap_or_else(|| "auto".into());
        let device = DeviceChoice::from_name(&device_name);
        if device.is_none() {
            self.problem(
                &at(p, "device"),
                format!("expected one of auto, cpu, cuda, got `{device_name}`"),
            );
        }
        self.network_checkpoint(t, p, folder);
        let init = self.network_init(t, p, folder);
        if self.reported > before {
            return None;
        }
        let (algorithm, encoding, hyper, rules, device, reward) =
            (algorithm?, encoding?, hyper?, rules?, device?, reward?);
        let resolved = serde_json::json!({
            "id": t.id,
            "algorithm": algorithm.name(),
            "encoding": encoding.name(),
            "hidden": hidden,
            "preset": preset,
            "hyper": hyper.to_json(),
            "rules": RulesSpec::from_variant(rules.variant()),
            "episodes": t.episodes,
            "opponents": given,
            "seating": match seating { TrainSeating::Random => Value::from("random"), TrainSeating::Fixed(s) => Value::from(s) },
            "reward": reward.name(),
            "seed": train_seed,
            "evaluate": {
                "every": evaluation.every,
                "deals": evaluation.deals,
                "against": described(&evaluation.against),
                "seed": evaluation.seed,
            },
            "checkpoint": t.checkpoint,
        });
        let mut resolved = resolved;
        if let Some(given) = &t.teacher {
            // Whom the network imitates: part of what it learns from, so of the hash.
            resolved["teacher"] = given.clone();
        }
        if let Some((file, digest)) = &init {
            // The file's content is what the network starts from: part of the hash.
            resolved["init"] = serde_json::json!({"file": file, "fnv1a": digest});
        }
        // The hash covers what the network learns from: not the episode count (training
        // further resumes the same run) nor the evaluation (it never touches training).
        let hash = learned_hash(&resolved, &["episodes", "evaluate"]);
        let mut spec_out = resolved;
        spec_out["device"] = Value::from(device_name);
        Some(Training {
            plan: Plan::Neural(TrainPlan {
                id: t.id.clone(),
                algorithm,
                encoding,
                hidden,
                rules,
                episodes: t.episodes,
                opponents,
                teacher,
                seating,
                reward,
                seed: train_seed,
                hyper,
                evaluation: Some(evaluation),
                checkpoint: folder.join(&t.checkpoint),
                init: init.map(|(file, _)| folder.join(file)),
                device,
                scenario_hash: hash,
                program: crate::dataset::PROGRAM.to_string(),
            }),
            spec: spec_out,
        })
    }

    /// The network a `train:` entry learns: its algorithm, its encoding, the widths of its
    /// hidden layers, and its hyperparameters (the preset's name, and the preset with the
    /// entry's `hyper:` over it). `None` where the entry has a problem.
    fn network(
        &mut self,
        t: &TrainSpec,
        p: &str,
    ) -> (
        Option<Algorithm>,
        Option<Encoding>,
        Vec<usize>,
        String,
        Option<Hyper>,
    ) {
        let algorithm = Algorithm::from_name(&t.algorithm);
        if algorithm.is_none() {
            self.problem(
                &at(p, "algorithm"),
                format!(
                    "expected one of dqn, ddqn, ppo, imitate (networks), q-learning, value-iteration (tabular), got `{}`",
                    t.algorithm
                ),
            );
        }
        let encoding_name = t.encoding.clone().unwrap_or_else(|| "cards".into());
        let encoding = Encoding::from_name(&encoding_name);
        if encoding.is_none() {
            self.problem(
                &at(p, "encoding"),
                format!("expected one of cards, paper, got `{encoding_name}`"),
            );
        }
        let hidden: Vec<usize> = t
            .hidden
            .clone()
            .unwrap_or_else(|| vec![128, 64])
            .into_iter()
            .map(|h| h as usize)
            .collect();
        if hidden.is_empty() || hidden.iter().any(|&h| h == 0 || h > 4096) {
            self.problem(
                &at(p, "hidden"),
                "list one width per hidden layer, each 1 to 4096 (default [128, 64])",
            );
        }
        let preset = t.preset.clone().unwrap_or_else(|| "default".into());
        let mut hyper = algorithm.and_then(|a| Hyper::preset(&preset, a));
        if algorithm.is_some() && hyper.is_none() {
            self.problem(
                &at(p, "preset"),
                format!(
                    "expected one of {}, got `{preset}`",
                    dhumbal_learn::hyper::PRESETS.join(", ")
                ),
            );
        }
        if let (Some(h), Some(given)) = (hyper.as_mut(), &t.hyper) {
            for (name, value) in given {
                if let Err(e) = h.set(name, value) {
                    self.problem(&format!("{p}.hyper.{name}"), e.to_string());
                }
            }
        }
        (algorithm, encoding, hidden, preset, hyper)
    }

    /// The learner's seat: `random` (default: drawn per episode) or a seat number.
    fn train_seating(&mut self, t: &TrainSpec, p: &str, players: usize) -> TrainSeating {
        match &t.seating {
            None => TrainSeating::Random,
            Some(Value::String(s)) if s == "random" => TrainSeating::Random,
            Some(v) => match v.as_u64() {
                Some(s) if (s as usize) < players => TrainSeating::Fixed(s as usize),
                _ => {
                    self.problem(
                        &at(p, "seating"),
                        format!(
                            "expected `random` or a seat number 0 to {}, got {v}",
                            players - 1
                        ),
                    );
                    TrainSeating::Random
                }
            },
        }
    }

    /// A network's opponents as written (default [random]) and as resolved: agent entries, or
    /// `self` for self-play.
    fn network_opponents(
        &mut self,
        t: &TrainSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
    ) -> (Vec<Value>, Vec<Opponent>) {
        self.listed_opponents(
            t,
            p,
            "lists no opponents: give agent entries, or `self` for self-play",
            |r, op, o| {
                if o.as_str() == Some("self") {
                    Some(Opponent::SelfPlay)
                } else {
                    let (id, recipe) = r.short_agent(o, op, rules)?;
                    Some(Opponent::Agent(id, recipe))
                }
            },
        )
    }

    /// `imitate`'s teacher: required there (an agent entry, with a `cards` network), refused
    /// for every other algorithm.
    fn network_teacher(
        &mut self,
        t: &TrainSpec,
        p: &str,
        algorithm: Option<Algorithm>,
        encoding: Option<Encoding>,
        rules: Option<&Arc<Rules>>,
    ) -> Option<Named> {
        let imitate = algorithm == Some(Algorithm::Imitate);
        match &t.teacher {
            None if imitate => {
                self.problem(
                    &at(p, "teacher"),
                    "missing: `imitate` learns to choose as a teacher agent does; give its agent \
                     entry (`teacher: {kind: ismcts, params: {iterations: 1000}}`, a tuned file, a script)",
                );
                None
            }
            None => None,
            Some(_) if algorithm.is_some() && !imitate => {
                self.problem(
                    &at(p, "teacher"),
                    format!(
                        "only `algorithm: imitate` learns from a teacher; `{}` learns from its \
                         rewards (remove `teacher:`)",
                        t.algorithm
                    ),
                );
                None
            }
            Some(_) if imitate && encoding == Some(Encoding::Paper) => {
                self.problem(
                    &at(p, "encoding"),
                    "`imitate` scores every legal action from its cards: use `encoding: cards` \
                     (the default)",
                );
                None
            }
            Some(value) => self.short_agent(value, &at(p, "teacher"), rules),
        }
    }

    /// A training's opponents as written (default [random]) and as resolved, each by `one`
    /// (with its path; `None` where it is not one, said as a problem); `none` says what to
    /// write where the list is empty.
    fn listed_opponents<T>(
        &mut self,
        t: &TrainSpec,
        p: &str,
        none: &str,
        mut one: impl FnMut(&mut Self, &str, &Value) -> Option<T>,
    ) -> (Vec<Value>, Vec<T>) {
        let given = t
            .opponents
            .clone()
            .unwrap_or_else(|| vec![Value::from("random")]);
        if given.is_empty() {
            self.problem(&at(p, "opponents"), none);
        }
        let opponents = (given.iter().enumerate())
            .filter_map(|(j, o)| one(self, &format!("{p}.opponents.{j}"), o))
            .collect();
        (given, opponents)
    }

    /// A network's evaluation during training: every episodes/20, on 200 deals, against
    /// [random], with the seed after the training's, unless the entry says otherwise.
    fn network_evaluation(
        &mut self,
        t: &TrainSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
        train_seed: u64,
    ) -> Evaluation {
        let ev = t.evaluate.clone().unwrap_or_default();
        let against = self.evaluation_against(&ev, p, rules);
        if ev.deals == Some(0) {
            self.problem(&format!("{p}.evaluate.deals"), "must be at least 1");
        }
        let (every, seed) = every_and_seed(t, &ev, train_seed);
        Evaluation {
            every,
            deals: ev.deals.unwrap_or(200),
            against,
            seed,
        }
    }

    /// Checks a network's checkpoint: a path is given, and the file exists already or a
    /// trainer is there to make it.
    fn network_checkpoint(&mut self, t: &TrainSpec, p: &str, folder: &Path) {
        if t.checkpoint.trim().is_empty() {
            self.problem(
                &at(p, "checkpoint"),
                "needs a file path (.safetensors), relative to the scenario file",
            );
        } else if !folder.join(&t.checkpoint).exists() && !crate::trainer::can_train() {
            // Running this file would have to train first, and there is no trainer.
            self.problem(
                &at(p, "checkpoint"),
                format!(
                    "{} is not trained yet; {}",
                    t.checkpoint,
                    dhumbal_learn::TrainError::NoTorch
                ),
            );
        }
    }

    /// A tabular `train:` entry (`q-learning` or `value-iteration`; docs/tabular.md).
    fn tabular_training(
        &mut self,
        spec: &ScenarioSpec,
        t: &TrainSpec,
        p: &str,
        seed: u64,
        folder: &Path,
    ) -> Option<Training> {
        let before = self.reported;
        self.network_fields(t, p);
        if t.episodes == 0 {
            self.problem(&at(p, "episodes"), "must be at least 1");
        }
        let mut method = Method::default_for(&t.algorithm, t.episodes);
        if let (Some(m), Some(given)) = (method.as_mut(), &t.hyper) {
            for (name, value) in given {
                if let Err(e) = m.set(name, value) {
                    self.problem(&format!("{p}.hyper.{name}"), e.to_string());
                }
            }
        }
        let table = TableSpec {
            rules: t.rules.clone(),
            ..TableSpec::default()
        };
        let rules = self.stage_rules(p, &table, &spec.table());
        if let Some(r) = &rules
            && let Err(e) = dhumbal_agents::tabular::check_rules(r)
        {
            self.problem(&at(p, "rules"), e.to_string());
        }
        let reward_name = t.reward.clone().unwrap_or_else(|| "win".into());
        let reward = match reward_name.as_str() {
            "win" => Some(TabularReward::Win),
            "points" => Some(TabularReward::Points),
            _ => {
                self.problem(
                    &at(p, "reward"),
                    format!(
                        "expected win (1 for winning the game) or points (also minus each round's points), got `{reward_name}`"
                    ),
                );
                None
            }
        };
        let (given, opponents) = self.tabular_opponents(t, p, rules.as_ref());
        let train_seed = t.seed.unwrap_or(seed);
        let evaluation = self.tabular_evaluation(t, p, rules.as_ref(), train_seed);
        if !t.checkpoint.ends_with(".csv") {
            self.problem(
                &at(p, "checkpoint"),
                "a tabular policy is a CSV table: give a path ending in .csv, relative to the scenario file",
            );
        }
        if self.reported > before {
            return None;
        }
        let (method, rules, reward) = (method?, rules?, reward?);
        let resolved = serde_json::json!({
            "id": t.id,
            "algorithm": method.name(),
            "hyper": method.to_json(),
            "rules": RulesSpec::from_variant(rules.variant()),
            "episodes": t.episodes,
            "opponents": given,
            "reward": reward_name,
            "seed": train_seed,
            "evaluate": {
                "every": evaluation.every,
                "games": evaluation.games,
                "against": described(&evaluation.against),
                "seed": evaluation.seed,
            },
            "checkpoint": t.checkpoint,
        });
        // The evaluation never touches learning: it stays out of the hash. (A table is
        // learned afresh, never resumed: the episode count is in.)
        let hash = learned_hash(&resolved, &["evaluate"]);
        Some(Training {
            plan: Plan::Tabular(TabularPlan {
                id: t.id.clone(),
                method,
                rules,
                episodes: t.episodes,
                opponents,
                reward,
                seed: train_seed,
                evaluation: Some(evaluation),
                policy: folder.join(&t.checkpoint),
                scenario_hash: hash,
                program: crate::dataset::PROGRAM.to_string(),
            }),
            spec: resolved,
        })
    }

    /// A network's `init:` (a checkpoint to start from), checked: a file that exists, not the
    /// entry's own checkpoint; with the 64-bit FNV-1a of its bytes, in hex.
    fn network_init(&mut self, t: &TrainSpec, p: &str, folder: &Path) -> Option<(String, String)> {
        let file = t.init.as_ref()?;
        let path = folder.join(file);
        if *file == t.checkpoint {
            self.problem(
                &at(p, "init"),
                "is the entry's own checkpoint: to train it further, raise `episodes` (the run resumes); to start afresh from a copy, name the copy",
            );
            return None;
        }
        match std::fs::read(&path) {
            Ok(bytes) => Some((
                file.clone(),
                format!("{:016x}", dhumbal_game::hash::fnv1a(&bytes)),
            )),
            Err(e) => {
                self.problem(
                    &at(p, "init"),
                    format!(
                        "cannot read {} ({e}): expected a checkpoint (.safetensors) of the same algorithm, encoding and widths, relative to the scenario file",
                        path.display()
                    ),
                );
                None
            }
        }
    }

    /// Reports each field of a network's entry that a tabular entry gives.
    fn network_fields(&mut self, t: &TrainSpec, p: &str) {
        self.misplaced(
            p,
            &[
                ("encoding", t.encoding.is_some()),
                ("hidden", t.hidden.is_some()),
                ("preset", t.preset.is_some()),
                ("device", t.device.is_some()),
                ("seating", t.seating.is_some()),
                ("init", t.init.is_some()),
                ("teacher", t.teacher.is_some()),
            ],
            |_| {
                format!(
                    "is for networks (dqn, ddqn, ppo, imitate); `{}` learns a table over the tabular plan's 1,600 states, with the learner's seat drawn per game",
                    t.algorithm
                )
            },
        );
    }

    /// A tabular learner's opponents as written (default [random]) and as resolved: agent
    /// entries only (no self-play).
    fn tabular_opponents(
        &mut self,
        t: &TrainSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
    ) -> (Vec<Value>, Vec<Named>) {
        self.listed_opponents(
            t,
            p,
            "lists no opponents: give agent entries",
            |r, op, o| {
                if o.as_str() == Some("self") {
                    r.problem(
                        op,
                        "self-play is for networks; a tabular learner plays the agents listed",
                    );
                    None
                } else {
                    r.short_agent(o, op, rules)
                }
            },
        )
    }

    /// A tabular learner's evaluation during training, on whole games: every episodes/20, on
    /// 200 games, against [random], with the seed after the training's, unless the entry says
    /// otherwise.
    fn tabular_evaluation(
        &mut self,
        t: &TrainSpec,
        p: &str,
        rules: Option<&Arc<Rules>>,
        train_seed: u64,
    ) -> TabularEvaluation {
        let ev = t.evaluate.clone().unwrap_or_default();
        if ev.deals.is_some() {
            self.problem(
                &format!("{p}.evaluate.deals"),
                "a tabular learner is evaluated on whole games: write `games:`",
            );
        }
        let against = self.evaluation_against(&ev, p, rules);
        if ev.games == Some(0) {
            self.problem(&format!("{p}.evaluate.games"), "must be at least 1");
        }
        let (every, seed) = every_and_seed(t, &ev, train_seed);
        TabularEvaluation {
            every,
            games: ev.games.unwrap_or(200),
            against,
            seed,
        }
    }
}

/// How often an evaluation during training is played (default: every episodes/20) and its seed
/// (default: the one after the training's).
fn every_and_seed(t: &TrainSpec, ev: &EvaluateSpec, train_seed: u64) -> (u64, u64) {
    let every = ev.every.unwrap_or((t.episodes / 20).max(1));
    (every, ev.seed.unwrap_or(train_seed.wrapping_add(1)))
}

/// Agents as the manifest describes them: each one's id, then its resolved entry.
fn described(agents: &[Named]) -> Vec<Value> {
    agents
        .iter()
        .map(|(id, r)| {
            let mut m = serde_json::Map::new();
            m.insert("id".into(), Value::from(id.clone()));
            m.extend(r.describe());
            Value::Object(m)
        })
        .collect()
}

/// The hash of a resolved training entry without the keys that do not change what it learns.
fn learned_hash(resolved: &Value, leave_out: &[&str]) -> String {
    let mut learned = resolved.clone();
    if let Some(m) = learned.as_object_mut() {
        for k in leave_out {
            m.remove(*k);
        }
    }
    format!(
        "{:016x}",
        dhumbal_game::hash::fnv1a(serde_json::to_string(&learned).expect("JSON").as_bytes())
    )
}
