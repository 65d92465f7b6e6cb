//! `dhumbal-run serve` as participants use it: the binary started on 127.0.0.1:0, spoken to
//! over HTTP (a few lines of std `TcpStream`, no client crate); every response checked to hold
//! no card of another seat that the person could not know; bad requests refused with a 4xx and
//! a JSON message, nothing written for them; a server killed and started again resumes each
//! participant where they were; what a game leaves (journal, trace, records) read back.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::browser::Browser;
use common::{bin, has, refused, tmp};

/// Two agents, two games of two rounds each, two listed codes, hints by `balanced`.
const STUDY: &str = "\
name: served
seed: 11
rules: {preset: paper, players: 2}
study:
  agents:
    - kind: aggressive
    - kind: random
  games: 2
  rounds: 2
  seat: rotate
  hints: balanced
  instructions: Play <b>well</b>.
  consent: I agree & consent.
  participants: [A1, B2]
";

/// A server of `file` writing into `out`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(file: &Path, out: &Path) -> Server {
        let mut child = bin()
            .args(["serve", &file.display().to_string(), "--port", "0", "--out"])
            .arg(out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        // The first line says where it listens; the rest is drained (a closed pipe would end
        // the server at its next line).
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let addr = match line
            .trim()
            .strip_prefix("serving the study at http://")
            .and_then(|a| a.strip_suffix('/'))
        {
            Some(a) => a.to_string(),
            None => {
                let mut err = String::new();
                let _ = stderr.read_to_string(&mut err);
                panic!("the server did not start: {line}{err}")
            }
        };
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Server { child, addr }
    }

    /// Sends one request and returns the status and the body as JSON (or as a string).
    fn request(&self, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n{auth}Connection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        let value = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
        (status, value)
    }

    fn post(&self, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
        self.request("POST", path, token, body.to_string().as_bytes())
    }

    fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        self.request("GET", path, token, b"")
    }

    fn sign_in(&self, code: &str) -> (String, Value) {
        let (status, r) = self.post("/api/signin", None, json!({"code": code, "consent": true}));
        assert_eq!(status, 200, "{r}");
        (r["token"].as_str().unwrap().to_string(), r["state"].clone())
    }

    fn act(&self, code: &str, token: &str, seq: u64, action: usize) -> (u16, Value) {
        self.post(
            &format!("/api/participants/{code}/action"),
            Some(token),
            json!({"seq": seq, "action": action}),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn study_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("study.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Every card's name as the page shows it.
fn card_names() -> Vec<String> {
    (0..54u8)
        .map(dhumbal::game::Card::from_id)
        .map(|c| c.to_string())
        .collect()
}

/// Cards named in `text` (names with a suit symbol or `Jk`, so no word is mistaken for one).
fn cards_in(text: &str, names: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for n in names {
        let mut at = 0;
        while let Some(i) = text[at..].find(n.as_str()) {
            let start = at + i;
            // `10♥` holds `0♥`, which is no card; `J♥` is not inside another name.
            let before = text[..start].chars().last();
            if !(n.len() > 1 && before == Some('1') && n.starts_with('0')) {
                found.insert(n.clone());
            }
            at = start + n.len();
        }
    }
    found
}

/// Checks that `response` (any answer the page or a client gets) names no card the person
/// cannot know: each card it names is in their hand, on the pile's top, theirs to take, their
/// own discard, known in another hand (taken from the pile), or named by a public event
/// (a discard, a take from the pile, the face-up card, their own draw). `public` becomes what
/// a view shows the person; an answer without a view (a hint) is held to the last view's.
fn no_hidden_card(response: &Value, public: &mut BTreeSet<String>, names: &[String]) {
    let text = response.to_string();
    let Some(view) = find_view(response) else {
        let named = cards_in(&text, names);
        assert!(
            named.is_subset(public),
            "{named:?} named outside a view: {text}"
        );
        return;
    };
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().map(String::from))
            .collect()
    };
    public.clear();
    for field in ["hand", "pile_top", "pickable", "discarded"] {
        public.extend(list(&view[field]));
    }
    for seat in view["seats"].as_array().unwrap() {
        public.extend(list(&seat["known"]));
    }
    for e in view["events"].as_array().unwrap() {
        let e = e.as_str().unwrap();
        let shown = [" discarded ", " took ", "face up: ", "you drew "]
            .iter()
            .any(|w| e.contains(w));
        if shown {
            // The part of the line that is public (what follows a hidden draw is never a card).
            public.extend(cards_in(e, names));
        }
    }
    let named = cards_in(&text, names);
    let hidden: Vec<&String> = named.difference(public).collect();
    assert!(
        hidden.is_empty(),
        "cards the person cannot know: {hidden:?} in {text}"
    );
}

fn find_view(v: &Value) -> Option<&Value> {
    match v.get("state") {
        Some(s) if s["status"] == "play" => Some(s),
        _ if v["status"] == "play" => Some(v),
        _ => None,
    }
}

/// Plays `code`'s games to the end through the API, choosing as a simple bot (the first
/// legal action, drawing rather than taking), asking one hint per game; returns the
/// decisions made.
fn play_through(server: &Server, code: &str, token: &str, state: Value) -> u64 {
    bot(server, code, token, state, false)
}

/// [`play_through`], or with `follow`, a bot that asks for a hint at every decision and plays
/// it.
fn bot(server: &Server, code: &str, token: &str, mut state: Value, follow: bool) -> u64 {
    let names = card_names();
    let mut public = BTreeSet::new();
    let mut made = 0;
    let mut hinted_games = BTreeSet::new();
    while state["status"] == "play" {
        no_hidden_card(&state, &mut public, &names);
        let seq = state["seq"].as_u64().unwrap();
        let game = state["game"].as_u64().unwrap();
        // `seat: rotate`: the person sits in seat g mod 2 in game g.
        assert_eq!(state["seat"].as_u64(), Some(game % 2), "{state}");
        let mut hinted = None;
        if hinted_games.insert(game) || follow {
            let (status, h) = server.post(
                &format!("/api/participants/{code}/hint"),
                Some(token),
                json!({"seq": seq}),
            );
            assert_eq!(status, 200, "{h}");
            assert!(h["hint"]["choice"].is_u64(), "{h}");
            no_hidden_card(&h, &mut public, &names);
            hinted = h["hint"]["choice"].as_u64().filter(|_| follow);
        }
        let legal = state["legal"].as_array().unwrap();
        let choice = match hinted {
            Some(i) => i as usize,
            None => legal
                .iter()
                .position(|a| {
                    a["kind"] == "draw" || a["kind"] == "discard" || a["text"] == "play on"
                })
                .unwrap_or(0),
        };
        let (status, r) = server.act(code, token, seq, choice);
        assert_eq!(status, 200, "{r}");
        made += 1;
        state = r["state"].clone();
    }
    assert_eq!(state["status"], "done", "{state}");
    made
}

#[test]
fn participants_play_their_games_and_every_game_is_written() {
    let dir = tmp();
    let file = study_file(dir.path(), STUDY);
    let out = dir.path().join("out");
    let server = Server::start(&file, &out);
    let (status, info) = server.get("/api/study", None);
    assert_eq!(status, 200);
    assert_eq!(info["instructions"], "Play <b>well</b>.");
    assert_eq!(info["games"], 2);
    // Two participants at once, each in their own game.
    let (ta, sa) = server.sign_in("A1");
    let (tb, sb) = server.sign_in("B2");
    assert_eq!(sa["status"], "play", "{sa}");
    let both = std::thread::scope(|s| {
        let a = s.spawn(|| play_through(&server, "A1", &ta, sa.clone()));
        let b = s.spawn(|| play_through(&server, "B2", &tb, sb.clone()));
        (a.join().unwrap(), b.join().unwrap())
    });
    // The same deal for game g of each participant; the Latin square's rows differ.
    let (_, done) = server.get("/api/participants/A1/state", Some(&ta));
    let results = done["state"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let agents: Vec<&str> = results
        .iter()
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["aggressive", "random"]);
    let (_, done_b) = server.get("/api/participants/B2/state", Some(&tb));
    let b_agents: Vec<&str> = (done_b["state"]["results"].as_array().unwrap().iter())
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(b_agents, ["random", "aggressive"]);

    // The journal holds each decision once.
    for (code, made) in [("A1", both.0), ("B2", both.1)] {
        let journal =
            std::fs::read_to_string(out.join("participants").join(code).join("journal.jsonl"))
                .unwrap();
        let decisions = journal
            .lines()
            .filter(|l| l.contains("\"line\":\"decision\""))
            .count();
        assert_eq!(decisions as u64, made, "{code}");
        assert_eq!(
            journal
                .lines()
                .filter(|l| l.contains("\"game-end\""))
                .count(),
            2
        );
    }
    // Traces of format 2, the person's decisions timed.
    let trace = out.join("participants/A1/traces/deal-000000-arrangement-000.jsonl");
    let text = std::fs::read_to_string(&trace).unwrap();
    has(&text, "\"format\":2");
    let human_times: Vec<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "decision" && e["seat"] == json!(0))
        .map(|e| e["ns"].as_u64().unwrap())
        .collect();
    // Game 1 seats the person in seat 1 (`seat: rotate`): the trace's "human" decides there.
    let second = std::fs::read_to_string(
        out.join("participants/A1/traces/deal-000001-arrangement-000.jsonl"),
    )
    .unwrap();
    let seats: BTreeSet<u64> = second
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "decision" && e["agent"] == "human")
        .map(|e| e["seat"].as_u64().unwrap())
        .collect();
    assert_eq!(seats, BTreeSet::from([1]));
    assert!(
        !human_times.is_empty() && human_times.iter().all(|&ns| ns > 0),
        "{human_times:?}"
    );
    // Records read back typed: a person's row and an agent's per seat and round.
    let rows = dhumbal::runner::study::records::read(&out).unwrap();
    assert_eq!(rows.len(), 2 * 2 * 2 * 2, "{rows:?}");
    assert!(rows.iter().all(|r| r.human == (r.agent == "human")));
    assert_eq!(
        rows.iter()
            .filter(|r| r.participant == "B2" && r.human)
            .count(),
        4
    );
    assert!(
        rows.iter()
            .filter(|r| r.human)
            .all(|r| r.decision_ns.is_some())
    );
    // `show` replays a participant's game.
    let shown = common::ok(&[
        "show",
        &out.join("participants/A1").display().to_string(),
        "--deal",
        "0",
    ]);
    has(&common::text(&shown), "human");
}

