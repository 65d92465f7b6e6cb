//! The text renderer of a table: what is shown at one moment of a round (the seats with their
//! hands or face-down counts, the pile, the stock, the standings, a decision with its options)
//! as lines of text, in colour or plain. `dhumbal-run show` draws traces with it (a [`Scene`]
//! for each deal, [`Paint`] and [`options`] for the turns), and so do the Python
//! environments' `render()` (a [`Scene`] of the acting seat's [`Observation`]).
//!
//! Cards are written as the engine and the traces write them (`9♥`, `10♣`, `Jk1`): hearts and
//! diamonds in red, spades, clubs and jokers in the terminal's own colour, face-down cards dim.
//! [`Paint::plain`] writes no escape code at all, for files, pipes and `NO_COLOR`.

use std::fmt::Write as _;

use dhumbal_game::Observation;

const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// One face-down card.
pub const FACE_DOWN: char = '▒';

/// The mark of the chosen option, and of the seat to act.
pub const MARK: char = '▸';

/// How text is painted: in colour (ANSI escape codes) or plain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paint {
    colour: bool,
}

impl Paint {
    /// No escape codes.
    pub fn plain() -> Paint {
        Paint { colour: false }
    }

    /// ANSI colours.
    pub fn colour() -> Paint {
        Paint { colour: true }
    }

    /// Colour when the output is a terminal and `NO_COLOR` is not set to something
    /// (<https://no-color.org>); plain otherwise.
    pub fn for_terminal(terminal: bool) -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Paint {
            colour: terminal && !no_color,
        }
    }

    pub fn is_colour(&self) -> bool {
        self.colour
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.colour && !text.is_empty() {
            format!("{code}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    /// One card: red for hearts and diamonds.
    pub fn card(&self, card: &str) -> String {
        if is_red(card) {
            self.wrap(RED, card)
        } else {
            card.to_string()
        }
    }

    /// Cards side by side, separated by a space.
    pub fn cards<S: AsRef<str>>(&self, cards: &[S]) -> String {
        let mut out = String::new();
        for (i, c) in cards.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.card(c.as_ref()));
        }
        out
    }

    /// A text with the cards in it painted (`discard 9♥ 9♠`, `take 9♥`).
    pub fn words(&self, text: &str) -> String {
        if !self.colour {
            return text.to_string();
        }
        let mut out = String::new();
        for (i, w) in text.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.card(w));
        }
        out
    }

    /// `n` face-down cards, dim.
    pub fn face_down(&self, n: usize) -> String {
        self.wrap(DIM, &FACE_DOWN.to_string().repeat(n))
    }

    pub fn dim(&self, text: &str) -> String {
        self.wrap(DIM, text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.wrap(BOLD, text)
    }
}

/// Whether a card as written is red (hearts, diamonds).
pub fn is_red(card: &str) -> bool {
    card.ends_with('♥') || card.ends_with('♦')
}

/// The width a text takes on a terminal: its characters, escape codes left out.
pub fn width(text: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in text.chars() {
        if escape {
            escape = c != 'm';
        } else if c == '\x1b' {
            escape = true;
        } else {
            n += 1;
        }
    }
    n
}

/// `text` followed by spaces up to `w` columns.
pub fn pad(text: &str, w: usize) -> String {
    let mut out = text.to_string();
    for _ in width(text)..w {
        out.push(' ');
    }
    out
}

/// `text` in lines of at most `columns` columns (`None`: one line), broken between words; a
/// word longer than the width is cut. Spaces where a line breaks are dropped.
pub fn wrap(text: &str, columns: Option<usize>) -> Vec<String> {
    let Some(columns) = columns.filter(|w| *w > 0) else {
        return vec![text.to_string()];
    };
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        let used = width(&line);
        if used > 0 && used + 1 + word.len() > columns {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > columns {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..columns).collect());
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.extend(word);
    }
    lines.push(line);
    lines
}

/// A number for people: whole numbers without decimals, others with up to three.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The decimals [`number`] writes `x` with (0 to 3).
fn decimals(x: f64) -> usize {
    let s = number(x);
    s.find('.').map_or(0, |dot| s.len() - dot - 1)
}

/// `x` with `decimals` decimals ("-" when it is not finite).
fn number_with(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    format!("{x:.decimals$}")
}

/// What a seat shows of its hand.
#[derive(Clone, Debug, PartialEq)]
pub enum Hand {
    /// Face up (the viewer's own hand, or every hand in the omniscient view), with its value
    /// when known.
    Shown {
        cards: Vec<String>,
        value: Option<u32>,
    },
    /// Face down: how many cards, the ones publicly known (taken from the pile) first.
    Hidden { count: usize, known: Vec<String> },
}

