//! The overview page of a run of several stages: `report.md` at the run's root. One line per
//! stage (its design, its winner, the winner's lead over the next agent and whether the stage
//! could tell the two apart), who advanced where and what decided it, then the last stage's
//! table, its pairwise tests and its figures, each stage's own report a link away.
//!
//! It reads only what is on disk (`manifest.json`, which names each stage's winner as the
//! runner chose it, and each stage's `stats.json`, through their types: [`Manifest`] and
//! [`StatsFile`]), so a run, a resumed run, `merge` and `report` write the same page, and it
//! never chooses a winner itself.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dhumbal_runner::resolved::ResolvedStage;
use dhumbal_runner::scenario::Seating;
use dhumbal_runner::scenario::rules_spec::ScoringName;
use dhumbal_runner::summary::{Manifest, ManifestStage};

use super::analyze::{Metric, headline};
use super::error::{Doing, Error, Result};
use super::stats_file::{self, StatsFile};
use super::tables::{self, num, pval};

/// Writes `reports/report.md` for the run in `run` (its `manifest.json`), whose stage reports
/// are under `reports` (the run folder itself, or `report --out`). `None` for a run of one
/// stage, which needs no overview. `ratings` are the settings of the ratings across stages
/// (`report --rating-resamples/--rating-anchor`; the stages' own reports use the same).
pub fn write_overview(
    run: &Path,
    reports: &Path,
    ratings: &super::ratings::RatingSettings,
) -> Result<Option<PathBuf>> {
    let manifest = Manifest::read(run)?;
    if manifest.stages.len() < 2 {
        return Ok(None);
    }
    let mut views = Vec::with_capacity(manifest.stages.len());
    for (i, stage) in manifest.stages.iter().enumerate() {
        let stats = StatsFile::read(&reports.join(&stage.name))?;
        views.push(StageView::new(
            stage,
            manifest.scenario.stages.get(i),
            stats,
        )?);
    }
    let text = page(&manifest, &views, run, reports);
    let text =
        super::sequential::with_overview(text, views.iter().map(|v| (v.name.as_str(), &v.stats)));
    let text = text + super::sweep::section(&manifest, run, reports).as_str();
    let text = text + super::cost::section(&manifest, reports).as_str();
    // The ratings across stages still read the manifest by key (ratings.rs).
    let json = serde_json::to_value(&manifest).doing("cannot read", &run.join("manifest.json"))?;
    let text = super::ratings::with_overview(text, run, reports, &json, ratings);
    let path = reports.join("report.md");
    std::fs::write(&path, text).doing("cannot write", &path)?;
    Ok(Some(path))
}

/// One stage as the overview needs it.
struct StageView {
    name: String,
    stats: StatsFile,
    /// Agents in slot order; each with the stage it advanced from, if any.
    agents: Vec<(String, Option<String>)>,
    winner: String,
    decided_by: String,
    /// Point games: the headline is games won, else rounds won.
    points: bool,
}

impl StageView {
    fn new(stage: &ManifestStage, spec: Option<&ResolvedStage>, stats: StatsFile) -> Result<Self> {
        let name = stage.name.clone();
        if stats.agents.is_empty() {
            return Err(Error::Inconsistent(format!(
                "stage `{name}`: its {} lists no agents",
                stats_file::FILE
            )));
        }
        let from = |i: usize| spec.and_then(|s| s.agents.get(i)?.winner_of.clone());
        let agents = (stats.agents.iter().enumerate())
            .map(|(i, a)| (a.agent.clone(), from(i)))
            .collect();
        Ok(StageView {
            name,
            agents,
            winner: stage.winner.agent.clone(),
            decided_by: stage.winner.decided_by.clone(),
            points: stats.info.points,
            stats,
        })
    }

    /// The headline rate of an agent (rounds won, or games won) with its interval.
    fn rate(&self, id: &str) -> Option<(f64, f64, f64)> {
        let r = self.stats.agent(id)?.headline(self.points)?;
        estimate(r.rate, r.ci95)
    }

