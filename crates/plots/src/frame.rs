//! The parts shared by the x-y figures: the header (title and legend above the data), the
//! y axis (grid, ticks, labels, turned axis label) and the x axis label.

use crate::Result;

use super::axis::Ticks;
use super::canvas::{Anchor, Canvas, Font};
use super::legend::{Legend, Swatch};
use super::style::{AXIS_W, BLACK, GAP, GRID, GRID_W, LABEL_PT, PAD, TICK_LEN, TICK_PT, TITLE_PT};
use super::text::{self, ASCENT, CAP, DESCENT, Rect, Weight};

pub(crate) fn title_font() -> Font {
    Font::new(TITLE_PT, Weight::Bold, BLACK)
}

pub(crate) fn label_font() -> Font {
    Font::new(LABEL_PT, Weight::Regular, BLACK)
}

pub(crate) fn tick_font() -> Font {
    Font::new(TICK_PT, Weight::Regular, BLACK)
}

/// How many lines of `font` fit in `room` pt (at least 1): the inverse of [`block_height`].
pub(crate) fn lines_fitting(room: f64, font: Font) -> usize {
    // The epsilon keeps a block that fits exactly from losing a line to rounding.
    (((room - (ASCENT + DESCENT) * font.size) / font.line() + 1e-6)
        .floor()
        .max(0.0) as usize)
        + 1
}

/// Height of `lines` lines of `font`, from the top of the first to the bottom of the last.
pub(crate) fn block_height(lines: usize, font: Font) -> f64 {
    if lines == 0 {
        0.0
    } else {
        (lines as f64 - 1.0) * font.line() + (ASCENT + DESCENT) * font.size
    }
}

/// `text` cleaned and wrapped to `width` in at most `max_lines` lines of `font` (none for
/// an empty text).
fn wrapped(text: &str, width: f64, max_lines: usize, font: Font) -> Result<Vec<String>> {
    let text = text::clean(text);
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text::wrap_limited(&text, width, max_lines, font.size, font.weight)
}

/// Title and legend above the data, centred on the figure.
pub(crate) struct Header {
    title: Vec<String>,
    legend: Option<Legend>,
    /// Where the header ends (pt from the top).
    pub bottom: f64,
}

impl Header {
    pub fn new(title: &str, legend: Vec<(Swatch, String)>, width: f64) -> Result<Header> {
        let inner = width - 2.0 * PAD;
        let f = title_font();
        let title = wrapped(title, inner, 3, f)?;
        let legend = if legend.is_empty() {
            None
        } else {
            Some(Legend::new(legend, inner)?)
        };
        let mut bottom = PAD;
        if !title.is_empty() {
            bottom += block_height(title.len(), f) + GAP;
        }
        if let Some(l) = &legend {
            bottom += l.height() + GAP;
        }
        Ok(Header {
            title,
            legend,
            bottom,
        })
    }

    pub fn draw(&self, canvas: &mut Canvas, width: f64) -> Result<()> {
        let f = title_font();
        let mut y = PAD;
        for (i, line) in self.title.iter().enumerate() {
            canvas.text(
                line,
                width / 2.0,
                y + ASCENT * f.size + i as f64 * f.line(),
                f,
                Anchor::Middle,
                false,
            )?;
        }
        if !self.title.is_empty() {
            y += block_height(self.title.len(), f) + GAP;
        }
        if let Some(l) = &self.legend {
            l.draw(canvas, width / 2.0, y)?;
        }
        Ok(())
    }
    /// The data area below the header: from `x0` to `x1`, `height` high, with room above
    /// it for the top tick label ([`TOP_ROOM`]).
    pub fn plot_area(&self, x0: f64, x1: f64, height: f64) -> Rect {
        let top = self.bottom + TOP_ROOM;
        Rect {
            x0,
            y0: top,
            x1,
            y1: top + height,
        }
    }
}

/// Room above the data area for the top tick label, which is centred on the top tick.
const TOP_ROOM: f64 = TICK_PT * CAP / 2.0 + 1.0;

/// A vertical linear axis on the left of the data area.
pub(crate) struct YAxis {
    pub ticks: Ticks,
    label: Vec<String>,
    tick_w: f64,
}

