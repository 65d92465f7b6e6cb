//! The scenario file as written: the serde types (also the source of the JSON Schema). Nothing
//! outside `scenario` sees them: [`super::resolve`] turns them into the checked model.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use dhumbal_agents::registry;

use super::{Generator, RulesSpec, Seating};

/// Declares a spec struct with the fields every tournament shares (rules, agents, seating,
/// sample size) plus its own; `table()` extracts the shared part. (Not `#[serde(flatten)]`,
/// which would hide unknown keys from the validator.)
macro_rules! with_table_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// `chacha` (default: a stream per deal and per agent) or `python` (CPython's
            /// MT19937, one shared stream per session, to reproduce the paper's run).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub generator: Option<Generator>,
            /// Coin scoring: the number of deals; every deal is played once per seating.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub deals: Option<u64>,
            /// Coin scoring: the number of rounds in all (deals x seatings), instead of `deals`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rounds: Option<u64>,
            /// Point scoring: the number of games (each played until one player is left).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub games: Option<u64>,
            /// Coin scoring: rounds per session; coins carry over within a session (the paper
            /// played one session of 1024 rounds). Default 1: every deal starts afresh.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub session: Option<u32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rules: Option<RulesSpec>,
            /// The players, in seat order (before seating rotations).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub agents: Option<Vec<AgentSpec>>,
            /// `fixed`, `rotate` (each deal once per rotation), `permute` (each deal under every
            /// seat permutation) or `random` (a fresh seating per deal).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub seating: Option<Seating>,
        }

        impl $name {
            pub fn table(&self) -> TableSpec {
                TableSpec {
                    generator: self.generator,
                    deals: self.deals,
                    rounds: self.rounds,
                    games: self.games,
                    session: self.session,
                    rules: self.rules.clone(),
                    agents: self.agents.clone(),
                    seating: self.seating,
                }
            }
        }
    };
}

with_table_fields! {
    /// A scenario file as written.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields, title = "dhumbal-run scenario")]
    pub struct ScenarioSpec {
        /// Names the run and its output folder (`reports/<name>/`).
        pub name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// Master seed: every deal's and every agent's random stream derives from it.
        pub seed: u64,
        /// Several tournaments in one file, run in order; the fields above are their defaults.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stages: Option<Vec<StageSpec>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub output: Option<OutputSpec>,
        /// A sequential test of two of the agents (docs/scenarios.md): play until it decides.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sequential: Option<SequentialSpec>,
        /// Learning agents this scenario trains (docs/learning.md): `dhumbal-run train FILE`
        /// runs them; a tournament seating one of their checkpoints trains it first when it is
        /// missing. A file with `train:` and no `agents:` or `stages:` only trains.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub train: Option<Vec<TrainSpec>>,
        /// Agents this scenario tunes (docs/tuning.md): `dhumbal-run tune FILE` searches
        /// their parameters and writes the best as an agent file that a seat names with
        /// `tuned: FILE`; a tournament seating one that is missing tunes it first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tune: Option<Vec<TuneSpec>>,
        /// How beatable agents are (docs/exploitability.md): `dhumbal-run exploit FILE` sets
        /// best responders on each target at its own table and measures what they gain over
        /// the target's self-play on fresh duplicate deals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub exploit: Option<Vec<ExploitSpec>>,
        /// A study with people (docs/studies.md): `dhumbal-run serve FILE` seats each
        /// participant at a web table against these agents, in a counterbalanced order.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub study: Option<StudySpec>,
    }
}

with_table_fields! {
    /// One stage of a multi-stage scenario.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct StageSpec {
        /// Names the stage and its output subfolder.
        pub name: String,
        /// Overrides the scenario seed for this stage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub seed: Option<u64>,
        /// Play the stage at every point of a sweep of rule fields and agent parameters, each
        /// point a stage of its own on the same deals (docs/scenarios.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sweep: Option<super::sweep::SweepSpec>,
        /// A sequential test of two of the stage's agents (docs/scenarios.md): the stage plays
        /// until it decides, at most `max_deals` (`max_games`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sequential: Option<SequentialSpec>,
        /// Play until the stage's leader is resolved from the second (docs/scenarios.md), at
        /// most `max_deals` (`max_games`): for stages whose winner advances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub decide: Option<DecideSpec>,
    }
}

