//! Every figure kind, drawn from realistic sample data (4 agents as in the paper; 8 agents
//! with long names; 2 agents with intervals touching 0 and 1, an all-missing heatmap and
//! values a log axis cannot show), written to disk, read back and checked:
//! - the SVG parses with usvg and names the bundled font; the PNG has the pixel size of the
//!   figure at 300 dpi and says 300 dpi; the PDF is one page of the figure's size in points,
//!   with the font embedded;
//! - no two texts overlap, no text or drawing leaves the canvas, no text lies on an agent's
//!   bar, line or marker, and text on heatmap cells has at least 4.5:1 contrast;
//! - agent i is drawn in palette colour i, in every figure.
//!
//! And the report's figures of real stages (a coin stage and a point stage): titles only when
//! asked, the effects heatmap with each pair once and signed as its caption says, the games won
//! figure first under point scoring and absent under coin scoring.
//!
//! Set PLOTS_PREVIEW=DIR to also keep the figures in DIR for looking at them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use dhumbal::plots::{
    self, Band, Cells, Figure, HeatmapOptions, HeatmapPanel, Interval, PALETTE, Width,
    grouped_interval_bars, heatmaps, heatmaps_with, interval_bars, lines, log_points,
};

const WIDTHS: [Width; 2] = [Width::OneColumn, Width::TwoColumn];

fn iv(estimate: f64, half: f64) -> Interval {
    Interval {
        estimate,
        low: estimate - half,
        high: estimate + half,
    }
}

/// A deterministic stream of numbers in [0, 1) (no dependency on rand).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Data {
    name: &'static str,
    agents: Vec<String>,
    /// Win rate (%) with 95% half-widths, economic (coins per round), Jhyap success (%).
    win: Vec<Interval>,
    economic: Vec<Interval>,
    jhyap: Vec<Interval>,
    seats: Vec<String>,
    by_seat: Vec<Vec<Interval>>,
    cumulative: Vec<Band>,
    heatmap: Vec<HeatmapPanel>,
    timing: Vec<(f64, f64)>,
}

fn paper_agents() -> Data {
    let agents: Vec<String> = ["Aggressive", "Conservative", "Balanced", "Adaptive"]
        .map(String::from)
        .to_vec();
    // Table I of the paper (win %, CI), and its economic and Jhyap columns.
    let win = vec![
        iv(35.059, 2.92),
        iv(19.434, 2.42),
        iv(25.098, 2.66),
        iv(20.410, 2.47),
    ];
    let economic = vec![
        iv(6.155, 1.9),
        iv(-2.230, 1.2),
        iv(0.074, 1.5),
        iv(-3.999, 1.3),
    ];
    let jhyap = vec![
        iv(76.17, 3.1),
        iv(93.65, 2.0),
        iv(80.59, 2.9),
        iv(72.10, 3.4),
    ];
    let p = [0.35, 0.19, 0.25, 0.21];
    with_common("paper4", agents, win, economic, jhyap, &p, 1024)
}

fn long_names() -> Data {
    let agents: Vec<String> = [
        "ismcts-10000-heuristic-rollout",
        "mcts-2000-random-rollout",
        "aggressive-rule-based",
        "conservative-rule-based",
        "balanced-rule-based",
        "opportunistic-rule-based",
        "ppo-self-play-checkpoint-42",
        "uniform-random-baseline",
    ]
    .map(String::from)
    .to_vec();
    let p = [0.24, 0.2, 0.16, 0.1, 0.12, 0.09, 0.06, 0.03];
    let win = p
        .iter()
        .map(|&x| iv(100.0 * x, 100.0 * 1.96 * (x * (1.0 - x) / 2048.0f64).sqrt()))
        .collect();
    let economic = p.iter().map(|&x| iv(300.0 * (x - 0.125), 2.5)).collect();
    let jhyap = p.iter().map(|&x| iv(70.0 + 100.0 * x, 4.0)).collect();
    with_common("long8", agents, win, economic, jhyap, &p, 20_000)
}

fn edge_case() -> Data {
    let agents: Vec<String> = ["A", "B"].map(String::from).to_vec();
    // Rates as fractions whose intervals touch 0 and 1; one Jhyap rate undefined (no calls).
    let win = vec![
        Interval {
            estimate: 0.0,
            low: 0.0,
            high: 0.0037,
        },
        Interval {
            estimate: 1.0,
            low: 0.9963,
            high: 1.0,
        },
    ];
    let economic = vec![iv(-12.0, 0.5), iv(12.0, 0.5)];
    let jhyap = vec![
        Interval {
            estimate: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        },
        iv(1.0, 0.0),
    ];
    let mut d = with_common("edge2", agents, win, economic, jhyap, &[0.0, 1.0], 50);
    for panel in &mut d.heatmap {
        for row in &mut panel.values {
            row.iter_mut().for_each(|v| *v = None);
        }
        panel.stars = Vec::new();
    }
    // A mean of 0 and an undefined percentile cannot go on a log axis.
    d.timing = vec![(0.0, f64::NAN), (0.004, 0.009)];
    d
}

