//! A dot plot on a log10 axis: per agent (one row each, names on the left) a central value
//! (mean or median) and the 95th percentile, joined by a line (decision time per agent, whose spread covers several
//! decades between rule-based and search agents).

use crate::Result;

use super::axis::{self, LogTicks};
use super::canvas::{self, Anchor, Canvas};
use super::frame::{self, Header, XLabel, block_height, draw_centred_lines};
use super::legend::{Swatch, draw_diamond};
use super::style::{
    AXIS_W, BLACK, GAP, GRID, GRID_W, MUTED, PAD, SeriesStyle, TICK_LEN, TICK_PT, plot_height,
};
use super::text::{self, ASCENT, CAP, Rect, Weight};
use super::{Figure, Width};

/// Horizontal points on a log10 axis: per agent the mean and the 95th percentile
/// (decision time per agent, log scale, unit in `value_label`).
///
/// Row i has the colour of agent i. Values that are not positive and finite cannot be shown
/// on a log axis; such a row shows what it can, or "n/a".
pub fn log_points(
    title: &str,
    value_label: &str,
    rows: &[(String, f64, f64)],
    width: Width,
) -> Result<Figure> {
    log_points_labelled(title, value_label, rows, ["Mean", "95th percentile"], width)
}

/// [`log_points`] with the legend's names for the two values of each row (the dot, then the
/// diamond), e.g. `["Median", "95th percentile"]`.
pub fn log_points_labelled(
    title: &str,
    value_label: &str,
    rows: &[(String, f64, f64)],
    labels: [&str; 2],
    width: Width,
) -> Result<Figure> {
    if rows.is_empty() {
        bail!("log_points: no rows to draw");
    }
    let valid = |v: f64| v.is_finite() && v > 0.0;
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.1, r.2])
        .filter(|&v| valid(v))
        .collect();
    let (lo, hi) = values
        .iter()
        .fold(None, |acc: Option<(f64, f64)>, &v| {
            Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
        })
        .unwrap_or((1.0, 10.0));
    let ticks = axis::log10(lo, hi);

    let w = width.points();
    let tick = frame::tick_font();
    let names: Vec<String> = rows.iter().map(|r| text::clean(&r.0)).collect();
    let label_w = text::max_width(&names, tick.size, tick.weight)?
        .min(0.35 * w)
        .max(10.0);
    let wrapped: Vec<Vec<String>> = names
        .iter()
        .map(|n| text::wrap_limited(n, label_w, 3, tick.size, tick.weight))
        .collect::<Result<_>>()?;
    let lines = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    // Rows fit their labels; few rows spread out so the figure is not a thin strip.
    let min_data_h = 0.5 * plot_height(width);
    let row_h = (block_height(lines, tick) + 4.0)
        .max(13.0)
        .max(min_data_h / rows.len() as f64);

    let legend = vec![
        (Swatch::Dot(MUTED), labels[0].to_string()),
        (Swatch::Diamond(MUTED), labels[1].to_string()),
    ];
    let header = Header::new(title, legend, w)?;
    let x0 = PAD + label_w + 2.0 * GAP;
    let (tick_text, x1) = tick_labels(&ticks, x0, w - PAD)?;
    let x_label = XLabel::new(value_label, x1 - x0)?;
    let top = header.bottom + 1.0;
    let plot = Rect {
        x0,
        y0: top,
        x1,
        y1: top + rows.len() as f64 * row_h,
    };
    let tick_depth = TICK_LEN + GAP + block_height(1, tick);
    let height = plot.y1 + tick_depth + x_label.height() + PAD;

    canvas::render(w, height, |c| {
        header.draw(c, w)?;
        let x = |v: f64| ticks.map(v, plot.x0, plot.x1);
        for t in &ticks.major {
            c.line((x(t.value), plot.y0), (x(t.value), plot.y1), GRID, GRID_W)?;
        }
        for (i, (name_lines, row)) in wrapped.iter().zip(rows).enumerate() {
            let cy = plot.y0 + (i as f64 + 0.5) * row_h;
            let style = SeriesStyle::of(i);
            c.dashed(&[(plot.x0, cy), (plot.x1, cy)], &[0.6, 1.4], GRID, GRID_W)?;
            let (mean, p95) = (valid(row.1).then_some(row.1), valid(row.2).then_some(row.2));
            if let (Some(m), Some(p)) = (mean, p95) {
                c.line((x(m), cy), (x(p), cy), style.colour, 1.0)?;
            }
            if let Some(p) = p95 {
                draw_diamond(c, (x(p), cy), 2.8, style.colour)?;
            }
            if let Some(m) = mean {
                c.circle((x(m), cy), 2.4, style.colour, true, 0.0)?;
            }
            if mean.is_none() && p95.is_none() {
                let f = canvas::Font::new(TICK_PT, Weight::Regular, MUTED);
                c.text(
                    "n/a",
                    plot.x0 + GAP,
                    cy + CAP * f.size / 2.0,
                    f,
                    Anchor::Start,
                    false,
                )?;
            }
            draw_centred_lines(c, name_lines, plot.x0 - 2.0 * GAP, cy, tick, Anchor::End)?;
        }
        draw_axis(c, &ticks, &tick_text, plot)?;
        x_label.draw(c, (plot.x0 + plot.x1) / 2.0, plot.y1 + tick_depth)?;
        Ok(())
    })
}

