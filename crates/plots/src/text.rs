//! Fonts, text measurement and line wrapping.
//!
//! The bundled DejaVu Serif is the only font: it is registered with plotters (whose ab_glyph
//! text support needs it before any text is drawn) and loaded into the usvg font database
//! that renders the PNG and PDF. Text is measured by letting usvg lay it out, i.e. with the
//! very shaping (kerning included) that later renders it, so the layout's boxes are the boxes
//! on the page. Measurements are cached per (string, weight) at one size and scaled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::Result;
use usvg::fontdb;

/// The font family name, as written in the TTF files and in the SVG.
pub(crate) const FAMILY: &str = "DejaVu Serif";
/// What the SVG names: our family, then the generic family for viewers that lack it.
pub(crate) const SVG_FAMILY: &str = "DejaVu Serif, serif";

static REGULAR: &[u8] = include_bytes!("../fonts/DejaVuSerif.ttf");
static BOLD: &[u8] = include_bytes!("../fonts/DejaVuSerif-Bold.ttf");
static ITALIC: &[u8] = include_bytes!("../fonts/DejaVuSerif-Italic.ttf");

/// Nominal glyph extents of DejaVu Serif in em, used to stack lines: above the baseline
/// (ascenders, brackets, stars), below it (descenders), and the height of digits and capitals.
pub(crate) const ASCENT: f64 = 0.80;
pub(crate) const DESCENT: f64 = 0.25;
pub(crate) const CAP: f64 = 0.73;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Weight {
    Regular,
    Bold,
}

/// A box in points: x0 <= x1, y0 <= y1 (y grows downwards).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

/// Horizontal advance and ink box of a string at a font size of 1 pt, relative to the start
/// of its baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Extent {
    pub advance: f64,
    pub ink: Option<Rect>,
}

/// Font size used for measuring; results are divided by it.
const MEASURE_SIZE: f64 = 100.0;

/// Registers the bundled fonts with plotters once (idempotent, thread-safe).
pub(crate) fn register_plotters_fonts() -> Result<()> {
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        use plotters::style::{FontStyle, register_font};
        for (style, bytes) in [
            (FontStyle::Normal, REGULAR),
            (FontStyle::Bold, BOLD),
            (FontStyle::Italic, ITALIC),
        ] {
            register_font(FAMILY, style, bytes).map_err(|_| {
                format!(
                    "bundled font {FAMILY} ({}) is not a valid font",
                    style.as_str()
                )
            })?;
        }
        Ok(())
    })
    .clone()
    .map_err(|e| render_error!("{e}"))
}

/// The font database with only the bundled fonts; DejaVu Serif is also the generic serif.
fn font_database() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        for bytes in [REGULAR, BOLD, ITALIC] {
            db.load_font_source(fontdb::Source::Binary(Arc::new(bytes)));
        }
        db.set_serif_family(FAMILY);
        db.set_sans_serif_family(FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// usvg options: bundled fonts only, our family as the default, 72 dpi (1 pt = 1 unit).
pub(crate) fn usvg_options() -> usvg::Options<'static> {
    usvg::Options {
        dpi: 72.0,
        font_family: FAMILY.to_string(),
        fontdb: font_database(),
        ..usvg::Options::default()
    }
}

