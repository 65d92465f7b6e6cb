//! `summary.csv` (one row per agent) and `manifest.json` (what ran, how, how fast).

use std::path::Path;

use polars_core::prelude::{Column, DataFrame, PolarsResult};
use polars_io::prelude::{CsvWriter, SerWriter};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Doing;
use crate::resolved::{Resolved, ResolvedAgent, ResolvedScenario};
use crate::result_file::{self, Kind, ReadError};
use crate::run::{RunOptions, RunReport, StageResult};
use crate::scenario::Scenario;
use crate::totals::{Z_95, wilson};

/// One agent's line of the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub agent: String,
    pub kind: String,
    /// Rounds played and won (`summary.csv`'s `rounds`, `wins`, `win_rate`, `win_ci95_*`);
    /// the design's interval is stats.json's `win.ci95`, by deal (game) in blocked designs,
    /// else Wilson.
    pub rounds: WinRate,
    pub mean_coin_delta: f64,
    pub mean_points_delta: f64,
    pub calls: u64,
    pub calls_per_round: f64,
    pub call_success_rate: Option<f64>,
    pub cards_discarded_per_round: f64,
    pub pile_picks_per_round: f64,
    pub decisions: u64,
    pub mean_decision_us: Option<f64>,
    /// Point games (each game and seating arrangement counted once) played and won; 0 under
    /// coin scoring (`games`, `game_wins`, `game_win_rate`, `game_win_ci95_*`); the design's
    /// interval is stats.json's `games.ci95`, by game where a game is played in several seat
    /// arrangements, else Wilson over games.
    pub games: WinRate,
}

/// How often an agent won: rounds, or point games.
#[derive(Clone, Debug, PartialEq)]
pub struct WinRate {
    pub played: u64,
    pub won: u64,
    pub rate: f64,
    /// The design's 95% interval of the rate (`*_ci95_low`, `*_ci95_high`); how it was
    /// computed is `ci_method`. `None` when none were played.
    pub ci: Option<(f64, f64)>,
    /// `deal`, `game` or `wilson` (stats.json's `ci95_method`).
    pub ci_method: &'static str,
    /// The Wilson score interval, each one played counted as independent
    /// (`*_ci95_wilson_low`, `*_ci95_wilson_high`).
    pub wilson: Option<(f64, f64)>,
}

