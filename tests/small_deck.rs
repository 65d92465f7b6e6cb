//! Small decks (`ranks`, `suits` in `rules:`) as a user meets them, through the `dhumbal-run`
//! binary: a heads-up run on 2 suits of 4 ranks plays only the deck's cards and spells the deck
//! out in the manifest, and a deck that cannot be played is refused with the reason at its line.

use std::collections::BTreeSet;

mod common;
use common::{arg, ok, refused, text, tmp, tmp_scenario};

const FILE: &str = "tests/fixtures/small-deck.yaml";

fn csv_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_heads_up_run_on_two_suits_of_four_ranks() {
    let out = tmp();
    let o = ok(&[FILE, "--out", arg(out.path()), "--threads", "2", "--csv"]);
    let t = text(&o);
    assert!(t.contains("300 deals x 2 rotations = 600 rounds"), "{t}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("manifest.json")).unwrap())
            .unwrap();
    let rules = &manifest["scenario"]["stages"][0]["rules"];
    assert_eq!(rules["ranks"], 4, "{rules}");
    assert_eq!(rules["suits"], 2, "{rules}");
    assert_eq!(rules["jokers"], 0, "{rules}");
    // Every final hand holds only the deck's cards (A-4 of spades and hearts, worth 1-4) and
    // no more than the two dealt.
    let rows = csv_rows(&out.path().join("rounds.csv"));
    let col = |name: &str| {
        rows[0]
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}: {:?}", rows[0]))
    };
    let (value, turns) = (col("hand_value"), col("turns"));
    assert_eq!(rows.len(), 1 + 600 * 2);
    let mut values = BTreeSet::new();
    for r in &rows[1..] {
        let v: u32 = r[value].parse().unwrap();
        assert!(v <= 4 + 4, "{r:?}");
        values.insert(v);
        assert!(r[turns].parse::<u32>().unwrap() <= 8, "{r:?}");
    }
    assert!(values.len() > 3, "{values:?}");
    // Both agents won rounds, and the aggressive heuristic more than random's.
    let summary = csv_rows(&out.path().join("summary.csv"));
    let (agent, wins) = (
        summary[0].iter().position(|c| c == "agent").unwrap(),
        summary[0].iter().position(|c| c == "wins").unwrap(),
    );
    let won = |who: &str| -> u64 {
        summary[1..]
            .iter()
            .find(|r| r[agent] == who)
            .unwrap_or_else(|| panic!("{who}: {summary:?}"))[wins]
            .parse()
            .unwrap()
    };
    assert!(won("aggressive") > won("random"), "{summary:?}");
    assert!(won("random") > 0, "{summary:?}");
}

/// `validate` on the fixture with `rules:` replaced: the problems it reports.
fn invalid(rules: &str) -> String {
    let body = std::fs::read_to_string(FILE).unwrap();
    let start = body.find("rules:\n").unwrap();
    let end = body.find("agents:\n").unwrap();
    let body = format!("{}rules: {rules}\n{}", &body[..start], &body[end..]);
    let (_dir, file) = tmp_scenario("bad.yaml", &body);
    refused(&["validate", arg(&file)])
}

#[test]
fn a_deck_that_cannot_be_played_is_refused_with_the_reason() {
    let t = invalid("{players: 2, ranks: 14, suits: 0, runs: false}");
    assert!(
        t.contains("`rules.ranks`: 14 ranks per suit; use 1 to 13 (the lowest ranks, ace first)"),
        "{t}"
    );
    assert!(
        t.contains(
            "`rules.suits`: 0 suits; use 1 to 4 (in the order spades, hearts, diamonds, clubs)"
        ),
        "{t}"
    );
    let t = invalid("{players: 2, hand_size: 3, ranks: 3, suits: 2, runs: false}");
    assert!(
        t.contains(
            "2 players x 3 cards + 1 face-up card leave no stock in a 6-card deck; \
             deal fewer cards, seat fewer players or use more ranks or suits"
        ),
        "{t}"
    );
    // Runs are on in the `paper` preset: two ranks cannot make one.
    let t = invalid("{players: 2, hand_size: 2, ranks: 2}");
    assert!(
        t.contains(
            "`rules.min_run`: runs of 3 cards cannot be made from a deck of 2 ranks; \
             set `runs: false` or use at least 3 ranks"
        ),
        "{t}"
    );
    // Each problem at the line of `rules:` (its fields are on that line here).
    assert!(t.contains("bad.yaml:"), "{t}");
}