/// The study's report from its folder: people against each agent, over the games, each
/// participant, and move matching, which finds the advisor's moves in a person who always
/// played the hint (the advisor `aggressive`, deterministic, is also a condition).
#[test]
fn the_report_of_a_study_matches_moves_on_the_people_s_observations() {
    let dir = tmp();
    let text = STUDY.replace("hints: balanced", "hints: aggressive");
    let file = study_file(dir.path(), &text);
    let out = dir.path().join("out");
    let server = Server::start(&file, &out);
    let (ta, sa) = server.sign_in("A1");
    let (tb, sb) = server.sign_in("B2");
    bot(&server, "A1", &ta, sa, true);
    play_through(&server, "B2", &tb, sb);
    let said = common::text(&common::ok(&["report", &out.display().to_string()]));
    has(&said, "study report in");
    let page = std::fs::read_to_string(out.join("report.md")).unwrap();
    for part in [
        "## People against each agent",
        "## Over the games",
        "## Move matching",
        "## Participants",
    ] {
        has(&page, part);
    }
    for stem in ["people-won", "move-matching"] {
        has(&page, &format!("figures/{stem}.svg"));
        assert!(
            out.join("figures").join(format!("{stem}.png")).is_file(),
            "{stem}"
        );
    }
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["participants"], 2);
    assert_eq!(stats["games"], 4);
    let a1 = &stats["people"][0];
    assert_eq!(a1["participant"], "A1");
    assert_eq!(a1["matching"]["aggressive"], json!(1.0), "{a1}");
    let b2 = &stats["people"][1];
    assert!(b2["matching"]["aggressive"].as_f64().unwrap() < 1.0, "{b2}");
    // Every decision was asked of each agent.
    let decisions: u64 = (stats["people"].as_array().unwrap().iter())
        .map(|p| p["decisions"].as_u64().unwrap())
        .sum();
    for m in stats["matching"].as_array().unwrap() {
        assert_eq!(m["decisions"].as_u64(), Some(decisions), "{m}");
    }
    // The report reads the scenario as served (study.json keeps it), whatever became of the
    // file since.
    std::fs::write(&file, text.replace("seed: 11", "seed: 12")).unwrap();
    let again = common::ok(&["report", &out.display().to_string()]);
    has(&common::text(&again), "study report in");
    let same: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(same, stats);
}

