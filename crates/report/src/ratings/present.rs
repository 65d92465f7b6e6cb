//! Ratings as a report shows them: a stage's [`Leaderboard`] ([`of_stage`], `stats.json`'s
//! `ratings`), `ratings.csv` ([`csv`]), the table ([`table`]), the figure ([`figure_spec`],
//! `figures/ratings.*`) and report.md's *Ratings* section ([`section`]); and the leaderboard of
//! all the stages of a run ([`across_stages`]), which [`with_overview`] puts on the run's
//! overview page.
//!
//! Imports: [`super::model`] and [`super::collect`], and of the report crate `figures`,
//! `tables`, `load` (a stage's description) and `analyze` (the name of the design's unit).
//! Never `metrics`, `report` or `overview`, which import it; nor may `model` or `collect`
//! import it: the model stays testable against the `choix` fixtures without records or
//! figures. It is the one part of `ratings` that `analyze` (the report's settings and a
//! stage's ratings) and `figures` (every figure of a page) name, and it names them back.

use std::path::Path;

use serde::Serialize;

use super::collect::{RunGames, run_games};
use super::model::{Data, Model, RatingError, RatingOptions};
use crate::analyze::unit_name;
use crate::figures::{self, FigureOutcome, FigureSpec, Place};
use crate::load::StageInfo;
use crate::tables::{Table, csv_num, num};

/// What a report's ratings use: resamples and the anchor (`Options::ratings`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatingSettings {
    /// Bootstrap resamples of the design's units (0: no intervals).
    pub resamples: usize,
    /// The agent rated 0, by id; `None`: `random` if there is one (by id, else by kind), else
    /// the first agent. A name the stage does not seat falls back the same way.
    pub anchor: Option<String>,
}

impl Default for RatingSettings {
    fn default() -> Self {
        RatingSettings {
            resamples: 200,
            anchor: None,
        }
    }
}

/// Mixed into the stage's (or run's) seed for the bootstrap's stream.
const SEED_SALT: u64 = 0x5241_5449_4e47_5321;

/// One agent on a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leader {
    /// 1 for the highest rating.
    pub rank: usize,
    pub agent: String,
    /// Elo relative to the anchor (the anchor's is 0).
    pub elo: f64,
    /// 95% percentile bootstrap interval (none without resamples; the anchor's is [0, 0]).
    pub ci95: Option<[f64; 2]>,
    /// Seats the agent played (each game counts each of its seats).
    pub seats: u64,
}

/// Ratings as a report shows them: `stats.json`'s `ratings`, `ratings.csv`, the figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leaderboard {
    /// `plackett-luce` or `bradley-terry`.
    pub model: &'static str,
    /// The agent at 0, and why it (`given`, `random`, `first agent`).
    pub anchor: String,
    pub anchor_rule: String,
    /// The bootstrap's unit (`deal`, `game`, `round`; `unit` across stages) and how many.
    pub unit: String,
    pub units: u64,
    pub games: u64,
    pub resamples: usize,
    /// Resamples without a maximum-likelihood estimate (not strongly connected), left out.
    pub disconnected_resamples: usize,
    pub seed: u64,
    /// Best first.
    pub agents: Vec<Leader>,
    /// Why there are no ratings (then `agents` is empty).
    pub refused: Option<String>,
}

/// The anchor's index among `names`, and why: the agent asked for, else `random` (by id,
/// then by kind), else the first agent.
fn choose_anchor(names: &[String], kinds: &[String], asked: Option<&str>) -> (usize, String) {
    if let Some(a) = asked
        && let Some(i) = names.iter().position(|n| n == a)
    {
        return (i, "given".into());
    }
    let fallback = |rule: &str| match asked {
        Some(a) => format!("{rule} (`{a}` is not an agent here)"),
        None => rule.to_string(),
    };
    if let Some(i) = names.iter().position(|n| n == "random") {
        return (i, fallback("random"));
    }
    if let Some(i) = kinds.iter().position(|k| k == "random") {
        return (i, fallback("random"));
    }
    (0, fallback("first agent"))
}

/// Why the anchor is the anchor, in words.
fn anchor_text(b: &Leaderboard) -> String {
    let (rule, rest) = b
        .anchor_rule
        .split_once(" (")
        .map_or((b.anchor_rule.as_str(), String::new()), |(r, x)| {
            (r, format!("; {}", x.trim_end_matches(')')))
        });
    let why = match rule {
        "given" => "as asked",
        "random" => "the default: the random agent",
        _ => "the default without a random agent: the first agent",
    };
    format!("{why}{rest}")
}

