//! The report's section of a sequential stage: a fishtest-style result block in `report.md`,
//! the outcome in `stats.json` (`sequential`), and the figure of the LLR against deals with its
//! bounds (`figures/sequential_llr.*`). The test itself lives in `dhumbal_runner::sequential`
//! (re-exported here): the runner decides when such a stage stops, and keeps the outcome in the
//! stage's `sequential.json`; the report computes it again from the records and refuses a file
//! that does not follow from them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use dhumbal_runner::sequential::*;

use super::error::{Doing, Error};
use super::figures::{self, FigureSpec};
use super::stats_file::StatsFile;
use dhumbal_plots::{self as plots, Band, Width};

/// What readers are told of intervals after a sequential stop.
pub const BIAS_NOTE: &str = "The test stopped when its evidence crossed a bound, so the \
    fixed-sample estimate and its interval (computed as if the number of deals had been fixed \
    in advance) lean towards that bound and cover the truth less often than they say; the line \
    \"after the stop\" gives the median-unbiased estimate and a 95% interval that know the test \
    stopped (the stagewise ordering of the test's outcomes, Jennison and Turnbull 2000, \
    section 8.4). The decision, with its error rates alpha and beta, is the test's answer.";

/// The outcome of the sequential stage whose records are in `records`, computed again from
/// them with the plan its `sequential.json` keeps; `None` for a stage without one. Where the
/// folder holds no dataset (an older layout), the kept outcome is returned as it is.
pub fn outcome(records: &Path) -> crate::Result<Option<Outcome>> {
    let Some(kept) = Outcome::read(records)? else {
        return Ok(None);
    };
    if !dhumbal_runner::dataset::Dataset::exists(records) {
        return Ok(Some(kept));
    }
    let dataset = dhumbal_runner::dataset::Dataset::open(records)?;
    let again = kept.recompute(&dataset)?;
    if again.decision != kept.decision || again.matches != kept.matches {
        return Err(Error::Inconsistent(format!(
            "{}: {} says {} after {} matches, the records say {} after {}; run the stage \
             again with --resume to rewrite it",
            records.display(),
            DECISION_FILE,
            kept.decision,
            kept.matches,
            again.decision,
            again.matches
        )));
    }
    Ok(Some(again))
}

/// What the stage's matches are called.
fn unit_words(o: &Outcome) -> (&'static str, &'static str) {
    if o.shape.points {
        ("games", "games in all arrangements")
    } else if o.shape.rounds_per_match > 1 {
        ("sessions", "rounds")
    } else {
        ("deals", "rounds")
    }
}

fn signed(x: Option<f64>, digits: usize) -> String {
    // `+ 0.0` turns a negative zero into zero: "+0.0", never "-0.0".
    x.map_or("n/a".into(), |v| format!("{:+.digits$}", v + 0.0))
}

/// The fishtest-style block (Markdown), with its heading.
pub fn markdown(o: &Outcome) -> String {
    let p = &o.plan;
    let (unit, _) = unit_words(o);
    let mut out = format!(
        "## {}: `{}` against `{}`\n\n**{}.**\n\n```text\n",
        if p.decide {
            "Deciding the winner"
        } else {
            "Sequential test"
        },
        p.candidate,
        p.baseline,
        match o.decision.as_str() {
            _ if p.decide => {
                let s = o.sentence();
                let cut = s.find(", after").unwrap_or(s.len());
                let mut first = s[..cut].to_string();
                first[..1].make_ascii_uppercase();
                first
            }
            "H1" => format!(
                "H1 accepted: `{}` is stronger than `{}`",
                p.candidate, p.baseline
            ),
            "H0" => format!(
                "H0 accepted: `{}` is not stronger than `{}` by {}",
                p.candidate,
                p.baseline,
                o.bound(true)
            ),
            _ => format!(
                "Undecided at the maximum of {} {unit}: neither bound was reached",
                o.shape.max_matches
            ),
        }
    );
    out.push_str(&result_lines(o));
    out.push_str("```\n\n");
    out.push_str(&explanation(o));
    out
}

