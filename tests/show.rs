//! `dhumbal-run show` (src/cli/show.rs) as a person uses it: a small run traces two deals,
//! then `show` replays them. Its text is checked against the trace it reads (every round,
//! every turn with its choices and draws, the candidates of decisions that were explained),
//! `--seat K` is checked to show none of the cards the others held and K never saw, `--round`
//! to filter, the errors to be refusals (exit 2) that say what to do; and in a real terminal
//! (tmux), hearts and diamonds come out red, and plain with NO_COLOR.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{arg, bin, has, has_all, lacks, play_into, refused, said, scenario, text, tmp};

/// One session of three rounds (a deal), four seats rotated: deals 0 and 2 traced, under each
/// of their four arrangements.
const TRACED: &str = "\
name: shown
seed: 11
deals: 9
session: 3
seating: rotate
rules: {preset: paper}
agents:
  - kind: aggressive
  - kind: conservative
  - kind: balanced
  - kind: random
output: {decision_timing: false, trace: {deals: [0, 2]}}
";

/// Two stages, both tracing deal 0.
const STAGED: &str = "\
name: staged
seed: 4
deals: 3
session: 3
seating: fixed
rules: {preset: paper, players: 3}
agents: [{kind: aggressive}, {kind: balanced}, {kind: random}]
output: {decision_timing: false, trace: {deals: [0]}}
stages:
  - name: first
  - name: second
    seed: 5
";

/// Runs a scenario into `dir/out` and returns the output folder.
fn played(dir: &Path, body: &str) -> PathBuf {
    let file = scenario(dir, "s.yaml", body);
    let out = dir.join("out");
    play_into(&file, &out, &["--no-report"]);
    out
}

/// `show` with these arguments, stdout piped (not a terminal) and NO_COLOR unset: it must
/// succeed and print no escape code.
fn show(args: &[&str]) -> String {
    let o = bin()
        .arg("show")
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(o.status.success(), "show {args:?}: {}", text(&o));
    assert!(!out.contains('\x1b'), "colour on a pipe: {out}");
    out
}

fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// The output's text of each round: from its `── round R` line to the next one.
fn by_round(out: &str) -> BTreeMap<u64, String> {
    let mut rounds = BTreeMap::new();
    let mut current: Option<(u64, String)> = None;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("── round ") {
            if let Some((r, t)) = current.take() {
                rounds.insert(r, t);
            }
            let r: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            current = Some((r, String::new()));
        }
        if let Some((_, t)) = current.as_mut() {
            t.push_str(line);
            t.push('\n');
        }
    }
    if let Some((r, t)) = current {
        rounds.insert(r, t);
    }
    rounds
}

/// The cards written in a text (words such as `9♥`, `10♣`, `Jk1`, punctuation around them
/// left out).
fn cards_in(text: &str) -> BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || "(),·→:;|".contains(c))
        .filter(|w| {
            w.ends_with(['♠', '♥', '♦', '♣']) && w.chars().count() <= 3 || w.starts_with("Jk")
        })
        .map(str::to_string)
        .collect()
}

/// The line of turn `t` of a round's text.
fn turn_line(round: &str, t: u64) -> &str {
    let prefix = format!("  turn {t:>3}  ");
    round
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line for turn {t} in\n{round}"))
}

