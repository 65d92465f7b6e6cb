//! The one style of every figure: sizes in points at print size, the palette, and how the
//! agents beyond the palette are told apart (hatching, dashes, markers).

use plotters::style::RGBColor;

use super::Width;

/// Outer margin of every figure, so nothing touches (or is clipped at) the edge.
pub(crate) const PAD: f64 = 3.0;
/// Font sizes at print size (pt): 7-9 pt as journals ask for.
pub(crate) const TITLE_PT: f64 = 9.0;
pub(crate) const LABEL_PT: f64 = 8.0;
pub(crate) const TICK_PT: f64 = 7.0;
pub(crate) const LEGEND_PT: f64 = 7.0;
pub(crate) const CELL_PT: f64 = 7.0;
/// Baseline-to-baseline distance, in em.
pub(crate) const LINE_EM: f64 = 1.15;
/// Line widths (pt).
pub(crate) const AXIS_W: f64 = 0.6;
pub(crate) const GRID_W: f64 = 0.4;
pub(crate) const SERIES_W: f64 = 1.1;
pub(crate) const WHISKER_W: f64 = 0.7;
pub(crate) const HATCH_W: f64 = 0.45;
/// Outward tick length and the gap between ticks and their labels (pt).
pub(crate) const TICK_LEN: f64 = 2.5;
pub(crate) const GAP: f64 = 2.5;

pub(crate) const BLACK: RGBColor = RGBColor(0, 0, 0);
pub(crate) const WHITE: RGBColor = RGBColor(255, 255, 255);
pub(crate) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub(crate) const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(crate) const MISSING: RGBColor = RGBColor(0xEE, 0xEE, 0xEE);

/// The Okabe-Ito colour-blind-safe palette without black (whiskers and text are black, so a
/// black bar would hide them). Yellow is moved last: it is too light for thin lines on white,
/// and this way it is only used from the seventh agent on.
pub const PALETTE: [(u8, u8, u8); 7] = [
    (0xE6, 0x9F, 0x00), // orange
    (0x56, 0xB4, 0xE9), // sky blue
    (0x00, 0x9E, 0x73), // bluish green
    (0x00, 0x72, 0xB2), // blue
    (0xD5, 0x5E, 0x00), // vermillion
    (0xCC, 0x79, 0xA7), // reddish purple
    (0xF0, 0xE4, 0x42), // yellow
];

/// The colour of the agent at `index` in the caller's agent list (the palette cycles; agents
/// beyond it are also hatched, dashed or marked, see `docs/figures.md`).
pub fn agent_colour(index: usize) -> (u8, u8, u8) {
    PALETTE[index % PALETTE.len()]
}

/// How the agent at an index is drawn in every figure kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SeriesStyle {
    pub colour: RGBColor,
    /// 0 for the first pass through the palette, 1 for the second, ...
    pub cycle: usize,
}

impl SeriesStyle {
    pub fn of(index: usize) -> Self {
        let (r, g, b) = agent_colour(index);
        SeriesStyle {
            colour: RGBColor(r, g, b),
            cycle: index / PALETTE.len(),
        }
    }

    /// Bar hatching: none on the first cycle, then "/", "\", crossed, repeating.
    pub fn hatch(&self) -> Hatch {
        match self.cycle {
            0 => Hatch::None,
            c => [Hatch::Forward, Hatch::Backward, Hatch::Cross][(c - 1) % 3],
        }
    }

    /// Line dash pattern (on, off, ... in pt); empty for solid.
    pub fn dashes(&self) -> &'static [f64] {
        const PATTERNS: [&[f64]; 4] = [&[], &[3.5, 1.8], &[0.9, 1.4], &[3.5, 1.4, 0.9, 1.4]];
        PATTERNS[self.cycle % PATTERNS.len()]
    }

    /// Line markers: none on the first cycle.
    pub fn marker(&self) -> Marker {
        match self.cycle {
            0 => Marker::None,
            c => [Marker::Square, Marker::Triangle, Marker::Diamond][(c - 1) % 3],
        }
    }

    /// Thin lines in yellow are hard to see on white; they get drawn wider.
    pub fn line_width(&self) -> f64 {
        if (self.colour.0, self.colour.1, self.colour.2) == PALETTE[6] {
            SERIES_W * 1.6
        } else {
            SERIES_W
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hatch {
    None,
    Forward,
    Backward,
    Cross,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    None,
    Square,
    Triangle,
    Diamond,
}

/// Target height of the data area (pt); the figure's height is this plus its decorations.
pub(crate) fn plot_height(width: Width) -> f64 {
    match width {
        Width::OneColumn => 125.0,
        Width::TwoColumn => 165.0,
    }
}

/// Relative luminance (WCAG 2) of an sRGB colour.
pub(crate) fn luminance(c: RGBColor) -> f64 {
    fn channel(v: u8) -> f64 {
        let v = f64::from(v) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    }
    0.2126 * channel(c.0) + 0.7152 * channel(c.1) + 0.0722 * channel(c.2)
}

/// WCAG contrast ratio of two colours (1 to 21).
pub(crate) fn contrast(a: RGBColor, b: RGBColor) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// Black or white, whichever reads better on `background`.
pub(crate) fn text_colour_on(background: RGBColor) -> RGBColor {
    if contrast(BLACK, background) >= contrast(WHITE, background) {
        BLACK
    } else {
        WHITE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_has_no_black_and_yellow_last() {
        assert!(!PALETTE.contains(&(0, 0, 0)));
        assert_eq!(PALETTE[6], (0xF0, 0xE4, 0x42));
        assert_eq!(agent_colour(7), PALETTE[0]);
    }

    #[test]
    fn second_cycle_differs_in_hatch_dash_and_marker() {
        let (a, b) = (SeriesStyle::of(0), SeriesStyle::of(7));
        assert_eq!(a.colour, b.colour);
        assert_ne!(a.hatch(), b.hatch());
        assert_ne!(a.dashes(), b.dashes());
        assert_ne!(a.marker(), b.marker());
    }

    #[test]
    fn contrast_matches_wcag_reference_values() {
        assert!((contrast(BLACK, WHITE) - 21.0).abs() < 1e-9);
        // #777777 on white is the classic 4.48:1.
        assert!((contrast(RGBColor(0x77, 0x77, 0x77), WHITE) - 4.48).abs() < 0.01);
        assert_eq!(text_colour_on(RGBColor(0x05, 0x30, 0x61)), WHITE);
        assert_eq!(text_colour_on(RGBColor(0xF7, 0xF7, 0xF7)), BLACK);
    }
}