impl WinRate {
    /// `won` of `played` at `rate`, with the design's interval and its method where the report
    /// gave them, else Wilson's.
    fn new(
        played: u64,
        won: u64,
        rate: f64,
        design: Option<(Option<(f64, f64)>, &'static str)>,
    ) -> WinRate {
        let wilson = wilson(won, played, Z_95);
        WinRate {
            played,
            won,
            rate,
            ci: design.map_or(wilson, |d| d.0),
            ci_method: design.map_or("wilson", |d| d.1),
            wilson,
        }
    }
}

/// One agent's headline intervals as the design asks for them: what the stage's report puts
/// in stats.json (`win.ci95`, `games.ci95`) and its tables. The runner does not compute them
/// (the report crate does, from the records: [`crate::run::Reporter::intervals`]); without
/// them the summary falls back to Wilson's, and says so in `*_ci95_method`.
#[derive(Clone, Debug, PartialEq)]
pub struct DesignIntervals {
    pub win: Option<(f64, f64)>,
    /// `deal`, `game` or `wilson`.
    pub win_method: &'static str,
    /// Point games; `None` under coin scoring.
    pub game_win: Option<(f64, f64)>,
    /// `game` or `wilson`.
    pub game_win_method: &'static str,
}

/// The summary of a stage, one row per agent slot.
pub fn rows(result: &StageResult) -> Vec<SummaryRow> {
    result
        .agents
        .iter()
        .zip(&result.totals.agents)
        .enumerate()
        .map(|(slot, (def, t))| {
            let per_round = |x: u64| {
                if t.rounds == 0 {
                    0.0
                } else {
                    x as f64 / t.rounds as f64
                }
            };
            let design = result.intervals.as_ref().and_then(|d| d.get(slot));
            SummaryRow {
                agent: def.id.clone(),
                kind: def.kind.clone(),
                rounds: WinRate::new(
                    t.rounds,
                    t.wins,
                    t.win_rate(),
                    design.map(|d| (d.win, d.win_method)),
                ),
                mean_coin_delta: t.mean_coin_delta(),
                mean_points_delta: t.mean_points_delta(),
                calls: t.calls,
                calls_per_round: per_round(t.calls),
                call_success_rate: t.call_success_rate(),
                cards_discarded_per_round: per_round(t.cards_discarded),
                pile_picks_per_round: per_round(t.pile_picks),
                decisions: t.decisions,
                mean_decision_us: t.mean_decision_us(),
                games: WinRate::new(
                    t.games,
                    t.game_wins,
                    t.game_win_rate(),
                    design.map(|d| (d.game_win, d.game_win_method)),
                ),
            }
        })
        .collect()
}

/// Writes `summary.csv`.
pub fn write_summary_csv(path: &Path, result: &StageResult) -> crate::Result<()> {
    let mut df = summary_frame(result).doing("cannot write", path)?;
    let mut file = std::fs::File::create(path).doing("cannot write", path)?;
    CsvWriter::new(&mut file)
        .finish(&mut df)
        .doing("cannot write", path)?;
    Ok(())
}

/// The columns of `summary.csv`. Under point scoring the games come first, right after the
/// agent (games won is the outcome that matters there); under coin scoring the per-round
/// columns, then `games, game_wins` (always 0), as they always have.
fn summary_frame(result: &StageResult) -> PolarsResult<DataFrame> {
    let rows = rows(result);
    let n = rows.len();
    let col_f = |name: &str, f: &dyn Fn(&SummaryRow) -> f64| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let col_o = |name: &str, f: &dyn Fn(&SummaryRow) -> Option<f64>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let col_u = |name: &str, f: &dyn Fn(&SummaryRow) -> u64| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let col_s = |name: &str, f: &dyn Fn(&SummaryRow) -> &'static str| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let names = [
        Column::new("stage".into(), vec![result.name.as_str(); n]),
        Column::new(
            "agent".into(),
            rows.iter().map(|r| r.agent.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "kind".into(),
            rows.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
        ),
    ];
    let games = [
        col_u("games", &|r| r.games.played),
        col_u("game_wins", &|r| r.games.won),
    ];
    // No games (no rounds): no interval, rather than a made-up [0, 1]. `*_ci95_*` is the
    // design's interval (stats.json's `ci95`, named by `*_ci95_method`), as in the report's
    // tables/agents.csv; `*_ci95_wilson_*` counts every game (round) as independent.
    let rate_columns = |prefix: &str, of: fn(&SummaryRow) -> &WinRate| {
        [
            col_f(&format!("{prefix}_rate"), &|r| of(r).rate),
            col_o(&format!("{prefix}_ci95_low"), &|r| of(r).ci.map(|c| c.0)),
            col_o(&format!("{prefix}_ci95_high"), &|r| of(r).ci.map(|c| c.1)),
            col_s(&format!("{prefix}_ci95_method"), &|r| of(r).ci_method),
            col_o(&format!("{prefix}_ci95_wilson_low"), &|r| {
                of(r).wilson.map(|c| c.0)
            }),
            col_o(&format!("{prefix}_ci95_wilson_high"), &|r| {
                of(r).wilson.map(|c| c.1)
            }),
        ]
    };
    let game_rates = rate_columns("game_win", |r| &r.games);
    let per_round = [
        &[
            col_u("rounds", &|r| r.rounds.played),
            col_u("wins", &|r| r.rounds.won),
        ][..],
        &rate_columns("win", |r| &r.rounds),
        &[
            col_f("mean_coin_delta", &|r| r.mean_coin_delta),
            col_f("mean_points_delta", &|r| r.mean_points_delta),
            col_u("calls", &|r| r.calls),
            col_f("calls_per_round", &|r| r.calls_per_round),
            col_o("call_success_rate", &|r| r.call_success_rate),
            col_f("cards_discarded_per_round", &|r| {
                r.cards_discarded_per_round
            }),
            col_f("pile_picks_per_round", &|r| r.pile_picks_per_round),
            col_u("decisions", &|r| r.decisions),
            col_o("mean_decision_us", &|r| r.mean_decision_us),
        ],
    ]
    .concat();
    let columns: Vec<Column> = if result.points {
        [&names[..], &games, &game_rates, &per_round].concat()
    } else {
        [&names[..], &per_round, &games].concat()
    };
    DataFrame::new(n, columns)
}

/// Under the terminal table of a point stage.
pub const POINTS_NOTE: &str = "note: per-round rates are conditional on table size (survivors \
     play smaller tables); games won is the primary outcome";

/// How the terminal names an interval method (`*_ci95_method`).
fn method_label(method: &str) -> &'static str {
    match method {
        "deal" => "by deal",
        "game" => "by game",
        _ => "Wilson",
    }
}

