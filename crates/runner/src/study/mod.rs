//! A study with people (`study:`, docs/studies.md), played one participant at a time on a
//! thread of its own, knowing nothing of HTTP: the person answers through a [`Desk`] (the web
//! server's channel, or a test's script), as `dhumbal-run play`'s person answers through a
//! console.
//!
//! A participant plays the study's games in their schedule's order (`Study::schedule`), game
//! g on deal g of the study's seed (the same cards for every participant) with every agent's
//! stream its own, as everywhere. The person is an agent ([`Person`]) that sees its seat's
//! [`Observation`] and nothing more: what it shows ([`View`]) is made from that observation and
//! the round's public events ([`PublicLog`]), never from the table's state.
//!
//! Every decision is appended to the participant's journal and synced before the engine gets
//! it ([`journal`]); the deals and the agents being seeded, the journal alone rebuilds the game:
//! a participant who comes back after a closed tab or a server restart is replayed to where
//! they were. Each finished game is written as a trace (format 2, the person's decision
//! times as they took them) and as records ([`records`]: the record columns, `participant`
//! and `human`), then noted in the journal as done.

pub mod journal;
pub mod records;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use dhumbal_game::rng::{ChaChaStreams, RandomSource, Streams, deal_id};
use dhumbal_game::{
    Agent, AgentError, Choice, Event, Observation, Phase, Pick, RoundOutcome, Rules, Table,
};

use crate::error::{Doing, Error, Result};
use crate::human::{Advisor, History, PublicLog};
use crate::render::Paint;
use crate::scenario::{AgentDef, Generator, SeatEntry, Seating, Stage, Study};
use crate::tournament::Timed;
use crate::trace::{self, RoundObserver, Tracer, legal_choices};

pub use journal::{Journal, Line};

/// The slot of the advisor's random stream (as `play`'s: no seat has it).
const ADVISOR_SLOT: u32 = u32::MAX;

/// Public events a [`View`] carries, the latest.
const EVENTS_SHOWN: usize = 40;

/// Where a participant answers.
pub trait Desk: Send {
    /// The person's answer at `view`: an index into `view.legal` and the nanoseconds they
    /// took, or `None` when they will not answer (the server stops). `hint` asks the advisor.
    fn decide(&mut self, view: &View, hint: &mut dyn FnMut() -> Hint) -> Option<Answer>;
    /// Every game is played: their results.
    fn finished(&mut self, results: &[GameResult]);
}

/// A person's answer.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub index: usize,
    pub ns: u64,
}

/// A participant: their code and their number (a listed code's place in the list, or the
/// order of sign-up), which chooses their row of the study's order.
#[derive(Clone, Debug)]
pub struct Participant {
    pub code: String,
    pub index: usize,
}

/// What the person sees at a decision: their seat's observation and the game's public events.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    /// Decisions the participant has made in the study so far: an action is posted with it.
    pub seq: u64,
    /// This game (from 0) and the study's number of games.
    pub game: u32,
    pub games: u32,
    /// The agent faced, as the participant knows it ("agent A").
    pub opponent: String,
    pub scoring: &'static str,
    pub round: u32,
    pub turn: u32,
    /// `call`, `discard` or `pick`.
    pub phase: &'static str,
    pub seat: usize,
    pub seats: Vec<SeatView>,
    pub hand: Vec<String>,
    pub hand_value: u32,
    /// The previous player's discard (what may be taken).
    pub pile_top: Vec<String>,
    pub pile: usize,
    /// Pick phase: the cards that may be taken, and the person's own discard.
    pub pickable: Vec<String>,
    pub discarded: Vec<String>,
    pub stock: usize,
    pub call_threshold: u32,
    /// The legal actions, in the engine's order (the order of a trace's `legal`).
    pub legal: Vec<Action>,
    /// The latest public events of the game, oldest first.
    pub events: Vec<String>,
    /// Games finished so far.
    pub results: Vec<GameResult>,
    pub hints: bool,
}

/// One seat as the person sees it.
#[derive(Clone, Debug, Serialize)]
pub struct SeatView {
    pub label: String,
    pub cards: u8,
    pub standing: i64,
    pub active: bool,
    /// Cards publicly known to be in that hand (taken from the pile).
    pub known: Vec<String>,
}

