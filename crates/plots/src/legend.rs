//! Legends above the data area (never over the data): one row when the entries fit, else a
//! grid of equal columns with balanced rows.

use crate::Result;
use plotters::style::RGBColor;

use super::canvas::{Anchor, Canvas, Font};
use super::style::{BLACK, LEGEND_PT, SeriesStyle, WHITE};
use super::text::{self, ASCENT, CAP, DESCENT, Rect, Weight};

/// The small picture in front of a legend label.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Swatch {
    /// A bar of this series (colour and hatching).
    Bar(SeriesStyle),
    /// A line of this series (colour, dashes, markers), over a light band if `band`.
    Line { style: SeriesStyle, band: bool },
    /// A dashed reference line.
    Dashed(RGBColor),
    /// A filled dot.
    Dot(RGBColor),
    /// An open diamond.
    Diamond(RGBColor),
}

const SWATCH_W: f64 = 12.0;
const SWATCH_GAP: f64 = 3.0;
const COLUMN_GAP: f64 = 9.0;

#[derive(Clone, Debug)]
pub(crate) struct Legend {
    items: Vec<(Swatch, Vec<String>)>,
    /// Left edge of each item relative to the legend's left edge, and its row.
    places: Vec<(f64, usize)>,
    width: f64,
    row_h: Vec<f64>,
    font: Font,
}

