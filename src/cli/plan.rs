//! `dhumbal-run plan FILE`: sample sizes before a run, from the paper's eq. 5 or a pilot's
//! measured variances.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::scenario::Overrides;

use super::settings;

/// `dhumbal-run plan`.
#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The scenario file to plan.
    pub scenario: PathBuf,
    /// The difference to detect in the win rate (games won under point scoring): 0.05 =
    /// 5 percentage points.
    #[arg(long, default_value_t = 0.05, value_parser = settings::difference)]
    pub delta: f64,
    /// Two-sided significance level (before the Bonferroni correction).
    #[arg(long, default_value_t = 0.05, value_parser = settings::probability)]
    pub alpha: f64,
    /// Target power.
    #[arg(long, default_value_t = 0.8, value_parser = settings::probability)]
    pub power: f64,
    /// Replace every stage's sample size, as for a run.
    #[arg(long)]
    pub rounds: Option<u64>,
    /// A finished run (or stage folder) of the same design to plan from: each pair's
    /// measured SD of the deal (game) differences carries the design effect. Stages are
    /// matched by name (a one-stage scenario takes a one-stage pilot whatever its name).
    #[arg(long, value_name = "DIR")]
    pub pilot: Option<PathBuf>,
}

/// `dhumbal-run plan`.
pub fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let PlanArgs {
        scenario: path,
        delta,
        alpha,
        power,
        rounds,
        pilot,
    } = args;
    let overrides = Overrides {
        rounds,
        ..Overrides::default()
    };
    let scenario = match settings::load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let pilot = match pilot {
        None => None,
        Some(dir) if !dir.is_dir() => {
            eprintln!("error: --pilot {}: not a folder", dir.display());
            return Ok(ExitCode::from(2));
        }
        Some(dir) => match dhumbal_report::plan::read_pilot(&dir) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("error: --pilot {}: {e:#}", dir.display());
                return Ok(ExitCode::from(if e.is_bad_input() { 2 } else { 1 }));
            }
        },
    };
    let plans = dhumbal_report::plan::plan(&scenario, delta, alpha, power, pilot.as_deref());
    println!(
        "Plan for a difference of {delta} in each stage's headline outcome (win rate; games won \
         under point scoring),\ntwo-sided, at alpha {alpha} / pairs (Bonferroni), power {power}.\n"
    );
    let count = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{}", x.ceil() as u64));
    let fixed = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |x| format!("{x:.d$}"));
    for p in &plans {
        let k = p.pairs.max(1);
        let units = format!("{}s", p.unit);
        let outcome = if p.metric == "game_win" {
            "games won"
        } else {
            "win rate"
        };
        println!(
            "stage `{}`: {} agents, {} pairs, {} arrangement{} per {}, {} {} planned; compares the {outcome}",
            p.stage,
            p.agents,
            p.pairs,
            p.arrangements,
            if p.arrangements == 1 { "" } else { "s" },
            p.unit,
            p.planned,
            units,
        );
        if let Some(m) = &p.pilot {
            println!(
                "  from the pilot ({}, {} {}, {} pairs measured; design effect {}; SD of the {} differences {} median, {} largest):",
                m.source,
                m.pilot_units,
                units,
                m.pairs,
                fixed(m.design_effect, 2),
                p.unit,
                fixed(m.sd_units.median, 4),
                fixed(m.sd_units.worst, 4),
            );
            println!(
                "    needed at alpha/{k}: {} {} for the median pair, {} for every pair",
                count(m.units_needed.median),
                units,
                count(m.units_needed.worst),
            );
            println!(
                "    this scenario: power {} for the median pair ({} for the least favourable); minimum detectable difference {} ({})",
                fixed(m.power.median, 3),
                fixed(m.power.worst, 3),
                fixed(m.mde.median, 4),
                fixed(m.mde.worst, 4),
            );
        }
        if let Some(note) = &p.pilot_note {
            println!("  pilot not used: {note}");
        }
        if let Some(warning) = &p.pilot_warning {
            println!("  note: {warning}");
        }
        let i = &p.independent;
        let one = if p.unit == "game" {
            "game (each arrangement)"
        } else {
            "round"
        };
        let label = if p.pilot.is_some() {
            format!("  for comparison, if every {one} were independent")
        } else {
            format!("  if every {one} were independent")
        };
        let rounds_word = if p.unit == "game" { "games" } else { "rounds" };
        println!(
            "{label} (eq. 5, n = 2 (z_(1-alpha/2) + z_power)^2 p(1-p) / delta^2, p = 1/players = {:.3}):",
            i.baseline
        );
        let show = |n: Option<u64>, u: Option<u64>| match (n, u) {
            (Some(n), Some(u)) => format!("{n} {rounds_word} per agent ({u} {units})"),
            _ => "-".to_string(),
        };
        println!(
            "    needed at alpha {alpha}: {}; at alpha/{k}: {}",
            show(i.needed, i.units_needed),
            show(i.needed_bonferroni, i.units_needed_bonferroni)
        );
        println!(
            "    this scenario: power {:.3} (at alpha/{k}: {:.3}); minimum detectable difference at alpha/{k}: {}{}",
            i.power,
            i.power_bonferroni,
            fixed(i.mde_bonferroni, 4),
            i.mde_bonferroni_deals_once
                .map_or(String::new(), |m| format!(
                    " ({m:.4} if the {} arrangements of a {} counted once)",
                    p.arrangements, p.unit
                )),
        );
    }
    if plans.iter().any(|p| p.pilot.is_none()) {
        println!(
            "\nEq. 5 counts every round (every arrangement of a game) as independent. They are \
             not: agents at one table are negatively correlated, the arrangements of one deal \
             repeat or balance its information, and the rounds of a game share its standings, so \
             the design's own power can be higher or lower. Run a small pilot of the same \
             design and plan with --pilot DIR: it measures each pair's variance."
        );
    }
    Ok(ExitCode::SUCCESS)
}