/// Escapes text for use in XML character data or attribute values.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Makes caller-supplied text safe to draw: control characters (invalid in XML) become
/// spaces, runs of spaces collapse (as SVG renders them anyway), ends are trimmed. No-break
/// spaces stay: they keep words together when wrapping.
pub(crate) fn clean(text: &str) -> String {
    let replaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    replaced
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Advance and ink box of `text` at 1 pt (cached).
pub(crate) fn extent(text: &str, weight: Weight) -> Result<Extent> {
    static CACHE: OnceLock<Mutex<HashMap<(String, Weight), Extent>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (text.to_string(), weight);
    if let Some(found) = cache
        .lock()
        .map_err(|_| render_error!("text cache poisoned"))?
        .get(&key)
    {
        return Ok(*found);
    }
    let measured = measure_uncached(text, weight)?;
    cache
        .lock()
        .map_err(|_| render_error!("text cache poisoned"))?
        .insert(key, measured);
    Ok(measured)
}

fn measure_uncached(text: &str, weight: Weight) -> Result<Extent> {
    if text.trim().is_empty() {
        return Ok(Extent {
            advance: 0.0,
            ink: None,
        });
    }
    let weight_attr = match weight {
        Weight::Regular => "normal",
        Weight::Bold => "bold",
    };
    let svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text x="0" y="0" font-family="{SVG_FAMILY}" font-size="{MEASURE_SIZE}" font-weight="{weight_attr}">{}</text></svg>"#,
        xml_escape(text)
    );
    let tree = usvg::Tree::from_str(&svg, &usvg_options())
        .map_err(|e| render_error!("measuring the text {text:?}: {e}"))?;
    let Some(node) = find_text(tree.root()) else {
        return Ok(Extent {
            advance: 0.0,
            ink: None,
        });
    };
    // The layout box spans the advance horizontally (from the start at x = 0); the
    // flattened outlines give the ink.
    let layout = node.bounding_box();
    let ink = node.flattened().abs_bounding_box();
    let ink = (ink.width() > 0.0 && ink.height() > 0.0).then(|| Rect {
        x0: f64::from(ink.left()) / MEASURE_SIZE,
        y0: f64::from(ink.top()) / MEASURE_SIZE,
        x1: f64::from(ink.right()) / MEASURE_SIZE,
        y1: f64::from(ink.bottom()) / MEASURE_SIZE,
    });
    Ok(Extent {
        advance: f64::from(layout.right()) / MEASURE_SIZE,
        ink,
    })
}

fn find_text(group: &usvg::Group) -> Option<&usvg::Text> {
    group.children().iter().find_map(|node| match node {
        usvg::Node::Text(text) => Some(text.as_ref()),
        usvg::Node::Group(inner) => find_text(inner),
        _ => None,
    })
}

/// Advance width of `text` at `size` pt, subscripts (`_{…}`) included.
pub(crate) fn width(text: &str, size: f64, weight: Weight) -> Result<f64> {
    if !text.contains("_{") {
        return Ok(extent(text, weight)?.advance * size);
    }
    Ok(set(text, size, weight)?.1)
}

/// A subscript's size, in em of the text around it.
pub(crate) const SUB_SIZE: f64 = 0.7;
/// How far a subscript's baseline sits below the line's, in em of the line.
pub(crate) const SUB_DROP: f64 = 0.22;

/// A piece of a line as set: its text (no space at either end), its start along the
/// baseline (pt from the line's start) and whether it is a subscript.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Piece {
    pub text: String,
    pub at: f64,
    pub sub: bool,
}

/// The plain runs and subscripts of a line of figure text. `_{…}` writes a subscript
/// (Cohen's d_{z}); a `_{` without its `}` is plain text.
pub(crate) fn runs(line: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find("_{") {
        let Some(len) = rest[open + 2..].find('}') else {
            break;
        };
        if open > 0 {
            out.push((&rest[..open], false));
        }
        out.push((&rest[open + 2..open + 2 + len], true));
        rest = &rest[open + 3 + len..];
    }
    if !rest.is_empty() {
        out.push((rest, false));
    }
    out
}

/// Sets a line with subscripts: each run where it starts, and the line's advance (pt). SVG
/// drops spaces at the ends of a text element, so they are measured here and left out of the
/// pieces.
pub(crate) fn set(line: &str, size: f64, weight: Weight) -> Result<(Vec<Piece>, f64)> {
    // The advance of one space: "x x" against "xx" (usvg drops a lone space).
    let space = (extent("x x", weight)?.advance - extent("xx", weight)?.advance).max(0.0);
    let mut pieces = Vec::new();
    let mut at = 0.0;
    for (run, sub) in runs(line) {
        let size = if sub { size * SUB_SIZE } else { size };
        let body = run.trim_matches(' ');
        let lead = run.len() - run.trim_start_matches(' ').len();
        let trail = if body.is_empty() {
            0
        } else {
            run.len() - run.trim_end_matches(' ').len()
        };
        at += lead as f64 * space * size;
        if !body.is_empty() {
            pieces.push(Piece {
                text: body.to_string(),
                at,
                sub,
            });
            at += extent(body, weight)?.advance * size;
        }
        at += trail as f64 * space * size;
    }
    Ok((pieces, at))
}

/// The widest of several strings at `size` pt.
pub(crate) fn max_width<S: AsRef<str>>(texts: &[S], size: f64, weight: Weight) -> Result<f64> {
    let mut widest: f64 = 0.0;
    for t in texts {
        widest = widest.max(width(t.as_ref(), size, weight)?);
    }
    Ok(widest)
}

/// Lines of a wrapped text, and whether a word had to be split inside (no break point fit).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Wrapped {
    pub lines: Vec<String>,
    pub split_words: bool,
}