/// Seats, cumulative wins with bands, heatmaps and timings derived from win probabilities.
fn with_common(
    name: &'static str,
    agents: Vec<String>,
    win: Vec<Interval>,
    economic: Vec<Interval>,
    jhyap: Vec<Interval>,
    p: &[f64],
    rounds: usize,
) -> Data {
    let n = agents.len();
    let seats: Vec<String> = (0..4).map(|s| format!("Seat {s}")).collect();
    let by_seat = win
        .iter()
        .map(|w| {
            (0..4)
                .map(|s| {
                    iv(
                        w.estimate * (1.25 - 0.15 * s as f64),
                        w.high - w.estimate + 0.5,
                    )
                })
                .collect()
        })
        .collect();
    let mut rng = Lcg(42);
    let total: f64 = p.iter().sum::<f64>().max(1e-9);
    let cumulative = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let q = p[i] / total;
            let mut wins = 0.0;
            let mut points = Vec::with_capacity(rounds);
            let mut band = Vec::with_capacity(rounds);
            for r in 1..=rounds {
                if rng.next() < q {
                    wins += 1.0;
                }
                let rf = r as f64;
                let half = 1.96 * (rf * q * (1.0 - q)).sqrt();
                points.push((rf, wins));
                band.push((rf, q * rf - half, q * rf + half));
            }
            Band {
                label: a.clone(),
                points,
                band: (i % 2 == 0).then_some(band),
            }
        })
        .collect();
    let metric = |title: &str, m: &[Interval], scale: f64| {
        let values: Vec<Vec<Option<f64>>> = (0..n)
            .map(|r| {
                (0..n)
                    .map(|c| (r != c).then(|| (m[r].estimate - m[c].estimate) / scale))
                    .collect()
            })
            .collect();
        let stars = values
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| match v.map(f64::abs) {
                        Some(d) if d > 0.8 => "***".to_string(),
                        Some(d) if d > 0.3 => "**".to_string(),
                        Some(d) if d > 0.1 => "*".to_string(),
                        _ => String::new(),
                    })
                    .collect()
            })
            .collect();
        HeatmapPanel {
            title: title.to_string(),
            labels: agents.clone(),
            values,
            stars,
        }
    };
    let heatmap = vec![
        metric("Win rate", &win, 45.0),
        metric("Economic", &economic, 25.0),
        metric("Jhyap success", &jhyap, 40.0),
    ];
    let timing = (0..n)
        .map(|i| {
            let mean = [0.011, 1450.7, 2.38, 0.004, 0.02, 0.09, 310.0, 0.005][i % 8];
            (mean, mean * 1.6)
        })
        .collect();
    Data {
        name,
        agents,
        win,
        economic,
        jhyap,
        seats,
        by_seat,
        cumulative,
        heatmap,
        timing,
    }
}

fn named(agents: &[String], values: &[Interval]) -> Vec<(String, Interval)> {
    agents.iter().cloned().zip(values.iter().copied()).collect()
}

/// Every figure kind for one data set at one width, with a file stem each.
fn figures(d: &Data, width: Width) -> Vec<(String, Figure)> {
    let w = match width {
        Width::OneColumn => "1col",
        Width::TwoColumn => "2col",
    };
    let stem = |kind: &str| format!("{}_{kind}_{w}", d.name);
    let series: Vec<(String, Vec<Interval>)> = d
        .agents
        .iter()
        .cloned()
        .zip(d.by_seat.iter().cloned())
        .collect();
    let timing: Vec<(String, f64, f64)> = d
        .agents
        .iter()
        .zip(&d.timing)
        .map(|(a, &(m, p))| (a.clone(), m, p))
        .collect();
    vec![
        (
            stem("win"),
            interval_bars(
                "Win rate",
                "Win rate (%)",
                &named(&d.agents, &d.win),
                true,
                width,
            )
            .unwrap(),
        ),
        (
            stem("economic"),
            interval_bars(
                "",
                "Mean coin change per round (coins)",
                &named(&d.agents, &d.economic),
                false,
                width,
            )
            .unwrap(),
        ),
        (
            stem("jhyap"),
            interval_bars(
                "Jhyap success",
                "Successful calls (%)",
                &named(&d.agents, &d.jhyap),
                true,
                width,
            )
            .unwrap(),
        ),
        (
            stem("seats"),
            grouped_interval_bars(
                "Win rate by seat",
                "Seat (0 opens every round)",
                "Win rate (%)",
                &d.seats,
                &series,
                width,
            )
            .unwrap(),
        ),
        (
            stem("cumulative"),
            lines(
                "Cumulative wins",
                "Round",
                "Wins (rounds)",
                &d.cumulative,
                width,
            )
            .unwrap(),
        ),
        (stem("heatmap"), heatmaps(&d.heatmap, width).unwrap()),
        (
            stem("heatmap_lower"),
            heatmaps_with(
                &d.heatmap,
                &HeatmapOptions {
                    scale_label: "Cohen\u{2019}s d_{z} (row\u{a0}vs.\u{a0}column)",
                    cells: Cells::Lower,
                    ..HeatmapOptions::default()
                },
                width,
            )
            .unwrap(),
        ),
        (
            stem("timing"),
            log_points(
                "Decision time",
                "Mean decision time per agent (ms, log scale)",
                &timing,
                width,
            )
            .unwrap(),
        ),
    ]
}