/// The block's lines of numbers: the LLR and bounds, the bounds on both scales, the deals, the
/// scores, the fixed-sample estimate and the one after the stop.
fn result_lines(o: &Outcome) -> String {
    let p = &o.plan;
    let (unit, games) = unit_words(o);
    let mut out = String::new();
    let wald = llr_bounds(if p.decide { o.bounds_alpha() } else { p.alpha }, p.beta);
    out.push_str(&format!(
        "LLR: {:.2} ({:.2}, {:.2}) [{:.2}, {:.2}] {}   alpha {}  beta {}{}\n",
        o.llr,
        o.bounds.0,
        o.bounds.1,
        p.elo0,
        p.elo1,
        p.elo_model.unit(),
        p.alpha,
        p.beta,
        if p.overshoot {
            format!(
                "   (bounds moved in for the overshoot between looks; Wald's: {:.2}, {:.2})",
                wald.0, wald.1
            )
        } else {
            String::new()
        }
    ));
    if let Some(sc) = &o.scales {
        out.push_str(&format!(
            "Bounds: nElo [{}, {}] = Elo per game [{}, {}], at this test's per-game standard \
             deviation {:.3}\n",
            signed(Some(sc.nelo[0]), 1),
            signed(Some(sc.nelo[1]), 1),
            signed(sc.elo[0], 1),
            signed(sc.elo[1], 1),
            sc.per_game_sd
        ));
    }
    let per = o.shape.arrangements * o.shape.rounds_per_match;
    out.push_str(&format!(
        "Total: {} {unit} of {} ({} {games}), looked at every {} {}\n",
        o.matches,
        o.shape.max_matches,
        o.matches * per,
        p.every * o.shape.rounds_per_match,
        if o.shape.points { "games" } else { "deals" }
    ));
    let dist: Vec<String> = o
        .distribution
        .iter()
        .map(|(x, n)| format!("{}: {n}", trim(*x)))
        .collect();
    out.push_str(&format!("Scores ({unit}): {}\n", dist.join(", ")));
    if let Some(e) = &o.estimate {
        let ci = |i: usize| {
            e.score_ci95
                .map_or("n/a".into(), |c| format!("{:.4}", c[i]))
        };
        out.push_str(&format!(
            "Score: {:.4} [{}, {}]   (fixed-sample)\n",
            e.score,
            ci(0),
            ci(1)
        ));
        out.push_str(&format!(
            "Elo: {} [{}, {}]   nElo: {} [{}, {}]   (fixed-sample)\n",
            signed(e.elo, 1),
            signed(e.elo_ci95[0], 1),
            signed(e.elo_ci95[1], 1),
            signed(e.nelo, 1),
            signed(e.nelo_ci95.map(|c| c[0]), 1),
            signed(e.nelo_ci95.map(|c| c[1]), 1),
        ));
    }
    if let Some(a) = &o.adjusted {
        out.push_str(&format!(
            "After the stop: Elo {} [{}, {}]   nElo {} [{}, {}]   score {:.4} [{:.4}, {:.4}]   \
             (median-unbiased, 95%)\n",
            signed(a.elo, 1),
            signed(a.elo_ci95[0], 1),
            signed(a.elo_ci95[1], 1),
            signed(Some(a.nelo), 1),
            signed(Some(a.nelo_ci95[0]), 1),
            signed(Some(a.nelo_ci95[1]), 1),
            a.score,
            a.score_ci95[0],
            a.score_ci95[1],
        ));
    }
    out
}

