//! Line and column of every key and value in a YAML document, by path (`stages.1.agents.0.kind`),
//! so that problems found after deserialization can still point into the file.

use std::collections::HashMap;

use dhumbal_agents::registry::join;
use serde_saphyr::granit_parser::{Event, Parser, Span};

/// A position in the file: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// Positions by path. Keys and values are recorded separately: an unknown key points at the
/// key, a bad value at the value.
#[derive(Default, Debug)]
pub struct Locations {
    keys: HashMap<String, Pos>,
    values: HashMap<String, Pos>,
    /// Where each value's text starts and ends (character offsets, end exclusive), and
    /// whether it is a mapping: what a repair of the text needs.
    extents: HashMap<String, Extent>,
    /// Where the text stops being YAML, and why, if it does.
    pub syntax: Option<(Pos, String)>,
    /// The alias at which the document, its aliases expanded, grows past [`MAX_VALUES`]
    /// values, if one does (an "alias bomb"): the file is refused there, before any reading
    /// that would expand it.
    pub expansion: Option<Expansion>,
}

/// The most values (scalars, lists, mappings) a scenario file may hold with its aliases
/// expanded. A scenario has hundreds; aliases nested in aliases multiply at each level, so
/// that nine levels of ten-fold aliases in a few lines stand for a billion values.
pub const MAX_VALUES: u64 = 100_000;

/// An alias past which the document holds more than [`MAX_VALUES`] values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// Where the alias is, and its text (`*name`).
    pub at: Pos,
    pub alias: String,
    /// The values the alias stands for, and the document's values once it is expanded.
    pub size: u64,
    pub total: u64,
}

impl Expansion {
    /// The file at `file` refused at the alias.
    pub fn refusal(&self, file: &std::path::Path) -> super::ScenarioError {
        super::ScenarioError {
            file: file.to_path_buf(),
            problems: vec![super::Problem {
                path: String::new(),
                message: self.message(),
                line: Some(self.at.line),
                column: Some(self.at.column),
            }],
        }
    }

    /// What is refused, and why.
    pub fn message(&self) -> String {
        format!(
            "alias `{}` stands for {} values, which brings the file to {} once its aliases are \
             expanded: more than the {} a scenario may hold, so the file is refused (aliases \
             of aliases multiply at each level); write the values out, or alias fewer",
            self.alias, self.size, self.total, MAX_VALUES
        )
    }
}

/// Counts the values of a document as the parser's events come, each alias counted as the
/// values of the node it repeats, and says when the count passes [`MAX_VALUES`].
#[derive(Default)]
struct Growth {
    total: u64,
    /// The values of each anchored node, by anchor id.
    sizes: HashMap<usize, u64>,
    /// The collections open, with their anchor and the count when they opened.
    open: Vec<(usize, u64)>,
}

impl Growth {
    /// Counts `event`; the values it stands for when the count passes the limit with it.
    fn add(&mut self, event: &Event<'_>) -> Option<u64> {
        let size = match event {
            Event::Scalar(_, _, anchor, _) => {
                if *anchor != 0 {
                    self.sizes.insert(*anchor, 1);
                }
                1
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                self.open.push((*anchor, self.total));
                1
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, start)) = self.open.pop()
                    && anchor != 0
                {
                    self.sizes.insert(anchor, self.total - start);
                }
                0
            }
            // An alias of a node still open (a recursive one) counts as one.
            Event::Alias(id) => self.sizes.get(id).copied().unwrap_or(1),
            _ => 0,
        };
        self.total = self.total.saturating_add(size);
        (self.total > MAX_VALUES).then_some(size)
    }
}

/// The text of one value: character offsets `start..end`, and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub start: usize,
    pub end: usize,
    pub mapping: bool,
}

impl Locations {
    /// Reads the positions of `text`; an unparsable document gives no positions (the YAML
    /// deserializer reports the syntax error itself, with its location).
    pub fn of(text: &str) -> Locations {
        let mut events = Vec::new();
        let mut growth = Growth::default();
        for item in Parser::new_from_str(text) {
            match item {
                Ok((event, span)) => {
                    if let Some(size) = growth.add(&event) {
                        let (start, end) = (span.start.index(), span.end.index());
                        return Locations {
                            expansion: Some(Expansion {
                                at: pos(&span),
                                alias: text.chars().skip(start).take(end - start).collect(),
                                size,
                                total: growth.total,
                            }),
                            ..Locations::default()
                        };
                    }
                    match event {
                        Event::Scalar(..)
                        | Event::Alias(_)
                        | Event::SequenceStart(..)
                        | Event::SequenceEnd
                        | Event::MappingStart(..)
                        | Event::MappingEnd => events.push((kind(&event), scalar(&event), span)),
                        _ => {}
                    }
                }
                Err(e) => {
                    let at = e.marker();
                    return Locations {
                        syntax: Some((
                            Pos {
                                line: at.line(),
                                column: at.col() + 1,
                            },
                            e.info(),
                        )),
                        ..Locations::default()
                    };
                }
            }
        }
        let mut out = Locations::default();
        if !events.is_empty() {
            out.node(&events, 0, "");
        }
        out
    }

    /// Where the value at `path` is, or failing that its key, or the nearest enclosing value.
    pub fn find(&self, path: &str) -> Option<Pos> {
        let mut p = path;
        loop {
            if let Some(pos) = self.values.get(p).or_else(|| self.keys.get(p)) {
                return Some(*pos);
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return self.values.get("").copied(),
            }
        }
    }

    /// Where the key at `path` is (for unknown fields).
    pub fn find_key(&self, path: &str) -> Option<Pos> {
        self.keys.get(path).copied().or_else(|| self.find(path))
    }

