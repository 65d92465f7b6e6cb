//! A person at the table: [`Human`], an agent that shows its seat's view of the game and asks
//! for each decision through a [`Console`] (the terminal in `dhumbal-run play`, a script in
//! tests), so that the engine and the agent families stay free of terminal code.
//!
//! The human sees what an agent in that seat would see and nothing more: the [`Observation`]
//! the engine hands the seat, and the public events of the round ([`PublicLog`], an engine
//! [`Observer`] that writes every seat's discards, pile pickups, calls and reshuffles, and only
//! the human's own stock draws with their card). Each decision lists the legal actions in the
//! engine's order, numbered from 1 (the order of a trace's `legal`), and accepts a number, card
//! names (`9h 10h jh`, `9♥`, in any order that makes a legal discard), `?` (a hint from the
//! advisor agent), `h` (the round's history) and `q` (stop). The advisor decides on the same
//! observation with its own random stream, so asking for a hint never changes the game.
//!
//! The table is drawn by [`crate::render`], as `dhumbal-run show` draws a trace: the same
//! scene, the same colours ([`Paint`]), the same option lists; [`round_summary`] and
//! [`game_summary`] say how a round and the game ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dhumbal_agents::escape_controls;
use dhumbal_game::rng::{ChaChaSource, RandomSource};
use dhumbal_game::{
    Agent, AgentError, Card, CardSet, Choice, EndReason, Event, Observation, Observer, Phase, Pick,
    RoundOutcome, RoundState, Rules, classify,
};

use crate::render::{self, Decision, Entry, Paint, Scene};
use crate::trace::legal_choices;

/// Where a human reads and types: the terminal, or a script.
pub trait Console: Send {
    /// Shows `text` (whole lines, each ending in a newline).
    fn show(&mut self, text: &str);
    /// Shows `prompt` and returns the line typed (without its newline), or `None` at the end
    /// of input.
    fn ask(&mut self, prompt: &str) -> Option<String>;
}

/// A console shared by the human's seat and whoever plays the game (round summaries, pauses).
pub type SharedConsole = Arc<Mutex<dyn Console>>;

/// Shows `text` on a shared console.
pub fn show(console: &SharedConsole, text: &str) {
    console
        .lock()
        .expect("a console's lock is never poisoned")
        .show(text);
}

/// Asks on a shared console.
pub fn ask(console: &SharedConsole, prompt: &str) -> Option<String> {
    console
        .lock()
        .expect("a console's lock is never poisoned")
        .ask(prompt)
}

/// The public events of the current round, one line each, as [`PublicLog`] writes them, and
/// how many of them the person has been shown.
#[derive(Clone, Default)]
pub struct History(Arc<Mutex<Log>>);

#[derive(Default)]
struct Log {
    lines: Vec<String>,
    seen: usize,
}

impl History {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().expect("a history's lock is never poisoned")
    }

    /// Every line of the round so far.
    pub fn all(&self) -> Vec<String> {
        self.log().lines.clone()
    }

    /// The lines not shown yet, now counted as shown.
    pub fn take_new(&self) -> Vec<String> {
        let mut log = self.log();
        let new = log.lines[log.seen..].to_vec();
        log.seen = log.lines.len();
        new
    }

    fn push(&self, line: String) {
        self.log().lines.push(line);
    }

    fn clear(&self) {
        *self.log() = Log::default();
    }
}

/// An engine observer writing the round's public events into a [`History`], as the human in
/// seat `human` may know them: every discard, pickup from the pile, call and reshuffle, and
/// the card of a stock draw only when the human drew it.
pub struct PublicLog<'a> {
    pub history: &'a History,
    /// Each seat's name ("you" for the human).
    pub labels: &'a [String],
    pub human: usize,
    pub paint: Paint,
}