/// The paragraph under the block: what the test was, for a reader.
fn explanation(o: &Outcome) -> String {
    let p = &o.plan;
    let (unit, _) = unit_words(o);
    let mut out = String::new();
    if p.decide {
        out.push_str(&format!(
            "The stage's `decide:` rule: after every {every} {unit}, the leader by the \
             `winner_of` rule (win rate, then economic performance) on the {unit} so far, and a \
             GSPRT of the leader against every other agent on all of them (H0: {u} 0, H1: {u} \
             {e1}), each at α = {a} divided by the number of agents ({split}) and β = {b}; the \
             rival is the agent the leader is least resolved from (the lowest LLR, shown). The \
             stage stopped at the first look where that comparison crossed a bound, or at its \
             maximum. H1: the leader is resolved from every other agent; H0: not from its \
             rival, and the winner rule chose between them; undecided: the maximum came first, \
             and the winner rule chose. The leader is chosen again at every look: splitting α \
             over the agents that could be named keeps the rate of a false \"decided\" at or \
             below α (docs/analysis.md gives the simulated rates). The score is the leader's \
             against its rival, as in a `sequential:` test; it is a fixed-sample estimate of a \
             pair the data chose, and leans towards the bound that stopped the stage. \
             docs/analysis.md, \"Sequential tests\".\n\n",
            every = p.every * o.shape.rounds_per_match,
            u = p.elo_model.unit(),
            e1 = p.elo1,
            a = p.alpha,
            b = p.beta,
            split = format_args!("{:.4}", o.bounds_alpha()),
        ));
        return out;
    }
    out.push_str(&format!(
        "A generalized sequential probability ratio test (GSPRT, {model} Elo bounds, as \
         fishtest runs it) of `{c}` against `{b}`, on the design's unit: a {u} played under \
         every seating arrangement, scored for `{c}` as the mean over its games of 1 (it won \
         and `{b}` did not), 0 (the other way round) or 1/2 (both or neither). H0: {unit_e} = \
         {e0}, H1: {unit_e} = {e1}; the LLR was computed after every {every} {unit}, and the \
         stage stopped at the first look beyond the bounds: Wald's ln(β/(1−α)) and \
         ln((1−β)/α){moved}. Scores: how many {unit} scored each value. Elo is \
         −400·log10(1/score − 1) of the score per game (a game neither won counts 1/2), nElo \
         the score's distance from 1/2 in per-game standard deviations (×800/ln 10); the \
         \"Bounds\" line gives both at this test's spread. Fixed-sample intervals are 95% \
         normal intervals over {unit}. {BIAS_NOTE} Formulas and sources: docs/analysis.md, \
         \"Sequential tests\".\n\n",
        model = p.elo_model.name(),
        c = p.candidate,
        b = p.baseline,
        u = unit.trim_end_matches('s'),
        unit_e = p.elo_model.unit(),
        e0 = p.elo0,
        e1 = p.elo1,
        every = p.every * o.shape.rounds_per_match,
        moved = if p.overshoot {
            ", each moved in by the overshoot expected between looks (Siegmund's correction, \
             0.5826 times the LLR's standard deviation over a look)"
        } else {
            ""
        },
    ));
    out
}

fn trim(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A number for a figure's text, with a true minus sign (as the axes have).
fn minus(x: f64) -> String {
    format!("{x:.2}").replace('-', "\u{2212}")
}

/// The figure of the LLR against deals (games) with its two bounds.
pub fn figure(o: &Outcome) -> FigureSpec {
    let (unit, _) = unit_words(o);
    let per = o.shape.rounds_per_match as f64;
    let mut llr = vec![(0.0, 0.0)];
    llr.extend(o.checks.iter().map(|&(n, l)| (n as f64 * per, l)));
    let end = o.matches.max(1) as f64 * per;
    let flat = |label: &str, y: f64| Band {
        label: label.into(),
        points: vec![(0.0, y), (end, y)],
        band: None,
    };
    let series = vec![
        Band {
            label: "LLR".into(),
            points: llr,
            band: None,
        },
        flat(&format!("accept H1 ({})", minus(o.bounds.1)), o.bounds.1),
        flat(&format!("accept H0 ({})", minus(o.bounds.0)), o.bounds.0),
    ];
    let x_label = match unit {
        "games" => "Games",
        _ => "Deals",
    };
    FigureSpec {
        stem: "sequential_llr",
        place: figures::Place::Own,
        title: None,
        caption: format!(
            "{} `{}` against `{}`: the log-likelihood ratio of H1 ({} {}) against H0 ({} {}) \
             at each look, every {} {}, with its bounds; it stopped at {} {}: {}.",
            if o.plan.decide {
                "Deciding the winner (the leader at the last look against the second, chosen \
                 again at every look):"
            } else {
                "The sequential test of"
            },
            o.plan.candidate,
            o.plan.baseline,
            o.plan.elo_model.unit(),
            o.plan.elo1,
            o.plan.elo_model.unit(),
            o.plan.elo0,
            o.plan.every as f64 * per,
            x_label.to_lowercase(),
            o.matches as f64 * per,
            x_label.to_lowercase(),
            match o.decision.as_str() {
                "H1" => "H1 accepted",
                "H0" => "H0 accepted",
                _ => "undecided at the maximum",
            }
        ),
        draw: Box::new(move |title| plots::lines(title, x_label, "LLR", &series, Width::OneColumn)),
    }
}

/// A sequential stage's test as `stats.json` keeps it (`sequential`): the outcome, and what
/// readers are told of its intervals ([`BIAS_NOTE`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub note: String,
}