/// Characters after which a line may break (kept at the end of the line): agent names such
/// as "ismcts-10000-heuristic-rollout" break at their separators.
fn is_break_after(c: char) -> bool {
    matches!(c, '-' | '_' | '/' | '+' | ':' | ',' | ';' | ')' | '|')
}

/// Pieces of `text` between break opportunities, each with whether a space preceded it.
fn pieces(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut space_before = false;
    for c in text.chars() {
        if c == ' ' {
            if !current.is_empty() {
                out.push((space_before, std::mem::take(&mut current)));
            }
            space_before = true;
            continue;
        }
        current.push(c);
        if is_break_after(c) {
            out.push((space_before, std::mem::take(&mut current)));
            space_before = false;
        }
    }
    if !current.is_empty() {
        out.push((space_before, current));
    }
    // Only the first piece of the text has nothing before it.
    if let Some(first) = out.first_mut() {
        first.0 = false;
    }
    out
}

/// Line breaking at separators so that every line is at most `max` pt wide (a word wider than
/// `max` on its own is split between characters), with lines of similar length: the fewest
/// lines greedy breaking needs, at the narrowest width that still needs no more
/// ("balanced-" / "rule-based" rather than "balanced-rule-" / "based").
pub(crate) fn wrap(text: &str, max: f64, size: f64, weight: Weight) -> Result<Wrapped> {
    let greedy = wrap_greedy(text, max, size, weight)?;
    if greedy.lines.len() < 2 {
        return Ok(greedy);
    }
    let count = greedy.lines.len();
    let (mut narrow, mut wide) = (0.0, max);
    for _ in 0..12 {
        let mid = (narrow + wide) / 2.0;
        let trial = wrap_greedy(text, mid, size, weight)?;
        if trial.lines.len() <= count && trial.split_words == greedy.split_words {
            wide = mid;
        } else {
            narrow = mid;
        }
    }
    wrap_greedy(text, wide, size, weight)
}