/// One seat at the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Seat {
    pub seat: usize,
    /// The agent (or player) sitting there.
    pub name: String,
    pub hand: Hand,
    /// Coins or points (see [`Scene::standings`]).
    pub standing: Option<i64>,
    /// Still in the game (point scoring eliminates seats).
    pub active: bool,
    /// The seat to act.
    pub acting: bool,
}

/// One option of a decision: a legal action (numbered, for a player), or a candidate an agent
/// weighed (with its score).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The action's index (the slot a Python agent answers with).
    pub index: Option<usize>,
    pub text: String,
    pub score: Option<f64>,
    /// Other numbers, named.
    pub details: Vec<(String, f64)>,
    pub chosen: bool,
}

impl Entry {
    pub fn new(text: impl Into<String>) -> Entry {
        Entry {
            index: None,
            text: text.into(),
            score: None,
            details: Vec::new(),
            chosen: false,
        }
    }
}

/// A decision to show under the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// What is being decided, e.g. `seat 2 (player_2) to discard`.
    pub heading: String,
    /// What the scores measure, when the options have scores.
    pub score: Option<String>,
    pub options: Vec<Entry>,
}

/// The table at one moment, as one viewer sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// The first line (`round 0 · turn 5`), if any.
    pub heading: Option<String>,
    pub seats: Vec<Seat>,
    /// What the standings count: `coins` or `points`.
    pub standings: String,
    /// The discard pile, bottom first.
    pub pile: Vec<String>,
    /// How many cards at the top of the pile form the last discard.
    pub top_set: usize,
    /// The cards the acting seat may take from the pile now (its pick), if any.
    pub pickable: Vec<String>,
    /// Cards left in the stock.
    pub stock: usize,
    /// The call threshold, when it is worth saying.
    pub threshold: Option<u32>,
    pub decision: Option<Decision>,
}

/// How many cards of the pile under the top set are shown.
const PILE_SHOWN: usize = 4;

impl Scene {
    /// The acting seat's view of a decision: its own hand face up, the others face down
    /// (with the cards they are known to hold), the pile, the stock, the standings. `names`
    /// holds each seat's name. The decision's options are the caller's to add (their order is
    /// the caller's: the engine's, or a Python environment's slots).
    pub fn of_observation(obs: &Observation<'_>, names: &[String], points: bool) -> Scene {
        let seats = (0..obs.hand_sizes.len())
            .map(|s| Seat {
                seat: s,
                name: names.get(s).cloned().unwrap_or_else(|| format!("seat {s}")),
                hand: if s == obs.seat {
                    Hand::Shown {
                        cards: obs.hand.iter().map(|c| c.to_string()).collect(),
                        value: Some(obs.hand_value),
                    }
                } else {
                    Hand::Hidden {
                        count: obs.hand_sizes[s] as usize,
                        known: obs
                            .known
                            .get(s)
                            .map(|k| k.iter().map(|c| c.to_string()).collect())
                            .unwrap_or_default(),
                    }
                },
                standing: obs.standings.get(s).copied(),
                active: obs.active.get(s).copied().unwrap_or(true),
                acting: s == obs.seat,
            })
            .collect();
        let phase = crate::trace::phase_name(obs.phase);
        Scene {
            heading: Some(format!(
                "round {} · turn {} · seat {} ({}) to {phase}",
                obs.round,
                obs.turn,
                obs.seat,
                names.get(obs.seat).map_or("?", String::as_str)
            )),
            seats,
            standings: if points { "points" } else { "coins" }.to_string(),
            pile: obs.pile.iter().map(|c| c.to_string()).collect(),
            // At a pick, the seat's own discard is on top (the observation's `top_set`
            // counts the set beneath it).
            top_set: if obs.phase == dhumbal_game::Phase::Pick {
                obs.discarded.len()
            } else {
                obs.top_set
            },
            pickable: obs.pickable.iter().map(|c| c.to_string()).collect(),
            stock: obs.stock_len,
            threshold: Some(obs.call_threshold),
            decision: None,
        }
    }