/// Rates `data` (agents `names`, of kinds `kinds`) as a report shows it.
pub fn leaderboard(
    names: &[String],
    kinds: &[String],
    data: &Data,
    settings: &RatingSettings,
    seed: u64,
    unit: &str,
) -> Leaderboard {
    let (anchor, rule) = choose_anchor(names, kinds, settings.anchor.as_deref());
    let seed = seed ^ SEED_SALT;
    let opts = RatingOptions {
        model: data.model(),
        anchor: Some(anchor),
        alpha: 0.0,
        resamples: settings.resamples,
        confidence: 0.95,
        seed,
        threads: 0,
    };
    let mut board = Leaderboard {
        model: match data.model() {
            Model::BradleyTerry => "bradley-terry",
            Model::PlackettLuce => "plackett-luce",
        },
        anchor: names.get(anchor).cloned().unwrap_or_default(),
        anchor_rule: rule,
        unit: unit.to_string(),
        units: data.units(),
        games: data.games(),
        resamples: 0,
        disconnected_resamples: 0,
        seed,
        agents: Vec::new(),
        refused: None,
    };
    match data.rate(&opts) {
        Ok(r) => {
            let mut order: Vec<usize> = (0..names.len()).collect();
            order.sort_by(|&a, &b| {
                r.ratings[b]
                    .elo
                    .total_cmp(&r.ratings[a].elo)
                    .then(a.cmp(&b))
            });
            board.agents = order
                .iter()
                .enumerate()
                .map(|(rank, &a)| {
                    let x = &r.ratings[a];
                    Leader {
                        rank: rank + 1,
                        agent: names[a].clone(),
                        elo: x.elo,
                        ci95: x.low.zip(x.high).map(|(l, h)| [l, h]),
                        seats: x.games,
                    }
                })
                .collect();
            board.resamples = r.resamples;
            board.disconnected_resamples = r.disconnected_resamples;
        }
        Err(e) => board.refused = Some(e.describe(names)),
    }
    board
}

/// A stage's leaderboard from its collected games (`None` with fewer than two agents): what
/// it needs of the stage is in its `info` (names, kinds, seed, unit), so that it can be
/// fitted while the rest of the analysis is made ([`crate::analyze_for_report`]).
pub fn of_stage(
    info: &StageInfo,
    data: &Result<Data, RatingError>,
    settings: &RatingSettings,
) -> Option<Leaderboard> {
    let names: Vec<String> = info.agents.clone();
    if names.len() < 2 {
        return None;
    }
    let kinds: Vec<String> = (0..names.len())
        .map(|slot| info.kinds.get(slot).cloned().unwrap_or_default())
        .collect();
    let seed = info.seed.unwrap_or(0);
    let unit = unit_name(info);
    Some(match data {
        Ok(d) => leaderboard(&names, &kinds, d, settings, seed, unit),
        Err(e) => {
            let mut b = leaderboard(
                &names,
                &kinds,
                &Data::new(names.len(), Model::PlackettLuce),
                settings,
                seed,
                unit,
            );
            b.refused = Some(e.describe(&names));
            b
        }
    })
}

/// `ratings.csv`: one row per agent, best first, at full precision.
pub fn csv(stage: &str, b: &Leaderboard) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let header = [
        "stage",
        "rank",
        "agent",
        "elo",
        "elo_ci95_low",
        "elo_ci95_high",
        "seats",
        "anchor",
        "model",
        "unit",
        "units",
        "resamples",
    ];
    w.write_record(header).expect("writing to memory");
    for a in &b.agents {
        w.write_record([
            stage.to_string(),
            a.rank.to_string(),
            a.agent.clone(),
            csv_num(Some(a.elo)),
            csv_num(a.ci95.map(|c| c[0])),
            csv_num(a.ci95.map(|c| c[1])),
            a.seats.to_string(),
            b.anchor.clone(),
            b.model.to_string(),
            b.unit.clone(),
            b.units.to_string(),
            b.resamples.to_string(),
        ])
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are text")
}