/// A legal action.
#[derive(Clone, Debug, Serialize)]
pub struct Action {
    pub text: String,
    pub kind: &'static str,
    pub cards: Vec<String>,
}

/// The advisor's answer to a hint.
#[derive(Clone, Debug, Serialize)]
pub struct Hint {
    pub advisor: String,
    /// Its choice, an index into the view's `legal`.
    pub choice: Option<usize>,
    pub action: String,
    pub candidates: Vec<HintCandidate>,
    pub score: String,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HintCandidate {
    pub choice: Option<usize>,
    pub action: String,
    pub score: f64,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    pub game: u32,
    /// The agent faced, as the participant knew it ("agent A"), and its id.
    pub opponent: String,
    pub agent: String,
    pub seat: usize,
    pub rounds: u32,
    /// Every seat's standing at the end (coins, or points).
    pub standings: Vec<i64>,
    /// Whether the person won the game (points: the last one left; coins: the most coins).
    pub won: bool,
}

/// A study's results folder: `study.json` (what it is), `participants/<code>/` (the journal
/// and the traces), `records/` (one file per game played), `signups.jsonl`.
#[derive(Clone, Debug)]
pub struct Folder {
    pub dir: PathBuf,
    /// The study's hash: a folder of another study is refused.
    pub hash: String,
}

/// `study.json`: what the folder is, and the scenario it was served from (its file and
/// text), so that `report` reads the same study again.
#[derive(Serialize, Deserialize)]
pub struct Identity {
    pub format: u32,
    pub name: String,
    /// The study's hash.
    pub study: String,
    pub spec: Value,
    /// The scenario file served, and its text then.
    pub scenario: PathBuf,
    pub text: String,
}

impl Identity {
    /// `dir/study.json`, if `dir` is a study's folder.
    pub fn read(dir: &Path) -> Result<Identity> {
        let path = dir.join("study.json");
        let read = std::fs::read_to_string(&path).doing("cannot read", &path)?;
        let id: Identity = serde_json::from_str(&read).doing("cannot read", &path)?;
        if id.format != FORMAT {
            return Err(Error::Records(format!(
                "{}: format {} (this program reads {FORMAT}): serve the study again with the \
                 program that wrote it",
                path.display(),
                id.format
            )));
        }
        Ok(id)
    }

    /// Whether `dir` is a study's folder.
    pub fn is_study(dir: &Path) -> bool {
        dir.join("study.json").is_file()
    }
}

/// The hash of a study named `name`.
pub fn study_hash(name: &str, study: &Study) -> String {
    let text = serde_json::to_string(&study.spec).unwrap_or_default();
    format!(
        "{:016x}",
        dhumbal_game::hash::fnv1a(format!("{name}\n{text}").as_bytes())
    )
}

/// The layout of a study's folder and its files; a reader refuses others.
pub const FORMAT: u32 = 1;

impl Folder {
    /// Opens (or makes) `dir` for the study named `name`, served from the scenario file
    /// `scenario` (its text `text`), refusing a folder of another study or of a run.
    pub fn open(
        dir: &Path,
        name: &str,
        study: &Study,
        scenario: &Path,
        text: &str,
    ) -> Result<Folder> {
        let hash = study_hash(name, study);
        let path = dir.join("study.json");
        if path.exists() {
            let read = std::fs::read_to_string(&path).doing("cannot read", &path)?;
            let id: Identity = serde_json::from_str(&read).doing("cannot read", &path)?;
            if id.format != FORMAT || id.study != hash {
                return Err(crate::folder::Refusal(format!(
                    "{} holds another study ({}, hash {}; this one is {hash}): serve it into \
                     another folder (--out), or restore the study as it was",
                    dir.display(),
                    id.name,
                    id.study
                ))
                .into());
            }
        } else {
            if let Some(what) = crate::folder::earlier_run(dir) {
                return Err(crate::folder::Refusal(format!(
                    "{} holds {what}; serve the study into another folder (--out)",
                    dir.display()
                ))
                .into());
            }
            std::fs::create_dir_all(dir).doing("cannot create", dir)?;
            let id = Identity {
                format: FORMAT,
                name: name.into(),
                study: hash.clone(),
                spec: study.spec.clone(),
                scenario: std::path::absolute(scenario).unwrap_or(scenario.to_path_buf()),
                text: text.into(),
            };
            let text = serde_json::to_string_pretty(&id).doing("cannot write", &path)?;
            write_whole(&path, text.as_bytes())?;
        }
        Ok(Folder {
            dir: dir.to_path_buf(),
            hash,
        })
    }