fn preview_dir() -> Option<PathBuf> {
    std::env::var_os("PLOTS_PREVIEW").map(PathBuf::from)
}

#[test]
fn every_figure_kind_renders_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut slowest = (0.0, String::new());
    for data in [paper_agents(), long_names(), edge_case()] {
        for width in WIDTHS {
            let started = Instant::now();
            let figs = figures(&data, width);
            let drawn = started.elapsed().as_secs_f64();
            for (stem, fig) in &figs {
                let t = Instant::now();
                let paths = fig.write(dir.path(), stem).unwrap();
                let seconds = t.elapsed().as_secs_f64() + drawn / figs.len() as f64;
                if seconds > slowest.0 {
                    slowest = (seconds, stem.clone());
                }
                check_files(fig, width, &paths, stem);
                check_layout(fig, stem, stem.contains("heatmap"));
                if let Some(preview) = preview_dir() {
                    fig.write(&preview, stem).unwrap();
                }
            }
        }
    }
    eprintln!(
        "slowest figure (drawing and writing three files): {} in {:.3} s",
        slowest.1, slowest.0
    );
}

/// The files: SVG, PNG at 300 dpi, PDF of the figure's size.
fn check_files(fig: &Figure, width: Width, paths: &[PathBuf], stem: &str) {
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            format!("{stem}.svg"),
            format!("{stem}.png"),
            format!("{stem}.pdf")
        ]
    );
    let (w_in, h_in) = fig.size_inches();
    assert!(
        (w_in - width.inches()).abs() < 1e-9,
        "{stem}: width {w_in} in"
    );
    assert!(h_in > 1.0 && h_in < 9.5, "{stem}: height {h_in} in");

    let svg = std::fs::read_to_string(&paths[0]).unwrap();
    assert_eq!(svg, fig.svg());
    let tree = usvg::Tree::from_str(&svg, &plots::usvg_options()).unwrap();
    assert!((f64::from(tree.size().width()) - w_in * 72.0).abs() < 0.01);
    assert!(
        svg.contains(r#"font-family="DejaVu Serif, serif""#),
        "{stem}: the SVG names the font"
    );
    assert!(svg.contains("<text"), "{stem}: text stays text in the SVG");

    let png = std::fs::read(&paths[1]).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let px = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    let expected = ((w_in * 300.0).round() as u32, (h_in * 300.0).round() as u32);
    assert_eq!((px(16), px(20)), expected, "{stem}: PNG pixels for 300 dpi");
    assert_eq!(
        expected.0,
        if width == Width::OneColumn {
            1050
        } else {
            2148
        }
    );
    let phys = png
        .windows(4)
        .position(|w| w == b"pHYs")
        .expect("pHYs chunk");
    assert_eq!(
        (px(phys + 4), px(phys + 8), png[phys + 12]),
        (11811, 11811, 1),
        "{stem}: 300 dpi"
    );
    let decoded = resvg::tiny_skia::Pixmap::decode_png(&png).expect("PNG decodes");
    assert_eq!((decoded.width(), decoded.height()), expected);

    let pdf = std::fs::read(&paths[2]).unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "{stem}: PDF header");
    let media = media_box(&pdf).expect("a MediaBox");
    let (w_pt, h_pt) = fig.size_points();
    assert!(
        media[0].abs() < 1e-6 && media[1].abs() < 1e-6,
        "{stem}: {media:?}"
    );
    assert!(
        (media[2] - w_pt).abs() < 0.01 && (media[3] - h_pt).abs() < 0.01,
        "{stem}: page {media:?} vs {w_pt} x {h_pt}"
    );
    assert!((w_pt - width.inches() * 72.0).abs() < 1e-9);
    let pdf_text = String::from_utf8_lossy(&pdf);
    assert_eq!(
        pdf_text.matches("/Type /Page").count() - pdf_text.matches("/Type /Pages").count(),
        1
    );
    assert!(
        pdf_text.contains("DejaVuSerif") && pdf_text.contains("/FontFile2"),
        "{stem}: font embedded"
    );
}

fn media_box(pdf: &[u8]) -> Option<Vec<f64>> {
    let text = String::from_utf8_lossy(pdf);
    let at = text.find("/MediaBox [")? + "/MediaBox [".len();
    let end = at + text[at..].find(']')?;
    Some(
        text[at..end]
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect(),
    )
}

