//! Drawing in points onto plotters' SVG backend, and the fix-ups of the SVG it writes.
//!
//! plotters' backend coordinates are integers, so the canvas uses 1/100 pt per unit (sizes in
//! the SVG's viewBox) and the root element states the size in pt. Its text needs three
//! fix-ups: it positions text with `dy` in `ex` (renderers disagree on the ex height), so we
//! always ask for the bottom anchor and drop that `dy`, which makes `y` the baseline;
//! it writes `font-size` as the requested size / 1.24, so we ask for 1.24 x the size and round
//! what comes out; and the family gets a generic fallback.

use crate::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, FontTransform};

use super::Figure;
use super::style::{Hatch, WHITE};
use super::text::{self, FAMILY, Rect, Weight};

/// SVG user units per point.
const UNITS: f64 = 100.0;

/// Where a text's anchor point sits along its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

/// Font size (pt), weight and colour of a text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Font {
    pub size: f64,
    pub weight: Weight,
    pub colour: RGBColor,
}

impl Font {
    pub fn new(size: f64, weight: Weight, colour: RGBColor) -> Self {
        Font {
            size,
            weight,
            colour,
        }
    }

    /// Baseline-to-baseline distance of this font (pt).
    pub fn line(&self) -> f64 {
        self.size * super::style::LINE_EM
    }
}

/// Rounds a height up to a whole number of pixels at 300 dpi (the PNG has no fractional row).
pub(crate) fn round_height(height_pt: f64) -> f64 {
    let px = (height_pt * 300.0 / 72.0 - 1e-6).ceil().max(1.0);
    px * 72.0 / 300.0
}

/// A figure being drawn; coordinates in pt from the top-left corner.
pub(crate) struct Canvas<'a> {
    area: DrawingArea<SVGBackend<'a>, Shift>,
}

fn u(v: f64) -> i32 {
    (v * UNITS).round() as i32
}

fn stroke_units(width_pt: f64) -> u32 {
    (width_pt * UNITS).round().max(1.0) as u32
}

fn finite(points: &[(f64, f64)]) -> bool {
    points.iter().all(|(x, y)| x.is_finite() && y.is_finite())
}

fn err<E: std::fmt::Debug>(e: E) -> crate::PlotError {
    render_error!("drawing the figure: {e:?}")
}

/// Draws a figure of `width_pt` x `height_pt` (height rounded to whole pixels) on a white
/// background with `draw`, and returns it with the SVG fixed up.
pub(crate) fn render(
    width_pt: f64,
    height_pt: f64,
    draw: impl FnOnce(&mut Canvas) -> Result<()>,
) -> Result<Figure> {
    text::register_plotters_fonts()?;
    let height_pt = round_height(height_pt);
    let (w, h) = (u(width_pt), u(height_pt));
    if w <= 0 || h <= 0 {
        return Err(render_error!(
            "figure size {width_pt} x {height_pt} pt is empty"
        ));
    }
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (w as u32, h as u32)).into_drawing_area();
        area.fill(&WHITE).map_err(err)?;
        let mut canvas = Canvas { area };
        draw(&mut canvas)?;
        canvas.area.present().map_err(err)?;
    }
    let svg = fix_svg(&svg, (w, h), width_pt, height_pt)?;
    Ok(Figure {
        svg,
        width_pt,
        height_pt,
    })
}

