//! Strength against cost: one line per series through its points, on a log10 x axis (time
//! per decision spans decades between a network, a heuristic and a search at several
//! budgets), every point a dot with its 95% interval as a vertical bar (a search agent's win
//! rate at each budget, against the microseconds it spent per decision).

use crate::Result;

use super::axis::{self, LogTicks};
use super::canvas::{self, Canvas};
use super::frame::{self, Header, XLabel, YAxis};
use super::logpoints::{draw_axis, tick_labels};
use super::style::{PAD, SeriesStyle, TICK_LEN, WHISKER_W, plot_height};
use super::{Figure, Width};

/// One point of a [`CostSeries`]: the cost `x` (> 0, drawn on a log axis), the value `y` and
/// its interval `low..high` (either bound not finite: no bar).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostPoint {
    pub x: f64,
    pub y: f64,
    pub low: f64,
    pub high: f64,
}

/// A series of [`cost_curves`]: its legend label and points, joined in the order given (a
/// search's budgets in increasing order: where a larger budget costs no more time, the line
/// turns back rather than hiding it).
#[derive(Clone, Debug, PartialEq)]
pub struct CostSeries {
    pub label: String,
    pub points: Vec<CostPoint>,
}

/// Lines of value against cost on a log10 x axis, one per series (the colour of series i is
/// agent i's), each point marked by a dot and its interval by a vertical bar; a series of one
/// point is a dot alone. Points whose cost is not positive and finite, or whose value is not
/// finite, cannot be placed and are left out.
pub fn cost_curves(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[CostSeries],
    width: Width,
) -> Result<Figure> {
    let placed = |p: &CostPoint| p.x.is_finite() && p.x > 0.0 && p.y.is_finite();
    let shown: Vec<Vec<CostPoint>> = series
        .iter()
        .map(|s| s.points.iter().copied().filter(placed).collect())
        .collect();
    let all: Vec<&CostPoint> = shown.iter().flatten().collect();
    if all.is_empty() {
        bail!("cost_curves: no point with a positive cost and a value to draw");
    }
    let fold = |f: fn(f64, f64) -> f64, v: &mut dyn Iterator<Item = f64>| {
        v.filter(|x| x.is_finite()).reduce(f).unwrap_or(f64::NAN)
    };
    let (x_lo, x_hi) = (
        fold(f64::min, &mut all.iter().map(|p| p.x)),
        fold(f64::max, &mut all.iter().map(|p| p.x)),
    );
    let values = || all.iter().flat_map(|p| [p.y, p.low, p.high]);
    let (y_lo, y_hi) = (fold(f64::min, &mut values()), fold(f64::max, &mut values()));
    let ticks: LogTicks = axis::log10(x_lo, x_hi);

    let w = width.points();
    let plot_h = plot_height(width);
    let legend = super::legend::line_entries(series.iter().map(|s| (s.label.as_str(), false)));
    let header = Header::new(title, legend, w)?;
    let pad = 0.05 * (y_hi - y_lo).max(1e-9);
    let y_ticks = axis::linear_within(y_lo - pad, y_hi + pad, YAxis::max_ticks(plot_h) + 1);
    let y_axis = YAxis::new(y_ticks, plot_h, y_label)?;
    // Room on the left for the y axis, and half a dot on either side of the decades.
    let x0 = y_axis.width() + 4.0;
    let (tick_text, x1) = tick_labels(&ticks, x0, w - PAD - 4.0)?;
    let x_label = XLabel::new(x_label, x1 - x0)?;
    let plot = header.plot_area(x0, x1, plot_h);
    let tick = frame::tick_font();
    let tick_depth = TICK_LEN + super::style::GAP + frame::block_height(1, tick);
    let height = plot.y1 + tick_depth + x_label.height() + PAD;

    canvas::render(w, height, |c| {
        header.draw(c, w)?;
        y_axis.draw_grid(c, plot)?;
        let at = |x: f64, y: f64| (ticks.map(x, plot.x0, plot.x1), y_axis.y(y, plot));
        for (i, points) in shown.iter().enumerate() {
            draw_series(c, SeriesStyle::of(i), points, &at)?;
        }
        y_axis.draw(c, plot)?;
        draw_axis(c, &ticks, &tick_text, plot)?;
        x_label.draw(c, (plot.x0 + plot.x1) / 2.0, plot.y1 + tick_depth)?;
        Ok(())
    })
}

/// One series: its line, then each point's interval bar (with short caps) and dot.
fn draw_series(
    c: &mut Canvas,
    style: SeriesStyle,
    points: &[CostPoint],
    at: &dyn Fn(f64, f64) -> (f64, f64),
) -> Result<()> {
    let line: Vec<(f64, f64)> = points.iter().map(|p| at(p.x, p.y)).collect();
    if line.len() > 1 {
        c.dashed(&line, style.dashes(), style.colour, style.line_width())?;
    }
    for p in points {
        if p.low.is_finite() && p.high.is_finite() {
            let (x, lo) = at(p.x, p.low);
            let (_, hi) = at(p.x, p.high);
            c.line((x, lo), (x, hi), style.colour, WHISKER_W)?;
            for y in [lo, hi] {
                c.line((x - 1.6, y), (x + 1.6, y), style.colour, WHISKER_W)?;
            }
        }
        c.circle(at(p.x, p.y), 2.2, style.colour, true, 0.0)?;
        super::lines::draw_marker(c, style, at(p.x, p.y))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> CostPoint {
        CostPoint {
            x,
            y,
            low: y - 2.0,
            high: y + 2.0,
        }
    }

    #[test]
    fn curves_over_decades_draw_and_a_lone_point_is_a_dot() {
        let series = [
            CostSeries {
                label: "uniform".into(),
                points: vec![
                    point(3000.0, 80.0),
                    point(300.0, 70.0),
                    point(30_000.0, 90.0),
                ],
            },
            CostSeries {
                label: "network".into(),
                points: vec![point(4.0, 60.0)],
            },
        ];
        let f = cost_curves(
            "",
            "µs per decision",
            "Games won (%)",
            &series,
            Width::OneColumn,
        )
        .unwrap();
        // Each text element's content is the line after its tag.
        let lines: Vec<&str> = f.svg().lines().collect();
        let texts: Vec<&str> = (lines.windows(2))
            .filter(|w| w[0].starts_with("<text"))
            .map(|w| w[1].trim())
            .collect();
        // The legend, then the y ticks, then decades from 1 µs (the network's 4) to 10^5 µs
        // (the search's 30,000) along x.
        assert_eq!(texts[..2], ["uniform", "network"]);
        let x_ticks = ["1", "10", "100", "1,000", "10,000", "10⁵"];
        let at = texts
            .iter()
            .position(|t| *t == "1")
            .expect("the first decade");
        assert_eq!(texts[at..at + 6], x_ticks, "{texts:?}");
        // One dot per point, four in all, each with its bar and two caps.
        assert_eq!(f.svg().matches("<circle").count(), 4);
    }

    #[test]
    fn nothing_placeable_is_an_error_not_an_empty_figure() {
        let series = [CostSeries {
            label: "a".into(),
            points: vec![
                point(0.0, 50.0),
                point(f64::NAN, 50.0),
                point(10.0, f64::NAN),
            ],
        }];
        let e = cost_curves("", "x", "y", &series, Width::OneColumn).unwrap_err();
        assert!(format!("{e}").contains("no point"), "{e}");
    }
}
