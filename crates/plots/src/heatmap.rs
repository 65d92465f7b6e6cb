//! Pairwise heatmaps, one panel per metric, with one shared diverging colour scale that is
//! symmetric around 0 (paper Fig. 1, 6: pairwise Cohen's d). A panel shows the whole matrix or,
//! for an antisymmetric one (row vs. column is column vs. row negated), only the cells below
//! the diagonal, each pair once.
//!
//! The layout is searched rather than fixed: the most panels per row, and the narrowest
//! row-label column, such that every cell holds its value and stars at 7 pt and every row
//! label fits its row. When even one panel per row is too narrow for that, cells show one
//! decimal, then only the stars, then nothing (the colour still carries the value).

use crate::Result;
use plotters::style::RGBColor;

use super::axis::format_number;
use super::canvas::{self, Anchor, Canvas, Font};
use super::category::CategoryLabels;
use super::frame::{self, block_height, draw_centred_lines, lines_fitting};
use super::style::{AXIS_W, BLACK, CELL_PT, GAP, MISSING, PAD, TICK_LEN, text_colour_on};
use super::text::{self, ASCENT, CAP, Rect, Weight};
use super::{Figure, HeatmapPanel, Width};

/// With no-break spaces, so that it wraps only as "Cohen's d" / "(row vs. column)".
const DEFAULT_SCALE_LABEL: &str = "Cohen\u{2019}s\u{00A0}d (row\u{00A0}vs.\u{00A0}column)";
/// Largest cell side (pt): larger cells only make the figure bigger.
const CELL_MAX: f64 = 32.0;
const PANEL_GAP: f64 = 10.0;
const ROW_GAP: f64 = 7.0;
const BAR_W: f64 = 7.0;
pub(crate) const BAR_MIN_H: f64 = 60.0;

/// ColorBrewer RdBu (colour-blind safe), blue for negative, red for positive effects.
const RDBU: [(u8, u8, u8); 11] = [
    (0x05, 0x30, 0x61),
    (0x21, 0x66, 0xAC),
    (0x43, 0x93, 0xC3),
    (0x92, 0xC5, 0xDE),
    (0xD1, 0xE5, 0xF0),
    (0xF7, 0xF7, 0xF7),
    (0xFD, 0xDB, 0xC7),
    (0xF4, 0xA5, 0x82),
    (0xD6, 0x60, 0x4D),
    (0xB2, 0x18, 0x2B),
    (0x67, 0x00, 0x1F),
];

/// Which cells of a heatmap panel are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cells {
    /// Every cell; the diagonal (and any missing value) light grey.
    #[default]
    All,
    /// Only the cells below the diagonal, `values[row][col]` with `row > col`: each pair of an
    /// antisymmetric matrix once. Nothing is drawn on or above the diagonal, and the first row
    /// and last column, which would hold no cell, are left out: the rows are labels 2..n, the
    /// columns labels 1..n−1. A missing value below the diagonal is a light grey cell.
    Lower,
}

/// How a [`heatmaps_with`] figure is drawn besides its panels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatmapOptions<'a> {
    /// The colour bar's label; `_{…}` writes a subscript (`Cohen's d_{z}`).
    pub scale_label: &'a str,
    pub cells: Cells,
    /// The colour scale reaches at least ±this, so that values all near 0 stay pale rather
    /// than filling the scale (effect sizes: 0.5, Cohen's medium effect, is full colour at
    /// the least). 0: the largest |value| alone sets the scale.
    pub min_limit: f64,
}

impl Default for HeatmapOptions<'_> {
    fn default() -> Self {
        HeatmapOptions {
            scale_label: DEFAULT_SCALE_LABEL,
            cells: Cells::All,
            min_limit: 0.0,
        }
    }
}

/// One heatmap panel per metric, diverging colour scale symmetric around 0, value + stars
/// printed in each cell, one shared colour bar (Fig. 1, 6: pairwise Cohen's d).
///
/// Every cell is drawn and the colour bar is labelled "Cohen's d (row vs. column)"; see
/// [`heatmaps_with`] for one triangle and other effect sizes.
pub fn heatmaps(panels: &[HeatmapPanel], width: Width) -> Result<Figure> {
    heatmaps_with(panels, &HeatmapOptions::default(), width)
}

