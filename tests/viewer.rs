//! The replay page (crates/runner/src/viewer.rs) as a person uses it: a traced run writes
//! `traces/replay.html`; headless Chromium opens it from `file://`, keys are pressed through
//! the DevTools protocol (`Input.dispatchKeyEvent`) and what the page then shows is read back
//! and compared with the trace. The browser is `tests/common/browser.rs`'s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::browser::{Browser, browser};
use common::{arg, has, has_all, killed, ok, said, scenario, shards_merged, tmp, tmp_scenario};

/// Three rounds (one session) of three seats; deal 0 is traced under each of its three
/// arrangements, so the page has a deal picker.
const TRACED: &str = "\
name: replayed
seed: 5
deals: 3
session: 3
seating: rotate
rules: {preset: paper, players: 3}
agents:
  - id: searcher
    kind: ismcts
    params: {iterations: 60}
  - kind: balanced
  - kind: random
output: {decision_timing: false, trace: {deals: [0]}}
";

/// The table's layout at every step, from the first (the page stepped by → in the page
/// itself, one evaluation for the lot): for each step, how many seats, pile cards, labels and
/// stocks it shows, the pairs of its boxes that meet (as "seat 1 / pile card 3": seats against
/// seats, the pile's cards and its count of cards below, the labels under pile and stock, and
/// the stock), the table's width as shown, its design width (page.css: the zoom does not change
/// it) and its column's, and whether the table meets the side panel.
const LAYOUTS: &str = "(() => {
  const named = (sel, name) => [...document.querySelectorAll(sel)].map((e, i) =>
    [name(e, i), e.getBoundingClientRect()]);
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const layout = () => {
    const seats = named('.seat', e => 'seat ' + e.dataset.seat);
    const cards = named('.pile .card', (e, i) => 'pile card ' + i);
    const labels = named('.heap .label', (e, i) => 'label ' + i);
    const stocks = named('.stock', () => 'stock');
    const middle = cards.concat(named('.pile .below', () => 'cards below'), labels, stocks);
    const meets = [];
    seats.forEach(([n, r], i) => {
      seats.slice(i + 1).forEach(([m, q]) => { if (meet(r, q)) meets.push(n + ' / ' + m); });
      middle.forEach(([m, q]) => { if (meet(r, q)) meets.push(n + ' / ' + m); });
    });
    const feltEl = document.getElementById('felt');
    const felt = feltEl.getBoundingClientRect();
    return {
      step: +document.body.dataset.step,
      seats: seats.length, cards: cards.length, labels: labels.length, stocks: stocks.length,
      meets,
      felt: felt.width,
      design: feltEl.offsetWidth,
      column: document.getElementById('felt-width').clientWidth,
      side: meet(felt, document.querySelector('.side').getBoundingClientRect()),
    };
  };
  const press = key => document.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
  press('Home');
  const out = [];
  for (let i = 0; i < +document.body.dataset.steps; i++) {
    out.push(layout());
    press('ArrowRight');
  }
  return out;
})()";

/// One trace's events, and the steps the page makes of them: its deals, decisions, round
/// ends and the game's end.
struct Trace {
    events: Vec<Value>,
    steps: Vec<Value>,
}

fn read_trace(path: &Path) -> Trace {
    let events: Vec<Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps = events
        .iter()
        .filter(|e| {
            matches!(
                e["event"].as_str(),
                Some("deal" | "decision" | "round_end" | "game_end")
            )
        })
        .cloned()
        .collect();
    Trace { events, steps }
}

fn signed(x: i64) -> String {
    match x {
        0 => "0".into(),
        x if x > 0 => format!("+{x}"),
        x => format!("−{}", -x),
    }
}

