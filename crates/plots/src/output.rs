//! From the figure's SVG to files: PNG at 300 dpi (resvg) and PDF (svg2pdf), both from one
//! usvg tree parsed with the bundled fonts, so all three show the same picture.

use std::path::{Path, PathBuf};

use crate::{PlotError, Result};

use super::Figure;
use super::text;

/// Print resolution of the PNG.
pub(crate) const DPI: f64 = 300.0;

/// Parses figure SVG with the bundled fonts (1 unit = 1 pt).
pub(crate) fn parse(svg: &str) -> Result<usvg::Tree> {
    usvg::Tree::from_str(svg, &text::usvg_options())
        .map_err(|e| render_error!("parsing the figure's SVG: {e}"))
}

/// PNG size in pixels for a figure of `w` x `h` pt at 300 dpi.
pub(crate) fn pixel_size(w: f64, h: f64) -> (u32, u32) {
    let px = |pt: f64| (pt * DPI / 72.0).round().max(1.0) as u32;
    (px(w), px(h))
}

pub(crate) fn png(fig: &Figure) -> Result<Vec<u8>> {
    let tree = parse(fig.svg())?;
    png_from_tree(fig, &tree)
}

fn png_from_tree(fig: &Figure, tree: &usvg::Tree) -> Result<Vec<u8>> {
    let (w, h) = fig.pixel_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| render_error!("cannot make a {w} x {h} image"))?;
    let size = tree.size();
    let transform =
        resvg::tiny_skia::Transform::from_scale(w as f32 / size.width(), h as f32 / size.height());
    resvg::render(tree, transform, &mut pixmap.as_mut());
    let bytes = pixmap
        .encode_png()
        .map_err(|e| render_error!("encoding the PNG: {e}"))?;
    with_physical_size(bytes, DPI)
}

pub(crate) fn pdf(fig: &Figure) -> Result<Vec<u8>> {
    let tree = parse(fig.svg())?;
    pdf_from_tree(&tree)
}

fn pdf_from_tree(tree: &usvg::Tree) -> Result<Vec<u8>> {
    // The tree is in pt (usvg at 72 dpi), and so is the page at 72 dpi.
    svg2pdf::to_pdf(
        tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 72.0 },
    )
    .map_err(|e| render_error!("converting the figure to PDF: {e}"))
}

/// Writes STEM.svg, STEM.png and STEM.pdf into `dir` (created if missing).
pub(crate) fn write_all(fig: &Figure, dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    check_stem(stem)?;
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let tree = parse(fig.svg())?;
    let png = png_from_tree(fig, &tree)?;
    let pdf = pdf_from_tree(&tree)?;
    let mut paths = Vec::with_capacity(3);
    for (ext, bytes) in [
        ("svg", fig.svg().as_bytes()),
        ("png", &png[..]),
        ("pdf", &pdf[..]),
    ] {
        let path = dir.join(format!("{stem}.{ext}"));
        std::fs::write(&path, bytes).map_err(|source| PlotError::Io {
            path: path.clone(),
            source,
        })?;
        paths.push(path);
    }
    Ok(paths)
}

/// A stem is a plain file name: no separators, not empty, not "." or "..".
fn check_stem(stem: &str) -> Result<()> {
    if stem.is_empty()
        || stem == "."
        || stem == ".."
        || stem.contains(['/', '\\', '\0'])
        || stem.chars().any(char::is_control)
    {
        bail!("figure file name {stem:?} must be a plain name (no path separators)");
    }
    Ok(())
}

/// Inserts a pHYs chunk (pixels per metre) right after IHDR, so that viewers and LaTeX see
/// the intended print size.
fn with_physical_size(png: Vec<u8>, dpi: f64) -> Result<Vec<u8>> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    // Signature, then IHDR: length (4), type (4), 13 bytes of data, CRC (4).
    let ihdr_end = SIGNATURE.len() + 4 + 4 + 13 + 4;
    if png.len() < ihdr_end || &png[..8] != SIGNATURE || &png[12..16] != b"IHDR" {
        bail!("the PNG encoder wrote an unexpected header");
    }
    let per_metre = (dpi / 0.0254).round() as u32;
    let mut chunk = Vec::with_capacity(21);
    chunk.extend_from_slice(&9u32.to_be_bytes());
    chunk.extend_from_slice(b"pHYs");
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.push(1); // unit: metre
    let crc = crc32(&chunk[4..]);
    chunk.extend_from_slice(&crc.to_be_bytes());
    let mut out = Vec::with_capacity(png.len() + chunk.len());
    out.extend_from_slice(&png[..ihdr_end]);
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&png[ihdr_end..]);
    Ok(out)
}

/// CRC-32 (ISO-HDLC, as PNG uses), bitwise: a chunk of 13 bytes does not need a table.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // The CRC of an IEND chunk, as in every PNG file.
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
    }

    #[test]
    fn stems_are_plain_names() {
        assert!(check_stem("fig2a_win_rate").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a\0b"] {
            assert!(check_stem(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn pixel_sizes_at_300_dpi() {
        assert_eq!(pixel_size(252.0, 180.0), (1050, 750));
        assert_eq!(pixel_size(7.16 * 72.0, 72.0), (2148, 300));
    }
}
