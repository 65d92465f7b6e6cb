//! A stage's sequential test as the runner runs it: the candidate's unit scores read from the
//! stage's records ([`match_scores`]), the leader and second of a `decide:` stage chosen again at
//! every look ([`decide_course`]), and the decision kept beside the records ([`Outcome`],
//! [`DECISION_FILE`]). The test's arithmetic (the GSPRT, its bounds, the estimate and the
//! interval after a stop) is `dhumbal_stats::sequential`, re-exported here.

use crate::result_file::{self, Kind, ReadError};

pub use dhumbal_stats::sequential::*;

/// What the fixed-sample numbers of a stage that tests sequentially are, for a reader: its
/// agents table, intervals, p-values, stars, power and ratings.
pub const FIXED_SAMPLE: &str = "fixed-sample: computed as if the stage's size had been fixed \
    in advance, while the stage stopped when its sequential test crossed a bound (or at its \
    maximum); its intervals cover less often than they say and lean towards the bound that \
    stopped it";

/// The file in a stage's folder that keeps a sequential stage's decision.
pub const DECISION_FILE: &str = "sequential.json";

/// The format of [`DECISION_FILE`] this build writes and reads; files written before the key
/// existed have the same layout (1).
pub const DECISION_FORMAT: u32 = 1;

/// What [`Outcome::read`] expects.
pub const DECISION_KIND: Kind = Kind {
    what: "sequential decision",
    format: DECISION_FORMAT,
    unnumbered: 1,
    remedy: "play the stage again with this version (`--force`), or use the version that \
             wrote it",
};

/// What [`DECISION_FILE`] holds: the plan, the course of the test and where it stopped. It is
/// derived from the records (the runner recomputes it from them on every run and resume); it
/// exists so that readers of a folder (`report`, `merge`, a later `--resume`) know where the
/// stage ends without the scenario.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// [`DECISION_FORMAT`].
    #[serde(default = "format_one")]
    pub format: u32,
    /// The scenario hash of the records it was computed from.
    pub scenario: String,
    pub stage: String,
    pub plan: Plan,
    /// `H1`, `H0` or `undecided`.
    pub decision: String,
    /// Matches (deals or games before seatings) the decision rests on.
    pub matches: u64,
    /// The units (matches x arrangements) the stage ends at.
    pub stop_units: u64,
    pub shape: Shape,
    pub llr: f64,
    pub bounds: (f64, f64),
    /// (matches, LLR) at every look.
    pub checks: Vec<(u64, f64)>,
    /// How many matches scored each value (the design's analogue of fishtest's pentanomial
    /// counts), up to the stop.
    pub distribution: Vec<(f64, u64)>,
    /// The fixed-sample estimate over the units played (it leans towards the bound that
    /// stopped the test: [`Outcome::adjusted`] knows the stop).
    pub estimate: Option<Estimate>,
    /// The bounds on both scales (`None` in files written before it existed, and while every
    /// unit scored the same).
    #[serde(default)]
    pub scales: Option<Scales>,
    /// The estimate and interval that know the test stopped ([`after`]); `None` for a
    /// `decide:` test (its pair was chosen by the data), without a spread, and in files written
    /// before it existed.
    #[serde(default)]
    pub adjusted: Option<Adjusted>,
}

fn format_one() -> u32 {
    1
}

/// An LLR as kept in a file: an infinite one (a hypothesis the data rule out) as a large one.
pub(crate) fn storable(x: f64) -> f64 {
    x.clamp(-1e12, 1e12)
}

