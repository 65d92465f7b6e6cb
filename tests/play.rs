//! `dhumbal-run play`, used as a person uses it: a scripted player through stdin (plain text)
//! and through a real terminal (tmux), whole games to their end; the game a function of the
//! seed and the answers only (hints change nothing); the trace a tournament writes, which
//! `show` replays; stopping and bad input.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{bin, has, has_all, refused, text, tmp, tmp_scenario};

/// Runs `dhumbal-run play ARGS` with `input` on stdin.
fn play(args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    // The game may end before it reads everything: a closed pipe is fine.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// A player who discards the first option and draws, and answers 1 (call) when asked to
/// call; a line that does not fit the question is refused and the next one read.
fn first_option_player(turns: usize) -> String {
    "1\nd\n".repeat(turns)
}

/// The trace's lines as JSON, each decision's time (`ns`) left out.
fn trace(dir: &Path, deal: u64) -> Vec<serde_json::Value> {
    let path = dir
        .join("traces")
        .join(format!("deal-{deal:06}-arrangement-000.jsonl"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            if let Some(m) = v.as_object_mut() {
                m.remove("ns");
            }
            v
        })
        .collect()
}

/// Requires two traces to be the same game, naming the first line where they differ.
fn same_game(a: &[serde_json::Value], b: &[serde_json::Value], what: &str) {
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        panic!(
            "{what}: the traces differ from line {} on:\n  {}\n  {}",
            i + 1,
            a.get(i).map_or("(none)".into(), |v| v.to_string()),
            b.get(i).map_or("(none)".into(), |v| v.to_string())
        );
    }
}

fn events<'a>(lines: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    lines.iter().filter(|l| l["event"] == kind).collect()
}

