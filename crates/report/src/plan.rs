//! Sample size before a run (`dhumbal-run plan SCENARIO --delta 0.05 [--pilot DIR]`): per
//! stage, the units (deals, or games under point scoring) each pair of agents needs to detect
//! a difference `delta` in the stage's headline outcome (win rate; games won under point
//! scoring), and what the scenario as written achieves.
//!
//! With a pilot run (`--pilot DIR`), the plan uses the pilot's measured design: for each pair,
//! the SD of the unit differences σ_u = sqrt(G·V) of the primary (paired) test, which carries
//! the design effect (the pairing of agents on the same deals, the negative correlation at
//! one table, the dependence of the arrangements of one deal or the rounds of one game), and
//! plans the paired t-test on units with it ([`power::MeasuredDesign`]). Without a pilot only
//! the paper's eq. 5 with independent units is possible, which is labelled as such: the
//! rounds of one deal or game are not independent, so it can promise too much or too little.

use std::path::Path;

use serde::Serialize;

use super::analyze::{self, Options, Spread};
use super::load::{self, Seating};
use super::power::{self, normal_ind_power, sample_size_eq5};
use dhumbal_runner::scenario::{Scenario, SeatEntry, Stage};

/// The plan for one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StagePlan {
    pub stage: String,
    pub agents: usize,
    pub pairs: usize,
    pub arrangements: u64,
    /// `deal` (coin scoring) or `game` (point scoring): what the scenario's `deals:` or
    /// `games:` counts, each played under every arrangement.
    pub unit: &'static str,
    /// What is compared: `win` (win rate) or `game_win` (games won).
    pub metric: &'static str,
    /// Units the scenario plays.
    pub planned: u64,
    /// With a pilot: the plan from its measured design.
    pub pilot: Option<PilotPlan>,
    /// Why a pilot was given but not used for this stage.
    pub pilot_note: Option<String>,
    /// A pilot used with other agents than the stage's: their variances stand in.
    pub pilot_warning: Option<String>,
    /// For comparison (and the only plan without a pilot): eq. 5 with independent units.
    pub independent: IndependentPlan,
}

/// A plan from a pilot's measured variances, at the Bonferroni level alpha/pairs.
#[derive(Clone, Debug, Serialize)]
pub struct PilotPlan {
    /// The pilot stage's folder and its units.
    pub source: String,
    pub pilot_units: u64,
    /// Pairs with a measured variance.
    pub pairs: usize,
    /// σ_u over pairs (median, largest).
    pub sd_units: Spread,
    /// Median over pairs of the design effect measured in the pilot.
    pub design_effect: Option<f64>,
    /// Units needed for the target power at delta: the median pair's and every pair's.
    pub units_needed: Spread,
    /// With the planned units: power at delta (median, smallest) and minimum detectable
    /// difference (median, largest).
    pub power: Spread,
    pub mde: Spread,
}

/// The paper's eq. 5, n = 2(z_{1-α/2} + z_{1-β})² p(1-p)/δ², p = 1/players: every round (game)
/// counted as independent.
#[derive(Clone, Debug, Serialize)]
pub struct IndependentPlan {
    /// Win rate under equal strength, 1/players; σ² = p(1-p).
    pub baseline: f64,
    /// Rounds (games) per agent needed at alpha, and at alpha/pairs.
    pub needed: Option<u64>,
    pub needed_bonferroni: Option<u64>,
    /// Units (deals, games) to ask for, each arrangement counted as an independent round.
    pub units_needed: Option<u64>,
    pub units_needed_bonferroni: Option<u64>,
    /// With the planned units: power at alpha and alpha/pairs, and the minimum detectable
    /// difference at alpha/pairs, counting every arrangement as independent.
    pub power: f64,
    pub power_bonferroni: f64,
    pub mde_bonferroni: Option<f64>,
    /// Blocked designs: the minimum detectable difference at alpha/pairs if the arrangements
    /// of a deal carried no more information than one (the deals alone independent). The
    /// design's own lies on either side of the two; a pilot tells which.
    pub mde_bonferroni_deals_once: Option<f64>,
}

