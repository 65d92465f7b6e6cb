//! Ratings from records (crates/report/src/ratings/): finishing orders read from records, the
//! fit of records against `choix`, and the reports: a stage's `ratings` in stats.json,
//! `tables/ratings.csv`, the figure and report.md's section, and the overview's leaderboard
//! across stages. The model itself against `choix`, and the properties a rating must have:
//! crates/stats/tests/ratings.rs.

mod common;
use common::{arg, f64s, has, has_all, json_file, ok, play_scenario, strs, tmp_scenario, u64s};

use std::path::Path;

use dhumbal::report::load::Row;
use dhumbal::report::ratings::{self, Collector, Data, Game, Model, Unit};
use dhumbal::report::{Seating, StageInfo};

#[test]
fn places_of_a_round() {
    // Seat 2 won; the others by hand value, lower first, equal values tied.
    assert_eq!(
        ratings::places_from_round(&[false, false, true, false], &[10, 4, 0, 10]),
        vec![2, 1, 0, 2]
    );
    assert_eq!(
        ratings::places_from_round(&[true, false], &[7, 3]),
        vec![0, 1]
    );
}

fn game(agents: &[usize], places: &[u32]) -> Game {
    Game {
        agents: agents.to_vec(),
        places: places.to_vec(),
    }
}

fn stage_info(agents: &[&str], points: bool, seating: Seating, players: usize) -> StageInfo {
    StageInfo {
        name: "s".into(),
        agents: agents.iter().map(|a| a.to_string()).collect(),
        kinds: vec![String::new(); agents.len()],
        seating,
        points,
        players,
        session: None,
        seed: Some(1),
        source: "test".into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn row(deal: u64, rotation: u32, round: u32, seat: u32, slot: u8, won: bool, hand: u32) -> Row {
    Row {
        slot,
        deal,
        rotation,
        round,
        seat,
        won,
        hand_value: hand,
        ..Row::default()
    }
}

/// Rows to games: under coin scoring a round is a game and a deal (all its arrangements, even
/// when they come apart in the records) a unit; the fit equals that of the games written out.
#[test]
fn games_from_coin_rows() {
    let info = stage_info(&["a", "b", "c"], false, Seating::Rotate, 3);
    let mut c = Collector::new(&info);
    // Deal 0 arrangement 0, deal 1 arrangement 0, then their arrangements 1 and 2 (sessions
    // of two rounds come in this order).
    // (deal, arrangement, per seat: slot, won, hand value)
    type Round = (u64, u32, [(u8, bool, u32); 3]);
    let rounds: Vec<Round> = vec![
        (0, 0, [(0, true, 0), (1, false, 5), (2, false, 9)]),
        (1, 0, [(0, false, 3), (1, true, 0), (2, false, 3)]),
        (0, 1, [(2, false, 4), (0, true, 1), (1, false, 8)]),
        (1, 1, [(2, true, 0), (0, false, 6), (1, false, 2)]),
        (0, 2, [(1, false, 7), (2, true, 2), (0, false, 7)]),
        (1, 2, [(1, false, 1), (2, false, 9), (0, true, 0)]),
    ];
    let mut want: Vec<Unit> = vec![Vec::new(), Vec::new()];
    for (deal, rot, seats) in &rounds {
        for (seat, &(slot, won, hand)) in seats.iter().enumerate() {
            c.push(&row(
                *deal,
                *rot,
                (*deal % 2) as u32,
                seat as u32,
                slot,
                won,
                hand,
            ));
        }
        let won: Vec<bool> = seats.iter().map(|s| s.1).collect();
        let hands: Vec<u32> = seats.iter().map(|s| s.2).collect();
        want[*deal as usize].push(game(
            &seats.iter().map(|s| s.0 as usize).collect::<Vec<_>>(),
            &ratings::places_from_round(&won, &hands),
        ));
    }
    let data = c.finish().unwrap();
    assert_eq!((data.units(), data.games()), (2, 6));
    fits_as(&data, 3, &want, 0.0);
}

/// The collected `data` rates its `agents` as Plackett-Luce does the games `want`, with the
/// prior `alpha`.
#[track_caller]
fn fits_as(data: &Data, agents: usize, want: &[Unit], alpha: f64) {
    let got = data.fit_theta(alpha).unwrap();
    let expected = ratings::fit(agents, want, Model::PlackettLuce, alpha).unwrap();
    for (a, b) in got.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-12, "{got:?} {expected:?}");
    }
}