/// A whole point game through stdin: it ends with the standings, the trace holds every event
/// of it (the person's decisions as `human`), `show` replays it, and the same seed and
/// answers give the same game, with or without hints.
#[test]
fn a_scripted_player_plays_a_whole_game_through_stdin() {
    let dir = tmp();
    let out = |name: &str| dir.path().join(name);
    let args = |d: &Path| {
        vec![
            "--rules".to_string(),
            "simplified-2p".into(),
            "--seed".into(),
            "3".into(),
            "--out".into(),
            d.display().to_string(),
        ]
    };
    let run = |d: &Path, input: &str| {
        let a = args(d);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = play(&a, input);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let screen = run(&out("a"), &first_option_player(2000));
    has_all(
        &screen,
        &["game over after", "winner: ", "seat 0 (you) to call"],
    );
    assert!(!screen.contains('\x1b'), "no colour when not a terminal");

    let a = trace(&out("a"), 0);
    assert_eq!(a[0]["event"], "game");
    assert_eq!(a[0]["rules"], "simplified-2p");
    assert_eq!(a[0]["scoring"], "points");
    assert_eq!(a[0]["seats"][0]["agent"], "human");
    let decisions = events(&a, "decision");
    let mine: Vec<_> = decisions.iter().filter(|d| d["seat"] == 0).collect();
    assert!(!mine.is_empty() && mine.iter().all(|d| d["agent"] == "human"));
    // The first option is the engine's first legal action: this player's every choice.
    for d in &mine {
        if d["phase"] != "pick" {
            assert_eq!(d["choice"], 0, "{d}");
        }
    }
    let rounds = events(&a, "round_end");
    let end = events(&a, "game_end");
    assert_eq!(end.len(), 1, "the game ended");
    assert_eq!(end[0]["rounds"], rounds.len());
    assert_eq!(events(&a, "deal").len(), rounds.len());
    assert_eq!(a.last().unwrap()["event"], "game_end");

    // Replayed by `show`.
    let shown = common::run(&["show", &out("a").display().to_string(), "--deal", "0"]);
    assert!(shown.status.success(), "{}", text(&shown));
    let replay = String::from_utf8_lossy(&shown.stdout);
    has(&replay, "human");

    // The same seed and answers: the same game, move for move.
    run(&out("b"), &first_option_player(2000));
    same_game(&trace(&out("b"), 0), &a, "the same seed and answers");
    // Asking for a hint before every answer (and at every pause) changes nothing.
    let hinted = run(&out("c"), &"?\n1\n?\nd\n".repeat(2000));
    has(&hinted, "advisor (ismcts): ");
    same_game(&trace(&out("c"), 0), &a, "hints changed the game");
    // Other answers, another game (the answers are what decide).
    run(&out("d"), &"2\n1\nd\n".repeat(2000));
    assert_ne!(trace(&out("d"), 0), a);
}

/// Under the paper's shared CPython stream (`generator: python`) every agent draws from one
/// stream, so an advisor that drew from the game's randomness would move every later card and
/// choice: a hint must still change nothing. The person's seat in a scenario, and the deal's
/// cards those of the tournament's same deal.
#[test]
fn hints_never_draw_from_the_game_and_a_scenario_deal_is_the_tournaments() {
    let (dir, file) = tmp_scenario(
        "shared.yaml",
        "name: shared\nseed: 42\ngenerator: python\ndeals: 3\nsession: 3\n\
         rules: {preset: paper, players: 3}\n\
         agents: [{kind: balanced}, {kind: opportunistic}, {kind: balanced}]\n\
         output: {trace: {deals: [0]}}\n",
    );
    let f = file.display().to_string();
    let game = |name: &str, input: &str| {
        let d = dir.path().join(name);
        let o = play(
            &[&f, "--seat", "1", "--out", &d.display().to_string()],
            input,
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        trace(&d, 0)
    };
    let plain = game("plain", &first_option_player(3000));
    assert_eq!(plain[0]["session"], 3);
    assert_eq!(plain[0]["seats"][1]["agent"], "human");
    assert_eq!(plain[0]["seats"][0]["agent"], "balanced");
    assert_eq!(plain[0]["seats"][2]["agent"], "balanced-2");
    let hinted = game("hinted", &"?\n1\n?\nd\n".repeat(3000));
    same_game(&hinted, &plain, "a hint changed the game");

    // The tournament's trace of deal 0: the same first deal (the person's seat aside, the
    // deal depends only on the seed and the deal number).
    let run_dir = dir.path().join("run");
    let o = common::run(&[&f, "--out", &run_dir.display().to_string(), "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = trace(&run_dir, 0);
    assert_eq!(events(&t, "deal")[0], events(&plain, "deal")[0]);
}

/// `q` and the end of input stop the game with exit 130 and keep the trace so far; bad
/// input is refused with exit 2 and a reason, never a panic.
#[test]
fn stopping_and_bad_input() {
    let dir = tmp();
    let d = dir.path().join("stopped");
    let ds = d.display().to_string();
    let args = [
        "--rules",
        "paper",
        "--players",
        "2",
        "--seed",
        "1",
        "--out",
        &ds,
    ];
    let o = play(&args, "banana\n99\n1\nd\nq\n");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(130), "{t}");
    has_all(
        &t,
        &[
            "`banana` is neither an option number nor a card",
            "there is no option 99",
            "stopped after 0 finished round(s)",
        ],
    );
    let lines = trace(&d, 0);
    let mine: Vec<_> = events(&lines, "decision")
        .into_iter()
        .filter(|e| e["agent"] == "human")
        .collect();
    assert_eq!(mine.len(), 2, "the discard and the draw were kept");
    assert!(events(&lines, "game_end").is_empty());
    // The same deal again is refused unless --force.
    let again = refused(&[&["play"][..], &args].concat());
    has(&again, "--force");
    let o = play(&[&args[..], &["--force"]].concat(), "1\n");
    assert_eq!(o.status.code(), Some(130), "end of input: {}", text(&o));
    assert!(text(&o).contains("(end of input)"));

    for (args, says) in [
        (
            &["play", "--seat", "4"][..],
            "--seat 4: the table has 4 seats",
        ),
        (&["play", "--players", "9"], "9 is not in 2..=8"),
        (&["play", "--rules", "papr"], "expected one of paper"),
        (
            &["play", "--opponent", "ismct", "--players", "2"],
            "did you mean `ismcts`",
        ),
        (
            &[
                "play",
                "--players",
                "2",
                "--opponent",
                "random",
                "--opponent",
                "random",
            ],
            "2 opponents given (--opponent) for 1 other seat(s)",
        ),
        (
            &["play", "--rules", "jhyap", "--rounds", "3"],
            "--rounds is for coin scoring",
        ),
        (
            &[
                "play",
                "--advisor",
                r#"{"kind": "ismcts", "params": {"oracle": true}}"#,
            ],
            "an oracle sees every hand",
        ),
        (&["play", "--advisor", "{kind"], "is not a JSON entry"),
        (
            &["play", "scenarios/variants/jhyap.yaml", "--stage", "final"],
            "no such stage",
        ),
        (
            &["play", "scenarios/variants/jhyap.yaml", "--players", "3"],
            "cannot be used with",
        ),
    ] {
        let t = refused(args);
        assert!(t.contains(says), "{args:?}: {t}");
    }
    // A misspelt opponent that fills several seats is reported once.
    let t = refused(&[
        "play",
        "--rules",
        "jhyap",
        "--players",
        "3",
        "--opponent",
        "agressive",
    ]);
    assert_eq!(t.matches("did you mean `aggressive`").count(), 1, "{t}");
}

/// tmux with its own server (socket) for one test, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    fn run(&self, args: &[&str]) -> String {
        let o = self.cmd().args(args).output().expect("tmux runs");
        assert!(o.status.success(), "tmux {args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The whole pane: its history and the screen (`colour`: with the escape codes).
    fn capture(&self, colour: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-S", "-", "-t", "play"];
        if colour {
            args.push("-e");
        }
        self.run(&args)
    }

    /// The screen only, as a person sees it now.
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "play"])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// Which question a prompt line asks, if it is one.
fn question(line: &str) -> Option<&'static str> {
    if line.starts_with("Call Jhyap? [y/n]") {
        Some("n")
    } else if line.starts_with("Discard (") {
        Some("1")
    } else if line.starts_with("Take (") {
        Some("d")
    } else if line.starts_with("Enter for round") {
        Some("")
    } else {
        None
    }
}

/// A person at a real terminal: `play` runs in a tmux pane; the test reads the screen, answers
/// each question as it appears (the first discard, draw, never call, Enter between rounds),
/// and the game ends with the final standings on the screen.
#[test]
fn a_person_plays_a_whole_game_in_a_terminal() {
    // As tests/show.rs: scripts/test.sh installs tmux where it can; without it, say so.
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: tmux is not installed (scripts/test.sh installs it with apt-get)");
        return;
    }
    let dir = tmp();
    let out = dir.path().join("game");
    let conf = dir.path().join("tmux.conf");
    std::fs::write(&conf, "set -g history-limit 100000\n").unwrap();
    let tmux = Tmux {
        socket: format!("dhumbal-play-test-{}", std::process::id()),
    };
    let command = format!(
        "cd {} && {} play --rules paper --players 2 --seat 0 --seed 3 --rounds 2 --out {}; \
         echo \"[exit $?]\"; sleep 60",
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_BIN_EXE_dhumbal-run"),
        out.display()
    );
    tmux.run(&[
        "-f",
        &conf.display().to_string(),
        "new-session",
        "-d",
        "-s",
        "play",
        "-x",
        "110",
        "-y",
        "40",
        &command,
    ]);
    let start = Instant::now();
    let mut answered = 0;
    let mut first_screen = None;
    let finished = loop {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no end after 20 s; the screen:\n{}",
            tmux.screen()
        );
        let all = tmux.capture(false);
        if all.contains("[exit ") {
            break all;
        }
        let questions: Vec<&str> = all.lines().filter(|l| question(l).is_some()).collect();
        if questions.len() > answered {
            if first_screen.is_none() {
                first_screen = Some((tmux.screen(), tmux.capture(true)));
            }
            let answer = question(questions[answered]).unwrap();
            let mut keys = vec!["send-keys", "-t", "play"];
            if !answer.is_empty() {
                keys.extend(["-l", answer]);
                tmux.run(&keys);
                keys = vec!["send-keys", "-t", "play"];
            }
            keys.push("Enter");
            tmux.run(&keys);
            answered += 1;
        } else {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let screen = tmux.screen();
    assert!(finished.contains("[exit 0]"), "{screen}");
    has_all(
        &screen,
        &[
            "══ game over after 2 rounds ══",
            "final standings (coins):",
            "winner: ",
            "trace: ",
        ],
    );
    // What the person saw at the first decision: their hand face up with its value, the
    // other's face down, the pile and stock, the options numbered, the question.
    let (first, colour) = first_screen.expect("a question was asked");
    has_all(
        &first,
        &[
            "round 0 · turn 1 · seat 0 (you) to discard",
            "1 aggressive  10000 coins  ▒▒▒▒▒ (5)",
            "pile 6♠ (1 card) · stock 41",
            "  1  discard 9♥",
            "Discard (a number, or cards like 9h 10h jh",
        ],
    );
    // On a terminal, red suits are red.
    has(&colour, "\x1b[31m9♥");
    // Each round ended with every hand shown.
    assert_eq!(finished.matches("══ round ").count(), 2, "{finished}");
    let lines = trace(&out, 0);
    assert_eq!(events(&lines, "game_end").len(), 1);
    // The first discard of the person, as answered.
    let mine = events(&lines, "decision")
        .into_iter()
        .find(|d| d["agent"] == "human")
        .unwrap();
    assert_eq!(
        mine["legal"][mine["choice"].as_u64().unwrap() as usize],
        "discard 9♥"
    );
    eprintln!("answered {answered} questions in {:?}", start.elapsed());
}