/// Deciding a stage's winner: after every `every` deals (games), a sequential test of the
/// current leader against the current second (by the `winner_of` rule); the stage stops when it
/// resolves them (or finds them within `elo` of each other), or at the maximum.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DecideSpec {
    /// The lead to resolve (default 10, in `elo_model`'s scale): H1 the leader is this much
    /// stronger than every other agent, H0 it is not resolved from its closest rival.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo: Option<f64>,
    /// The scale of `elo`: `normalized` (normalized Elo, the default) or `logistic` (Elo per
    /// game), fishtest's names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo_model: Option<crate::sequential::EloModel>,
    /// The test's error rates, both ways (default 0.05; between 0 and 0.5): at most `alpha`
    /// of the stages whose leader is not `elo` stronger than every other agent are decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Whether the bounds are corrected for the overshoot between looks (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overshoot: Option<bool>,
    /// Coin scoring: the most deals to play (the stage's size; replaces `deals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deals: Option<u64>,
    /// Point scoring: the most games to play (the stage's size; replaces `games`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_games: Option<u64>,
    /// Deals (games) between looks (default 100, or the maximum if smaller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
}

/// A sequential test (a GSPRT in normalized Elo, as fishtest runs): the stage plays its deals
/// (games) in order, looks every `every` of them, and stops when the test decides.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SequentialSpec {
    /// The id of the agent under test (one of the stage's agents).
    pub candidate: String,
    /// The id of the agent it is tested against (another of the stage's agents).
    pub baseline: String,
    /// H0: the candidate is this much stronger (default 0), in `elo_model`'s scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo0: Option<f64>,
    /// H1: the candidate is this much stronger (default 10; above elo0), in `elo_model`'s
    /// scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo1: Option<f64>,
    /// The scale of `elo0` and `elo1`: `normalized` (normalized Elo, the default) or
    /// `logistic` (Elo per game), fishtest's names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo_model: Option<crate::sequential::EloModel>,
    /// Whether the bounds are corrected for the overshoot between looks (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overshoot: Option<bool>,
    /// Probability of accepting H1 when H0 holds (default 0.05; between 0 and 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Probability of accepting H0 when H1 holds (default 0.05; between 0 and 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Coin scoring: the most deals to play (the stage's size; replaces `deals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deals: Option<u64>,
    /// Point scoring: the most games to play (the stage's size; replaces `games`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_games: Option<u64>,
    /// Deals (games) between looks at the test (default 100, or the maximum if smaller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
}

/// The shared part of a scenario or a stage.
#[derive(Clone, Debug, Default)]
pub struct TableSpec {
    pub generator: Option<Generator>,
    pub deals: Option<u64>,
    pub rounds: Option<u64>,
    pub games: Option<u64>,
    pub session: Option<u32>,
    pub rules: Option<RulesSpec>,
    pub agents: Option<Vec<AgentSpec>>,
    pub seating: Option<Seating>,
}

/// One entry of `agents:` as written: a mapping whose keys the agent registry checks (each
/// family describes its own: `kind` and `params`, or a shorthand such as `script`), or
/// `winner_of` an earlier stage. Kept as plain data here: what an agent entry may say belongs
/// to the families, not to the scenario format.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(transparent)]
pub struct AgentSpec(pub serde_json::Map<String, Value>);

impl JsonSchema for AgentSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AgentSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut alternatives = registry::entry_schemas();
        alternatives.push(serde_json::json!({
            "type": "object",
            "title": "winner_of",
            "description": "Seat the winner of an earlier stage: the highest game-win rate under point scoring (ties: fewer points per round), the highest win rate under coin scoring (ties: economic performance).",
            "properties": { "winner_of": { "type": "string" } },
            "required": ["winner_of"],
            "additionalProperties": false,
        }));
        schemars::json_schema!({
            "description": "An agent: a built-in `kind` with `params`, a Rhai `script`, or `winner_of` an earlier stage (`dhumbal-run agents` lists the kinds).",
            "anyOf": alternatives,
        })
    }
}