#[test]
fn show_replays_the_deal_turn_by_turn_as_the_trace_has_it() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let trace = events(&out.join("traces/deal-000002-arrangement-002.jsonl"));
    let text = show(&[arg(&out), "--deal", "2", "--arrangement", "2"]);
    let head: Vec<&str> = text.lines().take(3).collect();
    assert!(
        head[0].starts_with(
            "stage shown · deal 2 · arrangement 2 of 4 traced · rules paper (coin scoring) · seed "
        ),
        "{text}"
    );
    // Arrangement 2 of a rotation: seat 0 holds the third agent of the list.
    assert_eq!(
        head[1], "seats: 0 balanced · 1 random · 2 aggressive · 3 conservative",
        "{text}"
    );
    assert_eq!(head[2], "view: every hand and every decision");
    let rounds = by_round(&text);
    let names = ["balanced", "random", "aggressive", "conservative"];
    let mut explained = 0;
    for e in &trace {
        let r = e["round"].as_u64().unwrap_or(0);
        match e["event"].as_str().unwrap() {
            "deal" => {
                let shown = &rounds[&r];
                for (s, hand) in e["hands"].as_array().unwrap().iter().enumerate() {
                    let row = format!("    {s} {:<12}", names[s]);
                    let line = shown.lines().find(|l| l.starts_with(&row)).unwrap();
                    assert!(line.ends_with(&strs(hand).join(" ")), "{line}");
                }
            }
            "decision" => {
                let line = turn_line(&rounds[&r], e["turn"].as_u64().unwrap());
                let seat = e["seat"].as_u64().unwrap() as usize;
                has(line, &format!(" {seat} {:<12}  ", names[seat]));
                let choice = said(e, &e["choice"]);
                let choice = choice.as_str();
                assert!(line.contains(choice), "{choice}: {line}");
                if e["phase"] == "discard" {
                    let hand = strs(&e["view"]["hand"]).join(" ");
                    let value = &e["view"]["hand_value"];
                    has(line, &format!("{hand} ({value})"));
                }
                if let Some(c) = e["explanation"]["candidates"].as_array() {
                    explained += 1;
                    let best = said(e, &c[0]["choice"]);
                    let best = best.as_str();
                    let mark = if best == choice { "▸" } else { " " };
                    assert!(
                        rounds[&r]
                            .lines()
                            .any(|l| l.starts_with(&format!("           {mark} {best} "))),
                        "{best}"
                    );
                }
            }
            "drew" => {
                let line = turn_line(&rounds[&r], e["turn"].as_u64().unwrap());
                let card = e["card"].as_str().unwrap();
                has(line, &format!("draw → {card}"));
            }
            "round_end" => {
                let end = rounds[&r]
                    .lines()
                    .find(|l| l.starts_with(&format!("  end of round {r} by ")))
                    .unwrap();
                let caller = e["caller"].as_u64().unwrap();
                has(
                    end,
                    &format!("seat {caller} ({}) called", names[caller as usize]),
                );
                for s in 0..4 {
                    let row = rounds[&r]
                        .lines()
                        .rfind(|l| l.starts_with(&format!("    {s} {:<12}", names[s])))
                        .unwrap();
                    let hand = strs(&e["hands"][s]).join(" ");
                    let standing = &e["standings"][s];
                    has(row, &format!("{hand} ({})", e["hand_values"][s]));
                    assert!(row.ends_with(&format!("→ {standing} coins")), "{row}");
                }
            }
            _ => {}
        }
    }
    assert_eq!(rounds.len(), 3, "{text}");
    // The heuristics explain every decision.
    assert!(explained > 0, "no decision explained in the trace");
    let over = text.lines().last().unwrap();
    assert!(
        over.starts_with("session over after 3 rounds: seat "),
        "{over}"
    );
}

#[test]
fn a_seat_sees_only_its_own_cards_and_the_public_ones() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let trace = events(&out.join("traces/deal-000000-arrangement-000.jsonl"));
    for k in 0..4usize {
        let text = show(&[arg(&out), "--deal", "0", "--seat", &k.to_string()]);
        has(&text, &format!("view: seat {k} ("));
        let rounds = by_round(&text);
        for (&r, shown) in &rounds {
            let events: Vec<&Value> = trace
                .iter()
                .filter(|e| e["round"].as_u64() == Some(r) && e["event"] != "game_end")
                .collect();
            // What K may see: its own cards, the pile's, every discard (hence every card
            // taken from the pile).
            let mut public: BTreeSet<String> = BTreeSet::new();
            let mut hidden: BTreeSet<String> = BTreeSet::new();
            for e in &events {
                match e["event"].as_str().unwrap() {
                    "deal" => {
                        public.extend(strs(&e["pile"]));
                        for (s, hand) in e["hands"].as_array().unwrap().iter().enumerate() {
                            if s == k {
                                public.extend(strs(hand))
                            } else {
                                hidden.extend(strs(hand))
                            }
                        }
                    }
                    "decision" if e["phase"] == "discard" => {
                        let choice = said(e, &e["choice"]);
                        let cards = choice.strip_prefix("discard ").unwrap();
                        public.extend(cards.split(' ').map(str::to_string));
                    }
                    "drew" => {
                        let card = e["card"].as_str().unwrap().to_string();
                        if e["seat"] == k {
                            public.insert(card)
                        } else {
                            hidden.insert(card)
                        };
                    }
                    "reshuffle" => public.extend(strs(&e["pile"])),
                    _ => {}
                }
            }
            let secret: BTreeSet<&String> = hidden.difference(&public).collect();
            assert!(
                !secret.is_empty(),
                "round {r}: nothing hidden from seat {k}?"
            );
            let written = cards_in(shown);
            let leaked: Vec<&String> = written.iter().filter(|c| secret.contains(c)).collect();
            assert!(
                leaked.is_empty(),
                "seat {k} round {r}: {leaked:?} shown\n{shown}"
            );
            // At the deal, the other hands are face down, every card of them.
            let deal = &events[0];
            let dealt: Vec<&str> = shown
                .lines()
                .take_while(|l| !l.starts_with("  turn"))
                .collect();
            for (s, hand) in deal["hands"].as_array().unwrap().iter().enumerate() {
                let row = dealt
                    .iter()
                    .find(|l| {
                        l.chars()
                            .skip(4)
                            .collect::<String>()
                            .starts_with(&format!("{s} "))
                    })
                    .unwrap();
                if s == k {
                    assert!(row.ends_with(&strs(hand).join(" ")), "{row}");
                } else {
                    let n = hand.as_array().unwrap().len();
                    assert!(row.ends_with(&format!("{} ({n})", "▒".repeat(n))), "{row}");
                }
            }
            // The others' turns: no hand, no candidate, no note, no "play on".
            let lines: Vec<&str> = shown.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let Some(rest) = l.strip_prefix("  turn ") else {
                    continue;
                };
                let seat: usize = rest[5..].split(' ').next().unwrap().parse().unwrap();
                if seat == k {
                    continue;
                }
                lacks(l, "play on");
                let next = lines.get(i + 1).copied().unwrap_or("");
                assert!(
                    next.starts_with("  turn ")
                        || next.starts_with("  end of round")
                        || next.contains("the pile is turned over"),
                    "after seat {seat}'s turn, seen by {k}: {next}"
                );
            }
        }
        // Seat K's own decisions keep their candidates.
        let own = trace
            .iter()
            .filter(|e| e["event"] == "decision" && e["seat"] == k)
            .filter(|e| e["explanation"]["candidates"].is_array())
            .count();
        let marks = text
            .lines()
            .filter(|l| l.starts_with("           ▸ "))
            .count();
        assert!(
            marks >= own.min(1) && marks <= own,
            "{marks} marks, {own} explained"
        );
    }
}