impl Canvas<'_> {
    /// A filled rectangle.
    pub fn rect(&mut self, r: Rect, colour: RGBColor, alpha: f64) -> Result<()> {
        if !finite(&[(r.x0, r.y0), (r.x1, r.y1)]) {
            return Ok(());
        }
        self.area
            .draw(&Rectangle::new(
                [(u(r.x0), u(r.y0)), (u(r.x1), u(r.y1))],
                colour.mix(alpha).filled(),
            ))
            .map_err(err)
    }

    /// An open polyline.
    pub fn polyline(&mut self, points: &[(f64, f64)], colour: RGBColor, width: f64) -> Result<()> {
        if points.len() < 2 || !finite(points) {
            return Ok(());
        }
        let pts: Vec<(i32, i32)> = points.iter().map(|&(x, y)| (u(x), u(y))).collect();
        self.area
            .draw(&PathElement::new(
                pts,
                colour.stroke_width(stroke_units(width)),
            ))
            .map_err(err)
    }

    /// A straight line.
    pub fn line(
        &mut self,
        from: (f64, f64),
        to: (f64, f64),
        colour: RGBColor,
        width: f64,
    ) -> Result<()> {
        self.polyline(&[from, to], colour, width)
    }

    /// A polyline with a dash pattern (on, off, on, off, ... in pt); solid when empty.
    pub fn dashed(
        &mut self,
        points: &[(f64, f64)],
        pattern: &[f64],
        colour: RGBColor,
        width: f64,
    ) -> Result<()> {
        if pattern.is_empty() {
            return self.polyline(points, colour, width);
        }
        for dash in dash_segments(points, pattern) {
            self.polyline(&dash, colour, width)?;
        }
        Ok(())
    }

    /// The outline of a rectangle.
    pub fn stroke_rect(&mut self, r: Rect, colour: RGBColor, width: f64) -> Result<()> {
        self.polyline(
            &[
                (r.x0, r.y0),
                (r.x1, r.y0),
                (r.x1, r.y1),
                (r.x0, r.y1),
                (r.x0, r.y0),
            ],
            colour,
            width,
        )
    }

    /// A filled polygon.
    pub fn polygon(&mut self, points: &[(f64, f64)], colour: RGBColor, alpha: f64) -> Result<()> {
        if points.len() < 3 || !finite(points) {
            return Ok(());
        }
        let pts: Vec<(i32, i32)> = points.iter().map(|&(x, y)| (u(x), u(y))).collect();
        self.area
            .draw(&Polygon::new(pts, colour.mix(alpha).filled()))
            .map_err(err)
    }

    /// A circle, filled or outlined.
    pub fn circle(
        &mut self,
        centre: (f64, f64),
        r: f64,
        colour: RGBColor,
        fill: bool,
        width: f64,
    ) -> Result<()> {
        if !finite(&[centre]) {
            return Ok(());
        }
        let style = if fill {
            colour.filled()
        } else {
            colour.stroke_width(stroke_units(width))
        };
        self.area
            .draw(&Circle::new(
                (u(centre.0), u(centre.1)),
                u(r).max(1) as u32,
                style,
            ))
            .map_err(err)
    }

    /// Hatching lines inside a rectangle.
    pub fn hatch(&mut self, r: Rect, hatch: Hatch, colour: RGBColor) -> Result<()> {
        for seg in hatch_segments(r, hatch, 2.2) {
            self.line(seg.0, seg.1, colour, super::style::HATCH_W)?;
        }
        Ok(())
    }

    /// One line of text with its baseline at `y`; `rotated` turns it to read bottom to top
    /// (the anchor then runs along the vertical baseline at `x`).
    pub fn text(
        &mut self,
        s: &str,
        x: f64,
        y: f64,
        font: Font,
        anchor: Anchor,
        rotated: bool,
    ) -> Result<()> {
        if s.is_empty() || !finite(&[(x, y)]) {
            return Ok(());
        }
        if !s.contains("_{") {
            return self.run(s, (x, y), font, anchor, rotated);
        }
        // Subscripts (`_{…}`): each run drawn where `text::set` puts it, a subscript smaller
        // and below the baseline.
        let (pieces, advance) = text::set(s, font.size, font.weight)?;
        let start = match anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => -advance / 2.0,
            Anchor::End => -advance,
        };
        for p in pieces {
            let along = start + p.at;
            let (drop, size) = if p.sub {
                (text::SUB_DROP * font.size, text::SUB_SIZE * font.size)
            } else {
                (0.0, font.size)
            };
            // Turned text reads bottom to top: along the line is up, below it is right.
            let (px, py) = if rotated {
                (x + drop, y - along)
            } else {
                (x + along, y + drop)
            };
            let font = Font { size, ..font };
            self.run(&p.text, (px, py), font, Anchor::Start, rotated)?;
        }
        Ok(())
    }

    /// One run of text as written (no subscripts), anchored at `(x, y)` as [`Canvas::text`]
    /// anchors it.
    fn run(
        &mut self,
        s: &str,
        (x, y): (f64, f64),
        font: Font,
        anchor: Anchor,
        rotated: bool,
    ) -> Result<()> {
        let h = match anchor {
            Anchor::Start => HPos::Left,
            Anchor::Middle => HPos::Center,
            Anchor::End => HPos::Right,
        };
        let style = match font.weight {
            Weight::Regular => FontStyle::Normal,
            Weight::Bold => FontStyle::Bold,
        };
        let desc = FontDesc::new(FontFamily::Name(FAMILY), font.size * UNITS * 1.24, style);
        let mut ts = TextStyle::from(desc)
            .color(&font.colour)
            .pos(Pos::new(h, VPos::Bottom));
        if rotated {
            ts = ts.transform(FontTransform::Rotate270);
        }
        self.area
            .draw(&Text::new(s.to_string(), (u(x), u(y)), ts))
            .map_err(err)
    }
}

