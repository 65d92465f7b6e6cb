//! Value grids: one panel per series (an agent), rows and columns the values of two
//! parameters, each cell coloured on a diverging scale around a stated centre (the fair share
//! of a win rate) and printed with its value. The sweep of two parameters draws one.
//!
//! Unlike [`heatmaps`](super::heatmaps), whose panels are square matrices of agents against
//! agents, a grid is rectangular and its axes have titles (the parameters' names). The layout
//! puts as many panels side by side as leave every cell wide enough for its text.

use crate::Result;

use super::canvas::{self, Anchor, Canvas, Font};
use super::frame::{self, block_height, draw_centred_lines};
use super::heatmap::{BAR_MIN_H, Scale, colour_bar_width, draw_colour_bar, label_lines};
use super::style::{BLACK, CELL_PT, GAP, MISSING, PAD, text_colour_on};
use super::text::{self, ASCENT, Rect, Weight};
use super::{Figure, Width};

/// Largest cell width (pt): larger cells only make the figure bigger.
const CELL_MAX: f64 = 34.0;
const PANEL_GAP: f64 = 12.0;
const ROW_GAP: f64 = 8.0;

/// One panel of a [`grids`] figure: `values[row][col]` (None: missing, a grey cell) and the
/// text printed in each cell (lines separated by `\n`; empty: the value with one decimal).
#[derive(Clone, Debug, PartialEq)]
pub struct GridPanel {
    pub title: String,
    pub values: Vec<Vec<Option<f64>>>,
    pub text: Vec<Vec<String>>,
}

/// The axes and the colour scale shared by the panels of a [`grids`] figure.
#[derive(Clone, Debug, PartialEq)]
pub struct GridOptions<'a> {
    /// The figure's title (empty: none).
    pub title: &'a str,
    /// Row labels, top to bottom, and the rows' axis title.
    pub rows: &'a [String],
    pub row_title: &'a str,
    /// Column labels, left to right, and the columns' axis title.
    pub cols: &'a [String],
    pub col_title: &'a str,
    /// The value drawn white; the scale is symmetric around it.
    pub centre: f64,
    /// The scale reaches at least ±this around the centre.
    pub min_limit: f64,
    pub scale_label: &'a str,
}