impl Outcome {
    /// The outcome of a finished test (`None` while it continues) on `scores`, the matches'
    /// scores in match order (at least up to the stop).
    pub fn new(
        scenario: &str,
        stage: &str,
        plan: &Plan,
        shape: Shape,
        scores: &[f64],
        course: &Sequential,
    ) -> Option<Outcome> {
        let code = Outcome::code(course.decision)?;
        let used = &scores[..(course.units as usize).min(scores.len())];
        let config = plan.config(shape.arrangements, shape.rounds_per_match);
        let mut distribution: Vec<(f64, u64)> = Vec::new();
        let mut sorted = used.to_vec();
        sorted.sort_by(f64::total_cmp);
        for x in sorted {
            match distribution.last_mut() {
                Some((v, n)) if *v == x => *n += 1,
                _ => distribution.push((x, 1)),
            }
        }
        Some(Outcome {
            format: DECISION_FORMAT,
            scenario: scenario.to_string(),
            stage: stage.to_string(),
            plan: plan.clone(),
            decision: code.to_string(),
            matches: course.units,
            stop_units: course.units * shape.arrangements,
            shape,
            llr: storable(course.llr),
            bounds: course.bounds,
            checks: course
                .checks
                .iter()
                .map(|c| (c.units, storable(c.llr)))
                .collect(),
            distribution,
            estimate: estimate(used, config.reference, config.games_per_unit),
            scales: Sample::from_scores(used)
                .mean_sd()
                .and_then(|(_, sd)| Scales::of(plan, sd, config.games_per_unit)),
            adjusted: if plan.decide {
                None
            } else {
                Adjusted::of(&config, course, used, plan.every, shape.max_matches)
            },
        })
    }

    /// The same test computed again from the records in `dataset` (the report's check that
    /// the decision follows from the records).
    pub fn recompute(&self, dataset: &crate::dataset::Dataset) -> crate::Result<Outcome> {
        let shape = self.shape;
        if self.plan.decide {
            let (pair, scores, course) = decide_course(dataset, &self.plan, shape, self.matches)?;
            return Outcome::new(&self.scenario, &self.stage, &pair, shape, &scores, &course)
                .ok_or_else(|| {
                    crate::Error::Records(format!(
                        "{}: the records up to the stop ({} matches) do not decide the stage",
                        dataset.dir.display(),
                        self.matches
                    ))
                });
        }
        let scores = match_scores(
            dataset,
            &self.plan,
            0..self.matches,
            shape.arrangements,
            shape.rounds_per_match,
            shape.points,
        )?;
        let config = self.plan.config(shape.arrangements, shape.rounds_per_match);
        let course = sequential(&scores, &config, self.plan.every, shape.max_matches)
            .map_err(|source| self.error(source))?;
        Outcome::new(
            &self.scenario,
            &self.stage,
            &self.plan,
            shape,
            &scores,
            &course,
        )
        .ok_or_else(|| {
            crate::Error::Records(format!(
                "{}: the records up to the stop ({} matches) do not decide the test",
                dataset.dir.display(),
                self.matches
            ))
        })
    }

    /// The α each comparison was run at: a `decide:` stage's split over its agents
    /// ([`decide_alpha`]; files written before the split have no agent count and were not
    /// split), a `sequential:` test's own.
    pub fn bounds_alpha(&self) -> f64 {
        if self.plan.decide && self.shape.agents > 0 {
            decide_alpha(self.plan.alpha, self.shape.agents as usize)
        } else {
            self.plan.alpha
        }
    }

    /// The test of this stage could not be computed.
    fn error(&self, source: SprtError) -> crate::Error {
        crate::Error::Sequential {
            stage: self.stage.clone(),
            source,
        }
    }