    /// The path of the value that starts at `line`, `column`, if any.
    pub fn path_at(&self, line: usize, column: usize) -> Option<String> {
        longest_at(&self.values, Pos { line, column })
    }

    /// The path of the key that starts at `line`, `column`, if any.
    pub fn key_at(&self, line: usize, column: usize) -> Option<String> {
        longest_at(&self.keys, Pos { line, column })
    }

    /// Where the text of the value at `path` is.
    pub fn extent(&self, path: &str) -> Option<Extent> {
        self.extents.get(path).copied()
    }

    /// Records the value starting at event `i` under `path`; the index of the event after it
    /// and the character offset where its text ends.
    fn node(
        &mut self,
        ev: &[(Kind, Option<String>, Span)],
        i: usize,
        path: &str,
    ) -> (usize, usize) {
        let (k, _, span) = &ev[i];
        self.values.insert(path.to_string(), pos(span));
        let start = span.start.index();
        // A flow collection ends with its closing bracket; a block one with its last value
        // (its end event sits at the next line's key).
        let (next, end) = match k {
            Kind::Scalar | Kind::Other => (i + 1, span.end.index()),
            Kind::SeqStart => {
                let mut j = i + 1;
                let mut index = 0;
                let mut end = start;
                while j < ev.len() && ev[j].0 != Kind::SeqEnd {
                    (j, end) = self.node(ev, j, &join(path, &index.to_string()));
                    index += 1;
                }
                (j + 1, close(ev, j, end))
            }
            Kind::MapStart => {
                let mut j = i + 1;
                let mut end = start;
                while j < ev.len() && ev[j].0 != Kind::MapEnd {
                    let key = ev[j].1.clone().unwrap_or_else(|| "?".to_string());
                    let key_path = join(path, &key);
                    if ev[j].0 == Kind::Scalar {
                        self.keys.insert(key_path.clone(), pos(&ev[j].2));
                        end = ev[j].2.end.index();
                        j += 1;
                    } else {
                        // A complex key: skip it.
                        (j, end) = self.node(ev, j, &format!("{key_path}#key"));
                    }
                    if j < ev.len() && ev[j].0 != Kind::MapEnd {
                        (j, end) = self.node(ev, j, &key_path);
                    }
                }
                (j + 1, close(ev, j, end))
            }
            Kind::SeqEnd | Kind::MapEnd => (i + 1, span.end.index()),
        };
        self.extents.insert(
            path.to_string(),
            Extent {
                start,
                end: end.max(start),
                mapping: *k == Kind::MapStart,
            },
        );
        (next, end)
    }
}

/// The longest of the paths in `at` that start at `pos`, if any.
fn longest_at(at: &HashMap<String, Pos>, pos: Pos) -> Option<String> {
    at.iter()
        .filter(|(_, p)| **p == pos)
        .map(|(k, _)| k.clone())
        .max_by_key(|k| k.len())
}

/// Where a collection whose end event is `ev[j]` ends: after the closing bracket of a flow
/// collection (an end event with a width), else after its last value (`last`).
fn close(ev: &[(Kind, Option<String>, Span)], j: usize, last: usize) -> usize {
    match ev.get(j) {
        Some((_, _, span)) if span.end.index() > span.start.index() => span.end.index(),
        _ => last,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Scalar,
    Other,
    SeqStart,
    SeqEnd,
    MapStart,
    MapEnd,
}

fn kind(e: &Event<'_>) -> Kind {
    match e {
        Event::Scalar(..) => Kind::Scalar,
        Event::SequenceStart(..) => Kind::SeqStart,
        Event::SequenceEnd => Kind::SeqEnd,
        Event::MappingStart(..) => Kind::MapStart,
        Event::MappingEnd => Kind::MapEnd,
        _ => Kind::Other,
    }
}

fn scalar(e: &Event<'_>) -> Option<String> {
    match e {
        Event::Scalar(text, ..) => Some(text.to_string()),
        _ => None,
    }
}

fn pos(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nine levels of ten-fold aliases: a billion values in ten lines.
    fn bomb(levels: usize) -> String {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..levels {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        text.push_str(&format!("agents: *a{}\n", levels - 1));
        text
    }

    #[test]
    fn an_alias_bomb_is_found_where_it_passes_the_limit() {
        let l = Locations::of(&bomb(9));
        let x = l.expansion.expect("refused");
        // `a4` is 111,111 values: the file passes 100,000 at its eighth `*a3`.
        assert_eq!((x.alias.as_str(), x.at.line, x.size), ("*a3", 5, 11_111));
        assert!(
            x.total > MAX_VALUES && x.total - x.size <= MAX_VALUES,
            "{x:?}"
        );
        assert!(x.message().contains(&x.alias), "{}", x.message());
        // Aliases that stay small are read as usual.
        let small = Locations::of(&bomb(3));
        assert!(small.expansion.is_none());
        assert!(small.find("agents").is_some());
    }

    #[test]
    fn keys_and_values_by_path() {
        let text =
            "name: x\nstages:\n  - name: a\n    agents:\n      - kind: random\n        id: r\n";
        let l = Locations::of(text);
        assert_eq!(l.find_key("name"), Some(Pos { line: 1, column: 1 }));
        assert_eq!(l.find("name"), Some(Pos { line: 1, column: 7 }));
        assert_eq!(
            l.find("stages.0.agents.0.kind"),
            Some(Pos {
                line: 5,
                column: 15
            })
        );
        assert_eq!(
            l.find_key("stages.0.agents.0.id"),
            Some(Pos { line: 6, column: 9 })
        );
        // A path below a scalar falls back to the nearest known place.
        assert_eq!(
            l.find("stages.0.agents.0.kind.deeper"),
            Some(Pos {
                line: 5,
                column: 15
            })
        );
    }
}