/// [`heatmaps`] with the colour bar's label and the cells drawn (all, or one triangle) set by
/// `options`.
pub fn heatmaps_with(
    panels: &[HeatmapPanel],
    options: &HeatmapOptions,
    width: Width,
) -> Result<Figure> {
    validate(panels, options.cells)?;
    let panels: Vec<Panel> = panels
        .iter()
        .map(|p| Panel::from(p, options.cells))
        .collect();
    let scale_label = options.scale_label;
    let w = width.points();
    let scale = Scale::new(&panels, options.min_limit);
    let tick = frame::tick_font();
    let label_font = frame::label_font();

    // The colour bar block on the right: bar, ticks, tick labels, turned label.
    let scale_label = text::clean(scale_label);
    let (reserved_label, _) = label_lines(&scale_label, BAR_MIN_H)?;
    let tick_w = text::max_width(&scale.labels, tick.size, tick.weight)?;
    let bar_block = 2.0 * GAP
        + BAR_W
        + TICK_LEN
        + GAP
        + tick_w
        + GAP
        + block_height(reserved_label.len(), label_font);
    let avail = w - 2.0 * PAD - bar_block;

    let layout = Layout::search(&panels, avail, w)?;
    let (cell_w, cell_h) = (layout.cell_w, layout.cell_h);
    let columns = layout.columns;
    let shared = layout.shared;
    let placed = layout.place(&panels, w)?;
    let cell_font = Font::new(CELL_PT, Weight::Regular, BLACK);
    let row_labels: Vec<Vec<Vec<String>>> = panels
        .iter()
        .map(|p| {
            let max_lines = lines_fitting(cell_h - 1.0, tick);
            p.rows
                .iter()
                .map(|l| text::wrap_limited(l, layout.label_w, max_lines, tick.size, tick.weight))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;

    // Horizontal placement: the grid, then the colour bar, centred together.
    let label_area = layout.label_w + GAP;
    let matrix_w = layout.n as f64 * cell_w;
    let grid_w = layout.grid_width();
    let left = PAD + ((w - 2.0 * PAD - bar_block - grid_w) / 2.0).max(0.0);
    let matrix_x = |col: usize| -> f64 {
        if shared {
            left + label_area + col as f64 * (matrix_w + PANEL_GAP)
        } else {
            left + col as f64 * (label_area + matrix_w + PANEL_GAP) + label_area
        }
    };
    let bar_top = placed.matrix_y[0];
    let (bar_label, label_len) =
        label_lines(&scale_label, (layout.n as f64 * cell_h).max(BAR_MIN_H))?;
    // The bar is as long as the matrices, and at least as long as its label.
    let bar_h = (layout.n as f64 * cell_h).max(BAR_MIN_H).max(label_len);
    let bar_x = left + grid_w + 2.0 * GAP;
    let height = placed.bottom.max(bar_top + bar_h + tick.size) + PAD;
    let rows = panels.len().div_ceil(columns);

    canvas::render(w, height, |c| {
        for (i, p) in panels.iter().enumerate() {
            let (mx, my) = (matrix_x(i % columns), placed.matrix_y[i]);
            let row = i / columns;
            // Title, centred over the matrix.
            let titles = &placed.titles[i];
            let title_top = my - block_height(titles.len(), label_font) - GAP;
            for (k, line) in titles.iter().enumerate() {
                let baseline = title_top + ASCENT * label_font.size + k as f64 * label_font.line();
                c.text(
                    line,
                    mx + p.n() as f64 * cell_w / 2.0,
                    baseline,
                    label_font,
                    Anchor::Middle,
                    false,
                )?;
            }
            for r in 0..p.n() {
                for col in 0..p.n() {
                    if !p.drawn(r, col) {
                        continue;
                    }
                    let cell_rect = Rect {
                        x0: mx + col as f64 * cell_w + 0.4,
                        y0: my + r as f64 * cell_h + 0.4,
                        x1: mx + (col + 1) as f64 * cell_w - 0.4,
                        y1: my + (r + 1) as f64 * cell_h - 0.4,
                    };
                    let value = p.values[r][col];
                    let fill = value.map_or(MISSING, |v| scale.colour(v));
                    c.rect(cell_rect, fill, 1.0)?;
                    let lines = layout.mode.lines(value, &p.stars[r][col]);
                    let f = Font {
                        colour: text_colour_on(fill),
                        ..cell_font
                    };
                    let cx = (cell_rect.x0 + cell_rect.x1) / 2.0;
                    let cy = (cell_rect.y0 + cell_rect.y1) / 2.0;
                    draw_centred_lines(c, &lines, cx, cy, f, Anchor::Middle)?;
                }
            }
            if !shared || i % columns == 0 {
                for (r, lines) in row_labels[i].iter().enumerate() {
                    let cy = my + (r as f64 + 0.5) * cell_h;
                    draw_centred_lines(c, lines, mx - GAP, cy, tick, Anchor::End)?;
                }
            }
            if !shared || row + 1 == rows {
                let centres: Vec<f64> =
                    (0..p.n()).map(|k| mx + (k as f64 + 0.5) * cell_w).collect();
                placed.col_labels[i].draw(c, &centres, my + p.n() as f64 * cell_h + GAP)?;
            }
        }
        draw_colour_bar(c, &scale, &bar_label, bar_x, bar_top, bar_h)
    })
}

/// Checks the shapes of the panels.
fn validate(panels: &[HeatmapPanel], cells: Cells) -> Result<()> {
    if panels.is_empty() {
        bail!("heatmaps: no panels to draw");
    }
    for p in panels {
        let n = p.labels.len();
        if n == 0 {
            bail!("heatmaps: panel {:?} has no labels", p.title);
        }
        if cells == Cells::Lower && n < 2 {
            bail!(
                "heatmaps: panel {:?} has no cell below the diagonal (one label)",
                p.title
            );
        }
        if p.values.len() != n || p.values.iter().any(|row| row.len() != n) {
            bail!(
                "heatmaps: panel {:?} needs {n} x {n} values, one row and column per label",
                p.title
            );
        }
        if !p.stars.is_empty() && (p.stars.len() != n || p.stars.iter().any(|row| row.len() != n)) {
            bail!(
                "heatmaps: panel {:?} needs {n} x {n} stars (or none)",
                p.title
            );
        }
    }
    Ok(())
}

/// A panel as drawn: cleaned text, non-finite values as missing, stars filled in, and for
/// [`Cells::Lower`] the grid without its empty first row and last column.
struct Panel {
    title: String,
    /// Labels of the rows (top to bottom) and of the columns (left to right).
    rows: Vec<String>,
    cols: Vec<String>,
    values: Vec<Vec<Option<f64>>>,
    stars: Vec<Vec<String>>,
    cells: Cells,
}

impl Panel {
    fn from(p: &HeatmapPanel, cells: Cells) -> Panel {
        let n = p.labels.len();
        let labels: Vec<String> = p.labels.iter().map(|l| text::clean(l)).collect();
        let stars = |r: usize, c: usize| {
            p.stars
                .get(r)
                .map_or(String::new(), |row| text::clean(&row[c]))
        };
        let value = |r: usize, c: usize| p.values[r][c].filter(|x| x.is_finite());
        match cells {
            Cells::All => Panel {
                title: text::clean(&p.title),
                rows: labels.clone(),
                cols: labels,
                values: (0..n)
                    .map(|r| (0..n).map(|c| value(r, c)).collect())
                    .collect(),
                stars: (0..n)
                    .map(|r| (0..n).map(|c| stars(r, c)).collect())
                    .collect(),
                cells,
            },
            // Grid row r is label r + 1, grid column c label c; the cells with c <= r are the
            // ones below the diagonal.
            Cells::Lower => {
                let below = |r: usize, c: usize| c <= r;
                Panel {
                    title: text::clean(&p.title),
                    rows: labels[1..].to_vec(),
                    cols: labels[..n - 1].to_vec(),
                    values: (0..n - 1)
                        .map(|r| {
                            (0..n - 1)
                                .map(|c| if below(r, c) { value(r + 1, c) } else { None })
                                .collect()
                        })
                        .collect(),
                    stars: (0..n - 1)
                        .map(|r| {
                            (0..n - 1)
                                .map(|c| {
                                    if below(r, c) {
                                        stars(r + 1, c)
                                    } else {
                                        String::new()
                                    }
                                })
                                .collect()
                        })
                        .collect(),
                    cells,
                }
            }
        }
    }

    /// Rows (= columns) of the grid.
    fn n(&self) -> usize {
        self.rows.len()
    }

    /// Whether grid cell (r, c) is drawn at all.
    fn drawn(&self, r: usize, c: usize) -> bool {
        match self.cells {
            Cells::All => true,
            Cells::Lower => c <= r,
        }
    }
}

/// The colour scale: symmetric around a centre (0 for effect sizes) up to a nice limit.
pub(crate) struct Scale {
    centre: f64,
    limit: f64,
    ticks: Vec<f64>,
    pub(crate) labels: Vec<String>,
}

impl Scale {
    fn new(panels: &[Panel], min_limit: f64) -> Scale {
        Scale::around(
            0.0,
            panels
                .iter()
                .flat_map(|p| p.values.iter().flatten().flatten().copied()),
            min_limit,
        )
    }

    /// The scale centred on `centre` that holds every value (at least ±`min_limit` wide).
    pub(crate) fn around(centre: f64, values: impl Iterator<Item = f64>, min_limit: f64) -> Scale {
        let largest = values
            .filter(|v| v.is_finite())
            .map(|v| (v - centre).abs())
            .fold(0.0, f64::max)
            .max(if min_limit.is_finite() {
                min_limit
            } else {
                0.0
            });
        let limit = if largest > 0.0 {
            nice_ceiling(largest)
        } else {
            1.0
        };
        let ticks: Vec<f64> = [-1.0, -0.5, 0.0, 0.5, 1.0]
            .iter()
            .map(|k| centre + k * limit)
            .collect();
        let decimals = (0..=6)
            .find(|&d| {
                ticks.iter().all(|t| {
                    let scaled = t * 10f64.powi(d);
                    (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
                })
            })
            .unwrap_or(6) as usize;
        let labels = ticks.iter().map(|&t| format_number(t, decimals)).collect();
        Scale {
            centre,
            limit,
            ticks,
            labels,
        }
    }

    /// Colour of `v`, clamped to the scale.
    pub(crate) fn colour(&self, v: f64) -> RGBColor {
        colour_map(((v - self.centre) / self.limit + 1.0) / 2.0)
    }
}

/// The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (times a power of ten) not below `v`.
fn nice_ceiling(v: f64) -> f64 {
    let k = v.log10().floor() as i32;
    // Dividing by 10^-k for small values keeps 0.15 exact (0.1 x 1.5 is not).
    let scale = |m: f64| {
        if k < 0 {
            m / 10f64.powi(-k)
        } else {
            m * 10f64.powi(k)
        }
    };
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(scale)
        .find(|&s| s >= v * (1.0 - 1e-9))
        .unwrap_or(scale(10.0))
}

/// RdBu at `t` in [0, 1] (clamped), linear between the stops.
fn colour_map(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let pos = t * (RDBU.len() - 1) as f64;
    let i = (pos.floor() as usize).min(RDBU.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (RDBU[i], RDBU[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// What a cell shows, from most to least.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellText {
    Full,
    OneDecimal,
    StarsOnly,
    Nothing,
}

impl CellText {
    fn lines(self, value: Option<f64>, stars: &str) -> Vec<String> {
        let Some(v) = value else { return Vec::new() };
        let mut out = Vec::new();
        match self {
            CellText::Full => out.push(format_number(
                v,
                if v.abs() < 10.0 {
                    2
                } else if v.abs() < 100.0 {
                    1
                } else {
                    0
                },
            )),
            CellText::OneDecimal => out.push(format_number(v, if v.abs() < 10.0 { 1 } else { 0 })),
            CellText::StarsOnly | CellText::Nothing => {}
        }
        if self != CellText::Nothing && !stars.is_empty() {
            out.push(stars.to_string());
        }
        out
    }

    /// The smallest cell (width, height) that holds every cell's text in this mode.
    fn min_size(self, panels: &[Panel]) -> Result<(f64, f64)> {
        let f = Font::new(CELL_PT, Weight::Regular, BLACK);
        let mut widest: f64 = 0.0;
        let mut lines = 0;
        for p in panels {
            for (values, stars) in p.values.iter().zip(&p.stars) {
                for (v, s) in values.iter().zip(stars) {
                    let text = self.lines(*v, s);
                    widest = widest.max(text::max_width(&text, f.size, f.weight)?);
                    lines = lines.max(text.len());
                }
            }
        }
        Ok((
            (widest + 3.0).max(6.0),
            (block_height(lines, f) + 3.0).max(6.0),
        ))
    }
}

/// The tallest figure the layout search aims for (a page's text height).
const MAX_HEIGHT: f64 = 8.5 * 72.0;

/// Panels per row, cell size (cells may be taller than wide, to fit two-line row labels),
/// width of the row-label column, what cells show, whether panels share their labels.
#[derive(Clone, Debug, PartialEq)]
struct Layout {
    columns: usize,
    cell_w: f64,
    cell_h: f64,
    label_w: f64,
    mode: CellText,
    shared: bool,
    /// The largest number of agents in a panel.
    n: usize,
}

/// Where panels go vertically.
struct Placed {
    titles: Vec<Vec<String>>,
    col_labels: Vec<CategoryLabels>,
    matrix_y: Vec<f64>,
    bottom: f64,
}

impl Layout {
    /// Width of the panel grid with its row labels.
    fn grid_width(&self) -> f64 {
        let c = self.columns as f64;
        let matrix = self.n as f64 * self.cell_w;
        let labels = if self.shared {
            self.label_w + GAP
        } else {
            c * (self.label_w + GAP)
        };
        labels + c * matrix + (c - 1.0) * PANEL_GAP
    }

    /// Places the panels row by row: title, matrix, column labels (under every panel, or
    /// only under the last row when the panels share their labels).
    fn place(&self, panels: &[Panel], width: f64) -> Result<Placed> {
        let tick = frame::tick_font();
        let label_font = frame::label_font();
        let matrix_w = self.n as f64 * self.cell_w;
        // Turned column labels may be long rather than cut: a cell holds one or two lines.
        let max_len = (0.45 * width).min(140.0);
        let col_labels: Vec<CategoryLabels> = panels
            .iter()
            .map(|p| CategoryLabels::new(&p.cols, self.cell_w, max_len, tick))
            .collect::<Result<_>>()?;
        let titles: Vec<Vec<String>> = panels
            .iter()
            .map(|p| {
                // Three lines: a one-cell panel's "Call success (Cohen's h)" needs them.
                text::wrap_limited(
                    &p.title,
                    matrix_w + 0.8 * PANEL_GAP,
                    3,
                    label_font.size,
                    label_font.weight,
                )
            })
            .collect::<Result<_>>()?;
        let rows = panels.len().div_ceil(self.columns);
        let mut matrix_y = vec![0.0; panels.len()];
        let mut y = PAD;
        let mut bottom = PAD;
        for r in 0..rows {
            let in_row = r * self.columns..((r + 1) * self.columns).min(panels.len());
            let title_lines = in_row.clone().map(|i| titles[i].len()).max().unwrap_or(0);
            let title_h = if title_lines == 0 {
                0.0
            } else {
                block_height(title_lines, label_font) + GAP
            };
            let top = y + title_h;
            let show_cols = !self.shared || r + 1 == rows;
            let depth = if show_cols {
                in_row
                    .clone()
                    .map(|i| col_labels[i].depth)
                    .fold(0.0, f64::max)
                    + GAP
            } else {
                0.0
            };
            for i in in_row {
                matrix_y[i] = top;
            }
            bottom = top + self.n as f64 * self.cell_h + depth;
            y = bottom + ROW_GAP;
        }
        Ok(Placed {
            titles,
            col_labels,
            matrix_y,
            bottom,
        })
    }

    /// The layout for `avail` pt of width: for the fullest cell text that fits at all, the
    /// lowest figure (usually the most panels per row) within a page height; if no cell text
    /// fits a page, the lowest figure overall.
    fn search(panels: &[Panel], avail: f64, width: f64) -> Result<Layout> {
        let tick = frame::tick_font();
        let shared = panels
            .windows(2)
            .all(|p| p[0].rows == p[1].rows && p[0].cols == p[1].cols);
        let n = panels.iter().map(Panel::n).max().unwrap_or(1);
        let count = panels.len();
        let all_labels: Vec<&String> = panels.iter().flat_map(|p| &p.rows).collect();
        let longest = text::max_width(&all_labels, tick.size, tick.weight)?;
        let cap = (0.3 * width).min(longest.max(12.0));
        // Candidate label widths, narrow to wide, and the lines each needs.
        let mut candidates = Vec::new();
        let mut lw = 12.0_f64.min(cap);
        loop {
            let mut lines = 0;
            let mut split = false;
            for l in &all_labels {
                let w = text::wrap_greedy(l, lw, tick.size, tick.weight)?;
                lines = lines.max(w.lines.len());
                split |= w.split_words;
            }
            // Splitting words inside is accepted only at the widest candidate.
            if !split || lw >= cap {
                candidates.push((lw, lines));
            }
            if lw >= cap {
                break;
            }
            lw = (lw + 4.0).min(cap);
        }
        let mut lowest: Option<(f64, Layout)> = None;
        for mode in [
            CellText::Full,
            CellText::OneDecimal,
            CellText::StarsOnly,
            CellText::Nothing,
        ] {
            let (min_w, min_h) = mode.min_size(panels)?;
            let mut best: Option<(f64, Layout)> = None;
            for columns in (1..=count).rev() {
                for &(label_w, lines) in &candidates {
                    let mut layout = Layout {
                        columns,
                        cell_w: 0.0,
                        cell_h: 0.0,
                        label_w,
                        mode,
                        shared,
                        n,
                    };
                    let fill = (avail - (layout.grid_width())) / (columns as f64 * n as f64);
                    let cell_w = fill.min(CELL_MAX);
                    let cell_h = cell_w.max(min_h).max(block_height(lines, tick) + 1.0);
                    if cell_w < min_w || cell_h > 1.5 * cell_w {
                        continue;
                    }
                    layout.cell_w = cell_w;
                    layout.cell_h = cell_h;
                    let height = layout.estimate_height(panels);
                    if best.as_ref().is_none_or(|(h, _)| height < h - 0.5) {
                        best = Some((height, layout));
                    }
                }
            }
            if let Some((height, layout)) = best {
                if height <= MAX_HEIGHT {
                    return Ok(layout);
                }
                if lowest.as_ref().is_none_or(|(h, _)| height < *h) {
                    lowest = Some((height, layout));
                }
            }
        }
        if let Some((_, layout)) = lowest {
            return Ok(layout);
        }
        bail!("heatmaps: {n} agents do not fit in this figure width; use the two-column width")
    }

    /// The figure's height, estimated without laying out titles and column labels: one line
    /// of title per row, column labels as deep as the row labels are wide.
    fn estimate_height(&self, panels: &[Panel]) -> f64 {
        let rows = panels.len().div_ceil(self.columns) as f64;
        let title = block_height(1, frame::label_font()) + GAP;
        let col_label_rows = if self.shared { 1.0 } else { rows };
        2.0 * PAD
            + rows * (title + self.n as f64 * self.cell_h + ROW_GAP)
            + col_label_rows * (self.label_w + GAP)
    }
}

/// The scale label's lines, wrapped to `length` pt, or to as little more as makes it fit in
/// two lines; and the length of its longest line.
pub(crate) fn label_lines(label: &str, length: f64) -> Result<(Vec<String>, f64)> {
    if label.is_empty() {
        return Ok((Vec::new(), 0.0));
    }
    let f = frame::label_font();
    let mut len = length;
    loop {
        let w = text::wrap(label, len, f.size, f.weight)?;
        let longest = text::max_width(&w.lines, f.size, f.weight)?;
        if (w.lines.len() <= 2 && !w.split_words) || len > 1000.0 {
            return Ok((w.lines, longest));
        }
        len += 5.0;
    }
}

/// The width of the colour bar block (bar, ticks, tick labels, turned label).
pub(crate) fn colour_bar_width(scale: &Scale, label: &str) -> Result<f64> {
    let tick = frame::tick_font();
    let (lines, _) = label_lines(label, BAR_MIN_H)?;
    let tick_w = text::max_width(&scale.labels, tick.size, tick.weight)?;
    Ok(2.0 * GAP
        + BAR_W
        + TICK_LEN
        + GAP
        + tick_w
        + GAP
        + block_height(lines.len(), frame::label_font()))
}

pub(crate) fn draw_colour_bar(
    c: &mut Canvas,
    scale: &Scale,
    label: &[String],
    x: f64,
    top: f64,
    h: f64,
) -> Result<()> {
    const STEPS: usize = 96;
    let step = h / STEPS as f64;
    for k in 0..STEPS {
        // Top is +limit; each strip overlaps the next a little so no seams show.
        let t = 1.0 - (k as f64 + 0.5) / STEPS as f64;
        let y0 = top + k as f64 * step;
        let y1 = (y0 + step + 0.2).min(top + h);
        c.rect(
            Rect {
                x0: x,
                y0,
                x1: x + BAR_W,
                y1,
            },
            colour_map(t),
            1.0,
        )?;
    }
    c.stroke_rect(
        Rect {
            x0: x,
            y0: top,
            x1: x + BAR_W,
            y1: top + h,
        },
        BLACK,
        0.4,
    )?;
    let tick = frame::tick_font();
    let to_y = |v: f64| top + (1.0 - ((v - scale.centre) / scale.limit + 1.0) / 2.0) * h;
    let mut tick_right: f64 = x + BAR_W;
    for (&v, l) in scale.ticks.iter().zip(&scale.labels) {
        let y = to_y(v);
        c.line((x + BAR_W, y), (x + BAR_W + TICK_LEN, y), BLACK, AXIS_W)?;
        let lx = x + BAR_W + TICK_LEN + GAP;
        c.text(l, lx, y + CAP * tick.size / 2.0, tick, Anchor::Start, false)?;
        tick_right = tick_right.max(lx + text::width(l, tick.size, tick.weight)?);
    }
    let f = frame::label_font();
    for (i, line) in label.iter().enumerate() {
        let bx = tick_right + GAP + ASCENT * f.size + i as f64 * f.line();
        c.text(line, bx, top + h / 2.0, f, Anchor::Middle, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::contrast;

    #[test]
    fn scale_limits_are_nice_and_symmetric() {
        assert_eq!(nice_ceiling(0.87), 1.0);
        assert_eq!(nice_ceiling(2.3), 2.5);
        assert_eq!(nice_ceiling(0.117), 0.15);
        assert!((nice_ceiling(7.2) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn colour_map_is_diverging_around_white() {
        assert_eq!(colour_map(0.5), RGBColor(0xF7, 0xF7, 0xF7));
        assert_eq!(colour_map(0.0), RGBColor(0x05, 0x30, 0x61));
        assert_eq!(colour_map(1.0), RGBColor(0x67, 0x00, 0x1F));
        assert_eq!(colour_map(f64::NAN), colour_map(0.5));
        assert_eq!(colour_map(7.0), colour_map(1.0));
    }

    #[test]
    fn cell_text_is_readable_on_every_colour() {
        // WCAG AA for normal text asks for 4.5:1.
        for k in 0..=200 {
            let bg = colour_map(k as f64 / 200.0);
            let fg = text_colour_on(bg);
            assert!(contrast(fg, bg) >= 4.5, "{bg:?} with {fg:?}");
        }
        assert!(contrast(text_colour_on(MISSING), MISSING) >= 4.5);
    }

    #[test]
    fn cell_text_modes() {
        assert_eq!(CellText::Full.lines(Some(-0.286), "**"), ["−0.29", "**"]);
        assert_eq!(CellText::OneDecimal.lines(Some(12.34), ""), ["12"]);
        assert_eq!(CellText::StarsOnly.lines(Some(1.0), "*"), ["*"]);
        assert!(CellText::Full.lines(None, "*").is_empty());
    }
}
