//! Setting a bad value aside so that reading goes on: the serde types stop at their first bad
//! value, so [`super::parse`] reports it, puts a placeholder in its place in a copy of the
//! text, and reads the copy again. Paths never move (no key or list item is removed), so the
//! problems found later still point into the file as written.

use super::locate::Locations;
use dhumbal_agents::registry::join;

/// Reads of one file, at most (each bad value takes one to a few).
pub(super) const MAX_PASSES: usize = 200;

/// What is put in place of a bad value, tried in turn until the value reads: nothing (every
/// optional field), then a number, a name, a mapping, a list.
const PLACEHOLDERS: [&str; 5] = ["~", "0", "x", "{}", "[]"];

/// A value that did not read.
#[derive(Debug)]
pub(super) struct Failure {
    /// Its path; for a missing field, where it should be.
    pub target: String,
    /// A required field that is not there.
    pub missing: bool,
}

/// Where the value is that made `e`, if `e` is about a value of a readable document.
pub(super) fn failure(e: &serde_saphyr::Error, at: &Locations) -> Option<Failure> {
    let location = e.location()?;
    let (line, column) = (location.line() as usize, location.column() as usize);
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    // A budget of the YAML reader breached (a document too big or too deep): setting the value
    // aside and reading again would breach it again at the next value, each read as slow.
    if first.contains("budget breached") {
        return None;
    }
    // The mapping that holds the key at the position (a missing field is reported at the
    // mapping's last key), or the value itself.
    let value = at.path_at(line, column);
    if let Some(i) = first.find("missing field `") {
        let rest = &first[i + "missing field `".len()..];
        let key = &rest[..rest.find('`')?];
        let mapping = match value {
            Some(p) if at.extent(&p).is_some_and(|x| x.mapping) => p,
            // A value that is no mapping at all (`~` read as an empty one): the value is wrong.
            Some(p) => {
                return Some(Failure {
                    target: p,
                    missing: false,
                });
            }
            None => parent(&at.key_at(line, column)?).to_string(),
        };
        return Some(Failure {
            target: join(&mapping, key),
            missing: true,
        });
    }
    let target = match value {
        Some(p) => p,
        // A bad key (an enum written as a mapping, a key of the wrong type): its mapping.
        None => parent(&at.key_at(line, column)?).to_string(),
    };
    Some(Failure {
        target,
        missing: false,
    })
}

/// `text` with a placeholder for the value of `fix` (the `tries`-th one tried there), or
/// `None` when every placeholder has been tried or the text cannot be changed there.
pub(super) fn apply(text: &str, at: &Locations, fix: &Failure, tries: usize) -> Option<String> {
    let placeholder = PLACEHOLDERS.get(tries)?;
    let chars: Vec<char> = text.chars().collect();
    let splice = |start: usize, end: usize, with: &str| -> String {
        let mut out: String = chars[..start].iter().collect();
        out.push_str(with);
        out.extend(&chars[end..]);
        out
    };
    if let Some(x) = at.extent(&fix.target) {
        return Some(splice(x.start, x.end.min(chars.len()), placeholder));
    }
    if !fix.missing {
        return None;
    }
    // A missing key: insert it first in its mapping.
    let key = &fix.target[fix.target.rfind('.').map_or(0, |i| i + 1)..];
    let m = at.extent(parent(&fix.target)).filter(|m| m.mapping)?;
    if chars.get(m.start) == Some(&'{') {
        let empty = chars[m.start + 1..m.end.saturating_sub(1).max(m.start + 1)]
            .iter()
            .all(|c| c.is_whitespace());
        let sep = if empty { "" } else { ", " };
        Some(splice(
            m.start + 1,
            m.start + 1,
            &format!("{key}: {placeholder}{sep}"),
        ))
    } else {
        // A block mapping starts at its first key: the new key goes above it, as indented.
        let line_start = chars[..m.start]
            .iter()
            .rposition(|c| *c == '\n')
            .map_or(0, |i| i + 1);
        let indent = " ".repeat(m.start - line_start);
        Some(splice(
            m.start,
            m.start,
            &format!("{key}: {placeholder}\n{indent}"),
        ))
    }
}

/// Whether `path` is a value that was set aside, or lies inside one: its problems are the
/// placeholder's, not the file's.
pub(super) fn covered(repaired: &[String], path: &str) -> bool {
    repaired.iter().any(|r| within(path, r))
}

/// Whether `path` is `outer` or lies inside it.
pub(super) fn within(path: &str, outer: &str) -> bool {
    outer.is_empty()
        || path == outer
        || (path.starts_with(outer) && path.as_bytes().get(outer.len()) == Some(&b'.'))
}

fn parent(path: &str) -> &str {
    path.rfind('.').map_or("", |i| &path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(target: &str, missing: bool) -> Failure {
        Failure {
            target: target.to_string(),
            missing,
        }
    }

    #[test]
    fn a_bad_value_is_replaced_in_place() {
        let text = "name: x\nseating:\n  a: 1\ndeals: 3\n";
        let at = Locations::of(text);
        let out = apply(text, &at, &fix("seating", false), 0).unwrap();
        assert_eq!(out, "name: x\nseating:\n  ~\ndeals: 3\n");
        let out = apply(text, &at, &fix("deals", false), 3).unwrap();
        assert_eq!(out, "name: x\nseating:\n  a: 1\ndeals: {}\n");
        assert!(apply(text, &at, &fix("deals", false), PLACEHOLDERS.len()).is_none());
    }

    #[test]
    fn a_missing_key_is_inserted_first_in_its_mapping() {
        let text = "stages:\n  - seating: fixed\n    deals: 3\n  - {deals: 3}\n  - {}\n";
        let at = Locations::of(text);
        let out = apply(text, &at, &fix("stages.0.name", true), 0).unwrap();
        assert_eq!(
            out,
            "stages:\n  - name: ~\n    seating: fixed\n    deals: 3\n  - {deals: 3}\n  - {}\n"
        );
        let out = apply(text, &at, &fix("stages.1.name", true), 2).unwrap();
        assert!(out.contains("  - {name: x, deals: 3}\n"), "{out}");
        let out = apply(text, &at, &fix("stages.2.name", true), 0).unwrap();
        assert!(out.ends_with("  - {name: ~}\n"), "{out}");
    }

    #[test]
    fn paths_inside_a_replaced_value_are_covered() {
        let repaired = ["stages.1".to_string()];
        assert!(covered(&repaired, "stages.1"));
        assert!(covered(&repaired, "stages.1.agents.0"));
        assert!(!covered(&repaired, "stages.10"));
        assert!(!covered(&repaired, "stages"));
    }
}