    /// The smallest difference in the headline rate that the stage detects with power 0.8 for
    /// its least favourable pair (the report's `power.design`): not the winner's pair's.
    fn worst_mde(&self) -> Option<f64> {
        self.stats.power.design.mde.worst
    }

    /// The pair's own 95% interval of the difference `a` minus `b`, and its critical
    /// difference at the stage's Bonferroni level (stats.json's `ci95`, `critical_difference`).
    fn lead_interval(&self, a: &str, b: &str) -> (Option<(f64, f64)>, Option<f64>) {
        let Some((t, sign)) = self.stats.primary(self.headline_metric(), a, b) else {
            return (None, None);
        };
        let ci = t.ci95.map(|[lo, hi]| {
            let (lo, hi) = (sign * lo, sign * hi);
            (lo.min(hi), lo.max(hi))
        });
        (ci, t.critical_difference)
    }

    /// The stage's Bonferroni level α/k, k its pairs.
    fn alpha_k(&self) -> Option<f64> {
        let p = &self.stats.power;
        Some(p.alpha / p.pairs.max(1) as f64)
    }

    fn headline_metric(&self) -> Metric {
        headline(self.points)
    }

    fn headline_name(&self) -> &'static str {
        if self.points { "games won" } else { "win rate" }
    }

    /// The primary test of the headline metric between `a` and `b`: the difference a - b, its
    /// p-value as the stars use it (Holm), and the stars.
    fn test(&self, a: &str, b: &str) -> Option<(f64, f64, String)> {
        self.test_of(self.headline_metric(), a, b)
    }

    /// [`Self::test`] of another metric (`economic`: coins, or minus points, per round).
    fn test_of(&self, metric: Metric, a: &str, b: &str) -> Option<(f64, f64, String)> {
        let (t, sign) = self.stats.primary(metric, a, b)?;
        Some((sign * t.difference?, t.p_holm?, t.stars.clone()))
    }

    /// The agent with the best headline rate after the winner (ties: listed first).
    fn runner_up(&self) -> Option<&str> {
        let mut best: Option<(&str, f64)> = None;
        for (id, _) in &self.agents {
            if *id == self.winner {
                continue;
            }
            let r = self.rate(id).map_or(f64::NEG_INFINITY, |r| r.0);
            if best.is_none_or(|(_, b)| r > b) {
                best = Some((id, r));
            }
        }
        best.map(|(id, _)| id)
    }

    fn design(&self) -> String {
        let d = &self.stats.design;
        let (units, unit, arrangements) = (d.units, d.unit.as_str(), d.arrangements);
        let kind = match d.seating {
            Seating::Rotate => "rotations",
            Seating::Permute => "seat permutations",
            Seating::Random => "random seating",
            Seating::Fixed => "fixed seats",
        };
        let rounds = d.rounds;
        if arrangements > 1 && unit == "game" {
            format!(
                "{} games × {arrangements} {kind} = {} games, {} rounds",
                thousands(units),
                thousands(units * arrangements),
                thousands(rounds)
            )
        } else if arrangements > 1 {
            format!(
                "{} {unit}s × {arrangements} {kind} = {} rounds",
                thousands(units),
                thousands(rounds)
            )
        } else {
            format!(
                "{} {unit}s, {kind}, {} rounds",
                thousands(units),
                thousands(rounds)
            )
        }
    }
}

fn thousands(n: u64) -> String {
    dhumbal_plots::group_thousands(&n.to_string())
}

fn pct(x: f64) -> String {
    num(Some(100.0 * x), 2)
}

/// An estimate of stats.json (a rate or a mean) with its 95% interval.
pub(crate) fn estimate(m: Option<f64>, ci95: Option<[f64; 2]>) -> Option<(f64, f64, f64)> {
    let [lo, hi] = ci95?;
    Some((m?, lo, hi))
}