#[test]
fn bad_requests_are_refused_with_a_message_and_change_nothing() {
    let dir = tmp();
    let file = study_file(dir.path(), STUDY);
    let out = dir.path().join("out");
    let server = Server::start(&file, &out);
    let refuse = |(status, body): (u16, Value), want: u16, says: &str| {
        assert_eq!(status, want, "{body}");
        let message = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no JSON error: {body}"));
        has(message, says);
    };
    refuse(
        server.request("POST", "/api/signin", None, b"{not json"),
        400,
        "expected a JSON body",
    );
    refuse(
        server.post("/api/signin", None, json!({"code": "Z9", "consent": true})),
        401,
        "unknown participant code",
    );
    refuse(
        server.post("/api/signin", None, json!({"code": "A1"})),
        400,
        "consent",
    );
    refuse(
        server.post("/api/signup", None, json!({"consent": true})),
        403,
        "no open sign-up",
    );
    let big = vec![b' '; dhumbal_serve::MAX_BODY + 10];
    refuse(
        server.request("POST", "/api/signin", None, &big),
        413,
        "larger than",
    );
    refuse(server.get("/api/nothing", None), 404, "no such page");

    let (ta, state) = server.sign_in("A1");
    let (tb, _) = server.sign_in("B2");
    let seq = state["seq"].as_u64().unwrap();
    let n = state["legal"].as_array().unwrap().len();
    refuse(
        server.get("/api/participants/A1/state", None),
        401,
        "no token",
    );
    refuse(
        server.get("/api/participants/A1/state", Some("forged")),
        401,
        "unknown or expired token",
    );
    refuse(server.act("A1", &tb, seq, 0), 403, "another participant's");
    refuse(server.act("A1", &ta, seq + 1, 0), 409, "not your turn");
    refuse(server.act("A1", &ta, seq, n + 5), 422, "not legal");
    refuse(
        server.request(
            "POST",
            "/api/participants/A1/action",
            Some(&ta),
            b"{\"seq\": \"x\"}",
        ),
        400,
        "expected a JSON body",
    );
    let (status, after) = server.act("A1", &ta, seq, n - 1);
    assert_eq!(status, 200, "{after}");
    // The same action again: a replay, refused.
    refuse(server.act("A1", &ta, seq, n - 1), 409, "answered already");
    // Nothing was written for the refusals: one decision in the journal.
    let journal = std::fs::read_to_string(out.join("participants/A1/journal.jsonl")).unwrap();
    assert_eq!(
        journal
            .lines()
            .filter(|l| l.contains("\"decision\""))
            .count(),
        1,
        "{journal}"
    );
    // The server still serves everyone.
    let (status, b) = server.get("/api/participants/B2/state", Some(&tb));
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["state"]["status"], "play");
}