/// One tuning (an entry of `tune:`): which parameters of which agent, over which ranges,
/// against whom, by which optimizer, with what budget (docs/tuning.md).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TuneSpec {
    /// Names the tuning (its records go to `<output>/tune/<id>/`).
    pub id: String,
    /// The agent to tune, as in `agents:` (or a kind's name); its parameters as written are
    /// the starting point (and the baseline the result is confirmed against).
    pub agent: Value,
    /// The tuned parameters and their ranges, by name under the agent's `params:` (dotted
    /// into a nested agent: `rollout.params.pickup_threshold`): `{from, to, step}` (whole
    /// numbers, or reals on that grid), `{min, max}` (reals; `levels` grid points for NTBEA,
    /// default 11), or a list of choices.
    pub params: BTreeMap<String, Value>,
    /// The table's rules, over the scenario's `rules:` (players included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesSpec>,
    /// The other seats (default [random]): with n players each table seats the tuned agent
    /// and n - 1 of these; a longer list is a mix, every window of n - 1 consecutive entries
    /// (cyclically) getting an equal share of every evaluation's deals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponents: Option<Vec<Value>>,
    /// `rotate` (default), `permute`, `fixed` or `random`, as in a stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<Seating>,
    /// What is maximised: `win` (rounds won; coin scoring's default), `games` (games won;
    /// point scoring's default) or `economic` (coins per round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// `{method: ntbea}` (default) or `{method: spsa}`, with the method's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<serde_json::Map<String, Value>>,
    /// Deals (games, under point scoring) the search may play, before seatings.
    pub budget: u64,
    /// Deals (games) per evaluation (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    /// Seed of the search (default: the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The confirmation on fresh deals of the best parameters against the starting ones, a
    /// sequential test (`elo0`, `elo1`, `alpha`, `beta`, `max_deals`/`max_games`, `every`,
    /// as `sequential:`); `false` skips it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Value>,
    /// Where the best parameters go: an agent file (.json), relative to the scenario file.
    pub output: String,
}

/// One exploitability measurement (an entry of `exploit:`, docs/exploitability.md): a target,
/// its table, the best responders set on it and the deals that measure them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExploitSpec {
    /// Names the measurement (its records go to `<output>/exploit/<id>/`).
    pub id: String,
    /// The agent measured, as in `agents:` (or a kind's name): a built-in, a script, a tuned
    /// file, a network.
    pub target: Value,
    /// The table's rules, over the scenario's `rules:` (players included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesSpec>,
    /// The best responders, by method: `search: {iterations, particles, softness, ...}` (or
    /// `search: {}` for the defaults; `iterations: [100, 300, 1000]` measures a responder
    /// per budget, `search-<iterations>`, and draws the gain against the budget); `tune: {params, budget, batch, optimizer, agent, seed,
    /// output}` (a `tune:` entry's search against the target at its table; `params` required);
    /// `learn: {algorithm, episodes, hidden, hyper, preset, encoding, seed, checkpoint, init,
    /// device}` (a network trained against the frozen target, PPO by default);
    /// `self: {}` (the target as its own responder: a check that reads zero).
    pub methods: BTreeMap<String, Value>,
    /// Fresh deals (coin scoring) on which each responder and the target's self-play are
    /// measured, each under every rotation of the seats (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deals: Option<u64>,
    /// The same, in games (point scoring; default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games: Option<u64>,
    /// The gain the test asks about: is the responder's gain larger than this (default 0),
    /// in the measure's units (share of rounds, or of games, won).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// Seed of the measurement's deals (default: derived from the scenario's and the id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// A sequential test of gain > margin: each responder's stage plays its deals in order,
    /// looks every `every` deals (games) and stops when the test decides, so that a large
    /// gain (or none) is settled in few deals; `deals` (`games`) is then the most it plays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<GainTestSpec>,
}