#[test]
fn the_replay_page_steps_through_a_traced_session_by_key_presses() {
    let Some(chrome) = browser() else {
        return;
    };
    let began = Instant::now();
    let (dir, file) = tmp_scenario("replayed.yaml", TRACED);
    let out = dir.path().join("out");
    ok(&[arg(&file), "--out", arg(&out), "--no-report"]);
    let page = out.join("traces").join("replay.html");
    assert!(page.is_file(), "a traced stage gets its replay page");
    let trace = read_trace(&out.join("traces").join("deal-000000-arrangement-000.jsonl"));
    let steps = trace.steps.len();
    let game = &trace.events[0];
    let agent = |seat: &Value| {
        game["seats"][seat.as_u64().unwrap() as usize]["agent"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let ran = began.elapsed();

    let mut b = Browser::start(&chrome, dir.path());
    b.open(&format!("file://{}", page.display()));
    let opened = began.elapsed();
    assert_eq!(
        b.eval("document.body.dataset.steps"),
        json!(steps.to_string())
    );
    assert_eq!(b.step(), 0);
    assert!(b.text("#decision").contains("Round 0 dealt"));
    let title = b.text("header");
    for seat in game["seats"].as_array().unwrap() {
        has(&title, seat["agent"].as_str().unwrap());
    }
    has_all(&title, &["deal 0", "arrangement 0", "replayed"]);

    // Step to the end by →, one step a press; a press at the end stays there.
    let mut with_candidates = None;
    for i in 1..steps + 2 {
        b.key("ArrowRight");
        let at = i.min(steps - 1);
        assert_eq!(b.step(), at, "after {i} presses of →");
        let step = &trace.steps[at];
        if step["event"] == "decision" {
            let shown = b.text("#decision");
            let choice = said(step, &step["choice"]);
            let choice = choice.as_str();
            assert!(shown.contains(choice), "step {at}: {choice} in {shown}");
            let seat = step["seat"].as_u64().unwrap();
            assert!(
                shown.contains(&format!("Seat {seat}")),
                "step {at}: {shown}"
            );
            if step["explanation"].is_null() {
                assert!(shown.contains("no explanation"), "step {at}: {shown}");
            } else if with_candidates.is_none()
                && step["explanation"]["candidates"].as_array().unwrap().len() > 2
                && step["turn"].as_u64().unwrap() >= 4
            {
                // Mid-round, a few candidates: looked at below, and the screenshot.
                with_candidates = Some(at);
            }
            // The deciding seat is marked at the table.
            let marked =
                b.eval("[...document.querySelectorAll('.seat.to-play')].map(s => s.dataset.seat)");
            assert_eq!(marked, json!([seat.to_string()]), "step {at}");
        }
    }
    assert_eq!(
        b.eval("document.body.dataset.mismatches"),
        json!("0"),
        "the table rebuilt from the events is what each seat saw"
    );

    // The end: the session's winner, the last round's outcome and its last decision.
    let end = trace
        .events
        .iter()
        .rev()
        .find(|e| e["event"] == "round_end")
        .unwrap();
    let last = trace
        .events
        .iter()
        .rev()
        .find(|e| e["event"] == "decision")
        .unwrap();
    let game_end = trace.events.last().unwrap();
    assert_eq!(game_end["event"], "game_end");
    let outcome = b.text("#outcome");
    has(&outcome, "Session over");
    has(
        &outcome,
        &format!(
            "Winner: seat {} ({})",
            game_end["winner"],
            agent(&game_end["winner"])
        ),
    );
    let rounds = game_end["rounds"].as_u64().unwrap();
    has(&outcome, &format!("Round {} ends by", rounds - 1));
    for (seat, change) in end["change"].as_array().unwrap().iter().enumerate() {
        let row = b.text(&format!(
            "#outcome .result tbody tr:nth-child({})",
            seat + 1
        ));
        let value = end["hand_values"][seat].as_u64().unwrap();
        has(&row, &signed(change.as_i64().unwrap()));
        has(&row, &format!("\t{value}\t"));
    }
    if end["end"] == "call" {
        let verdict = if end["call_success"] == true {
            "success"
        } else {
            "failed"
        };
        has(
            &outcome,
            &format!(
                "Seat {} ({}) called: {verdict}",
                end["caller"],
                agent(&end["caller"])
            ),
        );
    }
    let decision = b.text("#decision");
    has(&decision, "Last decision");
    has(&decision, &said(last, &last["choice"]));
    // Every hand is shown at the end.
    assert_eq!(
        b.eval("document.querySelectorAll('.seat .card.back').length"),
        json!(0)
    );

    // ← goes back a step, and again to the last decision itself.
    b.key("ArrowLeft");
    assert_eq!(b.step(), steps - 2);
    assert!(
        b.text("#position")
            .contains(&format!("step {} of {steps}", steps - 1))
    );
    b.key("ArrowLeft");
    assert_eq!(b.step(), steps - 3);
    let decision = b.text("#decision");
    assert!(decision.starts_with("Decision"), "{decision}");
    has(&decision, &said(last, &last["choice"]));
    assert!(
        b.text("#outcome").is_empty(),
        "no outcome before the round ends"
    );

    // ↑ and PageUp go back a round at a time (to the deal), ↓ and PageDown forward.
    let deals: Vec<usize> = (0..steps)
        .filter(|&i| trace.steps[i]["event"] == "deal")
        .collect();
    assert_eq!(deals.len() as u64, rounds);
    b.key("ArrowUp");
    assert_eq!(b.step(), deals[2]);
    assert!(b.text("#decision").contains("Round 2 dealt"));
    b.key("PageUp");
    assert_eq!(b.step(), deals[1]);
    b.key("ArrowUp");
    b.key("ArrowUp");
    assert_eq!(b.step(), 0);
    b.key("PageDown");
    assert_eq!(b.step(), deals[1]);
    assert!(b.text("#decision").contains("Round 1 dealt"));
    b.key("ArrowDown");
    b.key("ArrowDown");
    assert_eq!(b.step(), steps - 1);

    // A decision with candidates: the table lists them as given, the chosen one marked.
    let at = with_candidates.expect("the searcher explains its decisions");
    b.key("Home");
    for _ in 0..at {
        b.key("ArrowRight");
    }
    assert_eq!(b.step(), at);
    let step = &trace.steps[at];
    let candidates = step["explanation"]["candidates"].as_array().unwrap();
    let rows = b.eval(
        "[...document.querySelectorAll('#decision table.cands tbody tr')].map(r => r.innerText)",
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), candidates.len());
    for (row, c) in rows.iter().zip(candidates) {
        assert!(
            row.as_str().unwrap().contains(&said(step, &c["choice"])),
            "{row}"
        );
    }
    let chosen =
        b.eval("[...document.querySelectorAll('#decision tr.chosen')].map(r => r.innerText)");
    let chosen = chosen.as_array().unwrap();
    assert_eq!(chosen.len(), 1, "{chosen:?}");
    assert!(chosen[0].as_str().unwrap().contains('✔'));
    assert!(
        chosen[0]
            .as_str()
            .unwrap()
            .contains(&said(step, &step["choice"]))
    );
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-viewer.png");
    b.screenshot(&shot);

    // Seen as another seat: the decider's hand is face down and its candidates hidden; the
    // viewer's own hand is face up.
    let decider = step["seat"].as_u64().unwrap();
    let other = (decider + 1) % 3;
    b.choose("view", &other.to_string());
    assert_eq!(b.step(), at, "choosing a view keeps the place");
    b.key("ArrowLeft");
    b.key("ArrowRight");
    assert_eq!(b.step(), at, "the keys work after choosing");
    let decision = b.text("#decision");
    has(&decision, "hidden");
    assert_eq!(
        b.eval("document.querySelectorAll('#decision table.cands').length"),
        json!(0)
    );
    let backs = |b: &mut Browser, seat: u64| {
        b.eval(&format!(
            "document.querySelectorAll('.seat[data-seat=\"{seat}\"] .card.back').length"
        ))
        .as_u64()
        .unwrap()
    };
    assert!(backs(&mut b, decider) > 0);
    assert_eq!(backs(&mut b, other), 0);
    b.choose("view", "all");
    assert_eq!(backs(&mut b, decider), 0);
    assert_eq!(
        b.eval("document.querySelectorAll('#decision table.cands').length"),
        json!(1)
    );

    // The deal picker: another arrangement of the deal, from its first step.
    b.choose("trace", "1");
    assert_eq!(b.step(), 0);
    assert!(b.text("header").contains("arrangement 1"));
    assert_eq!(b.eval("document.body.dataset.mismatches"), json!("0"));
    b.key("End");
    assert!(b.text("#outcome").contains("Session over"));

    if let Some(copy) = std::env::var_os("DHUMBAL_VIEWER_SCREENSHOT") {
        std::fs::copy(&shot, copy).unwrap();
    }
    eprintln!(
        "replay page: run {:.1} s, browser open {:.1} s, all {:.1} s; screenshot {}",
        ran.as_secs_f64(),
        (opened - ran).as_secs_f64(),
        began.elapsed().as_secs_f64(),
        shot.display()
    );
}

/// Nothing on the table covers anything else, at any step, for 2 to 6 players, whatever the
/// window's width: no seat meets another seat, the pile's cards, its labels or the stock, and
/// the table, zoomed to its column, fills it and stays clear of the side panel. Before the
/// table was laid out at one size and zoomed to fit, a narrower window ran the side seats of
/// four players onto the pile and the stock, and a side seat of three whose badges took a
/// second line onto the pile.
#[test]
fn the_table_keeps_its_seats_apart_at_any_width() {
    let Some(chrome) = browser() else {
        return;
    };
    let dir = tmp();
    let mut b = Browser::start(&chrome, dir.path());
    // A searcher (its explanations are the longest) and heuristics of each style.
    let agents = [
        "{kind: ismcts, params: {iterations: 30}}",
        "{kind: balanced}",
        "{kind: random}",
        "{kind: aggressive}",
        "{kind: conservative}",
        "{kind: opportunistic}",
    ];
    for players in 2..=6 {
        let seats: String = agents[..players]
            .iter()
            .map(|a| format!("  - {a}\n"))
            .collect();
        let body = format!(
            "name: table{players}\nseed: 5\ndeals: 2\nsession: 2\n\
             rules: {{preset: paper, players: {players}}}\nagents:\n{seats}\
             output: {{decision_timing: false, trace: {{deals: [0]}}}}\n"
        );
        let file = scenario(dir.path(), &format!("table{players}.yaml"), &body);
        let out = dir.path().join(format!("out{players}"));
        ok(&[arg(&file), "--out", arg(&out), "--no-report"]);
        b.open(&format!(
            "file://{}",
            out.join("traces/replay.html").display()
        ));
        let steps: usize = b
            .eval("document.body.dataset.steps")
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(steps > 40, "{players} players: {steps} steps");
        // The narrowest width of the two-column layout (1,101 px: the table's column at
        // 640 px; also seen from seat 1, which turns the table), and a phone's (the table at
        // its least zoom, wider than its column, scrolled). Wider windows zoom the same
        // layout in.
        for (width, view) in [(1101, "all"), (1101, "1"), (420, "all")] {
            let at = format!("{players} players, {width} px wide, view {view}");
            b.resize(width);
            b.choose("view", view);
            // The zoom follows the column once it is laid out again.
            let deadline = Instant::now() + Duration::from_secs(10);
            let layouts = loop {
                let layouts = b.eval(LAYOUTS);
                let first = &layouts[0];
                let [felt, design, column] =
                    ["felt", "design", "column"].map(|k| first[k].as_f64().unwrap());
                assert!(design > 0.0, "{at}: the table has no width: {first}");
                if (felt - column.clamp(0.6 * design, 1.2 * design)).abs() < 1.5 {
                    break layouts;
                }
                assert!(
                    Instant::now() < deadline,
                    "{at}: the table does not fit its column: {first}"
                );
                std::thread::sleep(Duration::from_millis(20));
            };
            let layouts = layouts.as_array().unwrap();
            let first = &layouts[0];
            assert_eq!(layouts.len(), steps, "{at}");
            let mut cards = 0;
            for (step, l) in layouts.iter().enumerate() {
                assert_eq!(l["step"], json!(step), "{at}");
                // The column keeps its width from step to step (nothing beside the table
                // widens it), so the zoom fitted at the first step still fits.
                assert_eq!(l["column"], first["column"], "{at}, step {step}: {l}");
                assert_eq!(l["meets"], json!([]), "{at}, step {step}: boxes that meet");
                assert_eq!(
                    (&l["seats"], &l["labels"], &l["stocks"], &l["side"]),
                    (&json!(players), &json!(2), &json!(1), &json!(false)),
                    "{at}, step {step}: seats, labels, stocks, the side panel met: {l}"
                );
                cards = cards.max(l["cards"].as_u64().unwrap());
            }
            assert!(cards >= 5, "{at}: the pile showed at most {cards} cards");
        }
        b.choose("view", "all");
    }
}

/// The page is written wherever a stage finishes: a run killed after its last part and
/// resumed, and shards merged.
#[test]
fn resumed_and_merged_runs_get_the_replay_page() {
    let body = TRACED
        .replace("iterations: 60", "iterations: 10")
        .replace("deals: 3", "deals: 6");
    let (dir, file) = tmp_scenario("replayed.yaml", &body);
    let f = arg(&file);
    let cut = dir.path().join("cut");
    killed(&[f, "--out", arg(&cut), "--no-report"], "part-placed:1");
    assert!(
        cut.join("traces")
            .join("deal-000000-arrangement-000.jsonl")
            .is_file()
    );
    assert!(
        !cut.join("traces/replay.html").exists(),
        "killed before the stage finished"
    );
    ok(&[f, "--out", arg(&cut), "--no-report", "--resume"]);
    assert!(cut.join("traces/replay.html").is_file());

    let (shards, merged) = shards_merged(&file, dir.path());
    for out in shards {
        assert!(
            !out.join("traces/replay.html").exists(),
            "a shard does not finish its stage"
        );
    }
    let page = std::fs::read_to_string(merged.join("traces/replay.html")).unwrap();
    for a in 0..3 {
        assert!(page.contains(&format!("deal-000000-arrangement-{a:03}.jsonl")));
    }
}

/// Under point scoring a round's points are a penalty: the page colours a seat's +29 (a
/// failed call, say) as bad and a round won (0, or the negative of a bonus) not so; under
/// coin scoring, coins won are good. Read from the page's own classes at every round's end
/// and the game's.
#[test]
fn point_changes_are_coloured_as_penalties() {
    let Some(chrome) = browser() else {
        return;
    };
    let (dir, file) = tmp_scenario(
        "points.yaml",
        "name: points\nseed: 3\ngames: 1\nseating: fixed\nrules: {preset: jhyap, players: 3}\n\
         agents: [{kind: aggressive}, {kind: balanced}, {kind: random}]\n\
         output: {decision_timing: false, trace: {deals: [0]}}\n",
    );
    let out = dir.path().join("out");
    ok(&[arg(&file), "--out", arg(&out), "--no-report"]);
    let mut b = Browser::start(&chrome, dir.path());
    b.open(&format!(
        "file://{}",
        out.join("traces").join("replay.html").display()
    ));
    // At every step, each change shown with its sign and its class.
    let seen = b.eval(
        "(() => {
          const press = key => document.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
          press('Home');
          const out = [];
          for (let i = 0; i < +document.body.dataset.steps; i++) {
            for (const e of document.querySelectorAll('.change')) {
              out.push([e.textContent.trim(), e.className, getComputedStyle(e).color]);
            }
            press('ArrowRight');
          }
          return out;
        })()",
    );
    let seen = seen.as_array().unwrap();
    let bad = b.eval("getComputedStyle(document.documentElement).getPropertyValue('--bad').trim()");
    assert!(
        seen.iter().any(|c| c[0].as_str().unwrap().starts_with('+')),
        "no penalty shown: {seen:?}"
    );
    for c in seen {
        let (shown, class) = (c[0].as_str().unwrap(), c[1].as_str().unwrap());
        if shown.starts_with('+') {
            assert!(class.contains("bad") && !class.contains("good"), "{c:?}");
        } else if shown.starts_with('−') {
            assert!(class.contains("good") && !class.contains("bad"), "{c:?}");
        } else {
            assert!(!class.contains("good") && !class.contains("bad"), "{c:?}");
        }
    }
    // The result table's penalty is in the page's red.
    assert_eq!(bad, json!("#c62828"));
    assert!(
        seen.iter()
            .any(|c| c[0].as_str().unwrap().starts_with('+') && c[2] == json!("rgb(198, 40, 40)")),
        "{seen:?}"
    );
}