    /// The decision's code for a finished test (`None` while it continues).
    pub fn code(decision: Decision) -> Option<&'static str> {
        match decision {
            Decision::AcceptH1 => Some("H1"),
            Decision::AcceptH0 => Some("H0"),
            Decision::Undecided => Some("undecided"),
            Decision::Continue => None,
        }
    }

    /// A bound of the test (`elo1` when `upper`, else `elo0`) in its own scale, with what it
    /// is on the other scale at the spread the test saw: `nElo 10 (about +4.1 Elo per game
    /// here)`.
    pub fn bound(&self, upper: bool) -> String {
        let p = &self.plan;
        let (value, i) = if upper { (p.elo1, 1) } else { (p.elo0, 0) };
        let other = self.scales.and_then(|s| match p.elo_model {
            EloModel::Normalized => s.elo[i].map(|e| format!("{:+.1} Elo per game", e + 0.0)),
            EloModel::Logistic => Some(format!("nElo {:+.1}", s.nelo[i])),
        });
        match other {
            Some(o) => format!("{} {value} (about {o} here)", p.elo_model.unit()),
            None => format!("{} {value}", p.elo_model.unit()),
        }
    }

    /// One line for a person: `H1 accepted: ... after N deals (LLR ...)`.
    pub fn sentence(&self) -> String {
        let (count, unit) = if self.shape.points {
            (self.matches, "games")
        } else {
            (self.matches * self.shape.rounds_per_match, "deals")
        };
        let p = &self.plan;
        let (h0, h1) = (self.bound(false), self.bound(true));
        let what = match (p.decide, self.decision.as_str()) {
            (true, "H1") if self.shape.agents > 2 => format!(
                "decided: `{}` leads `{}`, its closest rival, and every other agent by {h1}; H1 \
                 accepted",
                p.candidate, p.baseline
            ),
            (true, "H1") => format!(
                "decided: `{}` leads `{}` by {h1}; H1 accepted",
                p.candidate, p.baseline
            ),
            (true, "H0") => format!(
                "not decided: `{}` is not resolved from `{}` (H0: they are within {h1}); the \
                 winner rule (win rate, then economic performance) chose `{}`",
                p.candidate, p.baseline, p.candidate
            ),
            (true, _) => format!(
                "undecided at the maximum between `{}` and `{}`; the winner rule (win rate, then \
                 economic performance) chose `{}`",
                p.candidate, p.baseline, p.candidate
            ),
            (false, "H1") => format!(
                "H1 accepted: `{}` is stronger than `{}`; the data favour {h1} over {} {}",
                p.candidate,
                p.baseline,
                p.elo_model.unit(),
                p.elo0
            ),
            (false, "H0") => format!(
                "H0 accepted: `{}` is not stronger than `{}` by {h1}; the data favour {} {} over \
                 {} {}",
                p.candidate,
                p.baseline,
                p.elo_model.unit(),
                p.elo0,
                p.elo_model.unit(),
                p.elo1
            ),
            (false, _) => format!("undecided between {h0} and {h1} at the maximum"),
        };
        format!(
            "{what}, after {count} {unit} (LLR {:.2}, bounds [{:.2}, {:.2}])",
            self.llr, self.bounds.0, self.bounds.1
        )
    }

    /// Writes it into `stage_dir` (through a temporary file).
    pub fn save(&self, stage_dir: &std::path::Path) -> crate::Result<()> {
        result_file::save(stage_dir, DECISION_FILE, self)
    }

    /// The outcome kept in `stage_dir`, if any: a file that cannot be read, or of another
    /// format (refused with what to do), is an error.
    pub fn read(stage_dir: &std::path::Path) -> Result<Option<Outcome>, ReadError> {
        result_file::read_if_there(&stage_dir.join(DECISION_FILE), &DECISION_KIND)
    }
}

/// The leader and the second of `totals` by the `winner_of` rule (the headline rate, then
/// economic performance, then the order of the list).
pub fn top_two(totals: &crate::totals::StageTotals, points: bool) -> (usize, usize) {
    let leader = totals.winner(points);
    let rate = |t: &crate::totals::AgentTotals| {
        if points {
            t.game_win_rate()
        } else {
            t.win_rate()
        }
    };
    let mut second: Option<usize> = None;
    for (i, t) in totals.agents.iter().enumerate() {
        if i == leader {
            continue;
        }
        let better = match second {
            None => true,
            Some(j) => {
                let b = &totals.agents[j];
                rate(t) > rate(b) || (rate(t) == rate(b) && t.economic() > b.economic())
            }
        };
        if better {
            second = Some(i);
        }
    }
    (leader, second.unwrap_or(leader))
}