/// Under the terminal table, when some interval follows the design: what that means, and
/// where Wilson's is.
fn interval_note(rows: &[SummaryRow], points: bool) -> Option<String> {
    let first = rows.first()?;
    let shown = [
        Some(first.rounds.ci_method),
        points.then_some(first.games.ci_method),
    ];
    if shown.iter().flatten().all(|m| *m == "wilson") {
        return None;
    }
    Some(
        "note: 95% CIs \"by deal\" or \"by game\" follow the design, as stats.json's ci95 (a \
         deal or game with all its seat arrangements is one unit: its rounds are not \
         independent); summary.csv also has Wilson's, every round or game counted as \
         independent (*_ci95_wilson_*)"
            .to_string(),
    )
}

/// One column of the terminal table: heading, least width, a cell per agent.
struct TableColumn {
    heading: String,
    width: usize,
    cells: Vec<String>,
}

/// The summary as an aligned text table for the terminal. Under point scoring the games lead
/// (games, games won, game-win rate and its Wilson interval over games), then the per-round
/// columns, headed as such, and a note on reading them.
pub fn table(result: &StageResult) -> String {
    let points = result.points;
    let rows = rows(result);
    let pct = |x: f64| format!("{:.2}", 100.0 * x);
    let interval = |(lo, hi): (f64, f64)| format!("[{:.2}, {:.2}]", 100.0 * lo, 100.0 * hi);
    // Each interval headed by what it is (the first row's method: every row has the same).
    let label = |m: Option<&'static str>| method_label(m.unwrap_or("wilson"));
    let game_ci = format!(
        "95% CI ({})",
        label(rows.first().map(|r| r.games.ci_method))
    );
    let win_ci = format!(
        "95% CI{} ({})",
        if points { "/round" } else { "" },
        label(rows.first().map(|r| r.rounds.ci_method))
    );
    let column = |heading: &str, width, cell: &dyn Fn(&SummaryRow) -> String| TableColumn {
        heading: heading.to_string(),
        width,
        cells: rows.iter().map(cell).collect(),
    };
    let mut columns = Vec::new();
    if points {
        columns.extend([
            column("games", 7, &|r| r.games.played.to_string()),
            column("games won", 10, &|r| r.games.won.to_string()),
            column("game win %", 11, &|r| pct(r.games.rate)),
            column(&game_ci, 17, &|r| {
                r.games.ci.map_or("-".to_string(), interval)
            }),
        ]);
    }
    let (win, win_width) = if points {
        ("win %/round", 12)
    } else {
        ("win %", 8)
    };
    columns.extend([
        column("rounds", 9, &|r| r.rounds.played.to_string()),
        column(win, win_width, &|r| pct(r.rounds.rate)),
        column(&win_ci, 17, &|r| {
            r.rounds.ci.map_or("-".to_string(), interval)
        }),
        if points {
            column("points/round", 13, &|r| {
                format!("{:.3}", r.mean_points_delta)
            })
        } else {
            column("coins/round", 12, &|r| format!("{:.3}", r.mean_coin_delta))
        },
        column("calls", 7, &|r| r.calls.to_string()),
        column("success %", 9, &|r| {
            r.call_success_rate.map_or("-".to_string(), pct)
        }),
        column("cards/rd", 10, &|r| {
            format!("{:.3}", r.cards_discarded_per_round)
        }),
        column("decision us", 12, &|r| {
            r.mean_decision_us
                .map_or("-".to_string(), |d| format!("{d:.3}"))
        }),
    ]);
    for c in &mut columns {
        c.width = c
            .cells
            .iter()
            .map(String::len)
            .fold(c.width.max(c.heading.len()), usize::max);
    }
    let width = rows.iter().map(|r| r.agent.len()).max().unwrap_or(5).max(5);
    let mut out = format!("{:<width$}", "agent");
    for c in &columns {
        out.push_str(&format!(" {:>w$}", c.heading, w = c.width));
    }
    out.push('\n');
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&format!("{:<width$}", r.agent));
        for c in &columns {
            out.push_str(&format!(" {:>w$}", c.cells[i], w = c.width));
        }
        out.push('\n');
    }
    if points {
        out.push_str(POINTS_NOTE);
        out.push('\n');
    }
    if let Some(note) = interval_note(&rows, points) {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// A run's `manifest.json`: what ran, how, how fast, and each stage's winner. Written and read
/// through this one type ([`Manifest::read`]), so that a reader cannot ask for a field the
/// writer does not fill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`]; files written before the key existed have the same layout (1).
    #[serde(default = "result_file::format_one")]
    pub format: u32,
    pub program: String,
    pub version: String,
    pub scenario_file: String,
    /// The resolved scenario's hash: another scenario's folder is not resumed.
    pub scenario_hash: String,
    pub seed: u64,
    pub threads: usize,
    pub resumed: bool,
    /// The copy of the inputs (`source/run.json`).
    pub source: String,
    pub wall_seconds: f64,
    pub rounds: u64,
    pub rounds_this_run: u64,
    pub rounds_per_second: Option<f64>,
    /// A study played as shards and merged: the shards' folders; stage seconds are then the
    /// shards' summed (machine time, not wall time).
    pub merged_from: Option<Vec<String>>,
    /// The scenario's `output:` as resolved.
    pub output: Value,
    pub stages: Vec<ManifestStage>,
    /// The scenario as resolved.
    pub scenario: Resolved<ResolvedScenario>,
}