    /// The scene as lines of text (no line ends).
    pub fn lines(&self, paint: Paint) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(h) = &self.heading {
            out.push(paint.bold(h));
        }
        let name_w = self.seats.iter().map(|s| width(&s.name)).max().unwrap_or(0);
        let standing_w = self
            .seats
            .iter()
            .filter_map(|s| s.standing)
            .map(|v| v.to_string().len())
            .max()
            .unwrap_or(0);
        for s in &self.seats {
            let mut line = String::new();
            line.push_str(if s.acting { "  ▸ " } else { "    " });
            let _ = write!(line, "{} {}", s.seat, pad(&s.name, name_w));
            if let Some(v) = s.standing {
                let _ = write!(
                    line,
                    "  {:>standing_w$} {}",
                    v,
                    self.standings,
                    standing_w = standing_w
                );
            }
            line.push_str("  ");
            if !s.active {
                line.push_str(&paint.dim("out of the game"));
            } else {
                line.push_str(&hand(&s.hand, paint));
            }
            out.push(line.trim_end().to_string());
        }
        out.push(format!("    {}", self.table_line(paint)));
        if let Some(d) = &self.decision {
            out.push(format!("  {}", d.heading));
            out.extend(options(&d.options, d.score.as_deref(), paint, "    "));
        }
        out
    }

    /// The pile and stock line: `pile … 8♦ 9♥ | 7♥ 7♣ (14 cards) · stock 25 · call at 10 or less`.
    fn table_line(&self, paint: Paint) -> String {
        let top = self.top_set.min(self.pile.len());
        let under = &self.pile[..self.pile.len() - top];
        let shown = &under[under.len().saturating_sub(PILE_SHOWN)..];
        let mut line = String::from("pile ");
        if self.pile.is_empty() {
            line.push_str("empty");
        } else {
            if shown.len() < under.len() {
                line.push_str(&paint.dim("… "));
            }
            if !shown.is_empty() {
                line.push_str(&paint.dim(&shown.join(" ")));
                line.push_str(" | ");
            }
            line.push_str(&paint.bold(&paint.cards(&self.pile[self.pile.len() - top..])));
            let n = self.pile.len();
            let _ = write!(line, " ({n} card{})", if n == 1 { "" } else { "s" });
        }
        if !self.pickable.is_empty() {
            let _ = write!(line, " · may take {}", paint.cards(&self.pickable));
        }
        let _ = write!(line, " · stock {}", self.stock);
        if let Some(t) = self.threshold {
            let _ = write!(line, " · call at {t} or less");
        }
        line
    }
}

/// A hand as a seat shows it: `9♥ 6♥ 5♥ (20)`, or `2♦ ▒▒▒▒ (5)` face down.
pub fn hand(h: &Hand, paint: Paint) -> String {
    match h {
        Hand::Shown { cards, value } => {
            let mut s = paint.cards(cards);
            if let Some(v) = value {
                let _ = write!(s, " {}", paint.dim(&format!("({v})")));
            }
            s
        }
        Hand::Hidden { count, known } => {
            let mut s = paint.cards(known);
            let down = count.saturating_sub(known.len());
            if down > 0 {
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(&paint.face_down(down));
            }
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&paint.dim(&format!("({count})")));
            s
        }
    }
}