#[test]
fn round_filters_and_the_stage_is_found() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let text = show(&[arg(&out), "--deal", "0", "--round", "1"]);
    let rounds = by_round(&text);
    assert_eq!(rounds.keys().copied().collect::<Vec<_>>(), [1], "{text}");
    has(&text, "  end of round 1 by ");
    assert!(!text.contains("end of round 0") && !text.contains("end of round 2"));
    lacks(&text, "session over");

    let dir = tmp();
    let out = played(dir.path(), STAGED);
    let o = arg(&out);
    let t = refused(&["show", o]);
    has_all(&t, &["several stages", "first, second"]);
    assert!(show(&[o, "--stage", "second"]).starts_with("stage second · deal 0"));
    let t = refused(&["show", o, "--stage", "third"]);
    has_all(&t, &["no stage `third`", "first, second"]);
    // With one stage's traces gone, the other is the one shown.
    std::fs::remove_dir_all(out.join("first/traces")).unwrap();
    assert!(show(&[o]).starts_with("stage second · deal 0"));
    // A stage's own folder is a run folder too.
    assert!(show(&[arg(&out.join("second"))]).starts_with("stage second"));
}

#[test]
fn bad_requests_are_refused_with_what_to_do() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let o = arg(&out);
    let t = refused(&["show", arg(&dir.path().join("nothing"))]);
    has(&t, "is not a folder");
    let empty = dir.path().join("source");
    std::fs::create_dir_all(&empty).unwrap();
    let t = refused(&["show", arg(&empty)]);
    has(&t, "holds no traces");
    let t = refused(&["show", o]);
    has(&t, "2 deals: 0, 2; pick one with --deal N");
    let t = refused(&["show", o, "--deal", "1"]);
    has_all(&t, &["deal 1 was not traced", "traced deals: 0, 2"]);
    let t = refused(&["show", o, "--deal", "0", "--arrangement", "4"]);
    has(&t, "its arrangements: 0, 1, 2, 3");
    let t = refused(&["show", o, "--deal", "0", "--round", "3"]);
    has_all(&t, &["--round 3", "played rounds 0, 1, 2"]);
    let t = refused(&["show", o, "--deal", "0", "--seat", "4"]);
    has(&t, "--seat 4: the game has 4 seats, 0 to 3");
    let t = refused(&["show", o, "--deal", "0", "--seat", "x"]);
    has(&t, "--seat");
    let t = refused(&["show", o, "--deal", "0", "--html", "x.html", "--seat", "1"]);
    has(&t, "cannot be used with");
    // A damaged trace.
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(broken.join("traces")).unwrap();
    std::fs::write(
        broken.join("traces/deal-000000-arrangement-000.jsonl"),
        "{\"event\":\"game\"}\nnot json\n",
    )
    .unwrap();
    let t = refused(&["show", arg(&broken)]);
    has(&t, "line 2: not a trace event");
}