impl Entry {
    pub fn of(outcome: Outcome) -> Entry {
        Entry {
            outcome,
            note: format!("{BIAS_NOTE} Every other number of the stage is {FIXED_SAMPLE}."),
        }
    }
}

/// Adds the section of the test `o` to the stage's `page` (its `report.md`, before its first
/// section), with the figure drawn into `dir/figures` (when `draw`) and listed in `files`.
pub fn attach(
    o: &Outcome,
    page: &mut String,
    dir: &Path,
    draw: bool,
    files: &mut Vec<PathBuf>,
) -> crate::Result<()> {
    let mut block = markdown(o);
    if draw {
        let fig_dir = dir.join("figures");
        std::fs::create_dir_all(&fig_dir).doing("cannot create", &fig_dir)?;
        for drawn in figures::draw_all(vec![figure(o)], &fig_dir) {
            if let Some(e) = &drawn.error {
                return Err(Error::Figure {
                    stem: drawn.stem.to_string(),
                    message: e.clone(),
                });
            }
            files.extend(drawn.files.iter().cloned());
            block.push_str(&figures::markdown(&drawn, "figures"));
        }
    }
    block.push_str(&format!(
        "**Every number in the sections below is {FIXED_SAMPLE}.** The test's answer is its \
         decision{}.\n\n",
        if o.adjusted.is_some() {
            ", and its estimate after the stop is the one above"
        } else {
            ""
        }
    ));
    let at = page.find("\n## ").map_or(page.len(), |i| i + 1);
    page.insert_str(at, &block);
    Ok(())
}

/// The overview page `text` with a section on the stages that test sequentially (before the
/// last stage's section): each one's outcome in a sentence, saying for a `decide:` stage that
/// stopped without resolving its leader which rule chose the winner. `stages` are the run's
/// stages, in order, each with its `stats.json`; the page is unchanged without any test.
pub fn with_overview<'a>(
    text: String,
    stages: impl IntoIterator<Item = (&'a str, &'a StatsFile)>,
) -> String {
    let lines: Vec<String> = stages
        .into_iter()
        .filter_map(|(name, stats)| {
            let o = &stats.sequential.as_ref()?.outcome;
            Some(format!("- `{name}`: {}.", o.sentence()))
        })
        .collect();
    if lines.is_empty() {
        return text;
    }
    let section = format!(
        "## Stages that play until they decide\n\n{}\n\nEach is a GSPRT (`sequential:` of two \
         named agents, `decide:` of a stage's leader against every other agent); the stage's \
         report has the test in full, with its bounds as Elo and normalized Elo. Every \
         fixed-sample number of such a stage (its tables' intervals, p-values and power) is \
         computed as if its size had been fixed, and leans towards the bound that stopped it; \
         a `sequential:` stage's report gives the estimate that knows the stop.\n\n",
        lines.join("\n")
    );
    match text.find("\n## The last stage") {
        Some(i) => format!("{}\n{section}{}", &text[..i], &text[i + 1..]),
        None => format!("{text}\n{section}"),
    }
}
