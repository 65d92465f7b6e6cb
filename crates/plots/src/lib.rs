//! Paper-ready figures for the analysis report, as SVG, PNG (300 dpi) and PDF.
//!
//! Every figure is laid out here in points (1/72 in) for a one-column (3.5 in) or two-column
//! (7.16 in) paper, drawn once as SVG through plotters' SVG backend, and then turned into PNG
//! (resvg) and PDF (svg2pdf) from that same SVG, so the three files are the same picture. Text
//! is set in the bundled DejaVu Serif and measured with the same shaping code (usvg) that
//! renders the PNG and PDF, which is what lets the layout keep labels apart and inside the
//! canvas without guessing. No system font is ever looked up.
//!
//! Text is drawn as written, with one mark-up: `_{…}` sets a subscript (`Cohen's d_{z}`).
//!
//! Agents keep one colour across figures: the colour of an agent is the palette entry at the
//! agent's index in the list passed (see [`agent_colour`]), so callers pass agents in one
//! consistent order, the stage's agent order. See `docs/figures.md` for the style.
//!
//! Modules: `style` (sizes, palette), `text` (fonts, measuring, wrapping), `canvas` (drawing
//! in points onto plotters, the SVG fix-ups), `axis` (ticks, number formats), `frame` (title,
//! legend and axes of x-y figures), `legend`, `category` (labels under bars and heatmap
//! columns), one module per figure kind (`bars`, `lines`, `heatmap`, `grid`, `logpoints`), and
//! `output` (PNG, PDF, files).

/// Why a figure could not be made: the library's one error type (style.md: library crates
/// return typed errors).
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The numbers cannot be drawn as asked: an empty figure, a value a log axis cannot
    /// show, more columns than the width holds.
    #[error("{0}")]
    Data(String),
    /// Drawing, measuring text, or encoding the PNG or PDF failed.
    #[error("{0}")]
    Render(String),
    /// A figure's file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The library's result.
pub type Result<T, E = PlotError> = std::result::Result<T, E>;

/// Returns a [`PlotError::Data`] made by `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::PlotError::Data(format!($($arg)*)))
    };
}

/// A [`PlotError::Render`] made by `format!`.
macro_rules! render_error {
    ($($arg:tt)*) => {
        $crate::PlotError::Render(format!($($arg)*))
    };
}

mod axis;
mod bars;
mod canvas;
mod category;
mod cost;
mod frame;
mod grid;
mod heatmap;
mod legend;
mod lines;
mod logpoints;
mod output;
mod style;
mod text;

use std::path::{Path, PathBuf};

pub use axis::group_thousands;
pub use bars::{grouped_interval_bars, interval_bars, interval_bars_coloured};
pub use cost::{CostPoint, CostSeries, cost_curves};
pub use grid::{GridOptions, GridPanel, grids};
pub use heatmap::{Cells, HeatmapOptions, heatmaps, heatmaps_with};
pub use lines::lines;
pub use logpoints::{log_points, log_points_labelled};
pub use style::{PALETTE, agent_colour};

/// Figure width: one column (3.5 in) or two columns (7.16 in) of an IEEE/ACM paper. The
/// height follows from the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    OneColumn,
    TwoColumn,
}

impl Width {
    /// The width in inches.
    pub fn inches(self) -> f64 {
        match self {
            Width::OneColumn => 3.5,
            Width::TwoColumn => 7.16,
        }
    }

    /// The width in points (1/72 in).
    pub fn points(self) -> f64 {
        self.inches() * 72.0
    }
}

/// A point estimate with its 95% interval. Non-finite values are drawn as missing ("n/a"),
/// never as zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// One line of a [`lines`] figure: points `(x, y)` in drawing order, and an optional shaded
/// band `(x, low, high)` (e.g. a 95% confidence band).
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub band: Option<Vec<(f64, f64, f64)>>,
}

/// One panel of a [`heatmaps`] figure: a square matrix over `labels` (rows = columns), with
/// `values[row][col]` the effect size of the row agent against the column agent (`None` on
/// the diagonal or where undefined) and `stars[row][col]` its significance mark ("", "*",
/// "**", "***"). `stars` may be empty when there are no marks. With [`Cells::Lower`] only the
/// entries below the diagonal (`row > col`) are read.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapPanel {
    pub title: String,
    pub labels: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    pub stars: Vec<Vec<String>>,
}

/// A finished figure: its SVG text and its size. [`Figure::write`] renders the PNG and PDF
/// from this SVG.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    svg: String,
    width_pt: f64,
    height_pt: f64,
}

impl Figure {
    /// Writes STEM.svg, STEM.png (300 dpi) and STEM.pdf into DIR; returns the three paths.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
        output::write_all(self, dir, stem)
    }

    /// The SVG text.
    pub fn svg(&self) -> &str {
        &self.svg
    }

    /// Width and height in inches.
    pub fn size_inches(&self) -> (f64, f64) {
        (self.width_pt / 72.0, self.height_pt / 72.0)
    }

    /// Width and height in points (1/72 in); also the PDF page size.
    pub fn size_points(&self) -> (f64, f64) {
        (self.width_pt, self.height_pt)
    }

    /// Width and height of the PNG in pixels (300 dpi).
    pub fn pixel_size(&self) -> (u32, u32) {
        output::pixel_size(self.width_pt, self.height_pt)
    }

    /// The SVG parsed by usvg with the bundled fonts (text laid out, 1 unit = 1 pt): what the
    /// PNG and PDF are rendered from. Useful to inspect the figure, e.g. text bounding boxes.
    pub fn to_tree(&self) -> Result<usvg::Tree> {
        output::parse(&self.svg)
    }

    /// The PNG bytes (300 dpi, with a pHYs chunk saying so).
    pub fn png(&self) -> Result<Vec<u8>> {
        output::png(self)
    }

    /// The PDF bytes (one page of the figure's size, fonts embedded).
    pub fn pdf(&self) -> Result<Vec<u8>> {
        output::pdf(self)
    }
}

/// Options for parsing the figures' SVG with usvg: the bundled fonts (and no system fonts),
/// DejaVu Serif as the serif and default family, 72 dpi so that 1 SVG pt = 1 usvg unit.
pub fn usvg_options() -> usvg::Options<'static> {
    text::usvg_options()
}