/// `m [lo, hi]` with two decimals, each times `scale` (100 for a rate in percent).
fn interval(e: Option<(f64, f64, f64)>, scale: f64) -> String {
    match e {
        Some((m, lo, hi)) => format!(
            "{} [{}, {}]",
            num(Some(scale * m), 2),
            num(Some(scale * lo), 2),
            num(Some(scale * hi), 2)
        ),
        None => "–".into(),
    }
}

pub(crate) fn rate_text(r: Option<(f64, f64, f64)>) -> String {
    interval(r, 100.0)
}

/// A markdown cell: `|` would end it.
pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The page: what ran, a line per stage, who advanced where, the last stage in full, and
/// what the columns mean.
fn page(manifest: &Manifest, views: &[StageView], run: &Path, reports: &Path) -> String {
    let mut out = header(manifest, views.len(), run, reports);
    let _ = writeln!(out, "## Stages\n");
    let _ = writeln!(
        out,
        "| stage | players | design | agents | winner | its rate, 95% CI | lead over the next, 95% CI of the difference | p (Holm) | significant from (this pair, α/k) | least favourable pair detects (power 0.8) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    for v in views {
        let _ = writeln!(out, "{}", stage_row(v));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", advancement(views));

    if let Some(last) = views.last() {
        last_stage(&mut out, last, reports);
    }
    out.push_str(&definitions(&views[0]));
    out
}

/// The page's title, the scenario's description and what ran.
fn header(manifest: &Manifest, stages: usize, run: &Path, reports: &Path) -> String {
    let mut out = String::new();
    let scenario = &manifest.scenario;
    let _ = writeln!(out, "# {}: overview\n", cell(&scenario.name));
    if let Some(d) = scenario.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "{d}\n");
    }
    // The copy of the scenario sits in the run folder, which is not this page's folder when
    // the report was written elsewhere (`report --out`).
    let source = if same_folder(run, reports) {
        "[source/](source/)".to_string()
    } else {
        format!("`{}`", run.join("source").display())
    };
    let _ = writeln!(
        out,
        "Seed {}, {stages} stages, {} rounds{}. Scenario: `{}` (as run: {source}). Each \
         stage's report (statistics, tables, figures) is linked from its name.\n",
        manifest.seed,
        thousands(manifest.rounds),
        Some(manifest.wall_seconds)
            .filter(|_| manifest.merged_from.is_none())
            .map(|s| format!(" in {} s", num(Some(s), 1)))
            .unwrap_or_default(),
        manifest.scenario_file,
    );
    out
}

/// A stage's row of the table of stages: its design, its winner and the winner's lead over the
/// next agent.
fn stage_row(v: &StageView) -> String {
    let agents: Vec<String> = v
        .agents
        .iter()
        .map(|(id, from)| match from {
            Some(s) => format!("{id} (winner of {s})"),
            None => id.clone(),
        })
        .collect();
    let mut critical = "–".to_string();
    let (lead, p) = match v.runner_up() {
        Some(next) => match v.test(&v.winner, next) {
            Some((d, p, stars)) => (
                {
                    let (ci, crit) = v.lead_interval(&v.winner, next);
                    if let Some(c) = crit {
                        critical = format!(
                            "±{} points{}",
                            num(Some(100.0 * c), 2),
                            v.alpha_k()
                                .map(|a| format!(" (α/k = {})", pval(Some(a))))
                                .unwrap_or_default()
                        );
                    }
                    format!(
                        "{} percentage points over {next}{}",
                        signed(100.0 * d),
                        ci.map(|(lo, hi)| format!(
                            " [{}, {}]",
                            signed(100.0 * lo),
                            signed(100.0 * hi)
                        ))
                        .unwrap_or_default()
                    )
                },
                format!(
                    "{}{}",
                    pval(Some(p)),
                    if stars.is_empty() {
                        String::new()
                    } else {
                        format!(" {stars}")
                    }
                ),
            ),
            None => ("–".into(), "–".into()),
        },
        None => ("–".into(), "–".into()),
    };
    format!(
        "| [{n}](<{n}/report.md>) | {} | {} | {} | **{}** | {} | {} | {} | {} | {} |",
        v.stats.design.players,
        v.design(),
        cell(&agents.join(", ")),
        cell(&v.winner),
        rate_text(v.rate(&v.winner)),
        cell(&lead),
        p,
        critical,
        v.worst_mde().map_or("–".into(), |m| format!(
            "{} points",
            num(Some(100.0 * m), 2)
        )),
        n = v.name,
    )
}