impl Observer for PublicLog<'_> {
    fn event(&mut self, s: &RoundState, e: &Event) {
        let p = self.paint;
        let name = |seat: usize| self.labels[seat].clone();
        let line = match *e {
            Event::Dealt => {
                self.history.clear();
                let top = s
                    .pile()
                    .last()
                    .map_or("nothing".into(), |c| p.card(&c.to_string()));
                format!(
                    "dealt {} cards each; face up: {top}; stock: {}",
                    s.hand(self.human).len(),
                    s.stock().len()
                )
            }
            Event::Called { seat } => format!("{} called Jhyap", name(seat)),
            Event::Discarded { seat, cards } => {
                format!(
                    "{} discarded {}",
                    name(seat),
                    cards_text(cards.as_slice(), p)
                )
            }
            Event::Took {
                seat,
                pick: Pick::Pile(card),
            } => format!(
                "{} took {} from the pile",
                name(seat),
                p.card(&card.to_string())
            ),
            Event::Took {
                seat,
                pick: Pick::Stock,
            } if seat == self.human => match s.hand(seat).as_slice().last() {
                Some(&c) => format!("you drew {} from the stock", p.card(&c.to_string())),
                None => "you drew from the stock".into(),
            },
            Event::Took {
                seat,
                pick: Pick::Stock,
            } => format!("{} drew from the stock", name(seat)),
            Event::Reshuffled => format!(
                "the pile was shuffled into the stock ({} cards)",
                s.stock().len()
            ),
            Event::Ended => return,
        };
        self.history.push(line);
    }
}

/// An agent that a human hints with: it decides on the human's observation with its own
/// random stream (never the game's), and explains its choice if it can.
pub struct Advisor {
    pub agent: Box<dyn Agent>,
    pub rng: ChaChaSource,
}

/// What the advisor said about one decision (kept so that asking twice shows the same).
struct Hint {
    key: (u32, u32, u8),
    text: String,
}

/// A person in one seat, asked through a console.
pub struct Human {
    console: SharedConsole,
    labels: Arc<[String]>,
    history: History,
    paint: Paint,
    advisor: Option<Advisor>,
    /// Set when the person stops (`q`, or the end of input).
    stop: Arc<AtomicBool>,
    /// The (round, turn) whose table was last shown.
    screen: Option<(u32, u32)>,
    hint: Option<Hint>,
}

/// Why the human's seat gave no answer: they stopped. [`Human`] returns it as an
/// [`AgentError`] (the round is abandoned) and sets its stop flag.
pub const STOPPED: &str = "the player stopped the game";

impl Human {
    /// A human answering through `console`; `labels` names every seat ("you" for this one),
    /// `history` is the one a [`PublicLog`] writes, `stop` is set when they stop.
    pub fn new(
        console: SharedConsole,
        labels: Arc<[String]>,
        history: History,
        paint: Paint,
        advisor: Option<Advisor>,
        stop: Arc<AtomicBool>,
    ) -> Human {
        Human {
            console,
            labels,
            history,
            paint,
            advisor,
            stop,
            screen: None,
            hint: None,
        }
    }

    fn show(&self, text: &str) {
        show(&self.console, text);
    }