/// A decision's explanation is shown by its first three candidates, the chosen one marked,
/// and the chosen one where it ranks lower; notes after them.
#[test]
fn candidates_are_the_top_three_and_the_chosen_one() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let path = out.join("traces/deal-000000-arrangement-000.jsonl");
    let mut trace = events(&path);
    let i = trace
        .iter()
        .position(|e| e["event"] == "decision" && e["phase"] == "discard")
        .unwrap();
    let legal = trace[i]["legal"].as_array().unwrap().clone();
    assert!(legal.len() >= 4, "{legal:?}");
    let chosen = trace[i]["choice"].clone();
    let mut cands: Vec<Value> = (0..legal.len())
        .map(Value::from)
        .filter(|c| *c != chosen)
        .take(3)
        .enumerate()
        .map(|(k, c)| json!({"choice": c, "score": 10.0 - k as f64, "details": {"visits": 7}}))
        .collect();
    cands.push(json!({"choice": chosen, "score": 0.5, "details": {}}));
    trace[i]["explanation"] =
        json!({"score": "made-up score", "candidates": cands, "notes": ["a note"]});
    let text: String = trace.iter().map(|e| format!("{e}\n")).collect();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join("traces")).unwrap();
    std::fs::write(mine.join("traces/deal-000000-arrangement-000.jsonl"), text).unwrap();
    let shown = show(&[arg(&mine), "--round", "0"]);
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("  turn   1  "))
        .unwrap();
    let t = |c: &Value| said(&trace[i], &c["choice"]);
    assert!(
        lines[at + 1].starts_with(&format!("             {}", t(&cands[0]))),
        "{shown}"
    );
    // The column's scores share one precision (0.5 below needs a decimal, so 10 reads 10.0).
    assert!(
        lines[at + 1].contains("10.0  (made-up score)  visits 7"),
        "{shown}"
    );
    assert!(lines[at + 4].ends_with("  0.5"), "{shown}");
    assert!(
        lines[at + 2].starts_with(&format!("             {}", t(&cands[1]))),
        "{shown}"
    );
    assert!(
        lines[at + 3].starts_with(&format!("             {}", t(&cands[2]))),
        "{shown}"
    );
    assert!(
        lines[at + 4].starts_with(&format!("           ▸ {} (ranked 4 of 4)", t(&cands[3]))),
        "{shown}"
    );
    assert_eq!(lines[at + 5], "             · a note", "{shown}");
}

#[test]
fn html_writes_the_replay_page() {
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let page = dir.path().join("deal0.html");
    let t = show(&[arg(&out), "--deal", "0", "--html", arg(&page)]);
    has(&t, "deal 0, 4 arrangements");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("deal-000000-arrangement-003.jsonl"));
    assert!(!html.contains("deal-000002-"));
    let t = refused(&[
        "show",
        arg(&out),
        "--deal",
        "0",
        "--html",
        arg(&dir.path().join("no/such/folder.html")),
    ]);
    has(&t, "does not exist");
}

/// tmux, when there is one (scripts/test.sh installs it where it can).
fn tmux() -> Option<&'static str> {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: tmux is not installed (scripts/test.sh installs it with apt-get)");
    }
    found.then_some("tmux")
}

/// Runs `show` in a tmux pane (a real terminal) of 200 columns and returns the pane's text
/// with its colours (`capture-pane -e`), scrollback included.
fn in_terminal(tmux: &str, args: &[&str], no_color: bool) -> String {
    in_pane(tmux, args, no_color, 200).0
}