/// What the columns mean, in the first stage's unit and with its stars.
fn definitions(first: &StageView) -> String {
    format!(
        "## Definitions\n\n\
         A stage's winner is the agent `winner_of` seats: the highest win rate (games won under \
         point scoring), economic performance (coins, or minus points, per round) breaking a tie, \
         then the order of the list. The winner's lead is the primary test's difference between \
         the winner and the next agent, with that pair's own 95% interval of the difference \
         (`ci95` of its row in stats.json's `pairwise`). *Significant from* is that pair's \
         critical difference: the smallest lead its test declares significant at the stage's \
         Bonferroni level α/k, k the stage's pairs (`critical_difference`; Holm's step-down \
         uses α/k for the smallest p-value and larger levels after it). *Least favourable pair \
         detects* is another quantity, about another pair: the smallest difference the stage's \
         least favourable pair (the one whose difference varies most) detects with power 0.8 \
         at α/k (`power.design.mde.worst`), larger than a critical difference by about \
         z_power·se. Rates are rounds won (games won under point scoring) with \
         95% intervals by the design's unit (the {}, every arrangement of it together); \
         p-values are the {}, and * p<0.05, ** p<0.01, *** p<0.001. \
         Every number here is in the stages' `stats.json`; docs/analysis.md defines them.\n",
        first.stats.design.unit, first.stats.stars_on
    )
}

/// [`tables::signed`] with a true minus.
fn signed(x: f64) -> String {
    tables::signed(x).replace('-', "−")
}

/// Who advanced where, what decided each winner, and which winners the stage could not tell
/// from the next agent.
fn advancement(views: &[StageView]) -> String {
    let mut out = String::new();
    for v in views {
        let seated: Vec<String> = v
            .agents
            .iter()
            .filter_map(|(id, from)| from.as_ref().map(|s| format!("{id} from `{s}`")))
            .collect();
        if seated.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "- `{}` seats the winners of earlier stages: {}.",
            v.name,
            seated.join(", ")
        );
        // A winner that advanced on a lead its stage did not resolve: what it does here may
        // not be its category's best.
        for (id, from) in &v.agents {
            let Some(src) = from
                .as_ref()
                .and_then(|s| views.iter().find(|w| &w.name == s))
            else {
                continue;
            };
            let Some(next) = src.runner_up() else {
                continue;
            };
            if let Some((_, p, _)) = src.test(&src.winner, next).filter(|t| t.1 >= 0.05) {
                let _ = writeln!(
                    out,
                    "  - {id} advanced from `{}` on a lead that stage did not resolve (p = {} against \
                     {next}): {next} might have done as well here.",
                    src.name,
                    pval(Some(p))
                );
            }
        }
    }
    for v in views {
        let Some(next) = v.runner_up() else { continue };
        let (Some(w), Some(n)) = (v.rate(&v.winner), v.rate(next)) else {
            continue;
        };
        let how = match v.decided_by.as_str() {
            "economic" => format!(
                "{} tied with {next} on {} and won on economic performance",
                v.winner,
                v.headline_name()
            ),
            "order" => format!(
                "{} tied with {next} on {} and on economic performance, and won by being listed first",
                v.winner,
                v.headline_name()
            ),
            _ => format!(
                "{} won with {}% against {next}'s {}%",
                v.winner,
                pct(w.0),
                pct(n.0)
            ),
        };
        let verdict = match v.test(&v.winner, next) {
            Some((_, p, _)) if p < 0.05 => {
                format!("a difference the stage resolves (p = {})", pval(Some(p)))
            }
            Some((_, p, _)) => format!(
                "**a difference the stage cannot tell from chance** (p = {}): the choice of winner is within noise at this sample size (`dhumbal-run plan` says how many {}s would resolve a given difference)",
                pval(Some(p)),
                v.stats.design.unit
            ),
            None => "no test of the pair".into(),
        };
        let _ = writeln!(out, "- `{}`: {how}, {verdict}.", v.name);
    }
    out
}