/// A `decide:` test replayed from the records: at every look (every `plan.every` matches, up
/// to `upto` and the maximum) the leader of the matches so far by the `winner_of` rule, and
/// its comparison with every other agent ([`decide_look`]); it ends at the first look that
/// decides (or at `upto`, continuing). Returns the pair at the last look (the leader as the
/// candidate, its closest rival as the baseline), the leader's scores against the rival, and
/// the course.
pub fn decide_course(
    dataset: &crate::dataset::Dataset,
    plan: &Plan,
    shape: Shape,
    upto: u64,
) -> crate::Result<(Plan, Vec<f64>, Sequential)> {
    let agents = dataset
        .parts
        .first()
        .map(|p| p.meta.agents.clone())
        .ok_or_else(|| crate::Error::Records(format!("{}: no records", dataset.dir.display())))?;
    let stage = || dataset.parts[0].meta.stage.clone();
    let config = plan.decide_config(shape.arrangements, shape.rounds_per_match, agents.len());
    let mut bounds = config.llr_bounds();
    let mut checks = Vec::new();
    let mut to = 0;
    let mut last = (plan.clone(), Vec::new());
    // Each pair's match scores are read once, up to the last look (a look's are a prefix):
    // the records are not read again at every look and for every rival.
    let every = plan.every.max(1);
    let limit = if upto >= shape.max_matches {
        shape.max_matches
    } else {
        upto / every * every
    };
    let mut scored: std::collections::HashMap<(usize, usize), Vec<f64>> = Default::default();
    while to < shape.max_matches.min(upto) {
        to = (to + plan.every.max(1)).min(shape.max_matches);
        if to > upto {
            break;
        }
        let totals = dataset.totals_within(0..to * shape.arrangements, agents.len());
        let (leader, _) = top_two(&totals, shape.points);
        let pair_of = |rival: usize| Plan {
            candidate: agents[leader].clone(),
            baseline: agents[rival].clone(),
            candidate_slot: leader,
            baseline_slot: rival,
            ..plan.clone()
        };
        let scores_against = |j: usize| -> crate::Result<Vec<f64>> {
            let all = match scored.entry((leader, j)) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(match_scores(
                    dataset,
                    &pair_of(j),
                    0..limit,
                    shape.arrangements,
                    shape.rounds_per_match,
                    shape.points,
                )?),
            };
            Ok(all[..to as usize].to_vec())
        };
        let look = decide_look(
            leader,
            agents.len(),
            &config,
            plan.every,
            scores_against,
            |source| crate::Error::Sequential {
                stage: stage(),
                source,
            },
        )?;
        checks.push(Check {
            units: to,
            llr: look.llr,
        });
        bounds = look.bounds;
        let pair = pair_of(look.rival);
        if let Some(decision) = verdict(look.llr, bounds, to == shape.max_matches) {
            return Ok((
                pair,
                look.scores,
                Sequential {
                    decision,
                    units: to,
                    llr: look.llr,
                    bounds,
                    checks,
                },
            ));
        }
        last = (pair, look.scores);
    }
    let (units, value) = checks.last().map_or((0, 0.0), |c| (c.units, c.llr));
    Ok((
        last.0,
        last.1,
        Sequential {
            decision: Decision::Continue,
            units,
            llr: value,
            bounds,
            checks,
        },
    ))
}