/// Under point scoring a game (one arrangement) is ranked by how long each player lasted: the
/// winner first, then by the last round played, players out in the same round tied.
#[test]
fn games_from_point_rows() {
    let info = stage_info(&["a", "b", "c", "d"], true, Seating::Fixed, 4);
    let mut c = Collector::new(&info);
    let mut push = |deal: u64, round: u32, seats: &[(u32, u8)], winner: Option<u8>| {
        for &(seat, slot) in seats {
            let mut r = row(deal, 0, round, seat, slot, false, 5);
            r.game_won = winner == Some(slot);
            c.push(&r);
        }
    };
    // Game 0: d out after round 0, b and c out in round 1, a wins.
    push(0, 0, &[(0, 0), (1, 1), (2, 2), (3, 3)], None);
    push(0, 1, &[(0, 0), (1, 1), (2, 2)], Some(0));
    // Game 1: a out first, then b, then d wins over c.
    push(1, 0, &[(0, 0), (1, 1), (2, 2), (3, 3)], None);
    push(1, 1, &[(1, 1), (2, 2), (3, 3)], None);
    push(1, 2, &[(2, 2), (3, 3)], Some(3));
    // Game 2: c wins at once; the others tied.
    push(2, 0, &[(0, 0), (1, 1), (2, 2), (3, 3)], Some(2));
    let data = c.finish().unwrap();
    let want: Vec<Unit> = vec![
        vec![game(&[0, 1, 2, 3], &[0, 1, 1, 3])],
        vec![game(&[0, 1, 2, 3], &[3, 2, 1, 0])],
        vec![game(&[0, 1, 2, 3], &[1, 1, 0, 1])],
    ];
    assert_eq!((data.units(), data.games()), (3, 3));
    fits_as(&data, 4, &want, 0.5);
}

/// A stage of three heuristics and `random`: stats.json's `ratings` anchored at random, the
/// same with 1 and 2 threads, `tables/ratings.csv`, the figure and report.md's section.
#[test]
fn stage_report_has_ratings() {
    let (dir, path) = tmp_scenario(
        "r.yaml",
        "name: r\nseed: 3\ndeals: 60\nseating: rotate\nrules: {preset: paper}\nagents:\n  - kind: aggressive\n  - kind: conservative\n  - kind: balanced\n  - kind: random\n",
    );
    let mut stats = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        ok(&[arg(&path), "--out", arg(&out), "--threads", threads]);
        stats.push(json_file(&out.join("stats.json"))["ratings"].clone());
        if threads == "1" {
            let r = &stats[0];
            assert_eq!(r["model"], "plackett-luce");
            assert_eq!(r["anchor"], "random");
            assert_eq!(r["unit"], "deal");
            assert_eq!(r["units"], 60);
            assert_eq!(r["games"], 240);
            assert_eq!(r["resamples"], 200);
            let agents = r["agents"].as_array().unwrap();
            assert_eq!(agents.len(), 4);
            let elos: Vec<f64> = agents.iter().map(|a| a["elo"].as_f64().unwrap()).collect();
            assert!(
                elos.windows(2).all(|w| w[0] >= w[1]),
                "best first: {elos:?}"
            );
            let random = agents.iter().find(|a| a["agent"] == "random").unwrap();
            assert_eq!(random["elo"], 0.0);
            // The heuristics beat random by a wide margin.
            assert_eq!(agents[3]["agent"], "random");
            let csv = std::fs::read_to_string(out.join("tables/ratings.csv")).unwrap();
            assert!(csv.starts_with("stage,rank,agent,elo,elo_ci95_low,elo_ci95_high,"));
            assert_eq!(csv.lines().count(), 5);
            assert!(out.join("tables/ratings.tex").is_file());
            assert!(out.join("figures/ratings.svg").is_file());
            let md = std::fs::read_to_string(out.join("report.md")).unwrap();
            has(&md, "## Ratings");
            assert!(md.contains("![ratings](figures/ratings.svg)"));
        }
    }
    assert_eq!(stats[0], stats[1], "ratings differ between 1 and 2 threads");
}