    pub fn participant_dir(&self, code: &str) -> PathBuf {
        self.dir.join("participants").join(code)
    }

    pub fn records_dir(&self) -> PathBuf {
        self.dir.join("records")
    }

    /// The records file of game `g` of participant `code`.
    pub fn records_path(&self, code: &str, g: u32) -> PathBuf {
        self.records_dir()
            .join(format!("{code}-game-{g:03}.parquet"))
    }

    /// The codes issued by open sign-up, in order.
    pub fn signups(&self) -> Result<Vec<String>> {
        let path = self.dir.join("signups.jsonl");
        if !path.exists() {
            return Ok(Vec::new());
        }
        let text = std::fs::read_to_string(&path).doing("cannot read", &path)?;
        let mut codes = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let s: SignUp = serde_json::from_str(line).doing("cannot read", &path)?;
            codes.push(s.code);
        }
        Ok(codes)
    }

    /// Notes a code issued by sign-up (appended and synced before it is handed out).
    pub fn add_signup(&self, code: &str) -> Result<()> {
        let path = self.dir.join("signups.jsonl");
        let line =
            serde_json::to_string(&SignUp { code: code.into() }).doing("cannot write", &path)?;
        journal::append_line(&path, &line)
    }
}

#[derive(Serialize, Deserialize)]
struct SignUp {
    code: String,
}

/// Writes `bytes` to `path` whole: a temporary file synced, then renamed.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()
    })()
    .doing("cannot write", &tmp)?;
    std::fs::rename(&tmp, path).doing("cannot write", path)
}

/// How the person sees the agent of condition `k`: by a letter, the study being blind.
pub fn opponent_label(k: usize) -> String {
    let letter = (b'A' + (k % 26) as u8) as char;
    format!("agent {letter}")
}

/// An agent asked at each of the person's decisions while a game is replayed (move
/// matching), on the person's own observation, with a random stream of its own.
struct Shadow {
    agent: Box<dyn Agent>,
    rng: dhumbal_game::rng::ChaChaSource,
    tally: Tally,
}

/// How often an agent chose what the person chose, by phase (call, discard, pick).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub decisions: [u32; 3],
    pub matched: [u32; 3],
}

impl Tally {
    pub fn decisions(&self) -> u32 {
        self.decisions.iter().sum()
    }

    pub fn matched(&self) -> u32 {
        self.matched.iter().sum()
    }
}

/// One agent's move matching over one game of a participant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matched {
    pub game: u32,
    /// The agent asked (an id of the study's agents).
    pub agent: String,
    /// The agent the person faced in that game.
    pub faced: String,
    pub tally: Tally,
}

/// The slots of the shadows' streams (a study's agents asked during replays): above any
/// seat's, below the advisor's.
const SHADOW_SLOT: u32 = u32::MAX - 1024;

/// Whether two choices are the same action (a discard as a set of cards: an agent may list
/// a run in another order than the engine's).
fn same(a: &Choice, b: &Choice) -> bool {
    match (a, b) {
        (Choice::Discard(x), Choice::Discard(y)) => x.to_set() == y.to_set(),
        _ => a == b,
    }
}

/// What the person's agent and the game's loop share.
struct Shared {
    desk: Box<dyn Desk>,
    /// `None` while replaying for move matching (nothing is written then).
    journal: Option<Journal>,
    shadows: Vec<Shadow>,
    /// The journal's decisions of this game not replayed yet.
    replay: VecDeque<journal::Decision>,
    seq: u64,
    game: u32,
    games: u32,
    opponent: String,
    labels: Vec<String>,
    history: History,
    /// Lines of the game's finished rounds.
    earlier: Vec<String>,
    results: Vec<GameResult>,
    /// The person's decision time this round.
    round_ns: u64,
    /// Why the person's seat failed (a journal write, a journal that does not match).
    failure: Option<Error>,
    hints: bool,
    points: bool,
}

/// The person at the table: an agent that asks through the shared [`Desk`], or answers from
/// the journal while it replays.
struct Person {
    shared: Arc<Mutex<Shared>>,
    reported: Arc<AtomicU64>,
    advisor: Option<Advisor>,
    /// The hint of the decision at hand (asked twice, said once).
    hint: Option<((u32, u32, u8), Hint)>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .expect("a participant's lock is never poisoned")
}