#[test]
fn a_restarted_server_resumes_each_participant_where_they_were() {
    let dir = tmp();
    let file = study_file(dir.path(), STUDY);
    let out = dir.path().join("out");
    let before = {
        let server = Server::start(&file, &out);
        let (token, mut state) = server.sign_in("A1");
        for _ in 0..5 {
            let seq = state["seq"].as_u64().unwrap();
            let last = state["legal"].as_array().unwrap().len() - 1;
            let (status, r) = server.act("A1", &token, seq, last);
            assert_eq!(status, 200, "{r}");
            state = r["state"].clone();
        }
        state
        // Killed here, as a crash would.
    };
    let server = Server::start(&file, &out);
    let (token, after) = server.sign_in("A1");
    assert_eq!(after, before, "resumed at another place");
    let made = play_through(&server, "A1", &token, after);
    assert!(made > 0);
    // The resumed games are the games an uninterrupted participant plays with the same
    // answers: the same decisions, in the same order.
    let journal = std::fs::read_to_string(out.join("participants/A1/journal.jsonl")).unwrap();
    let seqs: Vec<u64> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["line"] == "decision")
        .map(|l| l["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn study_sections_with_problems_are_refused_at_their_lines() {
    let dir = tmp();
    let bad = "\
name: bad
seed: 1
rules: {preset: paper, players: 2}
study:
  agents:
    - kind: aggressive
    - kind: aggressive
    - {id: timed, kind: ismcts, params: {time_limit_ms: 5}}
  order: latin
  seat: 4
  participants: [A1, A1, 'x y']
";
    let file = study_file(dir.path(), bad);
    let said = refused(&["validate", &file.display().to_string()]);
    for part in [
        "study.order",
        "latin-square",
        "study.seat",
        "expected a seat from 0 to 1",
        "listed twice",
        "`x y`",
        "study.agents.2",
        "bounded by time",
    ] {
        has(&said, part);
    }
    let open = "\
name: open
seed: 1
rules: {preset: paper, players: 2}
study:
  agents: [balanced]
  signup: true
";
    let file = study_file(dir.path(), open);
    // A study is not run: the command says how it is played.
    let ran = common::ok(&[
        &file.display().to_string(),
        "--out",
        &dir.path().join("run").display().to_string(),
    ]);
    has(&common::text(&ran), "dhumbal-run serve");
    let said = refused(&[
        "serve",
        &file.display().to_string(),
        "--host",
        "0.0.0.0",
        "--port",
        "0",
    ]);
    has(&said, "warning: serving on 0.0.0.0");
    has(&said, "access_code");
}

/// Records the text of every response the page's `fetch` receives (in `window.__bodies`),
/// installed in every document the tab opens from now on.
const RECORD_RESPONSES: &str = "
  window.__bodies = [];
  const original = window.fetch;
  window.fetch = async (...args) => {
    const r = await original(...args);
    r.clone().text().then((t) => window.__bodies.push(t));
    return r;
  };";

/// The page's responses so far, checked for hidden cards, then forgotten.
fn check_responses(b: &mut Browser, public: &mut BTreeSet<String>, names: &[String]) -> usize {
    let bodies = b.eval("JSON.stringify(window.__bodies.splice(0))");
    let bodies: Vec<String> = serde_json::from_str(bodies.as_str().unwrap()).unwrap();
    for body in &bodies {
        let v: Value = serde_json::from_str(body).unwrap_or(Value::String(body.clone()));
        no_hidden_card(&v, public, names);
    }
    bodies.len()
}

/// Clicks the middle of the element `selector` with the mouse, as a person does.
fn click(b: &mut Browser, selector: &str) {
    let rect = b.eval(&format!(
        "(() => {{ const e = document.querySelector({}); if (!e) return null;
            e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
        json!(selector)
    ));
    let [x, y] = [rect[0].as_f64(), rect[1].as_f64()];
    let (Some(x), Some(y)) = (x, y) else {
        panic!("nothing to click at {selector}: {}", b.text("body"));
    };
    for kind in ["mousePressed", "mouseReleased"] {
        b.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        );
    }
}