/// An `exploit:` entry's sequential test (a GSPRT on the per-deal gains): H0 the gain is the
/// entry's `margin`, H1 it is `margin + delta`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GainTestSpec {
    /// The gain above the margin the test should find with probability 1 - beta (default
    /// 0.05, i.e. 5 points of rounds or games won; above 0, and margin + delta below 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Probability of accepting H1 when H0 holds (default 0.05; between 0 and 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Probability of accepting H0 when H1 holds (default 0.05; between 0 and 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Deals (games) between looks at the test (default 100, or the most if smaller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
    /// Whether the bounds are corrected for the overshoot between looks (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overshoot: Option<bool>,
}

/// A study with people (`study:`, docs/studies.md): whom each participant faces, in which
/// order, on which deals, and what they read before they play.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StudySpec {
    /// The agents participants face, as in `agents:` (or a kind's name): one condition each;
    /// a game seats the condition's agent in every seat but the person's.
    pub agents: Vec<Value>,
    /// The order each participant meets the agents in: `latin-square` (default: a balanced
    /// Latin square, Williams' design, a row per participant in turn), `rotate` (participant
    /// p starts at agent p and goes round) or `fixed` (every participant as listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<super::StudyOrder>,
    /// Games each participant plays (default: one per agent); game g of every participant is
    /// played on the same deals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games: Option<u32>,
    /// Coin scoring: rounds in a game (default 5). Point games end by themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// The table's rules, over the scenario's `rules:` (players included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesSpec>,
    /// The person's seat: a seat number (default 0), or `rotate` (seat g mod players in game
    /// g).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Value>,
    /// The agent that answers a participant's request for a hint (as in `agents:`, or a
    /// kind's name); `false` or absent: no hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Value>,
    /// Shown before the first game (plain text; blank lines separate paragraphs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The consent a participant agrees to before playing (plain text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
    /// The participant codes, each given to one person. Without them, `signup: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub participants: Option<Vec<String>>,
    /// Open sign-up: the page issues a new code to whoever asks (with `access_code`, only to
    /// those who give it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup: Option<bool>,
    /// The code that open sign-up asks for (required to serve beyond this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_code: Option<String>,
    /// Seed of the study's deals and agents' streams (default: the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// One training run (an entry of `train:`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrainSpec {
    /// Names the run (its records go to `<output>/train/<id>/`).
    pub id: String,
    /// `dqn`, `ddqn` (Double DQN), `ppo` or `imitate` (networks), or `q-learning` or `value-iteration`
    /// (a tabular policy over 1,600 states, two players; docs/tabular.md).
    pub algorithm: String,
    /// `cards` (default: every legal action scored from its cards) or `paper` (the paper's
    /// 117 features and 128 outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Hidden layer widths of every network (default [128, 64], the paper's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<Vec<u64>>,
    /// Hyperparameter preset: `default` or `paper` (section III-B/C as its code ran them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Hyperparameters over the preset's (`dhumbal-run train --help` lists them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyper: Option<serde_json::Map<String, Value>>,
    /// The training table's rules, over the scenario's `rules:` (players included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesSpec>,
    /// Episodes to train: one round each.
    pub episodes: u64,
    /// Opponents, drawn per episode and seat: agent entries as in `agents:`, or `self`
    /// (snapshots of the learner). Default [random].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponents: Option<Vec<Value>>,
    /// `random` (default: a seat drawn per episode) or a seat number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<Value>,
    /// What the learner is rewarded for at the end of a round: `score` (default: coins won or
    /// lost, or minus the points taken) or `win` (1 for winning the round, 0 otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
    /// Seed of the training (default: the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Evaluation during training; default every episodes/20 against `random` on 200 deals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluate: Option<EvaluateSpec>,
    /// Where the checkpoint goes (.safetensors; a tabular policy: .csv), relative to the
    /// scenario file.
    pub checkpoint: String,
    /// A network to start from (a warm start): a checkpoint of the same algorithm, encoding
    /// and hidden widths (a shipped one, say), relative to the scenario file; its weights are
    /// taken, not its optimizer or progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<String>,
    /// `auto` (default: CUDA when present), `cpu` or `cuda`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `imitate` only: the agent entry whose choices the network learns (a search's visit
    /// counts; any other agent's moves). It plays the learner's seat in every episode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher: Option<Value>,
}