    /// Asks the person about `obs` until they answer with a legal action, stop, or the input
    /// ends.
    fn decide(&mut self, obs: &Observation<'_>) -> Result<Choice, AgentError> {
        let legal = legal_choices(obs);
        let p = self.paint;
        let mut text = String::new();
        let news = self.history.take_new();
        if self.screen != Some((obs.round, obs.turn)) {
            // A new turn: what happened since the last one, then the table.
            self.screen = Some((obs.round, obs.turn));
            if !news.is_empty() {
                text.push_str(&p.dim("since your last turn:"));
                text.push('\n');
            }
            for line in &news {
                text.push_str(&format!("  {line}\n"));
            }
            text.push_str(&self.scene(obs, &legal));
        } else {
            // The same turn (a discard after playing on, a pick after the discard): the news
            // is the person's own discard, which the heading says.
            if obs.phase == Phase::Pick {
                text.push_str(&format!(
                    "  your hand {}\n",
                    render::hand(&own_hand(obs), p)
                ));
            }
            text.push_str(&decision_lines(&decision(obs, &legal), p));
        }
        self.show(&text);
        let prompt = prompt(obs.phase);
        loop {
            let Some(line) = ask(&self.console, &prompt) else {
                self.stop.store(true, Ordering::Relaxed);
                self.show("\n(end of input)\n");
                return Err(AgentError(STOPPED.into()));
            };
            match read_answer(&line, obs, &legal) {
                Answer::Choice(c) => return Ok(c),
                Answer::Hint => {
                    let hint = self.hint(obs, &legal);
                    self.show(&hint);
                }
                Answer::History => {
                    let mut text = format!(
                        "{}\n",
                        p.bold(&format!(
                            "history of round {} (turn {} now):",
                            obs.round, obs.turn
                        ))
                    );
                    for line in self.history.all() {
                        text.push_str(&format!("  {line}\n"));
                    }
                    self.show(&text);
                }
                Answer::Quit => {
                    self.stop.store(true, Ordering::Relaxed);
                    return Err(AgentError(STOPPED.into()));
                }
                Answer::Help => self.show(&help(obs.phase)),
                Answer::Again => self.show(&self.scene(obs, &legal)),
                Answer::Invalid(why) => self.show(&format!("  {why}\n")),
            }
        }
    }

    /// The table as this seat sees it, with the decision's options numbered.
    fn scene(&self, obs: &Observation<'_>, legal: &[Choice]) -> String {
        let mut scene = Scene::of_observation(obs, &self.labels, obs.is_points());
        scene.decision = Some(decision(obs, legal));
        let mut text = scene.lines(self.paint).join("\n");
        text.push('\n');
        text
    }

    /// The advisor's choice for `obs` and its top three candidates, as text.
    fn hint(&mut self, obs: &Observation<'_>, legal: &[Choice]) -> String {
        let key = (obs.round, obs.turn, obs.phase as u8);
        if let Some(h) = self.hint.as_ref().filter(|h| h.key == key) {
            return h.text.clone();
        }
        let Some(advisor) = &mut self.advisor else {
            return "  no advisor at this table (--advisor none)\n".into();
        };
        let p = self.paint;
        let rng: &mut dyn RandomSource = &mut advisor.rng;
        let decided = match obs.phase {
            Phase::Call => advisor.agent.call(obs, rng).map(Choice::Call),
            Phase::Discard => advisor.agent.discard(obs, rng).map(Choice::Discard),
            Phase::Pick => advisor.agent.pick(obs, rng).map(Choice::Pick),
        };
        // What the advisor says (its name, a script's error, notes, score and detail names)
        // comes from outside this program: shown with its control characters escaped.
        let name = escape_controls(advisor.agent.name()).into_owned();
        let number = |c: &Choice| legal.iter().position(|l| l == c).map(|i| i + 1);
        let text = match decided {
            Err(e) => format!(
                "  the advisor ({name}) failed: {}\n",
                escape_controls(&e.to_string())
            ),
            Ok(choice) => {
                let mut text = format!(
                    "  {} {}{}\n",
                    p.bold(&format!("advisor ({name}):")),
                    p.bold(&p.words(&choice.to_string())),
                    number(&choice).map_or(String::new(), |n| format!(" (option {n})"))
                );
                match advisor.agent.explain(obs) {
                    Some(e) if !e.candidates.is_empty() => {
                        let entries: Vec<Entry> = e
                            .candidates
                            .iter()
                            .take(3)
                            .map(|c| Entry {
                                index: number(&c.choice),
                                text: c.choice.to_string(),
                                score: Some(c.score),
                                details: (c.details.iter())
                                    .map(|(k, v)| (escape_controls(k).into_owned(), *v))
                                    .collect(),
                                chosen: c.choice == choice,
                            })
                            .collect();
                        text.push_str(&format!("  {}\n", p.dim("its top choices:")));
                        let score = escape_controls(&e.score);
                        for line in render::options(&entries, Some(&score), p, "  ") {
                            text.push_str(&line);
                            text.push('\n');
                        }
                        for note in e.notes.iter().take(3) {
                            text.push_str(&format!("    {}\n", p.dim(&escape_controls(note))));
                        }
                    }
                    _ => text.push_str(&format!("  {}\n", p.dim("(it gives no scores)"))),
                }
                text
            }
        };
        self.hint = Some(Hint {
            key,
            text: text.clone(),
        });
        text
    }
}

