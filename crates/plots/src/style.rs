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

/// Paul Tol's "muted" colour-blind-safe scheme (all nine colours), ordered so that a greyscale
/// print keeps agents apart: neighbouring entries differ by at least 15 in CIE L* (lightness)
/// as well as in hue, also from the last to the first (the second pass through the palette),
/// and the first four differ from each other by at least 15. No black (whiskers and text are
/// black) and nothing lighter than L* 82 (sand), so every colour shows on white. See
/// `docs/figures.md`.
pub const PALETTE: [(u8, u8, u8); 9] = [
    (0x33, 0x22, 0x88), // indigo, L* 22
    (0x44, 0xAA, 0x99), // teal, L* 64
    (0xAA, 0x44, 0x99), // purple, L* 46
    (0xDD, 0xCC, 0x77), // sand, L* 82
    (0x88, 0x22, 0x55), // wine, L* 32
    (0xCC, 0x66, 0x77), // rose, L* 56
    (0x88, 0xCC, 0xEE), // cyan, L* 79
    (0x11, 0x77, 0x33), // green, L* 44
    (0x99, 0x99, 0x33), // olive, L* 62
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

    /// Thin lines in the light colours (sand, cyan: under 2:1 against white) are hard to see;
    /// they get drawn wider.
    pub fn line_width(&self) -> f64 {
        if contrast(self.colour, WHITE) < 2.0 {
            SERIES_W * 1.6
        } else {
            SERIES_W
        }
    }

    /// Whether black whiskers over this bar need a white edge to stay visible: over hatching,
    /// and over fills that black contrasts with less than 3:1 (WCAG's minimum for graphics),
    /// the dark indigo and wine.
    pub fn whisker_halo(&self) -> bool {
        self.hatch() != Hatch::None || contrast(BLACK, self.colour) < 3.0
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

    /// CIE L* (D65) of an sRGB colour: 116·Y^(1/3) − 16 above the linear toe, Y the
    /// relative luminance.
    fn lightness((r, g, b): (u8, u8, u8)) -> f64 {
        let y = luminance(RGBColor(r, g, b));
        if y > 216.0 / 24389.0 {
            116.0 * y.cbrt() - 16.0
        } else {
            24389.0 / 27.0 * y
        }
    }

    #[test]
    fn lightness_matches_reference_values() {
        assert!((lightness((255, 255, 255)) - 100.0).abs() < 1e-9);
        assert!(lightness((0, 0, 0)).abs() < 1e-9);
        // Mid grey #777777 is L* 50.0 (CIE), pure sRGB red L* 53.2.
        assert!((lightness((0x77, 0x77, 0x77)) - 50.0).abs() < 0.1);
        assert!((lightness((255, 0, 0)) - 53.24).abs() < 0.01);
    }

    #[test]
    fn neighbours_in_the_palette_differ_in_lightness() {
        // Neighbouring agents (bars side by side, legend entries, lines in one figure) stay
        // apart in a greyscale print; the wrap from the last colour to the first too.
        let n = PALETTE.len();
        for i in 0..n {
            let (a, b) = (PALETTE[i], PALETTE[(i + 1) % n]);
            let gap = (lightness(a) - lightness(b)).abs();
            assert!(
                gap >= 15.0,
                "colours {i} and {}: L* gap {gap:.1}",
                (i + 1) % n
            );
        }
        // The first four (the paper's four agents) differ from each other as much.
        let first = &PALETTE[..4];
        for (i, a) in first.iter().enumerate() {
            for (j, b) in first.iter().enumerate().skip(i + 1) {
                let gap = (lightness(*a) - lightness(*b)).abs();
                assert!(gap >= 15.0, "colours {i} and {j}: L* gap {gap:.1}");
            }
        }
    }

    #[test]
    fn palette_entries_are_distinct_and_show_on_white() {
        for (i, a) in PALETTE.iter().enumerate() {
            assert!(!PALETTE[i + 1..].contains(a), "colour {i} repeats");
            let l = lightness(*a);
            // Not black (whiskers and text are), not near-white.
            assert!((15.0..=85.0).contains(&l), "colour {i}: L* {l:.1}");
        }
        assert_eq!(agent_colour(PALETTE.len()), PALETTE[0]);
    }

    #[test]
    fn light_colours_draw_wider_lines_and_dark_bars_haloed_whiskers() {
        let widths: Vec<bool> = (0..PALETTE.len())
            .map(|i| SeriesStyle::of(i).line_width() > SERIES_W)
            .collect();
        // Sand and cyan.
        assert_eq!(widths.iter().filter(|w| **w).count(), 2);
        assert!(widths[3] && widths[6]);
        // Indigo and wine, and every hatched bar.
        assert!(SeriesStyle::of(0).whisker_halo() && SeriesStyle::of(4).whisker_halo());
        assert!(!SeriesStyle::of(1).whisker_halo() && !SeriesStyle::of(3).whisker_halo());
        assert!(SeriesStyle::of(PALETTE.len() + 1).whisker_halo());
    }

    #[test]
    fn second_cycle_differs_in_hatch_dash_and_marker() {
        let (a, b) = (SeriesStyle::of(0), SeriesStyle::of(PALETTE.len()));
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