impl YAxis {
    /// How many ticks a data area `plot_h` pt high gets at most.
    pub fn max_ticks(plot_h: f64) -> usize {
        ((plot_h / 28.0).floor() as usize + 1).max(3)
    }

    /// An axis with `ticks` for a data area `plot_h` pt high; the axis label wraps to the
    /// data area's height.
    pub fn new(ticks: Ticks, plot_h: f64, label: &str) -> Result<YAxis> {
        let t = tick_font();
        let tick_w = text::max_width(&ticks.labels, t.size, t.weight)?;
        let l = label_font();
        let label = text::clean(label);
        let label = if label.is_empty() {
            Vec::new()
        } else {
            text::wrap_limited(&label, plot_h + 10.0, 2, l.size, l.weight)?
        };
        Ok(YAxis {
            ticks,
            label,
            tick_w,
        })
    }

    /// Distance from the figure's left edge to the data area.
    pub fn width(&self) -> f64 {
        let label = if self.label.is_empty() {
            0.0
        } else {
            block_height(self.label.len(), label_font()) + GAP
        };
        PAD + label + self.tick_w + GAP + TICK_LEN
    }

    pub fn y(&self, v: f64, plot: Rect) -> f64 {
        self.ticks.map(v, plot.y1, plot.y0)
    }

    /// Grid lines behind the data; call before drawing data.
    pub fn draw_grid(&self, canvas: &mut Canvas, plot: Rect) -> Result<()> {
        for &v in &self.ticks.values {
            let y = self.y(v, plot);
            canvas.line((plot.x0, y), (plot.x1, y), GRID, GRID_W)?;
        }
        Ok(())
    }

    /// Axis line, ticks, tick labels and the axis label; call after the data.
    pub fn draw(&self, canvas: &mut Canvas, plot: Rect) -> Result<()> {
        let t = tick_font();
        canvas.line((plot.x0, plot.y0), (plot.x0, plot.y1), BLACK, AXIS_W)?;
        for (&v, label) in self.ticks.values.iter().zip(&self.ticks.labels) {
            let y = self.y(v, plot);
            canvas.line((plot.x0 - TICK_LEN, y), (plot.x0, y), BLACK, AXIS_W)?;
            canvas.text(
                label,
                plot.x0 - TICK_LEN - GAP,
                y + CAP * t.size / 2.0,
                t,
                Anchor::End,
                false,
            )?;
        }
        let l = label_font();
        let mid = (plot.y0 + plot.y1) / 2.0;
        for (i, line) in self.label.iter().enumerate() {
            canvas.text(
                line,
                PAD + ASCENT * l.size + i as f64 * l.line(),
                mid,
                l,
                Anchor::Middle,
                true,
            )?;
        }
        Ok(())
    }
}

/// The x axis label: wrapped lines centred under the data area.
pub(crate) struct XLabel {
    lines: Vec<String>,
}

impl XLabel {
    pub fn new(label: &str, plot_w: f64) -> Result<XLabel> {
        Ok(XLabel {
            lines: wrapped(label, plot_w, 2, label_font())?,
        })
    }

    /// Height including the gap above it (0 without a label).
    pub fn height(&self) -> f64 {
        if self.lines.is_empty() {
            0.0
        } else {
            GAP + block_height(self.lines.len(), label_font())
        }
    }

    pub fn draw(&self, canvas: &mut Canvas, centre_x: f64, top: f64) -> Result<()> {
        let l = label_font();
        for (i, line) in self.lines.iter().enumerate() {
            let baseline = top + GAP + ASCENT * l.size + i as f64 * l.line();
            canvas.text(line, centre_x, baseline, l, Anchor::Middle, false)?;
        }
        Ok(())
    }
}

/// Lines of text centred (as a block of digit-height lines) on `cy`, anchored at `x`.
pub(crate) fn draw_centred_lines(
    c: &mut Canvas,
    lines: &[String],
    x: f64,
    cy: f64,
    f: Font,
    anchor: Anchor,
) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let block = (lines.len() as f64 - 1.0) * f.line() + CAP * f.size;
    let first = cy - block / 2.0 + CAP * f.size;
    for (i, line) in lines.iter().enumerate() {
        c.text(line, x, first + i as f64 * f.line(), f, anchor, false)?;
    }
    Ok(())
}
