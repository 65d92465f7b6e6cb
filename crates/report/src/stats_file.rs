//! A stage's `stats.json` read back: the report writes it from [`StageAnalysis`] (every number
//! of the stage's report), and the readers of a run's folder (the overview page, a sweep's
//! summary, the command line) read what they use of it through [`StatsFile`], built of the
//! writer's own types where they read back ([`StageInfo`], [`Summary`], [`Spread`], the
//! sequential test's [`Entry`]). A field a reader needs and the file lacks fails the read,
//! naming the file; it is never a silent `null`.
//!
//! A file of another [`FORMAT`] is refused with what to do.

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use dhumbal_runner::result_file::{self, Kind, ReadError};
use dhumbal_runner::scenario::Seating;
use dhumbal_runner::scenario::rules_spec::ScoringName;

use super::analyze::{DecisionTime, Metric, Spread, StageAnalysis, Summary};
use super::load::StageInfo;
use super::sequential::Entry;

/// The file's name in a stage's report folder.
pub const FILE: &str = "stats.json";

/// The format of `stats.json` this build writes and reads; files written before the key
/// existed have the same layout (1).
pub const FORMAT: u32 = 1;

/// What [`StatsFile::read`] expects.
pub const KIND: Kind = Kind::new(
    "stage's statistics",
    FORMAT,
    "write the report again with this version (`dhumbal-run report RUN --force`)",
);

/// What the report writes: the file's format, then the analysis, then a sequential stage's
/// test.
#[derive(Serialize)]
pub struct Written<'a> {
    /// [`FORMAT`].
    pub format: u32,
    #[serde(flatten)]
    pub analysis: &'a StageAnalysis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<&'a Entry>,
}

/// What readers use of a stage's `stats.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct StatsFile {
    pub stage: String,
    pub info: StageInfo,
    pub design: Design,
    /// In slot order.
    pub agents: Vec<Agent>,
    pub pairwise: Vec<Pair>,
    pub power: Power,
    /// Which adjusted p-values the stars are on.
    pub stars_on: String,
    /// A stage that tests sequentially: the test's outcome.
    pub sequential: Option<Entry>,
}

/// The design as run ([`super::analyze::Design`]).
#[derive(Clone, Debug, Deserialize)]
pub struct Design {
    pub seating: Seating,
    pub players: usize,
    pub arrangements: u64,
    pub scoring: ScoringName,
    pub rounds: u64,
    /// Units of the paired analysis, and what they are (`deal`, `game`, `round`).
    pub units: u64,
    pub unit: String,
}

/// One agent's metrics ([`super::analyze::AgentMetrics`]).
#[derive(Clone, Debug, Deserialize)]
pub struct Agent {
    pub agent: String,
    /// Rounds won.
    pub win: Rate,
    /// Coins, or minus points, per round.
    pub economic: Summary,
    pub call_success: Rate,
    /// Point games: games won.
    pub games: Option<Rate>,
    /// `null` where the stage's decisions were not timed.
    pub decision_time: Option<DecisionTime>,
}

/// A rate with its primary 95% interval ([`super::analyze::Rate`]).
#[derive(Clone, Debug, Deserialize)]
pub struct Rate {
    pub rate: Option<f64>,
    #[serde(deserialize_with = "interval")]
    pub ci95: Option<[f64; 2]>,
    /// How `ci95` was computed: `wilson`, `normal`, or the unit it clusters by (`deal`,
    /// `game`).
    pub ci95_method: String,
}

/// One test of one pair on one metric ([`super::analyze::Pairwise`]).
#[derive(Clone, Debug, Deserialize)]
pub struct Pair {
    /// [`Metric::key`].
    pub metric: String,
    pub a: String,
    pub b: String,
    /// `a` minus `b`.
    pub difference: Option<f64>,
    pub p_holm: Option<f64>,
    pub stars: String,
    #[serde(deserialize_with = "interval")]
    pub ci95: Option<[f64; 2]>,
    pub critical_difference: Option<f64>,
    /// The test the stars and the figures use for this metric.
    pub primary: bool,
}