impl Person {
    fn decide(&mut self, obs: &Observation<'_>) -> std::result::Result<Choice, AgentError> {
        let legal = legal_choices(obs);
        let Person {
            shared,
            reported,
            advisor,
            hint,
        } = self;
        let mut sh = lock(shared);
        let seq = sh.seq;
        let (index, ns) = if let Some(d) = sh.replay.pop_front() {
            if d.seq != seq || legal.get(d.choice).map(Choice::to_string) != Some(d.action.clone())
            {
                let message = format!(
                    "the journal's decision {} ({}) does not match the game at decision {seq}: \
                     was the study changed?",
                    d.seq, d.action
                );
                sh.failure = Some(Error::Records(message.clone()));
                return Err(AgentError(message));
            }
            for sd in &mut sh.shadows {
                let rng: &mut dyn RandomSource = &mut sd.rng;
                let theirs = match obs.phase {
                    Phase::Call => sd.agent.call(obs, rng).map(Choice::Call),
                    Phase::Discard => sd.agent.discard(obs, rng).map(Choice::Discard),
                    Phase::Pick => sd.agent.pick(obs, rng).map(Choice::Pick),
                };
                let k = obs.phase as usize;
                sd.tally.decisions[k] += 1;
                if theirs.is_ok_and(|c| same(&c, &legal[d.choice])) {
                    sd.tally.matched[k] += 1;
                }
            }
            (d.choice, d.ns)
        } else {
            let view = view(obs, &legal, &sh);
            let mut asked = 0u32;
            let mut ask = || {
                asked += 1;
                hint_for(advisor.as_mut(), hint, obs, &legal)
            };
            let answer = sh.desk.decide(&view, &mut ask);
            let Some(Answer { index, ns }) = answer.filter(|a| a.index < legal.len()) else {
                sh.failure = Some(Error::Play(format!(
                    "game {}, decision {seq}: the participant's session closed (or a replay \
                     found a decision its journal does not hold)",
                    sh.game
                )));
                return Err(AgentError("the participant left".into()));
            };
            let d = journal::Decision {
                game: sh.game,
                seq,
                choice: index,
                action: legal[index].to_string(),
                ns,
                hints: asked,
            };
            let written = match &mut sh.journal {
                Some(j) => j.append(&Line::Decision(d)),
                None => Ok(()),
            };
            if let Err(e) = written {
                sh.failure = Some(e);
                return Err(AgentError("the journal cannot be written".into()));
            }
            (index, ns)
        };
        sh.seq += 1;
        sh.round_ns += ns;
        reported.store(ns, Ordering::Relaxed);
        Ok(legal[index])
    }
}

/// The advisor's answer at `obs`, kept for the decision (asking again says the same).
fn hint_for(
    advisor: Option<&mut Advisor>,
    kept: &mut Option<((u32, u32, u8), Hint)>,
    obs: &Observation<'_>,
    legal: &[Choice],
) -> Hint {
    let key = (obs.round, obs.turn, obs.phase as u8);
    if let Some((k, h)) = kept.as_ref()
        && *k == key
    {
        return h.clone();
    }
    let Some(advisor) = advisor else {
        return Hint {
            advisor: String::new(),
            choice: None,
            action: String::new(),
            candidates: Vec::new(),
            score: String::new(),
            error: Some("this study gives no hints".into()),
        };
    };
    let rng: &mut dyn RandomSource = &mut advisor.rng;
    let decided = match obs.phase {
        Phase::Call => advisor.agent.call(obs, rng).map(Choice::Call),
        Phase::Discard => advisor.agent.discard(obs, rng).map(Choice::Discard),
        Phase::Pick => advisor.agent.pick(obs, rng).map(Choice::Pick),
    };
    let number = |c: &Choice| legal.iter().position(|l| l == c);
    let mut h = Hint {
        advisor: advisor.agent.name().to_string(),
        choice: None,
        action: String::new(),
        candidates: Vec::new(),
        score: String::new(),
        error: None,
    };
    match decided {
        Err(e) => h.error = Some(e.to_string()),
        Ok(choice) => {
            h.choice = number(&choice);
            h.action = choice.to_string();
            if let Some(e) = advisor.agent.explain(obs) {
                h.score = e.score;
                h.candidates = (e.candidates.iter().take(3))
                    .map(|c| HintCandidate {
                        choice: number(&c.choice),
                        action: c.choice.to_string(),
                        score: c.score,
                    })
                    .collect();
            }
        }
    }
    *kept = Some((key, h.clone()));
    h
}