/// The leaderboard for display (Markdown, LaTeX).
pub fn table(b: &Leaderboard) -> Table {
    let header = vec![
        "Rank".to_string(),
        "Agent".to_string(),
        if b.resamples > 0 {
            format!("Elo vs {} [95% CI]", b.anchor)
        } else {
            format!("Elo vs {}", b.anchor)
        },
        "P(ahead of anchor)".to_string(),
        "Seats played".to_string(),
    ];
    let rows = b
        .agents
        .iter()
        .map(|a| {
            let elo = match a.ci95 {
                Some([l, h]) if a.agent != b.anchor => format!(
                    "{} [{}, {}]",
                    num(Some(a.elo), 0),
                    num(Some(l), 0),
                    num(Some(h), 0)
                ),
                _ if a.agent == b.anchor => "0 (anchor)".to_string(),
                _ => num(Some(a.elo), 0),
            };
            vec![
                a.rank.to_string(),
                a.agent.clone(),
                elo,
                num(Some(expected_score(a.elo)), 3),
                a.seats.to_string(),
            ]
        })
        .collect();
    Table {
        header,
        align: vec!['r', 'l', 'r', 'r', 'r'],
        rows,
    }
}

/// The chance that an agent rated `elo` above another finishes ahead of it in a game both
/// play: `1/(1 + 10^(-elo/400))` (under Plackett-Luce too: Luce's choice axiom).
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// What one of the bootstrap's units is, after "over the N deals".
fn unit_detail(b: &Leaderboard) -> &'static str {
    match b.unit.as_str() {
        "deal" => " (each deal with all its seating arrangements)",
        "game" => " (each game with all its seating arrangements)",
        "unit" => {
            " of the stages' designs (a deal with all its seating arrangements; a game under \
             point scoring; a round with fixed or random seats), each stage's units resampled \
             within it"
        }
        _ => "",
    }
}

fn model_text(b: &Leaderboard) -> &'static str {
    match b.model {
        "bradley-terry" => {
            "Bradley-Terry strengths by maximum likelihood on every pair of seats (a tie counts \
             half a win each way)"
        }
        _ => {
            "Plackett-Luce strengths by maximum likelihood on each game's finishing order (ties \
             split: a group of k tied seats counts as each of its k! orders with weight 1/k!)"
        }
    }
}

/// The figure: Elo with its interval, best first, each agent in its own colour (`colours`:
/// the agent's slot, by name).
pub fn figure_spec(
    b: &Leaderboard,
    colours: &[String],
    titled: bool,
    what: &str,
) -> Option<FigureSpec> {
    if b.agents.is_empty() {
        return None;
    }
    let bars: Vec<(String, usize, dhumbal_plots::Interval)> = b
        .agents
        .iter()
        .map(|a| {
            let [l, h] = a.ci95.unwrap_or([f64::NAN, f64::NAN]);
            (
                a.agent.clone(),
                colours
                    .iter()
                    .position(|c| *c == a.agent)
                    .unwrap_or(a.rank - 1),
                dhumbal_plots::Interval {
                    estimate: a.elo,
                    low: l,
                    high: h,
                },
            )
        })
        .collect();
    let axis = format!("Elo (vs {})", b.anchor);
    let width = if b.agents.len() > 8 {
        dhumbal_plots::Width::TwoColumn
    } else {
        dhumbal_plots::Width::OneColumn
    };
    let whiskers = if b.resamples == 0 {
        "No whiskers: no bootstrap resamples were asked for (`--rating-resamples 0`).".to_string()
    } else {
        format!(
            "Whiskers: 95% percentile bootstrap intervals over {} {}s ({} resamples{}).",
            b.units,
            b.unit,
            b.resamples,
            if b.disconnected_resamples > 0 {
                format!(
                    ", {} of them without a rating (not strongly connected) left out",
                    b.disconnected_resamples
                )
            } else {
                String::new()
            }
        )
    };
    let caption = format!(
        "Ratings {what}: {}, on the Elo scale (400/ln 10 per unit of log-strength: a lead of D \
         points means finishing ahead with probability 1/(1 + 10^(−D/400))), anchored at {} = 0 \
         ({}); best first, the anchor's bar empty. {whiskers}",
        model_text(b),
        b.anchor,
        anchor_text(b),
    );
    Some(FigureSpec {
        stem: "ratings",
        place: Place::Ratings,
        title: titled.then(|| "Ratings (Elo)".to_string()),
        caption,
        draw: Box::new(move |title| {
            dhumbal_plots::interval_bars_coloured(title, &axis, &bars, width)
        }),
    })
}