/// The power of the stage's design ([`super::analyze::PowerSummary`]).
#[derive(Clone, Debug, Deserialize)]
pub struct Power {
    pub alpha: f64,
    pub pairs: usize,
    pub design: DesignPower,
}

/// The power of the primary test as run ([`super::analyze::DesignPower`]).
#[derive(Clone, Debug, Deserialize)]
pub struct DesignPower {
    /// Minimum detectable difference: the median pair's and the least favourable pair's.
    pub mde: Spread,
}

/// A 95% interval as stats.json writes it: `null` where there is none, and a bound that is
/// not a number written `null` too; either reads as no interval.
pub(crate) fn interval<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[f64; 2]>, D::Error> {
    let bounds: Option<[Option<f64>; 2]> = Option::deserialize(d)?;
    Ok(bounds.and_then(|[lo, hi]| Some([lo?, hi?])))
}

impl StatsFile {
    /// Reads `dir/stats.json`, refusing another format with what to do.
    pub fn read(dir: &Path) -> Result<StatsFile, ReadError> {
        result_file::read(&dir.join(FILE), &KIND)
    }

    /// An agent's metrics, by id.
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.agent == id)
    }

    /// The primary test of `metric` between `a` and `b`, and the sign that turns its a − b
    /// into `a` minus `b` (the row may be of the pair the other way round).
    pub fn primary(&self, metric: Metric, a: &str, b: &str) -> Option<(&Pair, f64)> {
        self.pairwise.iter().find_map(|t| {
            if t.metric != metric.key() || !t.primary {
                return None;
            }
            match (t.a.as_str(), t.b.as_str()) {
                (ta, tb) if (ta, tb) == (a, b) => Some((t, 1.0)),
                (ta, tb) if (ta, tb) == (b, a) => Some((t, -1.0)),
                _ => None,
            }
        })
    }
}