/// The person's view of `obs`.
fn view(obs: &Observation<'_>, legal: &[Choice], sh: &Shared) -> View {
    let cards = |cs: &[dhumbal_game::Card]| cs.iter().map(ToString::to_string).collect();
    let top = obs
        .pile
        .len()
        .saturating_sub(obs.top_set.min(obs.pile.len()));
    let mut events: Vec<String> = sh.earlier.clone();
    events.extend(sh.history.all());
    let skip = events.len().saturating_sub(EVENTS_SHOWN);
    View {
        seq: sh.seq,
        game: sh.game,
        games: sh.games,
        opponent: sh.opponent.clone(),
        scoring: if sh.points { "points" } else { "coins" },
        round: obs.round,
        turn: obs.turn,
        phase: trace::phase_name(obs.phase),
        seat: obs.seat,
        seats: (0..obs.active.len())
            .map(|s| SeatView {
                label: sh.labels[s].clone(),
                cards: obs.hand_sizes[s],
                standing: obs.standings[s],
                active: obs.active[s],
                known: obs.known[s].iter().map(|c| c.to_string()).collect(),
            })
            .collect(),
        hand: cards(obs.hand.as_slice()),
        hand_value: obs.hand_value,
        pile_top: cards(&obs.pile[top..]),
        pile: obs.pile.len(),
        pickable: cards(obs.pickable),
        discarded: cards(obs.discarded),
        stock: obs.stock_len,
        call_threshold: obs.call_threshold,
        legal: legal
            .iter()
            .map(|c| match c {
                Choice::Call(_) => Action {
                    text: c.to_string(),
                    kind: "call",
                    cards: Vec::new(),
                },
                Choice::Discard(d) => Action {
                    text: c.to_string(),
                    kind: "discard",
                    cards: cards(d.as_slice()),
                },
                Choice::Pick(Pick::Pile(card)) => Action {
                    text: c.to_string(),
                    kind: "take",
                    cards: vec![card.to_string()],
                },
                Choice::Pick(Pick::Stock) => Action {
                    text: c.to_string(),
                    kind: "draw",
                    cards: Vec::new(),
                },
            })
            .collect(),
        events: events.split_off(skip),
        results: sh.results.clone(),
        hints: sh.hints,
    }
}

impl Person {
    /// Calls `f` on the advisor and on every shadow (their lifecycle hooks are the seat's).
    fn each(&mut self, mut f: impl FnMut(&mut dyn Agent)) {
        if let Some(a) = &mut self.advisor {
            f(&mut *a.agent);
        }
        for s in &mut lock(&self.shared).shadows {
            f(&mut *s.agent);
        }
    }
}

impl Agent for Person {
    fn name(&self) -> &str {
        "human"
    }

    fn game_start(&mut self, seat: usize, rules: &Rules) {
        self.each(|a| a.game_start(seat, rules));
    }

    fn round_start(&mut self, seat: usize, standings: &[i64]) {
        self.hint = None;
        self.each(|a| a.round_start(seat, standings));
    }

    fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
        self.each(|a| a.round_end(seat, outcome));
    }

    fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
        self.each(|a| a.game_end(seat, standings, won));
    }

    fn witnesses(&self) -> bool {
        self.advisor.as_ref().is_some_and(|a| a.agent.witnesses())
            || lock(&self.shared)
                .shadows
                .iter()
                .any(|s| s.agent.witnesses())
    }

    fn witness(&mut self, seat: usize, event: &Event, drawn: Option<dhumbal_game::Card>) {
        self.each(|a| {
            if a.witnesses() {
                a.witness(seat, event, drawn)
            }
        });
    }

    dhumbal_game::answer_by!(decide, crate::human::mismatch);
}