/// Waits until the page's `data-*` attributes say `until`.
fn wait_page(b: &mut Browser, what: &str, until: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    // A document between two pages has no body yet: not there.
    let guarded =
        format!("(() => {{ try {{ return !!({until}); }} catch (e) {{ return false; }} }})()");
    while b.eval(&guarded) != json!(true) {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {}",
            b.text("body")
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

fn page_seq(b: &mut Browser) -> String {
    b.eval("document.body.dataset.seq || ''")
        .as_str()
        .unwrap()
        .to_string()
}

/// One decision by clicking: the first card of the hand then Discard, Draw, or Call.
fn click_a_decision(b: &mut Browser) {
    let before = page_seq(b);
    let status = b.text("#status");
    if status.contains("Call Jhyap, or play on") {
        click(b, "#actions button");
    } else if status.contains("Your discard") {
        click(b, "#hand .card");
        click(b, "#discard");
    } else {
        click(b, "#draw");
    }
    wait_page(
        b,
        "the next decision",
        &format!(
            "document.body.dataset.status === 'done' || (document.body.dataset.seq !== {} && document.body.dataset.seq !== '')",
            json!(before)
        ),
    );
}

#[test]
fn a_person_plays_the_study_in_the_browser_and_resumes_after_a_reload() {
    let Some(chrome) = common::browser::browser() else {
        return;
    };
    let dir = tmp();
    let file = study_file(dir.path(), STUDY);
    let out = dir.path().join("out");
    let server = Server::start(&file, &out);
    let url = format!("http://{}/", server.addr);
    let names = card_names();
    let mut public = BTreeSet::new();
    let mut b = Browser::start(&chrome, dir.path());
    b.open(&url);
    b.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": RECORD_RESPONSES}),
    );
    b.eval("document.body.dataset.ready = ''; location.reload(); 1");
    wait_page(&mut b, "the page", "document.body.dataset.ready === '1'");
    // The instructions and consent, as text: markup in them is shown, not obeyed.
    has(&b.text("#instructions"), "Play <b>well</b>.");
    has(&b.text("#consent"), "I agree & consent.");
    assert_eq!(
        b.eval("document.querySelectorAll('#instructions b').length"),
        json!(0)
    );
    // Signing in without consent is refused on the page.
    b.eval("document.getElementById('code').value = 'A1'; 1");
    click(&mut b, "#signin");
    has(&b.text("#error"), "consent");
    click(&mut b, "#agree");
    click(&mut b, "#signin");
    wait_page(
        &mut b,
        "signed in",
        "document.body.dataset.status === 'play'",
    );
    has(&b.text("#status"), "Game 1 of 2 against agent A");
    // A hint, its cards outlined.
    click(&mut b, "#hint-button");
    wait_page(
        &mut b,
        "the hint",
        "!document.getElementById('hint').hidden",
    );
    has(&b.text("#hint"), "The advisor (balanced) would");
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("study-page.png");
    b.screenshot(&shot);
    for _ in 0..4 {
        click_a_decision(&mut b);
    }
    check_responses(&mut b, &mut public, &names);
    // A reload mid-round resumes at the same decision, the same hand.
    let (seq, hand) = (page_seq(&mut b), b.text("#hand"));
    b.eval("document.body.dataset.ready = ''; location.reload(); 1");
    wait_page(
        &mut b,
        "the reloaded page",
        "document.body.dataset.ready === '1'",
    );
    assert_eq!((page_seq(&mut b), b.text("#hand")), (seq.clone(), hand));
    // The tab closed and another opened: the code remembered signs in again.
    b.open(&url);
    wait_page(
        &mut b,
        "a new tab",
        "document.body.dataset.status === 'play'",
    );
    assert_eq!(page_seq(&mut b), seq);
    b.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": RECORD_RESPONSES}),
    );
    b.eval("document.body.dataset.ready = ''; location.reload(); 1");
    wait_page(&mut b, "the page", "document.body.dataset.ready === '1'");
    let mut decisions = 0;
    while b.eval("document.body.dataset.status") == json!("play") {
        click_a_decision(&mut b);
        decisions += 1;
        assert!(decisions < 400, "the games do not end");
        if decisions % 10 == 0 {
            check_responses(&mut b, &mut public, &names);
        }
    }
    check_responses(&mut b, &mut public, &names);
    has(&b.text("#done"), "every game is played");
    assert_eq!(
        b.eval("document.querySelectorAll('#final tr').length"),
        json!(2)
    );
    b.screenshot(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("study-page-done.png"));
    // What the page played is what the server wrote.
    let rows = dhumbal::runner::study::records::read(&out).unwrap();
    assert_eq!(
        rows.iter().filter(|r| r.participant == "A1").count(),
        2 * 2 * 2
    );
}