/// One finished stage in [`Manifest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestStage {
    pub name: String,
    pub dir: String,
    pub rounds: u64,
    pub seconds: f64,
    /// The agent entries as resolved, in slot order.
    pub agents: Vec<Resolved<ResolvedAgent>>,
    /// Whom a later `winner_of` seats, and what decided it (read by the overview).
    pub winner: ManifestWinner,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestWinner {
    pub agent: String,
    pub decided_by: String,
}

/// The format of `manifest.json` this build writes and reads.
pub const MANIFEST_FORMAT: u32 = 1;

/// What [`Manifest::read`] expects.
pub const MANIFEST_KIND: Kind = Kind::new(
    "run manifest",
    MANIFEST_FORMAT,
    "run the scenario again with this version (`--force`), or use the version that \
             wrote it",
);

impl Manifest {
    /// The manifest of a run of `scenario` with `opts` that gave `report`; an error when a
    /// resolved entry would not read back ([`Resolved::new`]).
    pub fn of(
        scenario: &Scenario,
        opts: &RunOptions,
        report: &RunReport,
    ) -> Result<Manifest, serde_json::Error> {
        Ok(Manifest {
            format: MANIFEST_FORMAT,
            program: "dhumbal-run".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            scenario_file: scenario.path.display().to_string(),
            scenario_hash: scenario.hash(),
            seed: scenario.seed,
            threads: opts.threads,
            resumed: opts.resume,
            source: format!("{}/run.json", crate::folder::SOURCE_DIR),
            wall_seconds: report.seconds,
            rounds: report.rounds,
            rounds_this_run: report.rounds_now,
            rounds_per_second: (report.seconds > 0.0 && report.rounds_now > 0)
                .then(|| report.rounds_now as f64 / report.seconds),
            merged_from: (!report.merged_from.is_empty()).then(|| {
                report
                    .merged_from
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect()
            }),
            output: serde_json::to_value(&scenario.output).unwrap_or(Value::Null),
            stages: report
                .stages
                .iter()
                .map(|s| {
                    let (winner, decided) = s.winner_by();
                    Ok(ManifestStage {
                        name: s.name.clone(),
                        dir: s.dir.display().to_string(),
                        rounds: s.totals.rounds,
                        seconds: s.seconds,
                        agents: (s.agents.iter())
                            .map(|a| Resolved::new(a.spec.clone()))
                            .collect::<Result<_, _>>()?,
                        winner: ManifestWinner {
                            agent: s.agents[winner].id.clone(),
                            decided_by: decided.name().to_string(),
                        },
                    })
                })
                .collect::<Result<_, serde_json::Error>>()?,
            scenario: Resolved::new(scenario.resolved_json())?,
        })
    }

    /// Reads `dir/manifest.json`, refusing another format with what to do.
    pub fn read(dir: &Path) -> Result<Manifest, ReadError> {
        result_file::read(&dir.join("manifest.json"), &MANIFEST_KIND)
    }
}