/// Plays participant `who`'s games from where their journal ends, answering through `desk`;
/// returns their results. Blocks (the caller runs it on a thread of its own).
pub fn run_participant(
    study: &Study,
    folder: &Folder,
    who: &Participant,
    desk: Box<dyn Desk>,
) -> Result<Vec<GameResult>> {
    let dir = folder.participant_dir(&who.code);
    let (journal, lines) = Journal::open(&dir, &folder.hash, who)?;
    let (decisions, done) = split(lines);
    let shared = shared(study, desk, Some(journal));
    let schedule = study.schedule(who.index);
    for (g, &k) in schedule.iter().enumerate() {
        let g = g as u32;
        let mine: Vec<journal::Decision> =
            decisions.iter().filter(|d| d.game == g).cloned().collect();
        if let Some(r) = done.iter().find(|r| r.game == g)
            && folder.records_path(&who.code, g).exists()
        {
            let mut sh = lock(&shared);
            sh.seq += mine.len() as u64;
            sh.results.push(r.clone());
            continue;
        }
        begin(&shared, g, k, mine);
        let result = play_game(study, folder, who, g, k, &shared)?;
        let mut sh = lock(&shared);
        if let Some(j) = &mut sh.journal {
            j.append(&Line::GameEnd(result.clone()))?;
        }
        sh.results.push(result);
    }
    let mut sh = lock(&shared);
    let results = sh.results.clone();
    sh.desk.finished(&results);
    Ok(results)
}

/// A journal's decisions and finished games.
fn split(lines: Vec<Line>) -> (Vec<journal::Decision>, Vec<GameResult>) {
    let mut decisions = Vec::new();
    let mut done = Vec::new();
    for line in lines {
        match line {
            Line::Decision(d) => decisions.push(d),
            Line::GameEnd(r) => done.push(r),
            Line::Header(_) => {}
        }
    }
    (decisions, done)
}

fn shared(study: &Study, desk: Box<dyn Desk>, journal: Option<Journal>) -> Arc<Mutex<Shared>> {
    Arc::new(Mutex::new(Shared {
        desk,
        journal,
        shadows: Vec::new(),
        replay: VecDeque::new(),
        seq: 0,
        game: 0,
        games: study.games,
        opponent: String::new(),
        labels: Vec::new(),
        history: History::default(),
        earlier: Vec::new(),
        results: Vec::new(),
        round_ns: 0,
        failure: None,
        hints: study.advisor.is_some(),
        points: study.is_points(),
    }))
}

/// Sets `shared` for game `g` against condition `k`, `replay` its journalled decisions.
fn begin(shared: &Mutex<Shared>, g: u32, k: usize, replay: Vec<journal::Decision>) {
    let mut sh = lock(shared);
    sh.replay = replay.into();
    sh.game = g;
    sh.opponent = opponent_label(k);
    sh.earlier.clear();
}

/// A desk for replays: every decision comes from the journal, none is asked.
struct Replay;

impl Desk for Replay {
    fn decide(&mut self, _view: &View, _hint: &mut dyn FnMut() -> Hint) -> Option<Answer> {
        None
    }

    fn finished(&mut self, _results: &[GameResult]) {}
}

/// Move matching: each finished game of participant `code` replayed from their journal, each
/// of the study's agents asked at every decision of the person on the person's own
/// observation (its lifecycle hooks and public events the seat's, its random stream its own),
/// and how often it chose what the person chose. Nothing is written.
pub fn match_moves(study: &Study, folder: &Folder, code: &str) -> Result<Vec<Matched>> {
    let path = folder.participant_dir(code).join("journal.jsonl");
    let lines = journal::read(&path)?;
    let index = match lines.first() {
        Some(Line::Header(h)) if h.study == folder.hash => h.index,
        _ => {
            return Err(Error::Records(format!(
                "{} is not a journal of this study",
                path.display()
            )));
        }
    };
    let who = Participant {
        code: code.into(),
        index,
    };
    let (decisions, done) = split(lines);
    let shared = shared(study, Box::new(Replay), None);
    let mut out = Vec::new();
    for (g, &k) in study.schedule(index).iter().enumerate() {
        let g = g as u32;
        if !done.iter().any(|r| r.game == g) {
            continue;
        }
        let mine: Vec<journal::Decision> =
            decisions.iter().filter(|d| d.game == g).cloned().collect();
        begin(&shared, g, k, mine);
        lock(&shared).shadows = (study.agents.iter().enumerate())
            .map(|(i, a)| Shadow {
                agent: a.recipe.build(&a.id),
                rng: dhumbal_game::rng::chacha_stream(
                    study.seed,
                    dhumbal_game::rng::Purpose::Agent(SHADOW_SLOT + i as u32),
                    deal_id(u64::from(g), 0),
                ),
                tally: Tally::default(),
            })
            .collect();
        play_game(study, folder, &who, g, k, &shared)?;
        let shadows = std::mem::take(&mut lock(&shared).shadows);
        out.extend(shadows.iter().zip(&study.agents).map(|(s, a)| Matched {
            game: g,
            agent: a.id.clone(),
            faced: study.agents[k].id.clone(),
            tally: s.tally,
        }));
    }
    Ok(out)
}