/// Greedy line breaking: as much on each line as fits.
pub(crate) fn wrap_greedy(text: &str, max: f64, size: f64, weight: Weight) -> Result<Wrapped> {
    let mut lines: Vec<String> = Vec::new();
    let mut split_words = false;
    let mut line = String::new();
    for (space_before, piece) in pieces(text) {
        let candidate = if line.is_empty() {
            piece.clone()
        } else if space_before {
            format!("{line} {piece}")
        } else {
            format!("{line}{piece}")
        };
        if width(&candidate, size, weight)? <= max {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if width(&piece, size, weight)? <= max {
            line = piece;
            continue;
        }
        // Split the piece itself between characters.
        split_words = true;
        for c in piece.chars() {
            let mut longer = line.clone();
            longer.push(c);
            if line.is_empty() || width(&longer, size, weight)? <= max {
                line = longer;
            } else {
                lines.push(std::mem::replace(&mut line, c.to_string()));
            }
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    Ok(Wrapped { lines, split_words })
}

/// Shortens `text` with a trailing ellipsis until it is at most `max` pt wide.
pub(crate) fn ellipsize(text: &str, max: f64, size: f64, weight: Weight) -> Result<String> {
    if width(text, size, weight)? <= max {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    for keep in (0..chars.len()).rev() {
        let candidate: String = chars[..keep]
            .iter()
            .collect::<String>()
            .trim_end()
            .to_string()
            + "…";
        if width(&candidate, size, weight)? <= max {
            return Ok(candidate);
        }
    }
    Ok(String::new())
}

/// Wraps `text` into at most `max_lines` lines of at most `max` pt; what does not fit ends
/// in an ellipsis.
pub(crate) fn wrap_limited(
    text: &str,
    max: f64,
    max_lines: usize,
    size: f64,
    weight: Weight,
) -> Result<Vec<String>> {
    let max_lines = max_lines.max(1);
    let mut lines = wrap(text, max, size, weight)?.lines;
    if lines.len() > max_lines {
        let rest = lines[max_lines - 1..].concat();
        lines.truncate(max_lines - 1);
        lines.push(ellipsize(&rest, max, size, weight)?);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_with_the_bundled_font() {
        let e = extent("Aggressive", Weight::Regular).unwrap();
        // DejaVu Serif is wide: about 0.6 em per character for this word.
        assert!(e.advance > 4.5 && e.advance < 7.5, "{e:?}");
        let ink = e.ink.unwrap();
        assert!(ink.y0 < -0.6 && ink.y0 > -0.85, "{ink:?}"); // ascender of "A", "g"
        assert!(ink.y1 > 0.1 && ink.y1 < 0.3, "{ink:?}"); // descender of "g"
        let bold = extent("Aggressive", Weight::Bold).unwrap();
        assert!(bold.advance > e.advance);
        assert_eq!(extent("  ", Weight::Regular).unwrap().advance, 0.0);
    }

    #[test]
    fn special_characters_have_glyphs() {
        // Minus sign, ellipsis and superscripts are used in labels; a missing glyph would
        // have a zero-width or .notdef box. Compare with a plain hyphen and digits.
        for c in ["−", "…", "⁻", "⁴", "²"] {
            let e = extent(c, Weight::Regular).unwrap();
            assert!(e.advance > 0.2 && e.ink.is_some(), "{c}: {e:?}");
        }
    }

    #[test]
    fn wraps_agent_names_at_separators() {
        let w = wrap("ismcts-10000-heuristic-rollout", 45.0, 7.0, Weight::Regular).unwrap();
        assert!(w.lines.len() >= 2, "{w:?}");
        assert!(!w.split_words);
        assert_eq!(w.lines.concat(), "ismcts-10000-heuristic-rollout");
        for line in &w.lines {
            assert!(width(line, 7.0, Weight::Regular).unwrap() <= 45.0);
        }
        let spaced = wrap("Win rate by seat", 40.0, 8.0, Weight::Regular).unwrap();
        assert_eq!(spaced.lines.join(" "), "Win rate by seat");
    }

    #[test]
    fn balances_lines() {
        let w = wrap("balanced-rule-based", 62.0, 7.0, Weight::Regular).unwrap();
        assert_eq!(w.lines, ["balanced-", "rule-based"]);
        let w = wrap(
            "Mean coin change per round (coins)",
            110.0,
            8.0,
            Weight::Regular,
        )
        .unwrap();
        assert_eq!(w.lines.len(), 2);
        let widths: Vec<f64> = w
            .lines
            .iter()
            .map(|l| width(l, 8.0, Weight::Regular).unwrap())
            .collect();
        assert!((widths[0] - widths[1]).abs() < 30.0, "{w:?} {widths:?}");
    }

    #[test]
    fn splits_words_that_cannot_fit() {
        let w = wrap("Supercalifragilistic", 20.0, 7.0, Weight::Regular).unwrap();
        assert!(w.split_words);
        assert_eq!(w.lines.concat(), "Supercalifragilistic");
        for line in &w.lines {
            assert!(width(line, 7.0, Weight::Regular).unwrap() <= 20.0);
        }
    }

    #[test]
    fn limits_lines_with_an_ellipsis() {
        let lines = wrap_limited("a-b-c-d-e-f-g-h-i-j-k", 8.0, 2, 7.0, Weight::Regular).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'), "{lines:?}");
    }

    #[test]
    fn sets_subscripts() {
        assert_eq!(
            runs("Cohen's d_{z} (row)"),
            [("Cohen's d", false), ("z", true), (" (row)", false)]
        );
        assert_eq!(runs("a_{b"), [("a_{b", false)]);
        assert_eq!(runs("_{i}"), [("i", true)]);
        let (pieces, advance) = set("Cohen's d_{z} (row)", 10.0, Weight::Regular).unwrap();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[2].text, "(row)");
        let d = width("Cohen's d", 10.0, Weight::Regular).unwrap();
        let z = width("z", 10.0 * SUB_SIZE, Weight::Regular).unwrap();
        assert!((pieces[1].at - d).abs() < 1e-9 && pieces[1].sub);
        // The space before "(row)" is kept in the advance though SVG would drop it.
        let space = pieces[2].at - (d + z);
        assert!(space > 2.0 && space < 4.0, "{space}");
        assert!(
            (advance - width("Cohen's d_{z} (row)", 10.0, Weight::Regular).unwrap()).abs() < 1e-9
        );
        // A subscript is narrower than the same letter on the line.
        assert!(
            width("d_{z}", 10.0, Weight::Regular).unwrap()
                < width("dz", 10.0, Weight::Regular).unwrap()
        );
    }

    #[test]
    fn cleans_control_characters() {
        assert_eq!(clean(" a\u{0}b \n c\t"), "a b c");
        assert_eq!(clean("Cohen's\u{a0}d"), "Cohen's\u{a0}d");
    }
}