/// The `## Ratings` section of a report page; `prefix` is where the page's figures and tables
/// are (`""` beside it).
///
/// `exploits`: the run's measured agents; when there are any, their column beside the ratings.
pub fn section(
    b: &Leaderboard,
    figs: &[FigureOutcome],
    what: &str,
    csv_path: &str,
    exploits: &crate::exploit::Column,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "## Ratings\n");
    if let Some(why) = &b.refused {
        let _ = writeln!(out, "No ratings {what}: {why}.\n");
        return out;
    }
    let mut t = table(b);
    let measured = b.agents.iter().any(|a| exploits.cell(&a.agent).is_some());
    if measured {
        t.header.push("Exploitability [95% CI]".into());
        t.align.push('l');
        for (row, a) in t.rows.iter_mut().zip(&b.agents) {
            row.push(exploits.cell(&a.agent).unwrap_or("-").to_string());
        }
    }
    out.push_str(&t.to_markdown());
    if measured {
        let _ = writeln!(out, "\n{}", crate::exploit::Column::NOTE);
    }
    let intervals = if b.resamples == 0 {
        "No intervals: no bootstrap resamples were asked for (`--rating-resamples 0`).".to_string()
    } else {
        format!(
            "Intervals: 95% percentile bootstrap over the {} {}s{}, {} resamples drawn from a \
             fixed seed ({}), so they are the same on every run and thread count{}.",
            b.units,
            b.unit,
            unit_detail(b),
            b.resamples,
            b.seed,
            if b.disconnected_resamples > 0 {
                format!(
                    "; {} resamples had a group of agents that never finished behind the rest \
                     (no maximum-likelihood estimate) and are left out, which narrows the \
                     intervals",
                    b.disconnected_resamples
                )
            } else {
                String::new()
            }
        )
    };
    let _ = writeln!(
        out,
        "\n{} {what}, on the Elo scale: 400/ln 10 points per unit of log-strength, so that \
         an agent D points above another finishes ahead of it with probability 1/(1 + \
         10^(−D/400)) in any game both play (the column gives that against the anchor). \
         Anchored at **{}** = 0 ({}). {intervals} {} games rated. Every number at full \
         precision in [`{csv_path}`]({csv_path}); docs/analysis.md, *Ratings*, gives the \
         definitions and the check against `choix`.\n",
        model_text(b),
        b.anchor,
        anchor_text(b),
        b.games,
    );
    for o in figs.iter().filter(|o| o.place == Place::Ratings) {
        out.push_str(&figures::markdown(o, "figures"));
    }
    out
}

/// The leaderboard of a whole run: every stage's units together (each stage a stratum of the
/// bootstrap), agents identified by id, a `winner_of` seat being the agent it names in its
/// stage of origin. Reads the stages' records under `run`. `None` for fewer than two stages.
pub fn across_stages(
    run: &Path,
    manifest: &serde_json::Value,
    settings: &RatingSettings,
) -> crate::Result<Option<(Leaderboard, Vec<String>)>> {
    let Some(RunGames {
        names,
        kinds,
        data,
        failure,
    }) = run_games(run, manifest)?
    else {
        return Ok(None);
    };
    let seed = manifest["seed"].as_u64().unwrap_or(0);
    let mut board = leaderboard(&names, &kinds, &data, settings, seed, "unit");
    if let Some(f) = failure {
        board.agents.clear();
        board.refused = Some(f);
    }
    Ok(Some((board, names)))
}

/// The overview's ratings: computed across the stages of the run in `run`, written under
/// `reports` (`tables/ratings.csv`, `figures/ratings.*`), and their section put into the
/// overview page `text` before its definitions. A failure is said on the page, never raised.
pub fn with_overview(
    text: String,
    run: &Path,
    reports: &Path,
    manifest: &serde_json::Value,
    settings: &RatingSettings,
) -> String {
    let what = "across all stages";
    let section_text = match across_stages(run, manifest, settings) {
        Ok(None) => return text,
        Ok(Some((board, names))) => {
            let mut figs = Vec::new();
            let tables = reports.join("tables");
            let written = std::fs::create_dir_all(&tables).and_then(|_| {
                std::fs::write(tables.join("ratings.csv"), csv("(all stages)", &board))
            });
            if let Some(spec) = figure_spec(&board, &names, false, what) {
                let dir = reports.join("figures");
                if std::fs::create_dir_all(&dir).is_ok() {
                    figs = figures::draw_all(vec![spec], &dir);
                }
            }
            let exploits = crate::exploit::Column::of_run(run, (run == reports).then_some(""));
            let mut s = section(&board, &figs, what, "tables/ratings.csv", &exploits);
            if let Err(e) = written {
                s.push_str(&format!(
                    "*`tables/ratings.csv` could not be written: {e}*\n\n"
                ));
            }
            s
        }
        Err(e) => format!("## Ratings\n\nNo ratings {what}: {e:#}.\n\n"),
    };
    match text.find("## Definitions") {
        Some(at) => format!("{}{section_text}{}", &text[..at], &text[at..]),
        None => text + section_text.as_str(),
    }
}