/// A filled or stroked shape: its colour (if plain) and its box.
type Shape = (Option<(u8, u8, u8)>, usvg::Rect);

#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    fill: (u8, u8, u8),
    rect: usvg::Rect,
}

/// Texts (with their ink boxes, from the outlines usvg converted them to) and filled or
/// stroked shapes, in drawing order.
fn collect(group: &usvg::Group, texts: &mut Vec<TextBox>, shapes: &mut Vec<Shape>) {
    for node in group.children() {
        match node {
            usvg::Node::Text(t) => {
                let content: String = t.chunks().iter().map(|c| c.text()).collect();
                let fill = t
                    .chunks()
                    .first()
                    .and_then(|c| c.spans().first())
                    .and_then(|s| s.fill())
                    .map(|f| match f.paint() {
                        usvg::Paint::Color(c) => (c.red, c.green, c.blue),
                        _ => (0, 0, 0),
                    })
                    .unwrap_or((0, 0, 0));
                // The outlines are in the text's coordinates; its transform includes the
                // viewBox scale and any turn.
                let rect = t
                    .flattened()
                    .bounding_box()
                    .transform(t.abs_transform())
                    .expect("a text box");
                texts.push(TextBox {
                    text: content,
                    fill,
                    rect,
                });
            }
            usvg::Node::Path(p) => {
                let paint = p
                    .fill()
                    .map(|f| f.paint())
                    .or_else(|| p.stroke().map(|s| s.paint()));
                let colour = paint.and_then(|p| match p {
                    usvg::Paint::Color(c) => Some((c.red, c.green, c.blue)),
                    _ => None,
                });
                shapes.push((colour, p.abs_stroke_bounding_box()));
            }
            usvg::Node::Group(g) => collect(g, texts, shapes),
            usvg::Node::Image(_) => {}
        }
    }
}

/// Overlap of two boxes, ignoring touching edges and slivers under 0.05 pt.
fn overlaps(a: &usvg::Rect, b: &usvg::Rect) -> bool {
    let w = a.right().min(b.right()) - a.left().max(b.left());
    let h = a.bottom().min(b.bottom()) - a.top().max(b.top());
    w > 0.05 && h > 0.05
}

fn check_layout(fig: &Figure, stem: &str, heatmap: bool) {
    let tree = fig.to_tree().unwrap();
    let (w, h) = fig.size_points();
    let (w, h) = (w as f32, h as f32);
    let mut texts = Vec::new();
    let mut shapes = Vec::new();
    collect(tree.root(), &mut texts, &mut shapes);
    assert!(texts.len() >= 4, "{stem}: only {} texts", texts.len());

    // Everything inside the canvas, with the outer margin kept clear for text.
    let all = tree.root().abs_stroke_bounding_box();
    assert!(
        all.left() >= -0.01
            && all.top() >= -0.01
            && all.right() <= w + 0.01
            && all.bottom() <= h + 0.01,
        "{stem}: drawing {all:?} leaves the {w} x {h} canvas"
    );
    for t in &texts {
        let r = t.rect;
        assert!(
            r.left() >= 1.0 && r.top() >= 1.0 && r.right() <= w - 1.0 && r.bottom() <= h - 1.0,
            "{stem}: text {:?} at {r:?} is outside the {w} x {h} canvas",
            t.text
        );
        assert!(r.width() > 0.0, "{stem}: text {:?} has no glyphs", t.text);
    }
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert!(
                !overlaps(&a.rect, &b.rect),
                "{stem}: texts {:?} {:?} and {:?} {:?} overlap",
                a.text,
                a.rect,
                b.text,
                b.rect
            );
        }
    }

    let palette: Vec<(u8, u8, u8)> = PALETTE.to_vec();
    if heatmap {
        // Text on a cell must read well: the topmost filled shape under its centre.
        for t in &texts {
            let (cx, cy) = (
                (t.rect.left() + t.rect.right()) / 2.0,
                (t.rect.top() + t.rect.bottom()) / 2.0,
            );
            let under = shapes.iter().rev().find(|(c, r)| {
                c.is_some()
                    && r.left() <= cx
                    && cx <= r.right()
                    && r.top() <= cy
                    && cy <= r.bottom()
                    && r.width() < w * 0.5
            });
            if let Some((Some(bg), _)) = under {
                assert!(
                    contrast(t.fill, *bg) >= 4.5,
                    "{stem}: text {:?} in {:?} on {:?}",
                    t.text,
                    t.fill,
                    bg
                );
            }
        }
    } else {
        // No text on an agent's bar, line, band or marker (legend swatches included).
        for (colour, r) in &shapes {
            if colour.is_some_and(|c| palette.contains(&c)) {
                for t in &texts {
                    assert!(
                        !overlaps(&t.rect, r),
                        "{stem}: text {:?} lies on an agent's mark at {r:?}",
                        t.text
                    );
                }
            }
        }
    }
}

fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let lum = |(r, g, b): (u8, u8, u8)| {
        let ch = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

#[test]
fn agents_keep_their_palette_colour_in_every_figure() {
    let d = paper_agents();
    for (stem, fig) in figures(&d, Width::OneColumn) {
        if stem.contains("heatmap") {
            continue;
        }
        for (i, colour) in PALETTE.iter().enumerate() {
            let present = fig.svg().contains(&format!("fill=\"{}\"", hex(*colour)))
                || fig.svg().contains(&format!("stroke=\"{}\"", hex(*colour)));
            assert_eq!(
                present,
                i < d.agents.len(),
                "{stem}: palette colour {i} {}",
                hex(*colour)
            );
        }
    }
    // And in pixels: the win-rate bars fill large areas with exactly the first four colours.
    let fig = interval_bars(
        "",
        "Win rate (%)",
        &named(&d.agents, &d.win),
        false,
        Width::OneColumn,
    )
    .unwrap();
    let png = resvg::tiny_skia::Pixmap::decode_png(&fig.png().unwrap()).unwrap();
    for (i, &(r, g, b)) in PALETTE.iter().enumerate() {
        let count = png
            .pixels()
            .iter()
            .filter(|p| (p.red(), p.green(), p.blue()) == (r, g, b))
            .count();
        if i < 4 {
            assert!(count > 5_000, "colour {i}: {count} pixels");
        } else {
            assert_eq!(count, 0, "colour {i}");
        }
    }
}

#[test]
fn agents_beyond_the_palette_get_hatching_and_dashes() {
    let k = PALETTE.len();
    let names: Vec<String> = (0..=k).map(|i| format!("agent-{i}")).collect();
    let p: Vec<f64> = (0..=k).map(|i| 0.05 + 0.02 * i as f64).collect();
    let win: Vec<Interval> = p.iter().map(|&x| iv(100.0 * x, 2.0)).collect();
    let d = with_common("cycle", names, win.clone(), win.clone(), win, &p, 2000);
    let bars = interval_bars(
        "",
        "Win rate (%)",
        &named(&d.agents, &d.win),
        false,
        Width::TwoColumn,
    )
    .unwrap();
    let one_pass = interval_bars(
        "",
        "Win rate (%)",
        &named(&d.agents[..k], &d.win[..k]),
        false,
        Width::TwoColumn,
    )
    .unwrap();
    // The bar after the palette's last repeats the first colour, hatched: many more line
    // elements.
    assert!(
        bars.svg().matches("<polyline").count() > one_pass.svg().matches("<polyline").count() + 10
    );
    let all = lines("", "Round", "Wins", &d.cumulative, Width::TwoColumn).unwrap();
    let first = lines("", "Round", "Wins", &d.cumulative[..k], Width::TwoColumn).unwrap();
    assert!(all.svg().matches("<polyline").count() > first.svg().matches("<polyline").count() + 20);
}

/// The texts of a figure, in drawing order.
fn texts_of(fig: &Figure) -> Vec<TextBox> {
    let tree = fig.to_tree().unwrap();
    let mut texts = Vec::new();
    collect(tree.root(), &mut texts, &mut Vec::new());
    texts
}

#[test]
fn a_lower_triangle_heatmap_shows_each_pair_once() {
    // Antisymmetric panels with a different value for every pair: row i vs. column j is
    // i + j/10 + panel/100 below the diagonal and its negative above.
    let labels: Vec<String> = [
        "Aggressive",
        "Conservative",
        "Balanced",
        "Adaptive",
        "Random",
    ]
    .map(String::from)
    .to_vec();
    let n = labels.len();
    let value = |panel: usize, i: usize, j: usize| -> Option<f64> {
        let v = |a: usize, b: usize| a as f64 + b as f64 / 10.0 + panel as f64 / 100.0 + 0.001;
        match i.cmp(&j) {
            std::cmp::Ordering::Greater => Some(v(i, j)),
            std::cmp::Ordering::Less => Some(-v(j, i)),
            std::cmp::Ordering::Equal => None,
        }
    };
    let panels: Vec<HeatmapPanel> = (0..2)
        .map(|k| HeatmapPanel {
            title: format!("Metric {k}"),
            labels: labels.clone(),
            values: (0..n)
                .map(|i| (0..n).map(|j| value(k, i, j)).collect())
                .collect(),
            stars: (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i > j { "*".into() } else { "**".into() })
                        .collect()
                })
                .collect(),
        })
        .collect();
    for width in WIDTHS {
        let fig = heatmaps_with(
            &panels,
            &HeatmapOptions {
                scale_label: "Cohen\u{2019}s d (row\u{a0}vs.\u{a0}column)",
                cells: Cells::Lower,
                ..HeatmapOptions::default()
            },
            width,
        )
        .unwrap();
        check_layout(&fig, "lower triangle", true);
        let texts: Vec<String> = texts_of(&fig).into_iter().map(|t| t.text).collect();
        let count = |s: &str| texts.iter().filter(|t| *t == s).count();
        for k in 0..2 {
            for i in 0..n {
                for j in 0..i {
                    let below = format!("{:.2}", value(k, i, j).unwrap());
                    assert_eq!(
                        count(&below),
                        1,
                        "{width:?}: {below} (panel {k}, {i} vs. {j})"
                    );
                    let above = format!("\u{2212}{:.2}", -value(k, j, i).unwrap());
                    assert_eq!(count(&above), 0, "{width:?}: {above} is above the diagonal");
                }
            }
        }
        // Stars of the cells below the diagonal only, one per pair and panel.
        assert_eq!(count("*"), 2 * n * (n - 1) / 2);
        assert_eq!(count("**"), 0);
        // The empty first row and last column are left out: the rows are labels 2..n, the
        // columns 1..n-1. Where the panels share their labels, how often each set is drawn
        // depends on the layout; the first label is only a column and the last only a row.
        let (columns, rows) = (count("Aggressive"), count("Random"));
        assert!(columns >= 1 && rows >= 1, "{width:?}: {texts:?}");
        assert_eq!(count("Conservative"), columns + rows, "{width:?}");
    }
    // One label is no triangle.
    let one = HeatmapPanel {
        title: "x".into(),
        labels: vec!["a".into()],
        values: vec![vec![None]],
        stars: Vec::new(),
    };
    let lower = HeatmapOptions {
        cells: Cells::Lower,
        ..HeatmapOptions::default()
    };
    assert!(heatmaps_with(&[one], &lower, Width::OneColumn).is_err());
}