/// The candidate's score in each match of `matches` (a range of match numbers), read from the
/// parts of `dataset` that hold them: in each game (a coin round, or a point game) under each
/// arrangement, 1 if the candidate won it and the baseline did not, 0 the other way round, 1/2
/// otherwise (both, or neither: another player won); a match's score is the mean over its
/// `arrangements x rounds_per_match` games. Every game of those matches must be on disk.
pub fn match_scores(
    dataset: &crate::dataset::Dataset,
    plan: &Plan,
    matches: std::ops::Range<u64>,
    arrangements: u64,
    rounds_per_match: u64,
    points: bool,
) -> crate::Result<Vec<f64>> {
    use crate::error::Doing;
    use polars_core::prelude::DataType;
    use std::collections::HashMap;
    let per = rounds_per_match.max(1);
    let units = matches.start * arrangements..matches.end * arrangements;
    // (deal, rotation) -> (candidate won, baseline won)
    let mut games: HashMap<(u64, u32), (bool, bool)> = HashMap::new();
    let won_col = if points { "game_won" } else { "won" };
    for part in &dataset.parts {
        let r = part.meta.start..part.meta.end;
        if r.end <= units.start || r.start >= units.end {
            continue;
        }
        let df =
            crate::dataset::read_part(&part.path, Some(&["agent", "deal", "rotation", won_col]))?;
        let path = &part.path;
        let agent = (df.column("agent").and_then(|c| c.cast(&DataType::String)))
            .doing("cannot read", path)?;
        let agent = agent.str().doing("cannot read", path)?;
        let deal = (df.column("deal").and_then(|c| c.u64())).doing("cannot read", path)?;
        let rotation = (df.column("rotation").and_then(|c| c.u32())).doing("cannot read", path)?;
        let won = (df.column(won_col).and_then(|c| c.bool())).doing("cannot read", path)?;
        for (((a, d), rot), w) in agent
            .iter()
            .zip(deal.iter())
            .zip(rotation.iter())
            .zip(won.iter())
        {
            let (Some(a), Some(d), Some(rot), Some(w)) = (a, d, rot, w) else {
                return Err(crate::Error::Records(format!(
                    "{}: a record with an empty value",
                    part.path.display()
                )));
            };
            let m = if points { d } else { d / per };
            if !matches.contains(&m) {
                continue;
            }
            let is_c = a == plan.candidate;
            let is_b = a == plan.baseline;
            let e = games.entry((d, rot)).or_insert((false, false));
            if is_c {
                e.0 |= w;
            }
            if is_b {
                e.1 |= w;
            }
        }
    }
    let mut sums = vec![0.0f64; (matches.end - matches.start) as usize];
    let mut counts = vec![0u64; sums.len()];
    for (&(d, _), &(c, b)) in &games {
        let m = if points { d } else { d / per };
        let i = (m - matches.start) as usize;
        sums[i] += match (c, b) {
            (true, false) => 1.0,
            (false, true) => 0.0,
            _ => 0.5,
        };
        counts[i] += 1;
    }
    let games_per_match = arrangements * if points { 1 } else { per };
    for (i, &c) in counts.iter().enumerate() {
        if c != games_per_match {
            return Err(crate::Error::Records(format!(
                "{}: match {} has {c} of its {games_per_match} games on disk",
                dataset.dir.display(),
                matches.start + i as u64
            )));
        }
    }
    // Sums of halves over at most a few thousand games are exact; the division is the only
    // rounding, the same on every run.
    Ok(sums.iter().map(|s| s / games_per_match as f64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test as the runner decides it, on scores of 1, 1/2 and 0.
    fn decided() -> Outcome {
        let plan = Plan {
            candidate: "a".into(),
            baseline: "b".into(),
            candidate_slot: 0,
            baseline_slot: 1,
            elo0: 0.0,
            elo1: 10.0,
            elo_model: EloModel::Normalized,
            overshoot: true,
            alpha: 0.05,
            beta: 0.05,
            every: 4,
            decide: false,
        };
        let shape = Shape {
            max_matches: 40,
            arrangements: 2,
            rounds_per_match: 1,
            points: false,
            agents: 2,
        };
        let scores: Vec<f64> = (0..40).map(|i| [1.0, 0.5, 1.0, 0.0][i % 4]).collect();
        let config = plan.config(shape.arrangements, shape.rounds_per_match);
        let course = sequential(&scores, &config, plan.every, shape.max_matches).unwrap();
        Outcome::new("00", "s", &plan, shape, &scores, &course).unwrap()
    }

    #[test]
    fn a_decision_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Outcome::read(dir.path()).unwrap(), None);
        let o = decided();
        o.save(dir.path()).unwrap();
        assert_eq!(Outcome::read(dir.path()).unwrap().as_ref(), Some(&o));
        // Written before the key existed: the same layout, format 1.
        let mut v = serde_json::to_value(&o).unwrap();
        v.as_object_mut().unwrap().remove("format");
        std::fs::write(dir.path().join(DECISION_FILE), v.to_string()).unwrap();
        assert_eq!(Outcome::read(dir.path()).unwrap(), Some(o));
    }

    #[test]
    fn a_decision_of_another_format_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = serde_json::to_value(decided()).unwrap();
        v.as_object_mut().unwrap().insert("format".into(), 2.into());
        std::fs::write(dir.path().join(DECISION_FILE), v.to_string()).unwrap();
        let e = Outcome::read(dir.path()).unwrap_err();
        assert_eq!(e.other_format(), Some(2), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(DECISION_FILE) && text.contains("--force"),
            "{e}"
        );
        // A field missing is named.
        let mut v = serde_json::to_value(decided()).unwrap();
        v.as_object_mut().unwrap().remove("plan");
        std::fs::write(dir.path().join(DECISION_FILE), v.to_string()).unwrap();
        let e = Outcome::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("plan"), "{e}");
    }
}