/// Each agent once in each position over a square, and each ordered pair of neighbours
/// once (Williams' balance), for even and odd numbers of agents.
#[test]
fn latin_square_rows_balance_positions_and_neighbours() {
    for n in 1..=6usize {
        let rows = if n % 2 == 1 { 2 * n } else { n };
        let square: Vec<Vec<usize>> = (0..rows)
            .map(|r| dhumbal::scenario::StudyOrder::LatinSquare.row(n, r))
            .collect();
        for row in &square {
            let mut sorted = row.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n={n}: {row:?}");
        }
        for pos in 0..n {
            let mut count = vec![0; n];
            for row in &square {
                count[row[pos]] += 1;
            }
            assert!(
                count.iter().all(|&c| c == rows / n),
                "n={n} pos {pos}: {count:?}"
            );
        }
        let mut pairs = std::collections::BTreeMap::new();
        for row in &square {
            for w in row.windows(2) {
                *pairs.entry((w[0], w[1])).or_insert(0) += 1;
            }
        }
        if n > 1 {
            assert_eq!(pairs.len(), n * (n - 1), "n={n}: {pairs:?}");
            assert!(pairs.values().all(|&c| c == rows / n), "n={n}: {pairs:?}");
        }
    }
    assert_eq!(
        dhumbal::scenario::StudyOrder::Rotate.row(3, 1),
        vec![1, 2, 0]
    );
    assert_eq!(
        dhumbal::scenario::StudyOrder::Fixed.row(3, 5),
        vec![0, 1, 2]
    );
}