/// The last stage in full: every agent's rate, economic performance and call success, the
/// pairwise tests of the headline, and its figures.
fn last_stage(out: &mut String, v: &StageView, reports: &Path) {
    let _ = writeln!(out, "\n## The last stage: `{}`\n", v.name);
    let coins = v.stats.design.scoring == ScoringName::Coins;
    let _ = writeln!(
        out,
        "| agent | {} | {} | call success |\n|---|---|---|---|",
        v.headline_name(),
        if coins {
            "coins per round"
        } else {
            "minus points per round"
        }
    );
    let mut order: Vec<&(String, Option<String>)> = v.agents.iter().collect();
    order.sort_by(|a, b| {
        let r = |id: &str| v.rate(id).map_or(f64::NEG_INFINITY, |r| r.0);
        r(&b.0).total_cmp(&r(&a.0))
    });
    for (id, from) in order {
        let a = v.stats.agent(id);
        let econ = a.and_then(|a| estimate(a.economic.mean, a.economic.ci95));
        let calls = a.and_then(|a| estimate(a.call_success.rate, a.call_success.ci95));
        let (econ, calls) = (interval(econ, 1.0), interval(calls, 100.0));
        let name = match from {
            Some(s) => format!("{id} (winner of `{s}`)"),
            None => id.clone(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {econ} | {calls} |",
            cell(&name),
            rate_text(v.rate(id))
        );
    }
    let econ_name = if coins {
        "coins per round (row minus column)"
    } else {
        "minus points per round (row minus column)"
    };
    let headline = format!(
        "{} (row minus column, percentage points)",
        v.headline_name()
    );
    for (metric, what, scale) in [
        (v.headline_metric(), headline.as_str(), 100.0),
        (Metric::Economic, econ_name, 1.0),
    ] {
        pairwise_matrix(out, v, metric, what, scale);
    }
    let _ = writeln!(out);
    let headline = if v.points {
        ("game_win", "Games won with 95% intervals")
    } else {
        ("win_rate", "Win rates with 95% intervals")
    };
    for (stem, what) in [headline, ("cumulative_wins", "Cumulative wins")] {
        let figure = format!("{}/figures/{stem}.svg", v.name);
        if reports.join(&figure).is_file() {
            let _ = writeln!(out, "![{what}, stage {}](<{figure}>)\n", v.name);
        }
    }
}

/// The primary tests of `metric` between every two agents of a stage, as a matrix: the
/// difference (times `scale`), its stars and its Holm-adjusted p.
fn pairwise_matrix(out: &mut String, v: &StageView, metric: Metric, what: &str, scale: f64) {
    let _ = writeln!(out, "\nPairwise, {what}; p Holm-adjusted:\n");
    let ids: Vec<&str> = v.agents.iter().map(|(id, _)| id.as_str()).collect();
    let _ = writeln!(
        out,
        "| | {} |\n|---|{}",
        ids.iter().map(|s| cell(s)).collect::<Vec<_>>().join(" | "),
        "---|".repeat(ids.len())
    );
    for a in &ids {
        let row: Vec<String> = ids
            .iter()
            .map(|b| {
                if a == b {
                    String::new()
                } else {
                    match v.test_of(metric, a, b) {
                        Some((d, p, stars)) => {
                            format!("{} {stars} (p {})", signed(scale * d), pval(Some(p)))
                        }
                        None => "–".into(),
                    }
                }
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", cell(a), row.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_in_the_reports() {
        assert_eq!(thousands(17400), "17,400");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(signed(3.674), "+3.67");
        assert_eq!(signed(-2.1), "−2.10");
        assert_eq!(signed(0.001), "0.00");
    }
}