/// Panels of rows x columns cells sharing one diverging colour scale and one colour bar.
pub fn grids(panels: &[GridPanel], options: &GridOptions, width: Width) -> Result<Figure> {
    let (n_rows, n_cols) = (options.rows.len(), options.cols.len());
    if panels.is_empty() || n_rows == 0 || n_cols == 0 {
        bail!(
            "grids: nothing to draw ({} panels, {n_rows} x {n_cols})",
            panels.len()
        );
    }
    let shaped = |m: usize, lens: &mut dyn Iterator<Item = usize>| {
        let lens: Vec<usize> = lens.collect();
        m == n_rows && lens.iter().all(|&l| l == n_cols)
    };
    for p in panels {
        let values_ok = shaped(p.values.len(), &mut p.values.iter().map(Vec::len));
        let text_ok = p.text.is_empty() || shaped(p.text.len(), &mut p.text.iter().map(Vec::len));
        if !values_ok || !text_ok {
            bail!(
                "grids: panel {:?} needs {n_rows} x {n_cols} values",
                p.title
            );
        }
    }
    let w = width.points();
    let tick = frame::tick_font();
    let label = frame::label_font();
    let cell_font = Font::new(CELL_PT, Weight::Regular, BLACK);
    let scale = Scale::around(
        options.centre,
        panels
            .iter()
            .flat_map(|p| p.values.iter().flatten().flatten().copied()),
        options.min_limit,
    );
    let scale_label = text::clean(options.scale_label);
    let bar_block = colour_bar_width(&scale, &scale_label)?;

    // What each cell prints, and the smallest cell that holds it.
    let cell_lines: Vec<Vec<Vec<Vec<String>>>> = panels
        .iter()
        .map(|p| {
            (0..n_rows)
                .map(|r| {
                    (0..n_cols)
                        .map(|c| {
                            let given = p.text.get(r).map_or("", |row| row[c].as_str());
                            match (given, p.values[r][c]) {
                                ("", Some(v)) if v.is_finite() => vec![format!("{v:.1}")],
                                ("", _) => Vec::new(),
                                (t, _) => t.lines().map(text::clean).collect(),
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut widest: f64 = 0.0;
    let mut most_lines = 1;
    for lines in cell_lines.iter().flatten().flatten() {
        widest = widest.max(text::max_width(lines, cell_font.size, cell_font.weight)?);
        most_lines = most_lines.max(lines.len());
    }
    let min_w = (widest + 4.0).max(14.0);
    // The row title is turned beside the rows, in at most two lines: the rows are at least
    // as tall as its longest line.
    let (row_title, row_title_len) = label_lines(&text::clean(options.row_title), 30.0)?;
    let cell_h = (block_height(most_lines, cell_font) + 5.0)
        .max(14.0)
        .max((row_title_len + 2.0) / n_rows as f64);

    let rows: Vec<String> = options.rows.iter().map(|l| text::clean(l)).collect();
    let cols: Vec<String> = options.cols.iter().map(|l| text::clean(l)).collect();
    let row_label_w = text::max_width(&rows, tick.size, tick.weight)?;
    let col_label_w = text::max_width(&cols, tick.size, tick.weight)?;
    // Left of every matrix: the turned row title and the row labels.
    let left_block = block_height(row_title.len(), label) + GAP + row_label_w + GAP;
    let avail = w - 2.0 * PAD - bar_block;
    // The most panels side by side whose cells still hold their text and column labels.
    let need = min_w.max(col_label_w + 2.0);
    let (per_row, cell_w) = (1..=panels.len())
        .rev()
        .map(|k| {
            let kf = k as f64;
            let fill = (avail - kf * left_block - (kf - 1.0) * PANEL_GAP) / (kf * n_cols as f64);
            (k, fill.min(CELL_MAX))
        })
        .find(|&(_, cell)| cell >= need)
        .ok_or_else(|| {
            render_error!(
                "grids: {n_cols} columns do not fit in this figure width; use the two-column \
                 width"
            )
        })?;
    let matrix_w = n_cols as f64 * cell_w;
    let matrix_h = n_rows as f64 * cell_h;
    let panel_w = left_block + matrix_w;
    let grid_w = per_row as f64 * panel_w + (per_row as f64 - 1.0) * PANEL_GAP;
    let left = PAD + ((avail - grid_w) / 2.0).max(0.0);

    // Vertical: the figure's title, then per row of panels: titles, matrix, column labels,
    // column title.
    let title_font = frame::title_font();
    let title_lines = if options.title.is_empty() {
        Vec::new()
    } else {
        text::wrap_limited(
            &text::clean(options.title),
            w - 2.0 * PAD,
            3,
            title_font.size,
            title_font.weight,
        )?
    };
    let titles: Vec<Vec<String>> = panels
        .iter()
        .map(|p| {
            text::wrap_limited(
                &text::clean(&p.title),
                matrix_w + 0.8 * PANEL_GAP,
                2,
                label.size,
                label.weight,
            )
        })
        .collect::<Result<_>>()?;
    let col_title = text::wrap_limited(
        &text::clean(options.col_title),
        matrix_w + left_block,
        2,
        label.size,
        label.weight,
    )?;
    let bands = panels.len().div_ceil(per_row);
    let mut matrix_y = Vec::with_capacity(bands);
    let mut y = PAD;
    if !title_lines.is_empty() {
        y += block_height(title_lines.len(), title_font) + 2.0 * GAP;
    }
    for band in 0..bands {
        let in_band = band * per_row..((band + 1) * per_row).min(panels.len());
        let lines = in_band.map(|i| titles[i].len()).max().unwrap_or(0);
        if lines > 0 {
            y += block_height(lines, label) + GAP;
        }
        matrix_y.push(y);
        y += matrix_h
            + GAP
            + block_height(1, tick)
            + GAP
            + block_height(col_title.len(), label)
            + ROW_GAP;
    }
    let bar_top = matrix_y[0];
    let (bar_label, label_len) = label_lines(&scale_label, matrix_h.max(BAR_MIN_H))?;
    let bar_h = matrix_h.max(BAR_MIN_H).max(label_len);
    let height = (y - ROW_GAP).max(bar_top + bar_h + tick.size) + PAD;
    let bar_x = left + grid_w + 2.0 * GAP;

    // Lines of `font` centred on `x`, the first line's top at `top`.
    let block = |c: &mut Canvas, lines: &[String], x: f64, top: f64, font: Font| {
        for (k, line) in lines.iter().enumerate() {
            let baseline = top + ASCENT * font.size + k as f64 * font.line();
            c.text(line, x, baseline, font, Anchor::Middle, false)?;
        }
        Ok::<(), crate::PlotError>(())
    };
    canvas::render(w, height, |c| {
        block(c, &title_lines, w / 2.0, PAD, title_font)?;
        for (i, p) in panels.iter().enumerate() {
            let (band, slot) = (i / per_row, i % per_row);
            let px = left + slot as f64 * (panel_w + PANEL_GAP);
            let mx = px + left_block;
            let my = matrix_y[band];
            let title_top = my - block_height(titles[i].len(), label) - GAP;
            block(c, &titles[i], mx + matrix_w / 2.0, title_top, label)?;
            for (r, (values, lines)) in p.values.iter().zip(&cell_lines[i]).enumerate() {
                for (col, (value, lines)) in values.iter().zip(lines).enumerate() {
                    let rect = Rect {
                        x0: mx + col as f64 * cell_w + 0.4,
                        y0: my + r as f64 * cell_h + 0.4,
                        x1: mx + (col + 1) as f64 * cell_w - 0.4,
                        y1: my + (r + 1) as f64 * cell_h - 0.4,
                    };
                    let fill = value
                        .filter(|v| v.is_finite())
                        .map_or(MISSING, |v| scale.colour(v));
                    c.rect(rect, fill, 1.0)?;
                    let f = Font {
                        colour: text_colour_on(fill),
                        ..cell_font
                    };
                    draw_centred_lines(
                        c,
                        lines,
                        (rect.x0 + rect.x1) / 2.0,
                        (rect.y0 + rect.y1) / 2.0,
                        f,
                        Anchor::Middle,
                    )?;
                }
            }
            for (r, l) in rows.iter().enumerate() {
                let cy = my + (r as f64 + 0.5) * cell_h;
                draw_centred_lines(c, std::slice::from_ref(l), mx - GAP, cy, tick, Anchor::End)?;
            }
            for (k, line) in row_title.iter().enumerate() {
                let x = px + ASCENT * label.size + k as f64 * label.line();
                c.text(line, x, my + matrix_h / 2.0, label, Anchor::Middle, true)?;
            }
            let base = my + matrix_h + GAP + ASCENT * tick.size;
            for (k, l) in cols.iter().enumerate() {
                let x = mx + (k as f64 + 0.5) * cell_w;
                c.text(l, x, base, tick, Anchor::Middle, false)?;
            }
            let top = my + matrix_h + GAP + block_height(1, tick) + GAP;
            block(c, &col_title, mx + matrix_w / 2.0, top, label)?;
        }
        draw_colour_bar(c, &scale, &bar_label, bar_x, bar_top, bar_h)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(title: &str, rows: usize, cols: usize) -> GridPanel {
        GridPanel {
            title: title.into(),
            values: (0..rows)
                .map(|r| {
                    (0..cols)
                        .map(|c| Some(20.0 + (r * cols + c) as f64))
                        .collect()
                })
                .collect(),
            text: Vec::new(),
        }
    }

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|k| format!("{}", 5 + 2 * k)).collect()
    }

    fn options<'a>(rows: &'a [String], cols: &'a [String]) -> GridOptions<'a> {
        GridOptions {
            title: "",
            rows,
            row_title: "a",
            cols,
            col_title: "b",
            centre: 25.0,
            min_limit: 0.0,
            scale_label: "",
        }
    }

    #[test]
    fn a_rectangular_grid_is_drawn_with_its_axis_titles_and_values() {
        let (rows, cols) = (labels(3), labels(5));
        let options = GridOptions {
            title: "",
            rows: &rows,
            row_title: "call_at",
            cols: &cols,
            col_title: "Rule: threshold",
            centre: 25.0,
            min_limit: 0.0,
            scale_label: "Win rate (%)",
        };
        let panels = [panel("aggressive", 3, 5), panel("conservative", 3, 5)];
        let fig = grids(&panels, &options, Width::OneColumn).unwrap();
        let svg = fig.svg();
        for needle in [
            "call_at",
            "Rule: threshold",
            "aggressive",
            "conservative",
            "34.0",
        ] {
            assert!(svg.contains(needle), "{needle} missing");
        }
        assert!(fig.png().unwrap().len() > 1000);
    }

    #[test]
    fn a_wrong_shape_is_refused() {
        let (rows, cols) = (labels(3), labels(5));
        let options = options(&rows, &cols);
        assert!(grids(&[panel("x", 3, 4)], &options, Width::OneColumn).is_err());
        assert!(grids(&[], &options, Width::OneColumn).is_err());
    }

    #[test]
    fn many_columns_need_the_wide_figure() {
        let (rows, cols) = (labels(2), labels(16));
        let options = options(&rows, &cols);
        let panels = [panel("x", 2, 16)];
        assert!(grids(&panels, &options, Width::OneColumn).is_err());
        assert!(grids(&panels, &options, Width::TwoColumn).is_ok());
    }
}