/// Evaluation during training.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluateSpec {
    /// Every this many episodes (and at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
    /// Deals per evaluation, each played with the learner in every seat (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deals: Option<u64>,
    /// Tabular learners: games to elimination per evaluation, each played with the learner in
    /// both seats (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games: Option<u64>,
    /// Opponents it is measured against, each filling every other seat: kinds or agent
    /// entries (default [random]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<Vec<Value>>,
    /// Seed of the evaluation deals (default: the training seed + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// Output options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutputSpec {
    /// Output folder (default `reports/<name>`); `--out` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Also write each finished stage's records as `rounds.csv` (default false). The records
    /// are always the Parquet dataset `rounds/`, which is also what `--resume` continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<bool>,
    /// The Parquet dataset `rounds/` is always written (it is the journal); `false` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parquet: Option<bool>,
    /// Roughly how many rounds make one part of the records, written at once (default 16384).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_rounds: Option<u64>,
    /// Time agents' decisions (default true); `decision_ns` is empty when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_timing: Option<bool>,
    /// Time the decisions of one deal in this many, chosen by a hash of the deal number
    /// (default 16; 1 times every deal). Reading the clock twice per decision costs about a
    /// tenth of a heuristic round; a sample gives the same mean at a fraction of the cost.
    /// Untimed rows have an empty `decision_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_sample: Option<u32>,
    /// Write every event of chosen deals (games, for point scoring) to `<stage>/traces/`,
    /// one JSON Lines file per deal and seating arrangement (docs/traces.md); `--trace`
    /// adds deals on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
}

/// Which deals (games) to trace.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TraceSpec {
    /// Deal numbers (coins: a session's number; points: a game's number), from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deals: Option<Vec<u64>>,
    /// Also every deal whose number is a multiple of this (1000: deals 0, 1000, 2000...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
}

/// The JSON Schema of scenario files (`schemas/scenario.schema.json`).
pub fn json_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ScenarioSpec)).expect("schema is JSON")
}

/// Valid keys of the object at `path` (dotted, array indices as numbers) per the schema.
pub(super) fn valid_keys(schema: &Value, path: &[&str]) -> Vec<String> {
    fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
        while let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            match root.get("$defs").and_then(|d| d.get(name)) {
                Some(n) => node = n,
                None => break,
            }
        }
        node
    }
    fn alternatives<'a>(root: &'a Value, node: &'a Value, out: &mut Vec<&'a Value>) {
        let node = resolve(root, node);
        out.push(node);
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = node.get(key).and_then(Value::as_array) {
                for n in list {
                    alternatives(root, n, out);
                }
            }
        }
    }
    let mut nodes = vec![schema];
    for segment in path {
        let mut next = Vec::new();
        for n in nodes {
            let mut alts = Vec::new();
            alternatives(schema, n, &mut alts);
            for a in alts {
                if segment.parse::<usize>().is_ok() {
                    if let Some(items) = a.get("items") {
                        next.push(items);
                    }
                } else if let Some(p) = a.get("properties").and_then(|p| p.get(*segment)) {
                    next.push(p);
                }
            }
        }
        nodes = next;
    }
    let mut keys = Vec::new();
    for n in nodes {
        let mut alts = Vec::new();
        alternatives(schema, n, &mut alts);
        for a in alts {
            if let Some(props) = a.get("properties").and_then(Value::as_object) {
                keys.extend(props.keys().cloned());
            }
        }
    }
    keys.sort();
    keys.dedup();
    keys
}