/// Splits a polyline into dashes following `pattern` (pt), continuing across vertices.
pub(crate) fn dash_segments(points: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    if points.len() < 2 || pattern.is_empty() || pattern.iter().any(|p| p.is_nan() || *p <= 0.0) {
        return out;
    }
    let mut index = 0; // current entry of the pattern
    let mut left = pattern[0]; // length left in it
    let mut current: Vec<(f64, f64)> = vec![points[0]];
    for w in points.windows(2) {
        let (mut a, b) = (w[0], w[1]);
        let mut seg = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        while seg > 0.0 {
            let step = left.min(seg);
            let t = step / seg;
            let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            if index % 2 == 0 {
                current.push(p);
            }
            a = p;
            seg -= step;
            left -= step;
            if left <= 1e-9 {
                if index % 2 == 0 && current.len() >= 2 {
                    out.push(std::mem::take(&mut current));
                }
                index = (index + 1) % pattern.len();
                left = pattern[index];
                current.clear();
                if index % 2 == 0 {
                    current.push(p);
                }
            }
        }
    }
    if index % 2 == 0 && current.len() >= 2 {
        out.push(current);
    }
    out
}

/// Diagonal hatch segments clipped to `r`, `spacing` pt apart (measured across the lines).
pub(crate) fn hatch_segments(r: Rect, hatch: Hatch, spacing: f64) -> Vec<((f64, f64), (f64, f64))> {
    let mut out = Vec::new();
    let step = spacing * std::f64::consts::SQRT_2;
    let forward = matches!(hatch, Hatch::Forward | Hatch::Cross);
    let backward = matches!(hatch, Hatch::Backward | Hatch::Cross);
    if forward {
        // "/" on screen: x + y = c.
        let mut c = r.x0 + r.y0 + step / 2.0;
        while c < r.x1 + r.y1 {
            let xa = r.x0.max(c - r.y1);
            let xb = r.x1.min(c - r.y0);
            if xb > xa {
                out.push(((xa, c - xa), (xb, c - xb)));
            }
            c += step;
        }
    }
    if backward {
        // "\" on screen: y - x = c.
        let mut c = r.y0 - r.x1 + step / 2.0;
        while c < r.y1 - r.x0 {
            let xa = r.x0.max(r.y0 - c);
            let xb = r.x1.min(r.y1 - c);
            if xb > xa {
                out.push(((xa, xa + c), (xb, xb + c)));
            }
            c += step;
        }
    }
    out
}