/// One stage of a pilot run, analysed: its design and each pair's measured σ_u of the
/// headline outcome.
#[derive(Clone, Debug)]
pub struct PilotStage {
    pub name: String,
    pub dir: String,
    pub seating: Seating,
    pub points: bool,
    pub players: usize,
    pub agents: Vec<String>,
    pub units: u64,
    pub sd_units: Vec<f64>,
    pub design_effect: Option<f64>,
}

/// Reads and analyses every stage of the pilot run (or stage folder) `dir`, without writing
/// anything.
pub fn read_pilot(dir: &Path) -> crate::Result<Vec<PilotStage>> {
    let opts = Options {
        figures: false,
        ..Options::default()
    };
    let mut out = Vec::new();
    for stage_dir in load::stage_dirs(dir)? {
        let info = load::stage_info(&stage_dir)?;
        let (analysis, _) = super::analyze_stage(&stage_dir, &info, &opts)?;
        let metric = analyze::headline(info.points);
        let sd_units = analysis
            .pairwise
            .iter()
            .filter(|r| r.metric == metric.key() && r.test == metric.design_test())
            .filter_map(|r| r.sd_units)
            .collect();
        out.push(PilotStage {
            name: info.name.clone(),
            dir: stage_dir.display().to_string(),
            seating: info.seating,
            points: info.points,
            players: info.players,
            agents: info.agents.clone(),
            units: analysis.design.units,
            sd_units,
            design_effect: analysis.power.design.design_effect,
        });
    }
    Ok(out)
}

/// Plans every stage of `scenario` for a difference `delta` at `alpha` with `power`, with the
/// pilot's measured design where one is given and matches.
pub fn plan(
    scenario: &Scenario,
    delta: f64,
    alpha: f64,
    power: f64,
    pilot: Option<&[PilotStage]>,
) -> Vec<StagePlan> {
    let only_stage = scenario.stages.len() == 1;
    scenario
        .stages
        .iter()
        .map(|stage| {
            let agents = stage.seats.len();
            let pairs = agents * agents.saturating_sub(1) / 2;
            let alpha_k = alpha / pairs.max(1) as f64;
            let planned = stage.deals();
            let (pilot_plan, pilot_note, pilot_warning) = match pilot {
                None => (None, None, None),
                Some(stages) => match match_pilot(stage, stages, only_stage) {
                    Ok(p) => (
                        from_pilot(p, delta, alpha_k, power, planned),
                        None,
                        other_agents(stage, p),
                    ),
                    Err(note) => (None, Some(note), None),
                },
            };
            StagePlan {
                stage: stage.name.clone(),
                agents,
                pairs,
                arrangements: stage.arrangements().max(1),
                unit: if stage.is_points() { "game" } else { "deal" },
                metric: analyze::headline(stage.is_points()).key(),
                planned,
                pilot: pilot_plan,
                pilot_note,
                pilot_warning,
                independent: independent(stage, delta, alpha, alpha_k, power),
            }
        })
        .collect()
}

