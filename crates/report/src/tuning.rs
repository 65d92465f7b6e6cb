//! The report of a tuning (`tune/<id>/`, docs/tuning.md): what was searched and how, the best
//! parameters as an entry to paste, the points evaluated most and best, the figures (the
//! search's course, and each parameter's effect), and the confirmation's verdict from its
//! sequential test (`confirm/`). It reads only what is on disk: `manifest.json`, the search's
//! log and the confirmation stage's records.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use dhumbal_plots::{self as plots, Band, Width};
use dhumbal_runner::scenario::Objective;
use dhumbal_runner::tune::{Evaluation, LOG, Manifest, Searched};

use super::dist::t_quantile;
use super::error::{Doing, Result};
use super::load::InputError;
use super::tables::num;

/// Whether `dir` is a tuning's folder (`tune/<id>/`).
pub fn is_tuning(dir: &Path) -> bool {
    dir.join(LOG).is_file() && dir.join(dhumbal_runner::tune::manifest::FILE).is_file()
}

/// Writes `report.md` and `figures/` of the tuning in `dir`; returns the page's path.
pub fn report(dir: &Path) -> Result<PathBuf> {
    let manifest = Manifest::read(dir)?;
    let Some(result) = &manifest.result else {
        return Err(InputError::new(
            dir,
            format!(
                "the search of tuning `{}` in {} has not ended (its manifest says {:?}): \
                 `dhumbal-run tune FILE --resume` finishes it",
                manifest.id,
                dir.display(),
                manifest.status
            ),
        )
        .into());
    };
    let evals = read_evaluations(&dir.join(LOG))?;
    let y = Scale::of(manifest.objective);
    let params: Vec<(String, Vec<Value>)> = manifest
        .parameters
        .iter()
        .map(|p| (p.name.clone(), p.choices.clone()))
        .collect();
    let figures = dir.join("figures");
    std::fs::create_dir_all(&figures).doing("cannot create", &figures)?;
    let mut out = header(&manifest, result, y.unit, evals.len());
    final_round_section(&mut out, &evals, &params, &y, &result.best_point);
    points_section(&mut out, &evals, &params, &y);
    figures_section(&mut out, &figures, &evals, &params, &y)?;
    confirmation_section(&mut out, &dir.join("confirm"));
    let page = dir.join("report.md");
    std::fs::write(&page, out).doing("cannot write", &page)?;
    Ok(page)
}

/// How the objective is shown: its values times `factor`, in `unit`, on an axis named `axis`.
struct Scale {
    factor: f64,
    unit: &'static str,
    axis: &'static str,
}

impl Scale {
    fn of(objective: Objective) -> Scale {
        let (factor, unit, axis) = match objective {
            Objective::Economic => (1.0, "coins per round", "Coins per round"),
            Objective::Games => (100.0, "% of games won", "Games won (%)"),
            Objective::Win => (100.0, "% of rounds won", "Rounds won (%)"),
        };
        Scale { factor, unit, axis }
    }
}

/// The final round: each candidate's mean over its final-round evaluations alone, which is
/// what chose the agent file's point (its search evaluations, for which it was a candidate,
/// are left out).
fn final_round_section(
    out: &mut String,
    evals: &[Evaluation],
    params: &[(String, Vec<Value>)],
    y: &Scale,
    best: &[f64],
) {
    let ranked = dhumbal_runner::tune::final_round(evals);
    if ranked.is_empty() {
        return;
    }
    let scale = y.factor;
    let _ = writeln!(
        out,
        "## The final round

The candidates played again on fresh deals, best first by their          mean over these evaluations alone (their search evaluations, for which they were          chosen, are left out); the agent file got the first.

| Parameters | Evaluations |          Deals | {} (final round) [95% CI over its evaluations] |
|---|---:|---:|---:|",
        y.axis
    );
    for (point, mean) in &ranked {
        let mine: Vec<&Evaluation> = (evals.iter())
            .filter(|e| e.stage == 1 && e.point == *point)
            .collect();
        let values: Vec<f64> = mine.iter().map(|e| e.value).collect();
        let (_, ci) = mean_ci(&values);
        let chosen = if point.as_slice() == best {
            " **(chosen)**"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {}{chosen} | {} | {} | {}{} |",
            label(params, point),
            mine.len(),
            mine.iter().map(|e| e.deals).sum::<u64>(),
            num(Some(mean * scale), 2),
            ci.map_or(String::new(), |(lo, hi)| format!(
                " [{}, {}]",
                num(Some(lo * scale), 2),
                num(Some(hi * scale), 2)
            ))
        );
    }
    out.push('\n');
}

