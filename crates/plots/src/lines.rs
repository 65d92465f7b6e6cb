//! Lines over x, one per agent, each with an optional shaded band (paper Fig. 3b/5b
//! cumulative wins over rounds; Fig. 7b cumulative coins with a confidence band).
//!
//! Long series are thinned before drawing (per bucket of consecutive points, the first, the
//! lowest, the highest and the last are kept), so a 100 000-round run draws as fast as a
//! short one and looks the same at print resolution.

use crate::Result;

use super::axis::{self, Ticks};
use super::canvas::{self, Anchor, Canvas};
use super::frame::{self, Header, XLabel, YAxis};
use super::style::{AXIS_W, BLACK, GAP, Marker, PAD, SeriesStyle, TICK_LEN, WHITE, plot_height};
use super::text::{self, ASCENT};
use super::{Band, Figure, Width};

/// Opacity of a band's fill.
pub(crate) const BAND_ALPHA: f64 = 0.2;
/// Points kept per pt of data-area width when thinning.
const POINTS_PER_PT: f64 = 2.0;

/// Lines over x, one per agent, each with an optional shaded confidence band
/// (Fig. 3b/5b cumulative wins over rounds; Fig. 7b cumulative coins with band).
///
/// Series i has the colour of agent i and a legend entry above the data. Points with a
/// non-finite coordinate break the line; band triples with one are skipped.
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Band],
    width: Width,
) -> Result<Figure> {
    if series.is_empty() {
        bail!("lines: no series to draw");
    }
    let (mut xs, mut ys) = (Range::default(), Range::default());
    for s in series {
        for &(x, y) in &s.points {
            if x.is_finite() && y.is_finite() {
                xs.add(x);
                ys.add(y);
            }
        }
        for &(x, lo, hi) in s.band.iter().flatten() {
            if x.is_finite() && lo.is_finite() && hi.is_finite() {
                xs.add(x);
                ys.add(lo);
                ys.add(hi);
            }
        }
    }
    let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) = (xs.get(), ys.get()) else {
        bail!("lines: no finite points to draw");
    };

    let w = width.points();
    let plot_h = plot_height(width);
    let legend =
        super::legend::line_entries((series.iter()).map(|s| (s.label.as_str(), s.band.is_some())));
    let header = Header::new(title, legend, w)?;
    // The data fill the frame: the axes run over the data (y with a little air), with nice
    // ticks inside.
    let pad = 0.03 * (y_hi - y_lo);
    // Ticks inside the range never sit on both ends, so one more fits.
    let y_ticks = axis::linear_within(y_lo - pad, y_hi + pad, YAxis::max_ticks(plot_h) + 1);
    let y_axis = YAxis::new(y_ticks, plot_h, y_label)?;
    let tick = frame::tick_font();
    let (x_ticks, x0, x1) = x_ticks(x_lo, x_hi, y_axis.width(), w - PAD)?;
    let x_label = XLabel::new(x_label, x1 - x0)?;
    let plot = header.plot_area(x0, x1, plot_h);
    let tick_depth = TICK_LEN + GAP + frame::block_height(1, tick);
    let height = plot.y1 + tick_depth + x_label.height() + PAD;
    let max_points = ((x1 - x0) * POINTS_PER_PT).max(16.0) as usize;

    canvas::render(w, height, |c| {
        header.draw(c, w)?;
        y_axis.draw_grid(c, plot)?;
        let to_page = |x: f64, y: f64| (x_ticks.map(x, plot.x0, plot.x1), y_axis.y(y, plot));
        for (i, s) in series.iter().enumerate() {
            if let Some(band) = &s.band {
                let kept: Vec<(f64, f64, f64)> = thin_band(band, max_points);
                let mut poly: Vec<(f64, f64)> =
                    kept.iter().map(|&(x, _, hi)| to_page(x, hi)).collect();
                poly.extend(kept.iter().rev().map(|&(x, lo, _)| to_page(x, lo)));
                c.polygon(&poly, SeriesStyle::of(i).colour, BAND_ALPHA)?;
            }
        }
        for (i, s) in series.iter().enumerate() {
            let style = SeriesStyle::of(i);
            let mut all_points = Vec::new();
            for run in finite_runs(&s.points) {
                let page: Vec<(f64, f64)> = thin(run, max_points)
                    .into_iter()
                    .map(|(x, y)| to_page(x, y))
                    .collect();
                c.dashed(&page, style.dashes(), style.colour, style.line_width())?;
                all_points.extend(page);
            }
            if style.marker() != Marker::None && !all_points.is_empty() {
                // Eight markers spread along the series, offset per series so they do not
                // sit on top of each other where lines meet.
                let n = all_points.len();
                let offset = (0.5 + i as f64 * 0.13) % 1.0;
                for k in 0..8 {
                    let at = ((k as f64 + offset) / 8.0 * n as f64) as usize;
                    draw_marker(c, style, all_points[at.min(n - 1)])?;
                }
            }
        }
        c.line((plot.x0, plot.y1), (plot.x1, plot.y1), BLACK, AXIS_W)?;
        for (&v, label) in x_ticks.values.iter().zip(&x_ticks.labels) {
            let x = x_ticks.map(v, plot.x0, plot.x1);
            c.line((x, plot.y1), (x, plot.y1 + TICK_LEN), BLACK, AXIS_W)?;
            let baseline = plot.y1 + TICK_LEN + GAP + ASCENT * tick.size;
            c.text(label, x, baseline, tick, Anchor::Middle, false)?;
        }
        y_axis.draw(c, plot)?;
        x_label.draw(c, (plot.x0 + plot.x1) / 2.0, plot.y1 + tick_depth)?;
        Ok(())
    })
}