/// The pilot stage for `stage`: the one of the same name, or the pilot's only stage for a
/// one-stage scenario; its design must be the stage's (seating, scoring, players), since σ_u
/// belongs to a design. `Err` says why none is used.
fn match_pilot<'a>(
    stage: &Stage,
    stages: &'a [PilotStage],
    only_stage: bool,
) -> Result<&'a PilotStage, String> {
    let p = stages
        .iter()
        .find(|p| p.name == stage.name)
        .or_else(|| (only_stage && stages.len() == 1).then(|| &stages[0]))
        .ok_or_else(|| {
            format!(
                "the pilot has no stage `{}` (it has {})",
                stage.name,
                stages
                    .iter()
                    .map(|p| format!("`{}`", p.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let mut differ = Vec::new();
    if p.seating != stage.seating {
        differ.push(format!(
            "seating `{}` (here `{}`)",
            p.seating.as_str(),
            stage.seating.as_str()
        ));
    }
    if p.points != stage.is_points() {
        differ.push(format!(
            "{} scoring (here {})",
            if p.points { "point" } else { "coin" },
            if stage.is_points() { "points" } else { "coins" }
        ));
    }
    if p.players != stage.players() {
        differ.push(format!("{} players (here {})", p.players, stage.players()));
    }
    if !differ.is_empty() {
        return Err(format!(
            "pilot stage `{}` has {}: its variances belong to another design",
            p.name,
            differ.join(", ")
        ));
    }
    if p.sd_units.is_empty() {
        return Err(format!(
            "pilot stage `{}` has no pair with a measured variance ({} units)",
            p.name, p.units
        ));
    }
    Ok(p)
}

/// Says so when the pilot's agents are not the stage's (a `winner_of` seat matches any): the
/// pairs' σ_u belong to the agents measured.
fn other_agents(stage: &Stage, p: &PilotStage) -> Option<String> {
    let same = stage.seats.len() == p.agents.len()
        && stage.seats.iter().zip(&p.agents).all(|(s, a)| match s {
            SeatEntry::Agent(def) => def.id == *a,
            SeatEntry::WinnerOf(_) => true,
        });
    (!same).then(|| {
        format!(
            "the pilot's agents ({}) are not this stage's: their variances stand in for those \
             of the agents you will compare",
            p.agents.join(", ")
        )
    })
}

fn from_pilot(
    p: &PilotStage,
    delta: f64,
    alpha_k: f64,
    target: f64,
    planned: u64,
) -> Option<PilotPlan> {
    let designs: Vec<power::MeasuredDesign> = p
        .sd_units
        .iter()
        .map(|&sd_units| power::MeasuredDesign { sd_units })
        .collect();
    if designs.is_empty() {
        return None;
    }
    let n = planned as f64;
    let spread = |f: &dyn Fn(&power::MeasuredDesign) -> Option<f64>, worst_is_min: bool| {
        let mut v: Vec<f64> = designs.iter().filter_map(f).collect();
        Spread::of(&mut v, worst_is_min)
    };
    Some(PilotPlan {
        source: p.dir.clone(),
        pilot_units: p.units,
        pairs: designs.len(),
        sd_units: spread(&|m| Some(m.sd_units), false),
        design_effect: p.design_effect,
        units_needed: spread(&|m| m.units_needed(delta, alpha_k, target), false),
        power: spread(&|m| (n > 1.0).then(|| m.power(delta, n, alpha_k)), true),
        mde: spread(&|m| m.mde(n, alpha_k, target), false),
    })
}

fn independent(stage: &Stage, delta: f64, alpha: f64, alpha_k: f64, power: f64) -> IndependentPlan {
    let arrangements = stage.arrangements().max(1);
    let baseline = 1.0 / stage.players().max(1) as f64;
    let sigma2 = baseline * (1.0 - baseline);
    let needed = sample_size_eq5(delta, sigma2, alpha, power);
    let needed_b = sample_size_eq5(delta, sigma2, alpha_k, power);
    let rounds = (stage.deals() * arrangements) as f64;
    let es = delta / sigma2.sqrt();
    let z = power::z_sum(alpha_k, power);
    let mde = |n: f64| (n > 0.0).then(|| z * (2.0 * sigma2 / n).sqrt());
    let z_power = |a: f64| {
        if rounds > 0.0 {
            normal_ind_power(es, rounds, a, 1.0)
        } else {
            0.0
        }
    };
    let per_unit = |n: Option<f64>| n.map(|n| (n / arrangements as f64).ceil() as u64);
    IndependentPlan {
        baseline,
        needed: needed.map(|n| n.ceil() as u64),
        needed_bonferroni: needed_b.map(|n| n.ceil() as u64),
        units_needed: per_unit(needed),
        units_needed_bonferroni: per_unit(needed_b),
        power: z_power(alpha),
        power_bonferroni: z_power(alpha_k),
        mde_bonferroni: mde(rounds),
        mde_bonferroni_deals_once: (arrangements > 1)
            .then(|| mde(stage.deals() as f64))
            .flatten(),
    }
}
