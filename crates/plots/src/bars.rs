//! Bar charts with 95% interval whiskers: one bar per agent ([`interval_bars`], paper Fig. 2,
//! 7a) or groups of bars, one per agent in each group ([`grouped_interval_bars`], win rate by
//! seat). Both are one drawing routine over categories that each hold some bars.

use crate::Result;
use plotters::style::RGBColor;

use super::axis;
use super::canvas::{self, Anchor, Canvas, Font};
use super::category::CategoryLabels;
use super::frame::{self, Header, XLabel, YAxis};
use super::legend::Swatch;
use super::style::{
    AXIS_W, BLACK, GAP, MUTED, PAD, SeriesStyle, TICK_PT, WHISKER_W, WHITE, plot_height,
};
use super::text::{self, Rect, Weight};
use super::{Figure, Interval, Width};

/// Bars with 95% interval whiskers, one per agent; optional dashed horizontal median line
/// (paper Fig. 2a/7a win rate; Fig. 2b economic; Fig. 2c Jhyap success).
///
/// Bar i has the colour of agent i. A bar whose estimate is not finite is marked "n/a"; a
/// whisker is drawn where both ends are finite. The median is over the finite estimates.
pub fn interval_bars(
    title: &str,
    y_label: &str,
    bars: &[(String, Interval)],
    median_line: bool,
    width: Width,
) -> Result<Figure> {
    let median = if median_line {
        median(bars.iter().map(|(_, iv)| iv.estimate))
    } else {
        None
    };
    let coloured = bars
        .iter()
        .enumerate()
        .map(|(i, (name, iv))| (name, i, *iv));
    one_per_category("interval_bars", title, y_label, coloured, median, width)
}

/// [`interval_bars`] with each bar's colour given: `(label, colour index, interval)`, bar i
/// in the colour of agent `colour index` (so that bars sorted by value keep each agent's
/// colour from the other figures). No median line.
pub fn interval_bars_coloured(
    title: &str,
    y_label: &str,
    bars: &[(String, usize, Interval)],
    width: Width,
) -> Result<Figure> {
    let coloured = bars.iter().map(|(name, colour, iv)| (name, *colour, *iv));
    one_per_category(
        "interval_bars_coloured",
        title,
        y_label,
        coloured,
        None,
        width,
    )
}

/// One bar per category, `(label, colour index, interval)`, with an optional median line;
/// `caller` names the figure in the error when there are no bars.
fn one_per_category<'b>(
    caller: &str,
    title: &str,
    y_label: &str,
    bars: impl Iterator<Item = (&'b String, usize, Interval)>,
    median: Option<f64>,
    width: Width,
) -> Result<Figure> {
    let (categories, bars): (Vec<String>, _) = bars
        .map(|(name, colour, iv)| (text::clean(name), vec![(SeriesStyle::of(colour), iv)]))
        .unzip();
    if categories.is_empty() {
        bail!("{caller}: no bars to draw");
    }
    let chart = BarChart {
        title,
        x_label: "",
        y_label,
        categories,
        bars,
        legend: Vec::new(),
        median,
    };
    chart.draw(width)
}

/// Grouped bars: x = groups (e.g. "seat 0".."seat 3"), one bar per series (agent) in each
/// group, with interval whiskers (win rate by seat / by starting position).
///
/// `series[j].1[g]` is series j in group g; every series needs one interval per group. Series
/// j has the colour of agent j and a legend entry above the data. Non-finite estimates are
/// left out (no bar).
pub fn grouped_interval_bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<Interval>)],
    width: Width,
) -> Result<Figure> {
    if groups.is_empty() || series.is_empty() {
        bail!("grouped_interval_bars: needs at least one group and one series");
    }
    for (name, values) in series {
        if values.len() != groups.len() {
            bail!(
                "grouped_interval_bars: series {name:?} has {} intervals for {} groups",
                values.len(),
                groups.len()
            );
        }
    }
    let chart = BarChart {
        title,
        x_label,
        y_label,
        categories: groups.iter().map(|g| text::clean(g)).collect(),
        bars: (0..groups.len())
            .map(|g| {
                series
                    .iter()
                    .enumerate()
                    .map(|(j, (_, values))| (SeriesStyle::of(j), values[g]))
                    .collect()
            })
            .collect(),
        legend: series
            .iter()
            .enumerate()
            .map(|(j, (name, _))| (Swatch::Bar(SeriesStyle::of(j)), text::clean(name)))
            .collect(),
        median: None,
    };
    chart.draw(width)
}

/// Median of the finite values, if any.
fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

struct BarChart<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    categories: Vec<String>,
    /// Per category, its bars left to right.
    bars: Vec<Vec<(SeriesStyle, Interval)>>,
    legend: Vec<(Swatch, String)>,
    median: Option<f64>,
}