/// The points evaluated most often, with their means and intervals.
fn points_section(
    out: &mut String,
    evals: &[Evaluation],
    params: &[(String, Vec<Value>)],
    y: &Scale,
) {
    let (scale, objective_name) = (y.factor, y.axis);
    // The points evaluated most often, with their means.
    let mut by_point: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for e in evals {
        by_point
            .entry(label(params, &e.point))
            .or_default()
            .push(e.value);
    }
    // (parameters, evaluations, mean, interval)
    type Row = (String, usize, f64, Option<(f64, f64)>);
    let mut rows: Vec<Row> = by_point
        .iter()
        .map(|(l, v)| {
            let (m, ci) = mean_ci(v);
            (l.clone(), v.len(), m, ci)
        })
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.total_cmp(&a.2)));
    let _ = writeln!(
        out,
        "## The points evaluated most\n\n| Parameters | Evaluations | {objective_name} [95% CI over its evaluations] |\n|---|---:|---:|"
    );
    for (l, n, m, ci) in rows.iter().take(10) {
        let _ = writeln!(
            out,
            "| {l} | {n} | {}{} |",
            num(Some(m * scale), 2),
            ci.map_or(String::new(), |(lo, hi)| format!(
                " [{}, {}]",
                num(Some(lo * scale), 2),
                num(Some(hi * scale), 2)
            ))
        );
    }
    let _ = writeln!(
        out,
        "\n{} distinct points in all; every evaluation is in `evaluations.parquet` (one row \
         per evaluation: the parameters, the objective and its interval, the deals).\n",
        by_point.len()
    );
}