impl Agent for Human {
    fn name(&self) -> &str {
        "human"
    }

    fn game_start(&mut self, seat: usize, rules: &Rules) {
        if let Some(a) = &mut self.advisor {
            a.agent.game_start(seat, rules);
        }
    }

    fn round_start(&mut self, seat: usize, standings: &[i64]) {
        self.screen = None;
        self.hint = None;
        if let Some(a) = &mut self.advisor {
            a.agent.round_start(seat, standings);
        }
    }

    fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
        if let Some(a) = &mut self.advisor {
            a.agent.round_end(seat, outcome);
        }
    }

    fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
        if let Some(a) = &mut self.advisor {
            a.agent.game_end(seat, standings, won);
        }
    }

    dhumbal_game::answer_by!(decide, mismatch);
}

/// The error of an answer `other` of another phase than the one `asked`.
pub(crate) fn mismatch(other: Choice, asked: Phase) -> AgentError {
    let asked = match asked {
        Phase::Call => "call",
        Phase::Discard => "discard",
        Phase::Pick => "pick",
    };
    AgentError(format!("answered {other} to a {asked}"))
}

/// What a line typed at a decision means.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Choice(Choice),
    Hint,
    History,
    Quit,
    Help,
    /// An empty line: show the table again.
    Again,
    /// Not an answer, and why.
    Invalid(String),
}

/// Reads a line typed at the decision `obs` (whose legal actions are `legal`, in the engine's
/// order): a number from 1, `y`/`n` at a call, card names (a discard as a set in any order; a
/// card of the pile to take), `d` to draw, `?`, `h`, `q`, `help`.
pub fn read_answer(line: &str, obs: &Observation<'_>, legal: &[Choice]) -> Answer {
    let t = line.trim();
    let lower = t.to_lowercase();
    match lower.as_str() {
        "" => return Answer::Again,
        "?" | "hint" => return Answer::Hint,
        "h" | "history" => return Answer::History,
        "q" | "quit" | "exit" | "stop" => return Answer::Quit,
        "help" => return Answer::Help,
        _ => {}
    }
    if let Ok(n) = lower.parse::<usize>() {
        return match legal.get(n.wrapping_sub(1)) {
            Some(c) => Answer::Choice(*c),
            None => Answer::Invalid(format!(
                "there is no option {n}: choose 1 to {}",
                legal.len()
            )),
        };
    }
    match obs.phase {
        Phase::Call => match lower.as_str() {
            "y" | "yes" | "call" | "jhyap" => Answer::Choice(Choice::Call(true)),
            "n" | "no" | "play" | "play on" => Answer::Choice(Choice::Call(false)),
            _ => Answer::Invalid(format!(
                "`{t}`: answer y (call Jhyap) or n (play on), or ? for a hint"
            )),
        },
        Phase::Pick => match lower.as_str() {
            "d" | "draw" | "s" | "stock" => Answer::Choice(Choice::Pick(Pick::Stock)),
            _ => match parse_cards(t) {
                Err(e) => Answer::Invalid(e),
                Ok(cards) => match cards.as_slice() {
                    [c] if obs.pickable.contains(c) => Answer::Choice(Choice::Pick(Pick::Pile(*c))),
                    [c] => Answer::Invalid(format!(
                        "{c} cannot be taken: take {} or d to draw",
                        obs.pickable
                            .iter()
                            .map(Card::to_string)
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )),
                    _ => Answer::Invalid("take one card, or d to draw".into()),
                },
            },
        },
        Phase::Discard => match parse_cards(t) {
            Err(e) => Answer::Invalid(e),
            Ok(cards) => match discard_of(&cards, obs, legal) {
                Ok(c) => Answer::Choice(c),
                Err(e) => Answer::Invalid(e),
            },
        },
    }
}