/// Ratings across stages: the overview fits all stages' units together, and a `winner_of`
/// seat is the agent it names (one row for it, with the seats of both stages).
#[test]
fn overview_rates_across_stages() {
    let (dir, path) = tmp_scenario(
        "two.yaml",
        "name: two\nseed: 5\nseating: rotate\nrules: {preset: paper, players: 3}\nstages:\n  - name: first\n    deals: 40\n    agents:\n      - kind: aggressive\n      - kind: conservative\n      - kind: balanced\n  - name: second\n    deals: 30\n    agents:\n      - winner_of: first\n      - kind: opportunistic\n      - kind: random\n",
    );
    let out = dir.path().join("out");
    ok(&[arg(&path), "--out", arg(&out)]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let ratings_at = md.find("## Ratings").expect("a Ratings section");
    assert!(ratings_at < md.find("## Definitions").unwrap());
    let csv = std::fs::read_to_string(out.join("tables/ratings.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 5, "{csv}\n{md}");
    let manifest = json_file(&out.join("manifest.json"));
    let winner = manifest["stages"][0]["winner"]["agent"].as_str().unwrap();
    let line = rows
        .iter()
        .find(|r| r.split(',').nth(2) == Some(winner))
        .unwrap();
    // 40 deals x 3 rotations in the first stage, 30 x 3 in the second, one seat each.
    assert_eq!(line.split(',').nth(6), Some("210"), "{line}");
    assert!(rows.iter().any(|r| r.contains(",random,0,0,0,")), "{csv}");
    assert!(out.join("figures/ratings.png").is_file());

    // `report --rating-anchor/--rating-resamples` set the overview's ratings as the stages'.
    let again = dir.path().join("again");
    ok(&[
        "report",
        arg(&out),
        "--out",
        arg(&again),
        "--rating-anchor",
        "opportunistic",
        "--rating-resamples",
        "0",
    ]);
    let md = std::fs::read_to_string(again.join("report.md")).unwrap();
    let section = &md[md.find("## Ratings").unwrap()..md.find("## Definitions").unwrap()];
    has_all(
        section,
        &[
            "Elo vs opportunistic",
            "Anchored at **opportunistic**",
            "No intervals: no bootstrap resamples",
        ],
    );
    let stage = json_file(&again.join("second/stats.json"));
    assert_eq!(stage["ratings"]["anchor"], "opportunistic");
}

/// A heads-up stage against `random` that random never won: no maximum-likelihood rating
/// exists, and the overview says so, naming who never finished behind whom.
#[test]
fn overview_says_why_there_are_no_ratings() {
    let (_dir, out, _) = play_scenario(
        "two.yaml",
        "name: two\nseed: 5\nseating: rotate\nrules: {preset: paper, players: 2}\nstages:\n  - name: first\n    deals: 10\n    agents:\n      - kind: aggressive\n      - kind: random\n  - name: second\n    deals: 10\n    agents:\n      - winner_of: first\n      - kind: random\n",
        &[],
    );
    let stats = json_file(&out.join("first/stats.json"));
    let refused = stats["ratings"]["refused"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        refused,
        "no maximum-likelihood rating exists: aggressive never finished behind random (the \
         comparisons are not strongly connected, so the gap between them is unbounded)"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    has(&md, &format!("No ratings across all stages: {refused}"));
    let md = std::fs::read_to_string(out.join("first/report.md")).unwrap();
    has(
        &md,
        &format!("No ratings of this stage's agents: {refused}"),
    );
}

/// The reports' ratings on real records against choix's on the same records, whose finishing
/// orders the fixture script derives itself from the columns (pandas): a coin stage (the round
/// winner, then hand values) and a point stage (the game winner, then how long each lasted).
#[test]
fn records_match_choix() {
    let f = json_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ratings.json"));
    let cases = f["records"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (_dir, out, _) = play_scenario("s.yaml", case["scenario"].as_str().unwrap(), &[]);
        let stats = json_file(&out.join("stats.json"));
        // The same records as the script's (else the script must be run again).
        let wins: Vec<u64> = stats["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["win"]["k"].as_u64().unwrap())
            .collect();
        let want_wins = u64s(&case["wins"]);
        assert_eq!(
            (stats["design"]["rows"].as_u64().unwrap(), wins),
            (case["rows"].as_u64().unwrap(), want_wins),
            "{name}: the records differ from the fixture's; regenerate it \
             (scripts/reference/ratings_fixture.py)"
        );
        let r = &stats["ratings"];
        assert_eq!(r["games"], case["games"], "{name}");
        let agents = strs(&case["agents"]);
        let theta = f64s(&case["theta"]);
        let anchor = agents
            .iter()
            .position(|a| *a == r["anchor"].as_str().unwrap())
            .unwrap();
        for row in r["agents"].as_array().unwrap() {
            let i = agents
                .iter()
                .position(|a| *a == row["agent"].as_str().unwrap())
                .unwrap();
            let got = row["elo"].as_f64().unwrap() / ratings::ELO_PER_NAT;
            let want = theta[i] - theta[anchor];
            eprintln!(
                "{name} {}: |rust - choix| = {:.1e}",
                agents[i],
                (got - want).abs()
            );
            assert!(
                (got - want).abs() < 1e-6,
                "{name} {}: {got} against choix's {want}",
                agents[i]
            );
        }
        assert!(
            case["tied_games"].as_u64().unwrap() > 5,
            "{name}: ties exercised"
        );
    }
}