/// Plays game `g` of participant `who` against condition `k`, writing its trace and records
/// (unless it is a replay for move matching, without a journal).
fn play_game(
    study: &Study,
    folder: &Folder,
    who: &Participant,
    g: u32,
    k: usize,
    shared: &Arc<Mutex<Shared>>,
) -> Result<GameResult> {
    let players = study.players();
    let me = study.seat_in(g);
    let def = &study.agents[k];
    let label = opponent_label(k);
    let (labels, ids) = seat_names(players, me, &label, &def.id);
    lock(shared).labels = labels.clone();
    let stage = study_stage(study, def, me);
    let tracer = Tracer::default();
    let reported = Arc::new(AtomicU64::new(0));
    let history = lock(shared).history.clone();
    let person = Person {
        shared: Arc::clone(shared),
        reported: Arc::clone(&reported),
        advisor: advisor(study, g),
        hint: None,
    };
    let (mut seated, seats_json) = seat(def, me, &ids, person, &reported, &tracer);
    let m = u64::from(g);
    tracer.line(trace::game_json(&stage, m, 0, seats_json));
    let points = study.is_points();
    let mut table = Table::new((*study.rules).clone());
    table.start_game(&mut seated);
    let slots: Vec<u32> = (0..players as u32).collect();
    let mut streams = ChaChaStreams::new(study.seed, deal_id(m, 0), &slots);
    let mut rows = crate::records::Records::default();
    let mut round = 0u32;
    loop {
        if crate::tournament::over(&table, round, study.rounds) {
            break;
        }
        streams.set_deal(deal_id(m, round));
        let mut observer = (
            RoundObserver::new(&tracer, round, &table),
            PublicLog {
                history: &history,
                labels: &labels,
                human: me,
                paint: Paint::plain(),
            },
        );
        let s: &mut dyn Streams = &mut streams;
        let outcome = match table.play_round(&mut seated, s, &mut observer) {
            Ok(o) => o,
            Err(e) => {
                return Err(lock(shared).failure.take().unwrap_or_else(|| {
                    Error::Play(format!(
                        "participant {}, game {g}, round {round}: {e}",
                        who.code
                    ))
                }));
            }
        };
        tracer.round_end(&outcome, table.standings(), points);
        let game_over = points && table.game_over();
        let leader = game_over.then(|| table.leader());
        let mut sh = lock(shared);
        let person_ns = std::mem::take(&mut sh.round_ns);
        rows.begin_round();
        for s in (0..outcome.seats).filter(|&s| outcome.active[s]) {
            let ns = if s == me {
                seated[s].take_nanos();
                person_ns
            } else {
                seated[s].take_nanos()
            };
            rows.push(crate::records::Row::of_seat(
                &outcome,
                s,
                s,
                m,
                0,
                table.standings(),
                leader,
                Some(ns),
            ));
        }
        let summary = round_line(&outcome, table.standings(), &labels, points);
        let lines = sh.history.all();
        sh.earlier.extend(lines);
        sh.earlier.push(summary);
        drop(sh);
        round += 1;
    }
    table.end_game(&mut seated);
    let winner = table.leader();
    tracer.game_end(round, table.standings(), winner);
    let traces = folder.participant_dir(&who.code).join(trace::TRACES_DIR);
    std::fs::create_dir_all(&traces).doing("cannot create", &traces)?;
    write_whole(
        &traces.join(trace::file_name(m, 0)),
        tracer.text().as_bytes(),
    )?;
    records::write(folder, &who.code, g, &ids, &rows)?;
    Ok(GameResult {
        game: g,
        opponent: label,
        agent: def.id.clone(),
        seat: me,
        rounds: round,
        standings: table.standings().to_vec(),
        won: winner == me,
    })
}