#[test]
fn a_heads_up_heatmap_keeps_small_effects_pale_and_its_titles_whole() {
    // One pair, effects near 0, as a heads-up stage draws them: six one-cell panels.
    let titles = [
        "Win",
        "Economic",
        "Calls",
        "Call success (h)",
        "Cards",
        "Hand value",
    ];
    let panels: Vec<HeatmapPanel> = titles
        .iter()
        .enumerate()
        .map(|(k, t)| HeatmapPanel {
            title: (*t).into(),
            labels: vec!["mcts".into(), "ismcts".into()],
            values: vec![
                vec![None, Some(-0.03)],
                vec![Some(0.01 * k as f64 - 0.01), None],
            ],
            stars: Vec::new(),
        })
        .collect();
    // Cells hold -0.01 to 0.04; the colour bar's lower end is the largest |value| rounded up,
    // or the floor.
    for (min_limit, bottom) in [(0.0, "\u{2212}0.04"), (0.5, "\u{2212}0.50")] {
        let fig = heatmaps_with(
            &panels,
            &HeatmapOptions {
                cells: Cells::Lower,
                min_limit,
                ..HeatmapOptions::default()
            },
            Width::TwoColumn,
        )
        .unwrap();
        check_layout(&fig, "heads-up", true);
        let texts: Vec<String> = texts_of(&fig).into_iter().map(|t| t.text).collect();
        assert!(texts.iter().any(|t| t == bottom), "{min_limit}: {texts:?}");
        // The narrow panel's title wraps instead of losing its effect's symbol.
        assert!(texts.iter().any(|t| t.contains("(h)")), "{texts:?}");
        assert!(!texts.iter().any(|t| t.contains('\u{2026}')), "{texts:?}");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let w = Width::OneColumn;
    assert!(interval_bars("t", "y", &[], true, w).is_err());
    assert!(grouped_interval_bars("t", "x", "y", &[], &[], w).is_err());
    let groups = vec!["g0".to_string(), "g1".to_string()];
    let short = vec![("a".to_string(), vec![iv(1.0, 0.1)])];
    let err = grouped_interval_bars("t", "x", "y", &groups, &short, w).unwrap_err();
    assert!(err.to_string().contains("2 groups"), "{err}");
    assert!(lines("t", "x", "y", &[], w).is_err());
    let empty = Band {
        label: "a".into(),
        points: vec![(f64::NAN, 1.0)],
        band: None,
    };
    assert!(lines("t", "x", "y", &[empty], w).is_err());
    assert!(heatmaps(&[], w).is_err());
    let bad = HeatmapPanel {
        title: "x".into(),
        labels: vec!["a".into(), "b".into()],
        values: vec![vec![None, Some(1.0)]],
        stars: Vec::new(),
    };
    assert!(heatmaps(&[bad], w).is_err());
    assert!(log_points("t", "v", &[], w).is_err());
    // Too many categories for one column is refused with a reason.
    let many: Vec<(String, Interval)> = (0..60)
        .map(|i| (format!("agent-{i}"), iv(1.0, 0.1)))
        .collect();
    let err = interval_bars("t", "y", &many, false, w).unwrap_err();
    assert!(err.to_string().contains("two-column"), "{err}");
    // Bad file names.
    let fig = interval_bars("t", "y", &[("a".into(), iv(1.0, 0.1))], false, w).unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(fig.write(dir.path(), "../escape").is_err());
    assert!(fig.write(dir.path(), "").is_err());
}

#[test]
fn odd_values_draw_without_panicking() {
    let w = Width::OneColumn;
    let weird = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e300,
        -1e300,
        1e-300,
    ];
    let bars: Vec<(String, Interval)> = weird
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            (
                format!("a{i}\u{0}<&>\"'"),
                Interval {
                    estimate: v,
                    low: v,
                    high: f64::NAN,
                },
            )
        })
        .collect();
    let fig = interval_bars("<title & \"quotes\">", "y\ttab", &bars, true, w).unwrap();
    check_layout(&fig, "weird bars", false);
    let band = Band {
        label: "x".into(),
        points: weird.iter().map(|&v| (v, v)).collect(),
        band: Some(vec![(1.0, f64::NAN, 2.0)]),
    };
    let single = Band {
        label: "single".into(),
        points: vec![(3.0, 3.0)],
        band: None,
    };
    lines("", "", "", &[band, single], w).unwrap();
    let rows: Vec<(String, f64, f64)> = weird.iter().map(|&v| ("r".to_string(), v, v)).collect();
    log_points("", "", &rows, w).unwrap();
    let panel = HeatmapPanel {
        title: String::new(),
        labels: vec!["a".into(), "b".into()],
        values: vec![
            vec![Some(f64::NAN), Some(f64::INFINITY)],
            vec![Some(1e300), None],
        ],
        stars: vec![
            vec![String::new(), "*".into()],
            vec!["***".into(), String::new()],
        ],
    };
    heatmaps(&[panel], w).unwrap();
}