/// The labels under the axis (`None`: a tick without label) and the data area's right edge
/// (the last label, centred on its tick, must end inside `right`). Labels keep 4 pt apart:
/// plain numbers on every labelled tick if they fit, else powers of ten, else every second
/// (third, ...) decade.
pub(crate) fn tick_labels(
    ticks: &LogTicks,
    x0: f64,
    right: f64,
) -> Result<(Vec<Option<String>>, f64)> {
    let tick = frame::tick_font();
    let decades = (ticks.hi_exp - ticks.lo_exp).max(1) as usize;
    let mut last = None;
    for stride in 1..=decades {
        for power in [false, true] {
            let labels: Vec<Option<String>> = ticks
                .major
                .iter()
                .map(|t| {
                    let show = stride == 1
                        || (t.multiple == 1
                            && ((t.exponent - ticks.lo_exp) as usize).is_multiple_of(stride));
                    show.then(|| if power { t.power() } else { t.plain() })
                })
                .collect();
            let last_half = match labels.last() {
                Some(Some(l)) => text::width(l, tick.size, tick.weight)? / 2.0,
                _ => 0.0,
            };
            let x1 = right - last_half.max(2.0);
            let mut previous_right = f64::NEG_INFINITY;
            let mut clear = true;
            for (t, label) in ticks.major.iter().zip(&labels) {
                if let Some(label) = label {
                    let half = text::width(label, tick.size, tick.weight)? / 2.0;
                    let at = ticks.map(t.value, x0, x1);
                    clear &= at - half >= previous_right + 4.0 && at - half >= PAD;
                    previous_right = at + half;
                }
            }
            if clear {
                return Ok((labels, x1));
            }
            last = Some((labels, x1));
        }
    }
    last.ok_or_else(|| render_error!("log axis without ticks"))
}

pub(crate) fn draw_axis(
    c: &mut Canvas,
    ticks: &LogTicks,
    labels: &[Option<String>],
    plot: Rect,
) -> Result<()> {
    let tick = frame::tick_font();
    let x = |v: f64| ticks.map(v, plot.x0, plot.x1);
    c.line((plot.x0, plot.y1), (plot.x1, plot.y1), BLACK, AXIS_W)?;
    c.line((plot.x0, plot.y0), (plot.x0, plot.y1), BLACK, AXIS_W)?;
    for v in &ticks.minor {
        c.line(
            (x(*v), plot.y1),
            (x(*v), plot.y1 + TICK_LEN * 0.6),
            BLACK,
            AXIS_W * 0.8,
        )?;
    }
    for (t, label) in ticks.major.iter().zip(labels) {
        let at = x(t.value);
        c.line((at, plot.y1), (at, plot.y1 + TICK_LEN), BLACK, AXIS_W)?;
        if let Some(label) = label {
            let baseline = plot.y1 + TICK_LEN + GAP + ASCENT * tick.size;
            c.text(label, at, baseline, tick, Anchor::Middle, false)?;
        }
    }
    Ok(())
}