/// Card names separated by spaces or commas (`9h 10h jh`, `9♥,10♥`).
fn parse_cards(text: &str) -> Result<Vec<Card>, String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .map(|w| {
            w.parse::<Card>().map_err(|_| {
                format!(
                    "`{w}` is neither an option number nor a card (cards: 9h, 10h, jh, qs, ad, jk, or 9♥); ? hint, h history, q quit, help"
                )
            })
        })
        .collect()
}

/// The legal discard made of `cards`: the one in the order typed if several orders are
/// legal, else any (the engine puts a run down in rank order).
fn discard_of(cards: &[Card], obs: &Observation<'_>, legal: &[Choice]) -> Result<Choice, String> {
    let set: CardSet = cards.iter().copied().collect();
    let mut first = None;
    for c in legal {
        if let Choice::Discard(d) = c
            && d.len() == cards.len()
            && d.to_set() == set
        {
            if d.as_slice() == cards {
                return Ok(*c);
            }
            first.get_or_insert(c);
        }
    }
    if let Some(c) = first {
        return Ok(*c);
    }
    let listed: Vec<String> = cards.iter().map(Card::to_string).collect();
    let why = match classify(obs.rules, obs.hand.as_slice(), cards) {
        Err(e) => e.to_string(),
        Ok(_) => "not a legal discard here".into(),
    };
    Err(format!("cannot discard {}: {why}", listed.join(" ")))
}

fn prompt(phase: Phase) -> String {
    match phase {
        Phase::Call => "Call Jhyap? [y/n] (? hint, h history, q quit): ".into(),
        Phase::Discard => {
            "Discard (a number, or cards like 9h 10h jh; ? hint, h history, q quit): ".into()
        }
        Phase::Pick => "Take (a number, a card, or d to draw; ? hint, h history, q quit): ".into(),
    }
}

fn help(phase: Phase) -> String {
    let what = match phase {
        Phase::Call => "y calls Jhyap (the round ends and hands are compared), n plays on",
        Phase::Discard => {
            "a number discards that option; or type the cards (9h 10h jh, 9♥ 10♥ J♥, any order)"
        }
        Phase::Pick => "a number takes that option; a card (9h) takes it; d draws from the stock",
    };
    format!(
        "{what}.\n  ?  the advisor's suggestion and its top three choices\n  h  the history of this round\n  q  stop the game (the trace so far is kept)\n  an empty line shows the table again\n"
    )
}

/// Cards as the renderer paints them.
fn cards_text(cards: &[Card], p: Paint) -> String {
    let names: Vec<String> = cards.iter().map(Card::to_string).collect();
    p.cards(&names)
}

/// The seat's own hand, face up with its value.
fn own_hand(obs: &Observation<'_>) -> render::Hand {
    render::Hand::Shown {
        cards: obs.hand.iter().map(|c| c.to_string()).collect(),
        value: Some(obs.hand_value),
    }
}