impl Legend {
    /// Lays out `items` in at most `max_width` pt; long labels wrap.
    pub fn new(items: Vec<(Swatch, String)>, max_width: f64) -> Result<Legend> {
        let font = Font::new(LEGEND_PT, Weight::Regular, BLACK);
        let label_max = (max_width - SWATCH_W - SWATCH_GAP).max(10.0);
        let mut laid = Vec::with_capacity(items.len());
        let mut widest: f64 = 0.0;
        for (swatch, label) in items {
            let lines = text::wrap_limited(&label, label_max, 3, font.size, font.weight)?;
            widest = widest.max(text::max_width(&lines, font.size, font.weight)?);
            laid.push((swatch, lines));
        }
        let item_w = |lines: &[String]| -> Result<f64> {
            Ok(SWATCH_W + SWATCH_GAP + text::max_width(lines, font.size, font.weight)?)
        };
        let mut natural = Vec::with_capacity(laid.len());
        for (_, lines) in &laid {
            natural.push(item_w(lines)?);
        }
        let one_row =
            natural.iter().sum::<f64>() + COLUMN_GAP * (natural.len() as f64 - 1.0).max(0.0);
        let (places, width, rows): (Vec<(f64, usize)>, f64, usize) = if one_row <= max_width {
            // One row: each item as wide as it is.
            let mut x = 0.0;
            let places = natural
                .iter()
                .map(|w| {
                    let at = x;
                    x += w + COLUMN_GAP;
                    (at, 0)
                })
                .collect();
            (places, one_row, 1)
        } else {
            // A grid of equal columns, rows balanced (as few columns as give the same rows).
            let column_w = SWATCH_W + SWATCH_GAP + widest;
            let fit = ((max_width + COLUMN_GAP) / (column_w + COLUMN_GAP)).floor() as usize;
            let columns = fit.clamp(1, laid.len().max(1));
            let rows = laid.len().div_ceil(columns);
            let columns = laid.len().div_ceil(rows.max(1)).max(1);
            let places = (0..laid.len())
                .map(|i| ((i % columns) as f64 * (column_w + COLUMN_GAP), i / columns))
                .collect();
            let width = columns as f64 * column_w + (columns as f64 - 1.0) * COLUMN_GAP;
            (places, width, rows)
        };
        let mut row_lines = vec![1usize; rows];
        for ((_, lines), &(_, row)) in laid.iter().zip(&places) {
            row_lines[row] = row_lines[row].max(lines.len());
        }
        let row_h = row_lines
            .iter()
            .map(|&lines| (lines as f64 - 1.0) * font.line() + (ASCENT + DESCENT) * font.size)
            .collect();
        Ok(Legend {
            items: laid,
            places,
            width,
            row_h,
            font,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Total width (pt).
    pub fn width(&self) -> f64 {
        self.width
    }

    /// Total height (pt), 0 when empty.
    pub fn height(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.row_h.iter().sum::<f64>() + (self.row_h.len() as f64 - 1.0) * 2.0
    }

    /// Draws the legend centred on `centre_x`, its top at `top`.
    pub fn draw(&self, canvas: &mut Canvas, centre_x: f64, top: f64) -> Result<()> {
        let left = centre_x - self.width() / 2.0;
        let mut row_top = Vec::with_capacity(self.row_h.len());
        let mut y = top;
        for h in &self.row_h {
            row_top.push(y);
            y += h + 2.0;
        }
        for ((swatch, lines), &(dx, row)) in self.items.iter().zip(&self.places) {
            let x = left + dx;
            let baseline = row_top[row] + ASCENT * self.font.size;
            // The swatch is centred on the first line's digits/capitals.
            let mid = baseline - CAP * self.font.size / 2.0;
            draw_swatch(canvas, *swatch, x, mid)?;
            for (i, line) in lines.iter().enumerate() {
                let y = baseline + i as f64 * self.font.line();
                canvas.text(
                    line,
                    x + SWATCH_W + SWATCH_GAP,
                    y,
                    self.font,
                    Anchor::Start,
                    false,
                )?;
            }
        }
        Ok(())
    }
}

/// Draws a swatch SWATCH_W wide with its vertical middle at `mid`.
fn draw_swatch(canvas: &mut Canvas, swatch: Swatch, x: f64, mid: f64) -> Result<()> {
    let x1 = x + SWATCH_W;
    match swatch {
        Swatch::Bar(style) => {
            let r = Rect {
                x0: x + 2.0,
                y0: mid - 3.2,
                x1: x1 - 2.0,
                y1: mid + 3.2,
            };
            canvas.rect(r, style.colour, 1.0)?;
            canvas.hatch(r, style.hatch(), BLACK)?;
        }
        Swatch::Line { style, band } => {
            if band {
                let r = Rect {
                    x0: x,
                    y0: mid - 3.2,
                    x1,
                    y1: mid + 3.2,
                };
                canvas.rect(r, style.colour, super::lines::BAND_ALPHA)?;
            }
            canvas.dashed(
                &[(x, mid), (x1, mid)],
                style.dashes(),
                style.colour,
                style.line_width(),
            )?;
            super::lines::draw_marker(canvas, style, ((x + x1) / 2.0, mid))?;
        }
        Swatch::Dashed(colour) => {
            canvas.dashed(&[(x, mid), (x1, mid)], &[2.5, 1.5], colour, 0.8)?;
        }
        Swatch::Dot(colour) => {
            canvas.circle(((x + x1) / 2.0, mid), 2.2, colour, true, 0.0)?;
        }
        Swatch::Diamond(colour) => {
            draw_diamond(canvas, ((x + x1) / 2.0, mid), 2.6, colour)?;
        }
    }
    Ok(())
}

/// An open diamond (white inside, so it reads over lines), `r` from centre to corner.
pub(crate) fn draw_diamond(
    canvas: &mut Canvas,
    (cx, cy): (f64, f64),
    r: f64,
    colour: RGBColor,
) -> Result<()> {
    let pts = [
        (cx, cy - r),
        (cx + r, cy),
        (cx, cy + r),
        (cx - r, cy),
        (cx, cy - r),
    ];
    canvas.polygon(&pts[..4], WHITE, 1.0)?;
    canvas.polyline(&pts, colour, 0.9)
}

/// The legend of line figures: series i's line (with its band's swatch when `band`) and its
/// label, cleaned for drawing.
pub(crate) fn line_entries<'a>(
    series: impl Iterator<Item = (&'a str, bool)>,
) -> Vec<(Swatch, String)> {
    series
        .enumerate()
        .map(|(i, (label, band))| {
            let style = super::style::SeriesStyle::of(i);
            (Swatch::Line { style, band }, super::text::clean(label))
        })
        .collect()
}