impl Agent {
    /// The headline rate: games won under point scoring, else rounds won.
    pub fn headline(&self, points: bool) -> Option<&Rate> {
        if points {
            self.games.as_ref()
        } else {
            Some(&self.win)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Row;
    use crate::metrics::Accumulator;
    use crate::sequential::{Outcome, Plan, Shape, sequential};

    /// The analysis of twenty deals of two agents, `a` winning one in three.
    fn analysis() -> StageAnalysis {
        let info = StageInfo {
            name: "s".into(),
            agents: vec!["a".into(), "b".into()],
            kinds: vec!["aggressive".into(), "random".into()],
            seating: Seating::Rotate,
            points: false,
            players: 2,
            session: None,
            seed: Some(1),
            source: "test".into(),
        };
        let mut acc = Accumulator::new(&info);
        for deal in 0..20u64 {
            for rotation in 0..2u32 {
                for slot in 0..2u8 {
                    let won = (deal % 3 == 0) == (slot == 0);
                    acc.push(&Row {
                        slot,
                        deal,
                        rotation,
                        seat: (u32::from(slot) + rotation) % 2,
                        starter: slot == 0,
                        won,
                        called: won,
                        call_success: won,
                        coin_delta: if won { 2 } else { -1 },
                        hand_value: 5 + u32::from(slot),
                        cards_discarded: 3,
                        turns: 4,
                        decisions: 4,
                        ..Row::default()
                    })
                    .unwrap();
                }
            }
        }
        let acc = acc.finish().unwrap();
        crate::analyze::analyze(&info, &acc, &crate::Options::default())
    }

    /// A sequential test of `a` against `b` as the runner keeps it.
    fn entry() -> Entry {
        let plan = Plan {
            candidate: "a".into(),
            baseline: "b".into(),
            candidate_slot: 0,
            baseline_slot: 1,
            elo0: 0.0,
            elo1: 10.0,
            elo_model: Default::default(),
            overshoot: true,
            alpha: 0.05,
            beta: 0.05,
            every: 5,
            decide: false,
        };
        let shape = Shape {
            max_matches: 20,
            arrangements: 2,
            rounds_per_match: 1,
            points: false,
            agents: 2,
        };
        let scores: Vec<f64> = (0..20)
            .map(|d| if d % 3 == 0 { 1.0 } else { 0.0 })
            .collect();
        let config = plan.config(shape.arrangements, shape.rounds_per_match);
        let course = sequential(&scores, &config, plan.every, shape.max_matches).unwrap();
        Entry::of(Outcome::new("00", "s", &plan, shape, &scores, &course).unwrap())
    }

    fn write(dir: &Path, analysis: &StageAnalysis, sequential: Option<&Entry>) {
        let written = Written {
            format: FORMAT,
            analysis,
            sequential,
        };
        std::fs::write(
            dir.join(FILE),
            serde_json::to_string_pretty(&written).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn stats_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = analysis();
        let e = entry();
        write(dir.path(), &a, Some(&e));
        let s = StatsFile::read(dir.path()).unwrap();
        assert_eq!(s.stage, a.stage);
        assert_eq!(s.info.agents, a.info.agents);
        assert_eq!(s.info.seating, a.info.seating);
        assert_eq!(s.design.seating, a.info.seating);
        assert_eq!(s.design.scoring, ScoringName::Coins);
        assert_eq!(
            (s.design.units, s.design.unit.as_str(), s.design.rounds),
            (a.design.units, a.design.unit, a.design.rounds)
        );
        for (read, made) in s.agents.iter().zip(&a.agents) {
            assert_eq!(read.agent, made.agent);
            assert_eq!(read.win.rate, made.win.rate);
            assert_eq!(read.win.ci95, made.win.ci95);
            assert_eq!(read.win.ci95_method, made.win.ci95_method);
            assert_eq!(read.economic.mean, made.economic.mean);
            assert_eq!(read.economic.ci95, made.economic.ci95);
            assert_eq!(read.call_success.rate, made.call_success.rate);
            assert!(read.games.is_none() && made.games.is_none());
        }
        assert_eq!(s.pairwise.len(), a.pairwise.len());
        let (row, sign) = s.primary(Metric::Win, "b", "a").unwrap();
        let made = (a.pairwise.iter())
            .find(|r| r.metric == "win" && r.primary)
            .unwrap();
        assert_eq!(sign, -1.0);
        assert_eq!(
            (row.difference, row.p_holm, row.ci95),
            (made.difference, made.p_holm, made.ci95)
        );
        assert_eq!(s.power.design.mde.worst, a.power.design.mde.worst);
        assert_eq!(s.stars_on, a.stars_on);
        assert_eq!(s.sequential, Some(e));
        // A stage that does not test sequentially has no test.
        write(dir.path(), &a, None);
        assert!(StatsFile::read(dir.path()).unwrap().sequential.is_none());
    }

    #[test]
    fn stats_of_another_format_are_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &analysis(), None);
        let path = dir.path().join(FILE);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // Written before the key existed: the same layout, format 1.
        v.as_object_mut().unwrap().remove("format");
        std::fs::write(&path, v.to_string()).unwrap();
        assert!(StatsFile::read(dir.path()).is_ok());
        v["format"] = 2.into();
        std::fs::write(&path, v.to_string()).unwrap();
        let e = StatsFile::read(dir.path()).unwrap_err();
        assert_eq!(e.other_format(), Some(2), "{e}");
        let text = e.to_string();
        assert!(text.contains(FILE) && text.contains("--force"), "{e}");
        // A field missing is named.
        v["format"] = 1.into();
        v["design"].as_object_mut().unwrap().remove("units");
        std::fs::write(&path, v.to_string()).unwrap();
        let e = StatsFile::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("units"), "{e}");
    }

    #[test]
    fn an_interval_with_a_bound_that_is_not_a_number_reads_as_none() {
        let rate: Rate =
            serde_json::from_str(r#"{"rate": 0.5, "ci95": [null, 0.7], "ci95_method": "deal"}"#)
                .unwrap();
        assert_eq!((rate.rate, rate.ci95), (Some(0.5), None));
        let missing = serde_json::from_str::<Rate>(r#"{"rate": 0.5, "ci95_method": "deal"}"#);
        assert!(missing.is_err());
    }
}