#[test]
fn figures_are_the_same_every_time() {
    let d = paper_agents();
    let a: Vec<String> = figures(&d, Width::OneColumn)
        .into_iter()
        .map(|(_, f)| f.svg().to_string())
        .collect();
    let b: Vec<String> = figures(&d, Width::OneColumn)
        .into_iter()
        .map(|(_, f)| f.svg().to_string())
        .collect();
    assert_eq!(a, b);
}

/// A stage played from a scenario of the repository (with `deals` deals or games) into a
/// temporary folder: its records, for the report's figures.
struct Played {
    _out: tempfile::TempDir,
    dir: PathBuf,
    info: dhumbal::report::StageInfo,
}

fn play(scenario: &str, deals: u64) -> Played {
    use dhumbal::runner::run::{self as runner, Quiet, RunOptions};
    use dhumbal::scenario::{self, Overrides};
    let out = tempfile::tempdir().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(scenario);
    let overrides = Overrides {
        seed: None,
        rounds: Some(deals),
        out: Some(out.path().to_path_buf()),
        trace: Vec::new(),
    };
    let sc = scenario::load(&path, &overrides).unwrap();
    let options = RunOptions {
        threads: 1,
        ..RunOptions::default()
    };
    runner::run(&sc, &options, &Quiet).unwrap();
    let dirs = dhumbal::report::load::stage_dirs(out.path()).unwrap();
    assert_eq!(dirs.len(), 1, "{scenario}: one stage");
    let info = dhumbal::report::load::stage_info(&dirs[0]).unwrap();
    Played {
        dir: dirs[0].clone(),
        info,
        _out: out,
    }
}

/// The stage's analysis and its figures as the report would draw them.
fn report_figures(
    played: &Played,
    titles: bool,
) -> (
    dhumbal::report::StageAnalysis,
    Vec<dhumbal::report::figures::FigureSpec>,
) {
    let opts = dhumbal::report::Options {
        figures: false,
        titles,
        ..dhumbal::report::Options::default()
    };
    let (s, acc) = dhumbal::report::analyze_stage(&played.dir, &played.info, &opts).unwrap();
    let specs = dhumbal::report::figures::specs(&s, &acc);
    (s, specs)
}

fn draw(spec: &dhumbal::report::figures::FigureSpec) -> Figure {
    (spec.draw)(spec.title.as_deref().unwrap_or("")).unwrap()
}

fn coin_stage() -> Played {
    play("scenarios/paper/table1-rotated.yaml", 24)
}

fn point_stage() -> Played {
    play("scenarios/variants/jhyap.yaml", 8)
}

#[test]
fn report_figures_carry_titles_only_when_asked() {
    for played in [coin_stage(), point_stage()] {
        let (_, plain) = report_figures(&played, false);
        let (_, titled) = report_figures(&played, true);
        assert_eq!(plain.len(), titled.len());
        for (p, t) in plain.iter().zip(&titled) {
            let stem = p.stem;
            assert!(p.title.is_none(), "{stem}: no title by default");
            let (fp, ft) = (draw(p), draw(t));
            check_layout(&fp, stem, stem == "effects");
            // Titles are the only bold text.
            assert!(
                !fp.svg().contains("bold"),
                "{stem}: a title drawn though none was asked for"
            );
            let Some(title) = &t.title else {
                // The effects heatmap: its panels carry the titles, in both.
                assert_eq!(stem, "effects");
                assert_eq!(fp.svg(), ft.svg());
                continue;
            };
            assert!(ft.svg().contains("bold"), "{stem}: no title drawn");
            let words: String = texts_of(&ft)
                .iter()
                .map(|t| t.text.clone())
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                words.contains(title.as_str()),
                "{stem}: {title:?} in {words:?}"
            );
            assert!(!fp.svg().contains(title.as_str()), "{stem}: {title:?}");
            // No blank band: without its title the figure is shorter by at least a line.
            let (hp, ht) = (fp.size_points().1, ft.size_points().1);
            assert!(
                ht - hp >= 9.0,
                "{stem}: {hp} pt without title, {ht} pt with"
            );
        }
    }
}