/// Applies the fix-ups described in the module docs to plotters' SVG.
fn fix_svg(svg: &str, (w, h): (i32, i32), width_pt: f64, height_pt: f64) -> Result<String> {
    let root = format!(r#"<svg width="{w}" height="{h}" "#);
    if !svg.starts_with(&root) {
        return Err(render_error!(
            "unexpected SVG header from plotters: {:?}",
            &svg[..svg.len().min(80)]
        ));
    }
    let mut out = format!(
        r#"<svg width="{}pt" height="{}pt" "#,
        round2(width_pt),
        round2(height_pt)
    );
    let rest = svg[root.len()..].replace(r#" dy="-0.5ex""#, "").replace(
        &format!(r#"font-family="{}""#, text::xml_escape(FAMILY)),
        &format!(r#"font-family="{}""#, text::xml_escape(text::SVG_FAMILY)),
    );
    out.push_str(&round_font_sizes(&rest)?);
    Ok(out)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Rewrites every `font-size="x"` with x rounded to 1/100 unit (plotters divides by 1.24).
fn round_font_sizes(svg: &str) -> Result<String> {
    const KEY: &str = r#"font-size=""#;
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at + KEY.len()]);
        rest = &rest[at + KEY.len()..];
        let end = rest
            .find('"')
            .ok_or_else(|| render_error!("unterminated font-size in SVG"))?;
        let value: f64 = rest[..end]
            .parse()
            .map_err(|_| render_error!("bad font-size {:?} in SVG", &rest[..end]))?;
        out.push_str(&format!("{}", round2(value)));
        rest = &rest[end..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_round_up_to_whole_pixels() {
        let h = round_height(100.0);
        assert!((100.0..100.0 + 72.0 / 300.0).contains(&h));
        let px = h * 300.0 / 72.0;
        assert!((px - px.round()).abs() < 1e-9);
        // And to whole SVG units.
        assert!((h * UNITS - (h * UNITS).round()).abs() < 1e-6);
    }

    #[test]
    fn dashes_follow_the_pattern_across_vertices() {
        let d = dash_segments(&[(0.0, 0.0), (5.0, 0.0), (5.0, 5.0)], &[2.0, 1.0]);
        // 10 pt of path: dashes at 0-2, 3-5 (to the corner), 6-8 (1 pt down), 9-10.
        assert_eq!(d.len(), 4);
        assert_eq!(d[1], vec![(3.0, 0.0), (5.0, 0.0)]);
        assert_eq!(d[2], vec![(5.0, 1.0), (5.0, 3.0)]);
        assert_eq!(d[3], vec![(5.0, 4.0), (5.0, 5.0)]);
    }

    #[test]
    fn hatch_lines_stay_inside_the_box() {
        let r = Rect {
            x0: 10.0,
            y0: 20.0,
            x1: 16.0,
            y1: 50.0,
        };
        for hatch in [Hatch::Forward, Hatch::Backward, Hatch::Cross] {
            let segs = hatch_segments(r, hatch, 2.0);
            assert!(segs.len() > 5);
            for (a, b) in segs {
                for p in [a, b] {
                    assert!(p.0 >= r.x0 - 1e-9 && p.0 <= r.x1 + 1e-9, "{p:?}");
                    assert!(p.1 >= r.y0 - 1e-9 && p.1 <= r.y1 + 1e-9, "{p:?}");
                }
            }
        }
        assert!(hatch_segments(r, Hatch::None, 2.0).is_empty());
    }

    #[test]
    fn svg_is_fixed_up() {
        let fig = render(252.0, 100.0, |c| {
            c.text(
                "Win rate (%)",
                10.0,
                50.0,
                Font::new(8.0, Weight::Regular, RGBColor(0, 0, 0)),
                Anchor::Start,
                false,
            )
        })
        .unwrap();
        let svg = fig.svg();
        assert!(
            svg.starts_with(r#"<svg width="252pt" height="100.08pt" viewBox="0 0 25200 10008""#),
            "{svg}"
        );
        assert!(svg.contains(r#"font-family="DejaVu Serif, serif""#));
        assert!(svg.contains(r#"font-size="800""#), "{svg}");
        assert!(!svg.contains("dy="));
        assert!(svg.contains(r#"y="5000""#));
    }
}