/// A decision's options, one a line after `indent`: the chosen one marked, the index and the
/// score when there are, other numbers after it; `score` names what the scores measure.
pub fn options(entries: &[Entry], score: Option<&str>, paint: Paint, indent: &str) -> Vec<String> {
    let text_w = entries.iter().map(|e| width(&e.text)).max().unwrap_or(0);
    let index_w = entries
        .iter()
        .filter_map(|e| e.index)
        .map(|i| i.to_string().len())
        .max()
        .unwrap_or(0);
    // One precision for the column (-0.161 above -0.200, not -0.2): the most decimals any
    // score needs, none for a column of counts.
    let score_d = entries
        .iter()
        .filter_map(|e| e.score)
        .map(decimals)
        .max()
        .unwrap_or(0);
    let score_w = entries
        .iter()
        .filter_map(|e| e.score)
        .map(|s| number_with(s, score_d).len())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let mut line = String::from(indent);
        line.push_str(if e.chosen { "▸ " } else { "  " });
        if let Some(i) = e.index {
            let _ = write!(line, "{i:>index_w$}  ");
        }
        let text = pad(&e.text, text_w);
        let painted = paint.words(&text);
        line.push_str(&if e.chosen {
            paint.bold(&painted)
        } else {
            painted
        });
        if let Some(s) = e.score {
            let _ = write!(line, "  {:>score_w$}", number_with(s, score_d));
            if k == 0
                && let Some(what) = score
            {
                line.push_str(&paint.dim(&format!("  ({what})")));
            }
        }
        if !e.details.is_empty() {
            let d: Vec<String> = e
                .details
                .iter()
                .map(|(n, v)| format!("{n} {}", number(*v)))
                .collect();
            line.push_str(&paint.dim(&format!("  {}", d.join(", "))));
        }
        out.push(line.trim_end().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            heading: Some("round 0 · turn 5".into()),
            seats: vec![
                Seat {
                    seat: 0,
                    name: "me".into(),
                    hand: Hand::Shown {
                        cards: vec!["9♥".into(), "6♠".into()],
                        value: Some(15),
                    },
                    standing: Some(10000),
                    active: true,
                    acting: true,
                },
                Seat {
                    seat: 1,
                    name: "other".into(),
                    hand: Hand::Hidden {
                        count: 4,
                        known: vec!["2♦".into()],
                    },
                    standing: Some(950),
                    active: true,
                    acting: false,
                },
            ],
            standings: "coins".into(),
            pile: ["K♥", "3♣", "4♣", "5♣", "6♣", "7♦", "7♣"]
                .map(String::from)
                .to_vec(),
            top_set: 2,
            pickable: vec![],
            stock: 25,
            threshold: Some(10),
            decision: Some(Decision {
                heading: "seat 0 (me) to discard".into(),
                score: Some("value shed".into()),
                options: vec![
                    Entry {
                        index: Some(0),
                        text: "discard 9♥".into(),
                        score: Some(9.0),
                        details: vec![("risk".into(), 0.25)],
                        chosen: true,
                    },
                    Entry {
                        index: Some(1),
                        text: "discard 6♠".into(),
                        score: Some(6.5),
                        details: vec![],
                        chosen: false,
                    },
                ],
            }),
        }
    }

    #[test]
    fn text_wraps_between_words_and_cuts_only_longer_ones() {
        let text = "one two three four five";
        assert_eq!(wrap(text, None), vec![text]);
        assert_eq!(wrap(text, Some(9)), vec!["one two", "three", "four five"]);
        assert_eq!(
            wrap("abcdefghij kl", Some(4)),
            vec!["abcd", "efgh", "ij", "kl"]
        );
        assert_eq!(wrap("", Some(4)), vec![""]);
        for line in wrap("♥♥♥ ♦♦ ♣♣♣♣♣ x", Some(5)) {
            assert!(line.chars().count() <= 5, "{line}");
        }
    }

    #[test]
    fn plain_scene_has_no_escape_codes_and_shows_what_it_should() {
        let text = scene().lines(Paint::plain()).join("\n");
        assert!(!text.contains('\x1b'), "{text}");
        let want = "round 0 · turn 5\n\
            \x20 ▸ 0 me     10000 coins  9♥ 6♠ (15)\n\
            \x20   1 other    950 coins  2♦ ▒▒▒ (4)\n\
            \x20   pile … 3♣ 4♣ 5♣ 6♣ | 7♦ 7♣ (7 cards) · stock 25 · call at 10 or less\n\
            \x20 seat 0 (me) to discard\n\
            \x20   ▸ 0  discard 9♥  9.0  (value shed)  risk 0.25\n\
            \x20     1  discard 6♠  6.5";
        assert_eq!(text, want);
    }

    #[test]
    fn colour_paints_red_suits_and_face_down_cards_only() {
        let p = Paint::colour();
        assert_eq!(p.card("9♥"), "\x1b[31m9♥\x1b[0m");
        assert_eq!(p.card("Q♦"), "\x1b[31mQ♦\x1b[0m");
        assert_eq!(p.card("9♠"), "9♠");
        assert_eq!(p.card("Jk1"), "Jk1");
        assert_eq!(p.face_down(2), "\x1b[2m▒▒\x1b[0m");
        assert_eq!(p.words("discard 9♥ 9♠"), "discard \x1b[31m9♥\x1b[0m 9♠");
        let text = scene().lines(p).join("\n");
        assert!(text.contains("\x1b[31m9♥\x1b[0m"), "{text}");
        // Without the codes it is the plain text.
        let stripped: String = text
            .split('\x1b')
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    &part[part.find('m').unwrap() + 1..]
                }
            })
            .collect();
        assert_eq!(stripped, scene().lines(Paint::plain()).join("\n"));
    }

    #[test]
    fn hands_face_down_show_their_known_cards_and_count() {
        let p = Paint::plain();
        let h = |count, known: &[&str]| Hand::Hidden {
            count,
            known: known.iter().map(|c| c.to_string()).collect(),
        };
        assert_eq!(hand(&h(3, &[]), p), "▒▒▒ (3)");
        assert_eq!(hand(&h(3, &["2♦"]), p), "2♦ ▒▒ (3)");
        assert_eq!(hand(&h(2, &["2♦", "K♣"]), p), "2♦ K♣ (2)");
        assert_eq!(hand(&h(0, &[]), p), "(0)");
    }

    #[test]
    fn widths_and_numbers() {
        assert_eq!(width("\x1b[31m9♥\x1b[0m"), 2);
        assert_eq!(pad("\x1b[31m9♥\x1b[0m", 4), "\x1b[31m9♥\x1b[0m  ");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.125), "0.125");
        assert_eq!(number(2.0 / 3.0), "0.667");
        assert_eq!(number(f64::NAN), "-");
        assert_eq!(number(-0.2), "-0.2");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(1e20), "100000000000000000000");
    }
}