/// The seats' names in game: as the person sees them (`you`, the condition's label, with
/// the seat at more than two players) and as the records keep them (`human`, the agent's
/// id, `id@seat` at more than two players).
fn seat_names(players: usize, me: usize, label: &str, id: &str) -> (Vec<String>, Vec<String>) {
    let others = players > 2;
    let labels = (0..players)
        .map(|s| match s {
            s if s == me => "you".to_string(),
            s if others => format!("{label} (seat {s})"),
            _ => label.to_string(),
        })
        .collect();
    let ids = (0..players)
        .map(|s| match s {
            s if s == me => "human".to_string(),
            s if others => format!("{id}@{s}"),
            _ => id.to_string(),
        })
        .collect();
    (labels, ids)
}

/// The study's advisor for game `g`, if it has one, on its own stream of that game.
fn advisor(study: &Study, g: u32) -> Option<Advisor> {
    study.advisor.as_ref().map(|a| Advisor {
        agent: a.recipe.build(&a.id),
        rng: dhumbal_game::rng::chacha_stream(
            study.seed,
            dhumbal_game::rng::Purpose::Agent(ADVISOR_SLOT),
            deal_id(u64::from(g), 0),
        ),
    })
}

/// A game's seats: the person in seat `me` (each decision's time what it reports), the
/// condition's agent `def` in every other seat (`ids` their ids), every decision timed and
/// traced; and the seats' lines for the trace's head.
fn seat(
    def: &AgentDef,
    me: usize,
    ids: &[String],
    person: Person,
    reported: &Arc<AtomicU64>,
    tracer: &Tracer,
) -> (Vec<Timed>, Vec<Value>) {
    let mut person = Some(person);
    let seated = (0..ids.len())
        .map(|s| {
            let mut t = match person.take_if(|_| s == me) {
                Some(p) => {
                    Timed::new(Box::new(p), Some(tracer.clone())).reporting(Arc::clone(reported))
                }
                None => Timed::new(def.recipe.build(&ids[s]), Some(tracer.clone())),
            };
            t.timing_all();
            t
        })
        .collect();
    let json = (0..ids.len())
        .map(|s| match s == me {
            true => trace::seat_json(s, s, "human", "human", Value::Null),
            false => trace::seat_json(
                s,
                s,
                &ids[s],
                &def.kind,
                def.spec.get("params").cloned().unwrap_or(Value::Null),
            ),
        })
        .collect();
    (seated, json)
}

/// The stage a study's game is, for its trace's first line.
fn study_stage(study: &Study, def: &AgentDef, me: usize) -> Stage {
    Stage {
        name: "study".into(),
        seed: study.seed,
        generator: Generator::Chacha,
        rules: Arc::clone(&study.rules),
        seats: (0..study.players())
            .map(|s| {
                SeatEntry::Agent(if s == me {
                    AgentDef {
                        id: "human".into(),
                        kind: "human".into(),
                        recipe: Arc::clone(&def.recipe),
                        spec: Value::Null,
                    }
                } else {
                    def.clone()
                })
            })
            .collect(),
        seating: Seating::Fixed,
        matches: u64::from(study.games),
        session: study.rounds,
        spec: study.spec.clone(),
        sequential: None,
        gain_test: None,
    }
}

/// A finished round in one line: how it ended, each seat's hand value and standing (no
/// card of another seat: its hand stays hidden).
fn round_line(o: &RoundOutcome, standings: &[i64], labels: &[String], points: bool) -> String {
    let how = match (o.caller, o.winner) {
        (Some(c), _) if o.call_success => format!("{} called Jhyap and won", labels[c]),
        (Some(c), Some(w)) if c != w => {
            format!("{} called Jhyap and lost to {}", labels[c], labels[w])
        }
        (_, Some(w)) => format!("{} won ({})", labels[w], o.end.as_str()),
        _ => format!("it ended ({})", o.end.as_str()),
    };
    let unit = if points { "points" } else { "coins" };
    let seats: Vec<String> = (0..o.seats)
        .filter(|&s| o.active[s])
        .map(|s| {
            format!(
                "{} hand value {}, {} {unit}",
                labels[s], o.hand_values[s], standings[s]
            )
        })
        .collect();
    format!("round {} over: {how}; {}", o.round + 1, seats.join("; "))
}