/// [`in_terminal`] in a pane `columns` wide; also the pane's title when `show` ended.
fn in_pane(tmux: &str, args: &[&str], no_color: bool, columns: u32) -> (String, String) {
    let socket = format!("dhumbal-show-{}-{no_color}-{columns}", std::process::id());
    let tm = |a: &[&str]| {
        Command::new(tmux)
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(a)
            .output()
            .unwrap()
    };
    let mut cmd = vec![
        "env".to_string(),
        if no_color {
            "NO_COLOR=1".into()
        } else {
            "-u".into()
        },
        if no_color {
            "TERM=xterm-256color".into()
        } else {
            "NO_COLOR".into()
        },
        env!("CARGO_BIN_EXE_dhumbal-run").to_string(),
        "show".into(),
    ];
    cmd.extend(args.iter().map(|a| a.to_string()));
    let line = format!("{}; echo SHOW-EXITED-$?; sleep 60", cmd.join(" "));
    let o = tm(&[
        "new-session",
        "-d",
        "-x",
        &columns.to_string(),
        "-y",
        "50",
        &line,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let start = Instant::now();
    let captured = loop {
        let o = tm(&["capture-pane", "-e", "-p", "-S", "-", "-E", "-"]);
        let c = String::from_utf8_lossy(&o.stdout).to_string();
        if c.contains("SHOW-EXITED-") || start.elapsed() > Duration::from_secs(20) {
            break c;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let title = tm(&["display-message", "-p", "#{pane_title}"]);
    tm(&["kill-server"]);
    has(&captured, "SHOW-EXITED-0");
    (
        captured,
        String::from_utf8_lossy(&title.stdout).trim().to_string(),
    )
}

#[test]
fn a_terminal_gets_red_hearts_and_no_color_plain_text() {
    let Some(tmux) = tmux() else { return };
    let dir = tmp();
    let out = played(dir.path(), TRACED);
    let args = [arg(&out), "--deal", "0", "--round", "0", "--seat", "1"];
    let coloured = in_terminal(tmux, &args, false);
    // A heart in red (tmux writes the colour back as SGR 31), face-down cards dim (SGR 2).
    let red_heart = coloured.split("\x1b[31m").skip(1).any(|after| {
        let card: String = after.chars().take_while(|c| *c != '\x1b').collect();
        card.ends_with('♥') && card.chars().count() <= 3
    });
    assert!(red_heart, "no red heart in\n{coloured}");
    has_all(&coloured, &["\x1b[2m▒", "view: seat 1 ("]);
    let plain = in_terminal(tmux, &args, true);
    assert!(!plain.contains("\x1b["), "NO_COLOR: {plain}");
    has(&plain, "── round 0");
}

/// A script whose explanation holds escape codes (clear the screen, retitle the window) and
/// prints one, with a note longer than a line.
const HOSTILE: &str = r#"
fn call_jhyap(obs) { obs.hand_value <= 5 }
fn discard(obs) { print("\x1b[31mred"); obs.hand[0] }
fn pick(obs) { "stock" }
fn explain(obs) {
    print("\x1b]0;PWNED\x07");
    ["\x1b[2J\x1b[H", "a long note of many words: one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"]
}
"#;

#[test]
fn escape_codes_from_a_script_are_shown_not_obeyed_and_notes_wrap() {
    let dir = tmp();
    std::fs::write(dir.path().join("hostile.rhai"), HOSTILE).unwrap();
    let out = played(
        dir.path(),
        "name: hostile\nseed: 2\ndeals: 1\nrules: {preset: paper, players: 2}\n\
         agents: [{script: hostile.rhai}, {kind: balanced}]\n\
         output: {decision_timing: false, trace: {deals: [0]}}\n",
    );
    let o = out.to_str().unwrap();
    // The run's log of what scripts print writes it escaped too.
    let log = std::fs::read_to_string(out.join("scripts.log")).unwrap();
    assert!(
        log.contains("] \\x1b[31mred\n") && !log.contains('\u{1b}'),
        "{log:?}"
    );
    // Piped: shown as text, and not wrapped unless asked.
    let piped = show(&[o]);
    has_all(&piped, &["\\x1b[2J\\x1b[H", "print: \\x1b]0;PWNED\\x07"]);
    assert!(!piped.contains('\u{7}'), "{piped:?}");
    assert!(
        piped.lines().any(|l| l.ends_with("nineteen twenty")),
        "{piped}"
    );
    let narrow = show(&[o, "--width", "60"]);
    for l in narrow
        .lines()
        .filter(|l| l.trim_start().starts_with("· a long note"))
    {
        assert!(l.chars().count() <= 60, "{l}");
    }
    assert!(
        narrow
            .lines()
            .any(|l| l.starts_with("               ") && l.contains("twenty")),
        "the note's last words on a continuation line, aligned: {narrow}"
    );
    // In a terminal of 80 columns: nothing cleared (the header is still there), the title
    // unchanged, the notes wrapped to the width.
    let Some(tmux) = tmux() else { return };
    let (screen, title) = in_pane(tmux, &[o], true, 80);
    has_all(&screen, &["stage hostile", "\\x1b[2J"]);
    assert_ne!(title, "PWNED");
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("               ") && l.contains("twenty")),
        "{screen}"
    );
}
