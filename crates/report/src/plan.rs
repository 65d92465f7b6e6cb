//! Sample size before a run (`dhumbal-run plan SCENARIO --delta 0.05`): per stage, the rounds
//! each agent needs to detect a win-rate difference `delta` by the paper's eq. 5, with and
//! without the Bonferroni correction over the stage's pairs, and what the scenario as written
//! achieves.

use serde::Serialize;

use super::dist::normal_quantile;
use super::power::{normal_ind_power, sample_size_eq5};
use dhumbal_runner::scenario::Scenario;

/// The plan for one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StagePlan {
    pub stage: String,
    pub agents: usize,
    pub pairs: usize,
    pub arrangements: u64,
    /// `rounds` (coin scoring) or `games` (point scoring: the game-win rate is compared).
    pub unit: &'static str,
    /// Win rate under equal strength, 1/players; σ² = p(1-p).
    pub baseline: f64,
    /// Units per agent needed at alpha, and at alpha/pairs.
    pub needed: Option<u64>,
    pub needed_bonferroni: Option<u64>,
    /// Deals (coins) or games (points) to ask for, before arrangements.
    pub deals_needed: Option<u64>,
    pub deals_needed_bonferroni: Option<u64>,
    /// What the scenario plays: units per agent, power at alpha and alpha/pairs, and the
    /// minimum detectable difference at alpha/pairs.
    pub planned: u64,
    pub power: f64,
    pub power_bonferroni: f64,
    pub mde_bonferroni: Option<f64>,
}

/// Plans every stage of `scenario` for a difference `delta` at `alpha` with `power`.
pub fn plan(scenario: &Scenario, delta: f64, alpha: f64, power: f64) -> Vec<StagePlan> {
    scenario
        .stages
        .iter()
        .map(|stage| {
            let agents = stage.seats.len();
            let pairs = agents * agents.saturating_sub(1) / 2;
            let arrangements = stage.arrangements().max(1);
            let baseline = 1.0 / stage.players().max(1) as f64;
            let sigma2 = baseline * (1.0 - baseline);
            let alpha_k = alpha / pairs.max(1) as f64;
            let needed = sample_size_eq5(delta, sigma2, alpha, power);
            let needed_b = sample_size_eq5(delta, sigma2, alpha_k, power);
            let planned = stage.deals() * arrangements;
            let es = delta / sigma2.sqrt();
            let n = planned as f64;
            let z = normal_quantile(1.0 - alpha_k / 2.0) + normal_quantile(power);
            StagePlan {
                stage: stage.name.clone(),
                agents,
                pairs,
                arrangements,
                unit: if stage.is_points() { "games" } else { "rounds" },
                baseline,
                needed: needed.map(|n| n.ceil() as u64),
                needed_bonferroni: needed_b.map(|n| n.ceil() as u64),
                deals_needed: needed.map(|n| (n / arrangements as f64).ceil() as u64),
                deals_needed_bonferroni: needed_b.map(|n| (n / arrangements as f64).ceil() as u64),
                planned,
                power: if n > 0.0 {
                    normal_ind_power(es, n, alpha, 1.0)
                } else {
                    0.0
                },
                power_bonferroni: if n > 0.0 {
                    normal_ind_power(es, n, alpha_k, 1.0)
                } else {
                    0.0
                },
                mde_bonferroni: (n > 0.0).then(|| z * (2.0 * sigma2 / n).sqrt()),
            }
        })
        .collect()
}
