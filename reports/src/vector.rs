//! The SVG of a figure turned into a PDF (vector, the bundled DejaVu fonts
//! embedded as subsets, so the text stays text) and a PNG, both from one
//! usvg tree: the three files show the same drawing.

use std::sync::{Arc, OnceLock};
use svg2pdf::usvg;

/// PNG pixels per CSS pixel: sharp on high-density laptop screens.
pub const PNG_SCALE: f32 = 2.0;

/// The font database: the bundled DejaVu faces only, so no machine's system
/// fonts change a figure.
fn fontdb() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        for bytes in [
            dejavu::sans::regular(),
            dejavu::sans::bold(),
            dejavu::sans::oblique(),
        ] {
            db.load_font_data(bytes.to_vec());
        }
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

pub(crate) fn tree(svg: &str) -> Result<usvg::Tree, String> {
    let opt = usvg::Options {
        font_family: "DejaVu Sans".to_string(),
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &opt).map_err(|e| format!("SVG not readable: {e}"))
}

/// A PDF page of the SVG's physical size (its width and height in CSS pixels
/// at 96 per inch).
pub(crate) fn pdf(tree: &usvg::Tree) -> Result<Vec<u8>, String> {
    svg2pdf::to_pdf(
        tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map(sorted_resources)
    .map_err(|e| format!("PDF conversion: {e}"))
}

/// svg2pdf writes the entries of a page's resource dictionaries (`/Font <<
/// /fo1 2 0 R /fo0 1 0 R >>`) in hash-map order, which changes from run to
/// run; sorting the lines of each such dictionary makes the PDF a function
/// of the figure alone. Lines only change places, so every byte offset (the
/// cross-reference table) stays valid.
fn sorted_resources(mut pdf: Vec<u8>) -> Vec<u8> {
    const HEADS: [&[u8]; 6] = [
        b"/Font <<\n",
        b"/ExtGState <<\n",
        b"/XObject <<\n",
        b"/ColorSpace <<\n",
        b"/Pattern <<\n",
        b"/Shading <<\n",
    ];
    let mut i = 0;
    while i < pdf.len() {
        let Some(head) = HEADS.iter().find(|h| pdf[i..].starts_with(h)) else {
            i += 1;
            continue;
        };
        let start = i + head.len();
        // The entry lines up to the line that closes the dictionary.
        let mut lines: Vec<&[u8]> = Vec::new();
        let mut j = start;
        while let Some(n) = pdf[j..].iter().position(|b| *b == b'\n') {
            let line = &pdf[j..j + n + 1];
            if line.trim_ascii() == b">>" || line.trim_ascii().ends_with(b"<<") {
                break;
            }
            lines.push(line);
            j += n + 1;
        }
        let mut sorted: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
        sorted.sort();
        let joined: Vec<u8> = sorted.concat();
        pdf[start..j].copy_from_slice(&joined);
        i = j;
    }
    pdf
}

/// A PNG at [`PNG_SCALE`] pixels per CSS pixel.
pub(crate) fn png(tree: &usvg::Tree) -> Result<Vec<u8>, String> {
    let size = tree.size();
    let w = (size.width() * PNG_SCALE).ceil() as u32;
    let h = (size.height() * PNG_SCALE).ceil() as u32;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w.max(1), h.max(1))
        .ok_or_else(|| format!("PNG of {w}x{h} pixels cannot be allocated"))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        tree,
        resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding: {e}"))
}
