//! Labels of categories along a horizontal axis (agents under bars, seats under groups, agents
//! under heatmap columns), each centred under its slot. They stay horizontal when they fit
//! (wrapped at separators onto up to three lines); otherwise they are turned to read bottom
//! to top, wrapped onto as many side-by-side lines as the slot holds.

use crate::Result;

use super::canvas::{Anchor, Canvas, Font};
use super::frame::lines_fitting;
use super::text::{self, ASCENT, DESCENT};

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CategoryLabels {
    pub rotated: bool,
    pub lines: Vec<Vec<String>>,
    /// Extent below the axis (pt).
    pub depth: f64,
    font: Font,
}

const MAX_HORIZONTAL_LINES: usize = 3;

impl CategoryLabels {
    /// Lays out `labels` for slots `slot` pt wide; a rotated label is at most `max_len` pt
    /// long (longer ones wrap, then end in an ellipsis).
    pub fn new(labels: &[String], slot: f64, max_len: f64, font: Font) -> Result<CategoryLabels> {
        let room = slot - 2.0;
        let mut horizontal = Vec::with_capacity(labels.len());
        let mut fits = room > 0.0;
        for label in labels {
            if !fits {
                break;
            }
            let wrapped = text::wrap(label, room, font.size, font.weight)?;
            fits = !wrapped.split_words && wrapped.lines.len() <= MAX_HORIZONTAL_LINES;
            horizontal.push(wrapped.lines);
        }
        if fits {
            let lines = horizontal.iter().map(Vec::len).max().unwrap_or(0);
            let depth = if lines == 0 {
                0.0
            } else {
                (lines as f64 - 1.0) * font.line() + (ASCENT + DESCENT) * font.size
            };
            return Ok(CategoryLabels {
                rotated: false,
                lines: horizontal,
                depth,
                font,
            });
        }
        // Rotated: how many lines fit side by side in a slot.
        if slot - 1.0 < (ASCENT + DESCENT) * font.size {
            bail!(
                "{} categories do not fit side by side in this figure width (each label gets {:.1} pt); use the two-column width or fewer categories",
                labels.len(),
                slot
            );
        }
        let per_slot = lines_fitting(slot - 1.0, font);
        let longest = text::max_width(labels, font.size, font.weight)?;
        // The shortest wrap length at which every label fits in `per_slot` lines, searched in
        // steps of 2 pt up to the longest label (or `max_len`).
        let limit = longest.min(max_len).max(10.0);
        let mut len = (longest / per_slot as f64).min(limit).max(10.0);
        // Greedy wrapping counts lines fast; the lines drawn are balanced ones.
        let chosen = loop {
            let mut ok = true;
            for label in labels {
                let w = text::wrap_greedy(label, len, font.size, font.weight)?;
                ok &= w.lines.len() <= per_slot && !w.split_words;
                if !ok {
                    break;
                }
            }
            if ok {
                let mut all = Vec::with_capacity(labels.len());
                for label in labels {
                    all.push(text::wrap(label, len, font.size, font.weight)?.lines);
                }
                break all;
            }
            if len >= limit {
                let mut limited = Vec::with_capacity(labels.len());
                for label in labels {
                    limited.push(text::wrap_limited(
                        label,
                        limit,
                        per_slot,
                        font.size,
                        font.weight,
                    )?);
                }
                break limited;
            }
            len = (len + 2.0).min(limit);
        };
        let mut depth: f64 = 0.0;
        for lines in &chosen {
            depth = depth.max(text::max_width(lines, font.size, font.weight)?);
        }
        Ok(CategoryLabels {
            rotated: true,
            lines: chosen,
            depth,
            font,
        })
    }

    /// Draws label i centred on `centres[i]`, starting `top` pt below the page top.
    pub fn draw(&self, canvas: &mut Canvas, centres: &[f64], top: f64) -> Result<()> {
        let f = self.font;
        for (lines, &cx) in self.lines.iter().zip(centres) {
            if self.rotated {
                // Lines stand side by side; the ink of a turned line spans
                // [baseline - ascent, baseline + descent] horizontally.
                let span = (lines.len() as f64 - 1.0) * f.line();
                let first = cx - span / 2.0 + (ASCENT - DESCENT) * f.size / 2.0;
                for (i, line) in lines.iter().enumerate() {
                    canvas.text(line, first + i as f64 * f.line(), top, f, Anchor::End, true)?;
                }
            } else {
                for (i, line) in lines.iter().enumerate() {
                    let baseline = top + ASCENT * f.size + i as f64 * f.line();
                    canvas.text(line, cx, baseline, f, Anchor::Middle, false)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::BLACK;
    use crate::text::Weight;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn short_labels_stay_horizontal() {
        let f = Font::new(7.0, Weight::Regular, BLACK);
        let l =
            CategoryLabels::new(&names(&["Aggressive", "Conservative"]), 60.0, 80.0, f).unwrap();
        assert!(!l.rotated);
        assert_eq!(l.lines[1], ["Conservative"]);
    }

    #[test]
    fn long_labels_turn_and_wrap_within_the_slot() {
        let f = Font::new(7.0, Weight::Regular, BLACK);
        let labels = names(&["ismcts-10000-heuristic-rollout", "mcts-500-random-rollout"]);
        let l = CategoryLabels::new(&labels, 26.0, 80.0, f).unwrap();
        assert!(l.rotated);
        for (label, lines) in labels.iter().zip(&l.lines) {
            assert_eq!(&lines.concat(), label);
            // Side-by-side lines fit the slot.
            assert!((lines.len() as f64 - 1.0) * f.line() + (ASCENT + DESCENT) * f.size <= 25.0);
        }
        assert!(l.depth <= 80.0);
    }

    #[test]
    fn too_many_categories_is_an_error() {
        let f = Font::new(7.0, Weight::Regular, BLACK);
        assert!(CategoryLabels::new(&names(&["a-long-name"]), 5.0, 80.0, f).is_err());
    }
}