impl BarChart<'_> {
    fn draw(self, width: Width) -> Result<Figure> {
        let w = width.points();
        let plot_h = plot_height(width);
        let mut legend = self.legend.clone();
        if let Some(m) = self.median {
            legend.push((
                Swatch::Dashed(MUTED),
                format!("Median ({})", median_label(m, &self.bars)),
            ));
        }
        let header = Header::new(self.title, legend, w)?;

        // The value range: estimates, finite interval ends, zero (bars start there), median.
        let mut lo: f64 = 0.0;
        let mut hi: f64 = 0.0;
        for (_, iv) in self.bars.iter().flatten() {
            for v in [iv.estimate, iv.low, iv.high] {
                if v.is_finite() {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
        if let Some(m) = self.median {
            lo = lo.min(m);
            hi = hi.max(m);
        }
        let y_axis = YAxis::new(
            axis::linear(lo, hi, YAxis::max_ticks(plot_h)),
            plot_h,
            self.y_label,
        )?;

        let x0 = y_axis.width();
        let x1 = w - PAD - 2.0;
        let n = self.categories.len();
        let slot = (x1 - x0) / n as f64;
        let tick = frame::tick_font();
        let labels = CategoryLabels::new(&self.categories, slot, (0.3 * w).min(110.0), tick)?;
        let x_label = XLabel::new(self.x_label, x1 - x0)?;
        let plot = header.plot_area(x0, x1, plot_h);
        let height = plot.y1 + GAP + labels.depth + x_label.height() + PAD;

        canvas::render(w, height, |c| {
            header.draw(c, w)?;
            y_axis.draw_grid(c, plot)?;
            let zero = y_axis.y(0.0, plot);
            let centres: Vec<f64> = (0..n).map(|i| x0 + (i as f64 + 0.5) * slot).collect();
            let mut whiskers = Vec::new();
            for (bars, &cx) in self.bars.iter().zip(&centres) {
                let k = bars.len().max(1) as f64;
                let inner = if bars.len() == 1 {
                    0.62 * slot
                } else {
                    0.84 * slot
                };
                let bar_w = inner / k;
                let gap = if bars.len() == 1 {
                    0.0
                } else {
                    (0.08 * bar_w).min(1.0)
                };
                for (j, (style, iv)) in bars.iter().enumerate() {
                    let left = cx - inner / 2.0 + j as f64 * bar_w;
                    let mid = left + bar_w / 2.0;
                    if !iv.estimate.is_finite() {
                        if bars.len() == 1 {
                            draw_missing(c, mid, zero, slot)?;
                        }
                        continue;
                    }
                    let y = y_axis.y(iv.estimate, plot);
                    let r = Rect {
                        x0: left + gap / 2.0,
                        y0: y.min(zero),
                        x1: left + bar_w - gap / 2.0,
                        y1: y.max(zero),
                    };
                    c.rect(r, style.colour, 1.0)?;
                    c.hatch(r, style.hatch(), BLACK)?;
                    if iv.low.is_finite() && iv.high.is_finite() {
                        let cap = (0.5 * bar_w).min(6.0);
                        let halo = style.whisker_halo();
                        whiskers.push((
                            mid,
                            y_axis.y(iv.low, plot),
                            y_axis.y(iv.high, plot),
                            cap,
                            halo,
                        ));
                    }
                }
            }
            if plot_has_negative(&y_axis) {
                c.line((plot.x0, zero), (plot.x1, zero), BLACK, AXIS_W * 0.8)?;
            }
            if let Some(m) = self.median {
                let y = y_axis.y(m, plot);
                c.dashed(&[(plot.x0, y), (plot.x1, y)], &[2.5, 1.5], MUTED, 0.8)?;
            }
            for (x, a, b, cap, halo) in whiskers {
                // Over hatching or a dark fill, a white edge keeps the whisker visible.
                let passes: &[(RGBColor, f64)] = if halo {
                    &[(WHITE, WHISKER_W + 1.4), (BLACK, WHISKER_W)]
                } else {
                    &[(BLACK, WHISKER_W)]
                };
                for &(colour, w) in passes {
                    c.line((x, a), (x, b), colour, w)?;
                    c.line((x - cap / 2.0, a), (x + cap / 2.0, a), colour, w)?;
                    c.line((x - cap / 2.0, b), (x + cap / 2.0, b), colour, w)?;
                }
            }
            c.line((plot.x0, plot.y1), (plot.x1, plot.y1), BLACK, AXIS_W)?;
            y_axis.draw(c, plot)?;
            labels.draw(c, &centres, plot.y1 + GAP)?;
            x_label.draw(c, (plot.x0 + plot.x1) / 2.0, plot.y1 + GAP + labels.depth)?;
            Ok(())
        })
    }
}

fn plot_has_negative(y_axis: &YAxis) -> bool {
    y_axis.ticks.lo() < 0.0
}

/// "n/a" just above the zero line, when it fits the slot.
fn draw_missing(c: &mut Canvas, x: f64, zero: f64, slot: f64) -> Result<()> {
    let f = Font::new(TICK_PT, Weight::Regular, MUTED);
    if text::width("n/a", f.size, f.weight)? <= slot - 2.0 {
        c.text("n/a", x, zero - 2.0, f, Anchor::Middle, false)?;
    }
    Ok(())
}

/// The median written with the precision of the data (two more decimals than needed to tell
/// the estimates' magnitude, at most three).
fn median_label(m: f64, bars: &[Vec<(SeriesStyle, Interval)>]) -> String {
    let largest = bars
        .iter()
        .flatten()
        .map(|(_, iv)| iv.estimate.abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let decimals = if largest >= 100.0 {
        0
    } else if largest >= 10.0 {
        1
    } else if largest >= 1.0 {
        2
    } else {
        3
    };
    axis::format_number(m, decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_finite_values() {
        assert_eq!(median([3.0, f64::NAN, 1.0, 2.0].into_iter()), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), Some(2.5));
        assert_eq!(median([f64::NAN].into_iter()), None);
    }
}