/// The decision of `obs`: its legal actions numbered from 1, in the engine's order (a
/// discard with the value it sheds).
fn decision(obs: &Observation<'_>, legal: &[Choice]) -> Decision {
    let heading = match obs.phase {
        Phase::Call => {
            if obs.hand_value <= obs.call_threshold {
                format!("your hand is worth {}: call Jhyap?", obs.hand_value)
            } else {
                format!(
                    "your hand is worth {}, above {}: a call now is penalised. Call Jhyap?",
                    obs.hand_value, obs.call_threshold
                )
            }
        }
        Phase::Discard => "your discard (the value it sheds beside it):".into(),
        Phase::Pick => format!(
            "you discarded {}; take a card or draw:",
            obs.discarded
                .iter()
                .map(Card::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    let options = legal
        .iter()
        .enumerate()
        .map(|(i, c)| Entry {
            index: Some(i + 1),
            text: c.to_string(),
            score: None,
            details: match c {
                Choice::Discard(d) => vec![(
                    "sheds".into(),
                    f64::from(obs.rules.hand_value(d.as_slice())),
                )],
                _ => Vec::new(),
            },
            chosen: false,
        })
        .collect();
    Decision {
        heading,
        score: None,
        options,
    }
}

/// A decision's heading and options as the scene draws them.
fn decision_lines(d: &Decision, p: Paint) -> String {
    let mut text = format!("  {}\n", d.heading);
    for line in render::options(&d.options, None, p, "    ") {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// The end of a round as the table sees it: how it ended, every hand with its value, each
/// seat's change and its standing after the round (`standings`).
pub fn round_summary(
    o: &RoundOutcome,
    standings: &[i64],
    labels: &[String],
    points: bool,
    p: Paint,
) -> String {
    let name = |s: usize| labels[s].as_str();
    let how = match (o.end, o.caller, o.winner) {
        (EndReason::Call, Some(c), _) if o.call_success => {
            format!("{} called Jhyap and won", name(c))
        }
        (EndReason::Call, Some(c), Some(w)) => {
            format!("{} called Jhyap and lost to {}", name(c), name(w))
        }
        (EndReason::EmptyHand, Some(c), _) => format!("{} emptied their hand", name(c)),
        (EndReason::TurnLimit, _, Some(w)) => {
            format!("the turn limit was reached; {} wins", name(w))
        }
        (EndReason::StockExhausted, _, Some(w)) => {
            format!("the stock ran out; {} wins", name(w))
        }
        (end, _, _) => format!("it ended ({})", end.as_str()),
    };
    let unit = if points { "points" } else { "coins" };
    let mut text = format!(
        "{}\n",
        p.bold(&format!(
            "══ round {} over after {} turn{}: {how} ══",
            o.round,
            o.turns,
            if o.turns == 1 { "" } else { "s" }
        ))
    );
    let name_w = labels.iter().map(|l| render::width(l)).max().unwrap_or(0);
    let hands: Vec<String> = (0..o.seats)
        .map(|s| cards_text(o.final_hands[s].as_slice(), p))
        .collect();
    let hand_w = hands.iter().map(|h| render::width(h)).max().unwrap_or(0);
    for s in (0..o.seats).filter(|&s| o.active[s]) {
        let change = if points {
            o.points_delta[s]
        } else {
            o.coin_delta[s]
        };
        let mut line = format!(
            "  {} {}  {}  value {:>3}  {:>+5} → {} {unit}",
            s,
            render::pad(&labels[s], name_w),
            render::pad(&hands[s], hand_w),
            o.hand_values[s],
            change,
            standings[s],
        );
        if o.winner == Some(s) {
            line.push_str(&format!("  {}", p.bold("winner")));
        }
        if o.caller == Some(s) {
            line.push_str(&format!("  {}", p.dim("called")));
        }
        if o.eliminated[s] {
            line.push_str(&format!("  {}", p.bold("eliminated")));
        }
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// The end of the game: the final standings, the winner first, and who won.
pub fn game_summary(
    rounds: u32,
    standings: &[i64],
    winner: usize,
    labels: &[String],
    points: bool,
    p: Paint,
) -> String {
    let unit = if points { "points" } else { "coins" };
    let mut text = format!(
        "{}\n",
        p.bold(&format!(
            "══ game over after {rounds} round{} ══",
            if rounds == 1 { "" } else { "s" }
        ))
    );
    text.push_str(&format!("final standings ({unit}):\n"));
    let mut order: Vec<usize> = (0..standings.len()).collect();
    order.sort_by_key(|&s| {
        (
            s != winner,
            if points { standings[s] } else { -standings[s] },
            s,
        )
    });
    let name_w = labels.iter().map(|l| render::width(l)).max().unwrap_or(0);
    for (rank, &s) in order.iter().enumerate() {
        text.push_str(&format!(
            "  {}. seat {s} {}  {:>6}\n",
            rank + 1,
            render::pad(&labels[s], name_w),
            standings[s]
        ));
    }
    text.push_str(&p.bold(&format!("winner: {} (seat {winner})", labels[winner])));
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhumbal_game::cards::parse_cards as cards;
    use dhumbal_game::{Discard, Hand, Oracle, Preset};

    fn with_obs(hand: &str, phase: Phase, pickable: &[Card], f: impl FnOnce(&Observation<'_>)) {
        let rules = Rules::preset(Preset::Paper);
        let hand = Hand::from_slice(&cards(hand).unwrap()).unwrap();
        let active = [true; 4];
        let sizes = [5u8; 4];
        let standings = [0i64; 4];
        let known = [CardSet::EMPTY; 4];
        let obs = Observation {
            rules: &rules,
            phase,
            seat: 0,
            hand: &hand,
            hand_value: rules.hand_value(hand.as_slice()),
            turn: 1,
            round: 0,
            starter: 0,
            active: &active,
            hand_sizes: &sizes,
            standings: &standings,
            pile: &[],
            pickable,
            discarded: &[],
            known: &known,
            seen: CardSet::EMPTY,
            stock_len: 30,
            call_threshold: 10,
            top_set: 0,
            restocked: None,
            oracle: Oracle::none(),
        };
        f(&obs);
    }

    fn discard(text: &str) -> Answer {
        Answer::Choice(Choice::Discard(
            Discard::from_slice(&cards(text).unwrap()).unwrap(),
        ))
    }

    /// A run is accepted in any order, as the engine lists it; numbers, names and commands
    /// are read; everything else is refused with a reason.
    #[test]
    fn answers_are_read_by_number_card_names_or_command() {
        with_obs("9H 10H JH 2C KS", Phase::Discard, &[], |obs| {
            let legal = legal_choices(obs);
            let read = |line: &str| read_answer(line, obs, &legal);
            assert_eq!(read("1"), Answer::Choice(legal[0]));
            assert_eq!(read(" 2c "), discard("2C"));
            let run = read("jh 9h 10h");
            assert_eq!(run, read("9♥ 10♥ J♥"));
            assert_eq!(run, read("9h,10h,jh"));
            assert!(matches!(run, Answer::Choice(Choice::Discard(d)) if d.len() == 3));
            assert_eq!(read("?"), Answer::Hint);
            assert_eq!(read("H"), Answer::History);
            assert_eq!(read("q"), Answer::Quit);
            assert_eq!(read(""), Answer::Again);
            for (line, reason) in [
                ("0", "1 to"),
                ("99", "no option 99"),
                ("3s", "3♠ is not in the hand"),
                ("2c ks", "neither one rank nor"),
                ("banana", "`banana`"),
            ] {
                let Answer::Invalid(why) = read(line) else {
                    panic!("{line:?} read as {:?}", read(line))
                };
                assert!(why.contains(reason), "{line:?}: {why}");
            }
        });
        with_obs("9H 10H", Phase::Call, &[], |obs| {
            let legal = legal_choices(obs);
            assert_eq!(
                read_answer("y", obs, &legal),
                Answer::Choice(Choice::Call(true))
            );
            assert_eq!(
                read_answer("N", obs, &legal),
                Answer::Choice(Choice::Call(false))
            );
            assert_eq!(
                read_answer("2", obs, &legal),
                Answer::Choice(Choice::Call(false))
            );
            assert!(matches!(
                read_answer("maybe", obs, &legal),
                Answer::Invalid(_)
            ));
        });
        let offered = cards("9S 9D").unwrap();
        with_obs("2C KS", Phase::Pick, &offered, |obs| {
            let legal = legal_choices(obs);
            let read = |line: &str| read_answer(line, obs, &legal);
            assert_eq!(
                read("9d"),
                Answer::Choice(Choice::Pick(Pick::Pile(offered[1])))
            );
            assert_eq!(read("d"), Answer::Choice(Choice::Pick(Pick::Stock)));
            assert_eq!(read("3"), Answer::Choice(Choice::Pick(Pick::Stock)));
            let Answer::Invalid(why) = read("9h") else {
                panic!()
            };
            assert!(why.contains("take 9♠ or 9♦"), "{why}");
        });
    }
}