/// Chooses x ticks whose labels keep at least 6 pt apart, and the data area's left and right
/// edges (from `left` at least, to `right` at most) so that the first and last labels, which
/// are centred on the ends, stay inside the figure.
fn x_ticks(lo: f64, hi: f64, left: f64, right: f64) -> Result<(Ticks, f64, f64)> {
    let tick = frame::tick_font();
    let half = |label: Option<&String>| -> Result<f64> {
        Ok(text::width(label.map_or("", String::as_str), tick.size, tick.weight)? / 2.0)
    };
    let mut max_ticks = (((right - left) / 30.0).floor() as usize + 1).max(2);
    loop {
        let ticks = axis::linear_within(lo, hi, max_ticks);
        let x0 = left.max(PAD + half(ticks.labels.first())?);
        let x1 = right - half(ticks.labels.last())?.max(2.0);
        let mut fits = true;
        for k in 1..ticks.values.len() {
            let a = text::width(&ticks.labels[k - 1], tick.size, tick.weight)?;
            let b = text::width(&ticks.labels[k], tick.size, tick.weight)?;
            let apart = ticks.map(ticks.values[k], x0, x1) - ticks.map(ticks.values[k - 1], x0, x1);
            fits &= (a + b) / 2.0 + 6.0 <= apart;
        }
        if fits || max_ticks <= 2 {
            return Ok((ticks, x0, x1));
        }
        max_ticks -= 1;
    }
}

#[derive(Default)]
struct Range(Option<(f64, f64)>);

impl Range {
    fn add(&mut self, v: f64) {
        self.0 = Some(match self.0 {
            None => (v, v),
            Some((a, b)) => (a.min(v), b.max(v)),
        });
    }

    fn get(&self) -> Option<(f64, f64)> {
        self.0
    }
}

/// The runs of consecutive finite points.
fn finite_runs(points: &[(f64, f64)]) -> Vec<&[(f64, f64)]> {
    points
        .split(|(x, y)| !(x.is_finite() && y.is_finite()))
        .filter(|run| !run.is_empty())
        .collect()
}

/// At most about `max` points: per bucket of consecutive points, its first, lowest, highest
/// and last point in their original order.
pub(crate) fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max.max(4) {
        return points.to_vec();
    }
    let bucket = points.len().div_ceil((max / 4).max(1));
    let mut out = Vec::with_capacity(max + 4);
    for chunk in points.chunks(bucket) {
        let mut idx = vec![0, chunk.len() - 1];
        let lowest = (0..chunk.len()).min_by(|&a, &b| chunk[a].1.total_cmp(&chunk[b].1));
        let highest = (0..chunk.len()).max_by(|&a, &b| chunk[a].1.total_cmp(&chunk[b].1));
        idx.extend(lowest);
        idx.extend(highest);
        idx.sort_unstable();
        idx.dedup();
        out.extend(idx.into_iter().map(|i| chunk[i]));
    }
    out
}

/// Band triples with finite values, thinned to about `max` by keeping every k-th (and the
/// last), bands being smooth.
fn thin_band(band: &[(f64, f64, f64)], max: usize) -> Vec<(f64, f64, f64)> {
    let finite: Vec<(f64, f64, f64)> = band
        .iter()
        .copied()
        .filter(|(x, lo, hi)| x.is_finite() && lo.is_finite() && hi.is_finite())
        .collect();
    if finite.len() <= max.max(2) {
        return finite;
    }
    let k = finite.len().div_ceil(max);
    let mut out: Vec<_> = finite.iter().copied().step_by(k).collect();
    if let Some(last) = finite.last()
        && out.last() != Some(last)
    {
        out.push(*last);
    }
    out
}

/// The marker of a series (none on the first pass through the palette), white-edged so it
/// reads over lines.
pub(crate) fn draw_marker(c: &mut Canvas, style: SeriesStyle, (x, y): (f64, f64)) -> Result<()> {
    let r = 2.2;
    let pts: Vec<(f64, f64)> = match style.marker() {
        Marker::None => return Ok(()),
        Marker::Square => vec![
            (x - r, y - r),
            (x + r, y - r),
            (x + r, y + r),
            (x - r, y + r),
        ],
        Marker::Triangle => vec![
            (x, y - r * 1.2),
            (x + r * 1.1, y + r * 0.8),
            (x - r * 1.1, y + r * 0.8),
        ],
        Marker::Diamond => vec![(x, y - r * 1.3), (x + r, y), (x, y + r * 1.3), (x - r, y)],
    };
    c.polygon(&pts, style.colour, 1.0)?;
    let mut closed = pts.clone();
    closed.push(pts[0]);
    c.polyline(&closed, WHITE, 0.4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_extremes_and_ends() {
        let points: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (i as f64, ((i * 7919) % 1000) as f64))
            .collect();
        let kept = thin(&points, 400);
        assert!(kept.len() <= 420, "{}", kept.len());
        assert_eq!(kept.first(), points.first());
        assert_eq!(kept.last(), points.last());
        let max = kept.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = kept.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert_eq!((min, max), (0.0, 999.0));
        assert!(kept.windows(2).all(|w| w[0].0 < w[1].0), "order kept");
        let short = [(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(thin(&short, 400), short);
    }

    #[test]
    fn non_finite_points_break_the_line() {
        let pts = [
            (0.0, 1.0),
            (1.0, f64::NAN),
            (2.0, 3.0),
            (3.0, 4.0),
            (f64::INFINITY, 1.0),
        ];
        let runs = finite_runs(&pts);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1], &[(2.0, 3.0), (3.0, 4.0)]);
    }
}