/// The search's course and each parameter's effect, as figures written into `figures`.
fn figures_section(
    out: &mut String,
    figures: &Path,
    evals: &[Evaluation],
    params: &[(String, Vec<Value>)],
    y: &Scale,
) -> Result<()> {
    let (scale, unit, objective_name) = (y.factor, y.unit, y.axis);
    // Figures.
    let _ = writeln!(out, "## Figures\n");
    let course = course(evals, params, scale);
    let fig = plots::lines("", "Evaluation", objective_name, &course, Width::OneColumn)?;
    fig.write(figures, "search")?;
    let searched = evals.iter().filter(|e| e.stage == 0).count();
    let final_round = if searched < evals.len() {
        format!(
            " Evaluations {} to {} are the final round: the best candidates played again on \
             fresh deals, the agent file getting the candidate with the best mean over its \
             final-round evaluations alone (the table \"The final round\" above).",
            searched + 1,
            evals.len()
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "![The search](figures/search.svg)\n\n*The search: each evaluation's {unit} (shaded: \
         its 95% interval over its deals), and the estimate of the point recommended after \
         it (the mean of every evaluation of that point so far). A flat recommended line \
         over noisy evaluations is a search that found nothing better than its estimates \
         can tell apart.{final_round}*\n"
    );
    for (k, (name, choices)) in params.iter().enumerate() {
        let mut at: BTreeMap<i64, (f64, Vec<f64>)> = BTreeMap::new();
        for e in evals {
            let x = e.point[k];
            at.entry((x * 1e6).round() as i64)
                .or_insert((x, Vec::new()))
                .1
                .push(e.value * scale);
        }
        let mut line = Vec::new();
        let mut band = Vec::new();
        for (x, v) in at.values() {
            let (m, ci) = mean_ci(v);
            line.push((*x, m));
            if let Some((lo, hi)) = ci {
                // A rate's interval stays within 0% and 100% (with two evaluations at a value
                // the t interval is wide enough to leave them).
                let (lo, hi) = if scale == 100.0 {
                    (lo.max(0.0), hi.min(100.0))
                } else {
                    (lo, hi)
                };
                band.push((*x, lo, hi));
            }
        }
        let series = vec![Band {
            label: name.clone(),
            points: line,
            band: Some(band),
        }];
        let x_label = if choices.is_empty() {
            name.clone()
        } else {
            format!(
                "{name} ({})",
                choices
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{i}: {}", compact(c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let stem = format!("param-{}", name.replace(['.', '/'], "_"));
        let fig = plots::lines("", &x_label, objective_name, &series, Width::OneColumn)?;
        fig.write(figures, &stem)?;
        let _ = writeln!(
            out,
            "![{name}](figures/{stem}.svg)\n\n*`{name}`: the mean {unit} of the evaluations at \
             each value (whatever the other parameters were), shaded: the 95% t interval over \
             them where there are two or more (cut at 0% and 100%). The optimizer visits good values more often, \
             so the values tried once or twice say little; a flat line says the parameter \
             matters little against these opponents.*\n"
        );
    }

    Ok(())
}

/// The confirmation's verdict, from its sequential test (the stage in `confirm`).
fn confirmation_section(out: &mut String, confirm: &Path) {
    // The confirmation.
    let _ = writeln!(out, "## Confirmation on fresh deals\n");
    match super::sequential::outcome(confirm) {
        Ok(Some(o)) => {
            let verdict = match o.decision.as_str() {
                "H1" => format!(
                    "**The tuned agent is better than the start** (H1 accepted at alpha = {}, \
                     beta = {}).",
                    o.plan.alpha, o.plan.beta
                ),
                "H0" => format!(
                    "**The tuned agent is not shown better than the start by {}** (H0 \
                     accepted at alpha = {}, beta = {}): keep the start, or tune with more \
                     deals.",
                    o.bound(true),
                    o.plan.alpha,
                    o.plan.beta
                ),
                _ => "**Undecided**: the confirmation reached its maximum before either bound; \
                      the difference, if any, is smaller than it can resolve."
                    .to_string(),
            };
            let _ = writeln!(
                out,
                "{verdict} {}\n\n{}\nThe stage's full report: [confirm/report.md](confirm/report.md).\n",
                o.sentence(),
                super::sequential::markdown(&o).replacen("## ", "### ", 1)
            );
        }
        Ok(None) => {
            let _ = writeln!(
                out,
                "Not played (`confirm: false`, or the run stopped before it).\n"
            );
        }
        Err(e) => {
            let _ = writeln!(out, "Could not be read: {e:#}.\n");
        }
    }
}

/// The page's title, what was searched and how, and the best parameters.
fn header(m: &Manifest, result: &Searched, unit: &str, evaluations: usize) -> String {
    let deals = m.deal_word();
    let mut out = String::new();
    let _ = writeln!(out, "# Tuning `{}`\n", m.id);
    let _ = writeln!(
        out,
        "Tuned {} of `{}` ({} players, {} seating) against {}, maximising {unit}, by {} within \
         {} {deals} ({} per evaluation, seed {}). {evaluations} evaluations played {} {deals}.\n",
        list(m.parameters.iter().map(|p| format!("`{}`", p.name))),
        compact(&m.start),
        m.players,
        m.seating.as_str(),
        list(
            m.lineups
                .iter()
                .map(|l| format!("[{}]", list(l.iter().map(|a| format!("`{a}`")))))
        ),
        result.method.title(),
        m.budget,
        m.batch,
        m.seed,
        result.deals,
    );
    let _ = writeln!(
        out,
        "Optimizer settings: `{}`. Every evaluation played deals of its own (none is played \
         twice, and none is the confirmation's), so the search's estimates carry no \
         selection on the deals; the best point's estimate is still optimistic (the winner's \
         curse), which is why the confirmation below plays fresh deals.\n",
        compact(&result.optimizer)
    );
    let _ = writeln!(out, "## Best parameters\n");
    let _ = writeln!(
        out,
        "{}\n\nAs an agent entry (written to `{}`; seat it with `tuned: {}`, or paste this \
         under `agents:`):\n\n```yaml\n{}\n```\n\nThe start (the agent as written, which the \
         confirmation plays against) was `{}`; the search began at the grid point nearest it, \
         `{}`.\n",
        result.best_label,
        m.output,
        m.output,
        compact(&result.best),
        compact(&m.start),
        compact(&m.search_start),
    );
    out
}

fn read_evaluations(path: &Path) -> Result<Vec<Evaluation>> {
    let text = std::fs::read_to_string(path).doing("cannot read", path)?;
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// `a, b and c`.
fn list(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    match v.len() {
        0 => String::new(),
        1 => v[0].clone(),
        n => format!("{} and {}", v[..n - 1].join(", "), v[n - 1]),
    }
}

/// A value as one line of YAML-compatible JSON.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn label(params: &[(String, Vec<Value>)], point: &[f64]) -> String {
    params
        .iter()
        .zip(point)
        .map(|((n, choices), &x)| {
            if choices.is_empty() {
                format!("{n}={}", trim(x))
            } else {
                format!("{n}={}", compact(&choices[x as usize]))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn trim(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Mean and 95% t interval (none for fewer than two values).
fn mean_ci(v: &[f64]) -> (f64, Option<(f64, f64)>) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, None);
    }
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t_quantile(0.975, n - 1.0) * (var / n).sqrt();
    (m, Some((m - half, m + half)))
}

/// The search's course: each evaluation with its interval, and the recommended point's
/// running estimate.
fn course(evals: &[Evaluation], params: &[(String, Vec<Value>)], scale: f64) -> Vec<Band> {
    let evaluated = Band {
        label: "evaluated point".into(),
        points: evals
            .iter()
            .enumerate()
            .map(|(i, e)| ((i + 1) as f64, e.value * scale))
            .collect(),
        band: Some(
            evals
                .iter()
                .enumerate()
                .map(|(i, e)| ((i + 1) as f64, e.ci_low * scale, e.ci_high * scale))
                .collect(),
        ),
    };
    let mut seen: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut recommended = Vec::new();
    for (i, e) in evals.iter().enumerate() {
        seen.entry(label(params, &e.point))
            .or_default()
            .push(e.value * scale);
        if let Some(v) = seen.get(&label(params, &e.recommended)) {
            recommended.push(((i + 1) as f64, v.iter().sum::<f64>() / v.len() as f64));
        }
    }
    vec![
        evaluated,
        Band {
            label: "recommended point (mean so far)".into(),
            points: recommended,
            band: None,
        },
    ]
}