/// A cell's text as the heatmap writes it (two decimals below 10, true minus sign).
fn cell_number(v: f64) -> String {
    let decimals = if v.abs() < 10.0 {
        2
    } else if v.abs() < 100.0 {
        1
    } else {
        0
    };
    let text = format!("{:.*}", decimals, v.abs());
    if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("\u{2212}{text}")
    } else {
        text
    }
}

#[test]
fn the_effects_figure_shows_each_pairs_primary_effect_once() {
    for played in [coin_stage(), point_stage()] {
        let (s, specs) = report_figures(&played, false);
        let spec = specs.iter().find(|f| f.stem == "effects").expect("effects");
        let fig = draw(spec);
        check_layout(&fig, "effects", true);
        // The cells hold the primary rows' effects, the later agent (row) minus the earlier
        // (column): the rows' a minus b negated.
        let order = |id: &str| s.agents.iter().position(|a| a.agent == id).unwrap();
        let expected: Vec<String> = s
            .pairwise
            .iter()
            .filter(|r| r.primary)
            .filter_map(|r| {
                let sign = if order(&r.a) < order(&r.b) { -1.0 } else { 1.0 };
                r.effect.map(|d| cell_number(sign * d))
            })
            .collect();
        assert!(!expected.is_empty());
        let numbers: Vec<String> = texts_of(&fig)
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.replace('\u{2212}', "-").parse::<f64>().is_ok())
            .collect();
        // Each pair's number once per panel, plus the colour bar's five tick labels.
        assert_eq!(
            numbers.len(),
            expected.len() + 5,
            "{:?} vs. {expected:?}",
            numbers
        );
        let mut cells = numbers.clone();
        for e in &expected {
            let at = cells
                .iter()
                .position(|n| n == e)
                .unwrap_or_else(|| panic!("{e} missing from {numbers:?}"));
            cells.remove(at);
        }
        // The effect it is: d_z of the paired (or clustered) test by the design's unit.
        assert!(spec.caption.contains("d_z"), "{}", spec.caption);
        // The colour bar names it, z set as a subscript: after the d (above it, the label
        // reading upwards), lower on the line (to its right) and smaller.
        let texts = texts_of(&fig);
        let d = texts
            .iter()
            .find(|t| t.text.starts_with("Cohen\u{2019}s d"))
            .expect("the colour bar's label");
        assert_eq!(d.text, "Cohen\u{2019}s d", "the subscript is its own text");
        let z = texts
            .iter()
            .find(|t| t.text == "z")
            .expect("the colour bar's subscript z");
        assert!(z.rect.bottom() < d.rect.top(), "{:?} {:?}", z.rect, d.rect);
        assert!(z.rect.right() > d.rect.right(), "{:?} {:?}", z.rect, d.rect);
        assert!(
            z.rect.width() < 0.6 * d.rect.width(),
            "{:?} {:?}",
            z.rect,
            d.rect
        );
        assert!(!fig.svg().contains("d_{z}") && !fig.svg().contains("d_z"));
    }
}

#[test]
fn games_won_lead_the_figures_of_point_stages_only() {
    let (s, point) = report_figures(&point_stage(), false);
    assert!(s.info.points);
    let stems: Vec<&str> = point.iter().map(|f| f.stem).collect();
    assert_eq!(stems[..2], ["game_win", "win_rate"], "{stems:?}");
    let fig = draw(&point[0]);
    check_layout(&fig, "game_win", false);
    assert!(fig.svg().contains("Games won"));
    assert!(
        point[0].caption.contains("Games won"),
        "{}",
        point[0].caption
    );
    // The win rate is per round, which depends on the table size.
    assert!(
        point[1].caption.contains("per round"),
        "{}",
        point[1].caption
    );
    assert!(draw(&point[1]).svg().contains("Rounds won"));

    let (s, coin) = report_figures(&coin_stage(), false);
    assert!(!s.info.points);
    let stems: Vec<&str> = coin.iter().map(|f| f.stem).collect();
    assert_eq!(stems[0], "win_rate", "{stems:?}");
    assert!(!stems.contains(&"game_win"), "{stems:?}");
    assert!(draw(&coin[0]).svg().contains("Win rate (%)"));
}