/// Writes `manifest.json`.
pub fn write_manifest(
    path: &Path,
    scenario: &Scenario,
    opts: &RunOptions,
    report: &RunReport,
) -> crate::Result<()> {
    let manifest = Manifest::of(scenario, opts, report).doing("cannot write", path)?;
    let text = serde_json::to_vec_pretty(&manifest).doing("cannot write", path)?;
    std::fs::write(path, text).doing("cannot write", path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Overrides, SeatEntry, parse};
    use crate::totals::{AgentTotals, StageTotals};

    /// A finished stage of four agents (one with a long id) and these totals, under point
    /// scoring (`jhyap`) or coin scoring (`paper`).
    fn stage(points: bool, agents: Vec<AgentTotals>) -> StageResult {
        let text = format!(
            "name: t\nseed: 1\n{}\nagents:\n  - kind: aggressive\n  - {{kind: conservative, id: a-conservative-with-a-long-name}}\n  - kind: balanced\n  - kind: random\n",
            if points {
                "games: 10\nrules: {preset: jhyap}"
            } else {
                "deals: 10\nrules: {preset: paper}"
            }
        );
        let scenario = parse(Path::new("t.yaml"), &text, &Overrides::default()).unwrap();
        let stage = &scenario.stages[0];
        assert_eq!(stage.is_points(), points);
        StageResult {
            name: stage.name.clone(),
            dir: "t".into(),
            agents: (stage.seats.iter())
                .map(|s| match s {
                    SeatEntry::Agent(def) => def.clone(),
                    SeatEntry::WinnerOf(_) => unreachable!(),
                })
                .collect(),
            totals: StageTotals {
                rounds: agents.iter().map(|a| a.rounds).sum(),
                agents,
            },
            points,
            seconds: 1.0,
            restored: false,
            intervals: None,
        }
    }

    fn agent(rounds: u64, wins: u64, games: u64, game_wins: u64) -> AgentTotals {
        AgentTotals {
            rounds,
            wins,
            coin_sum: if games == 0 { 3 * wins as i64 - 100 } else { 0 },
            points_sum: if games == 0 { 0 } else { 9 * rounds as i64 },
            calls: wins + 2,
            call_successes: wins,
            cards_discarded: 11 * rounds,
            pile_picks: rounds,
            turns: 5 * rounds,
            decisions: 15 * rounds,
            decision_ns: 21_000 * rounds,
            timed_decisions: rounds,
            games,
            game_wins,
        }
    }

    /// The first columns of every summary, and those after them (after the games under point
    /// scoring).
    const NAMES: [&str; 3] = ["stage", "agent", "kind"];
    const PER_ROUND: [&str; 17] = [
        "rounds",
        "wins",
        "win_rate",
        "win_ci95_low",
        "win_ci95_high",
        "win_ci95_method",
        "win_ci95_wilson_low",
        "win_ci95_wilson_high",
        "mean_coin_delta",
        "mean_points_delta",
        "calls",
        "calls_per_round",
        "call_success_rate",
        "cards_discarded_per_round",
        "pile_picks_per_round",
        "decisions",
        "mean_decision_us",
    ];

    fn header(result: &StageResult) -> Vec<String> {
        let df = summary_frame(result).unwrap();
        df.get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect()
    }

    #[test]
    fn point_summaries_lead_with_games() {
        let result = stage(
            true,
            vec![
                agent(1800, 750, 160, 74),
                agent(1700, 560, 160, 39),
                agent(1730, 600, 160, 47),
                agent(590, 1, 160, 0),
            ],
        );
        let games = [
            "games",
            "game_wins",
            "game_win_rate",
            "game_win_ci95_low",
            "game_win_ci95_high",
            "game_win_ci95_method",
            "game_win_ci95_wilson_low",
            "game_win_ci95_wilson_high",
        ];
        assert_eq!(header(&result), [&NAMES[..], &games, &PER_ROUND].concat());
        let df = summary_frame(&result).unwrap();
        let f = |c: &str| df.column(c).unwrap().f64().unwrap().get(0).unwrap();
        assert_eq!(f("game_win_rate"), 74.0 / 160.0);
        // Without the report's intervals: Wilson's, and named so.
        let (lo, hi) = wilson(74, 160, Z_95).unwrap();
        assert_eq!((f("game_win_ci95_low"), f("game_win_ci95_high")), (lo, hi));
        assert_eq!(
            (
                f("game_win_ci95_wilson_low"),
                f("game_win_ci95_wilson_high")
            ),
            (lo, hi)
        );
        let method = |c: &str| {
            df.column(c)
                .unwrap()
                .str()
                .unwrap()
                .get(0)
                .unwrap()
                .to_string()
        };
        assert_eq!(method("game_win_ci95_method"), "wilson");

        let t = table(&result);
        let lines: Vec<&str> = t.lines().collect();
        let mut rest = lines[0];
        for h in [
            "agent",
            "games",
            "games won",
            "game win %",
            "95% CI (Wilson)",
            "rounds",
            "win %/round",
            "95% CI/round (Wilson)",
            "points/round",
            "calls",
            "success %",
            "cards/rd",
            "decision us",
        ] {
            rest = rest.trim_start();
            assert!(rest.starts_with(h), "{h} in {t}");
            rest = &rest[h.len()..];
        }
        assert!(rest.is_empty());
        let first: Vec<&str> = lines[1].split_whitespace().take(6).collect();
        assert_eq!(
            first,
            ["aggressive", "160", "74", "46.25", "[38.70,", "53.97]"],
            "{t}"
        );
        assert_eq!(lines[5], POINTS_NOTE);
        assert_eq!(lines.len(), 6);
        // Aligned: every line as long as the heading, and every agent's cells ending where
        // the first agent's do (past the longest name; an interval's comma is inside a cell).
        let ends = |l: &str| -> Vec<usize> {
            let b = l.as_bytes();
            (32..b.len())
                .filter(|&i| !b" ,".contains(&b[i]) && b.get(i + 1).is_none_or(|&c| c == b' '))
                .collect()
        };
        for l in &lines[1..5] {
            assert_eq!(l.len(), lines[0].len(), "{t}");
            assert_eq!(ends(l), ends(lines[1]), "{t}");
        }
        assert_eq!(ends(lines[1]).len(), 12, "{t}");
    }

    #[test]
    fn coin_summaries_are_as_they_were() {
        let result = stage(
            false,
            vec![
                agent(1024, 359, 0, 0),
                agent(1024, 199, 0, 0),
                agent(1024, 257, 0, 0),
                agent(1024, 209, 0, 0),
            ],
        );
        assert_eq!(
            header(&result),
            [&NAMES[..], &PER_ROUND, &["games", "game_wins"]].concat()
        );
        // The table as it printed before games led point stages, to the character.
        let want = "\
agent                              rounds    win %   95% CI (Wilson)  coins/round   calls success %   cards/rd  decision us
aggressive                           1024    35.06    [32.20, 38.03]        0.954     361     99.45     11.000       21.000
a-conservative-with-a-long-name      1024    19.43    [17.13, 21.97]        0.485     201     99.00     11.000       21.000
balanced                             1024    25.10    [22.54, 27.84]        0.655     259     99.23     11.000       21.000
random                               1024    20.41    [18.05, 22.99]        0.515     211     99.05     11.000       21.000
";
        assert_eq!(table(&result), want);
    }

    #[test]
    fn the_design_intervals_lead_and_wilson_keeps_its_own_name() {
        let mut result = stage(
            false,
            vec![
                agent(1024, 359, 0, 0),
                agent(1024, 199, 0, 0),
                agent(1024, 257, 0, 0),
                agent(1024, 209, 0, 0),
            ],
        );
        result.intervals = Some(
            (0..4)
                .map(|i| DesignIntervals {
                    win: Some((0.1 + 0.01 * i as f64, 0.5)),
                    win_method: "deal",
                    game_win: None,
                    game_win_method: "wilson",
                })
                .collect(),
        );
        let df = summary_frame(&result).unwrap();
        let f = |c: &str| df.column(c).unwrap().f64().unwrap().get(1).unwrap();
        assert_eq!((f("win_ci95_low"), f("win_ci95_high")), (0.11, 0.5));
        let (lo, hi) = wilson(199, 1024, Z_95).unwrap();
        assert_eq!(
            (f("win_ci95_wilson_low"), f("win_ci95_wilson_high")),
            (lo, hi)
        );
        let m = df.column("win_ci95_method").unwrap().str().unwrap();
        assert_eq!(m.get(1), Some("deal"));
        let t = table(&result);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("95% CI (by deal)"), "{t}");
        assert!(!t.contains("Wilson)"), "{t}");
        assert!(lines[2].contains("[11.00, 50.00]"), "{t}");
        assert!(lines[5].starts_with("note: 95% CIs \"by deal\""), "{t}");
        assert_eq!(lines.len(), 6, "{t}");
    }
}
