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

/// Why a figure's SVG could not be read, or turned into a PNG or a PDF.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VectorError {
    #[error("SVG not readable")]
    Svg(#[source] usvg::Error),
    /// svg2pdf's error implements Display only: kept as the value.
    #[error("PDF conversion: {0}")]
    Pdf(svg2pdf::ConversionError),
    #[error("PNG of {w}x{h} pixels cannot be allocated")]
    Pixmap { w: u32, h: u32 },
    #[error("PNG encoding")]
    Png(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub(crate) fn tree(svg: &str) -> Result<usvg::Tree, VectorError> {
    let opt = usvg::Options {
        font_family: "DejaVu Sans".to_string(),
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &opt).map_err(VectorError::Svg)
}

/// A PDF page of the SVG's physical size (its width and height in CSS pixels
/// at 96 per inch).
pub(crate) fn pdf(tree: &usvg::Tree) -> Result<Vec<u8>, VectorError> {
    svg2pdf::to_pdf(
        tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map(canonical)
    .map_err(VectorError::Pdf)
}

/// svg2pdf writes the embedded fonts and the entries of a page's resource
/// dictionaries (`/Font << /fo1 2 0 R /fo0 1 0 R >>`) in hash-map order, so
/// the objects' numbers and places change from run to run. lopdf reads the
/// file back; every dictionary's keys are sorted, the objects renumbered in
/// the order they are first reached from the trailer (breadth first, keys in
/// sorted order), objects no reader can reach dropped, and the file written
/// again: the same drawing always gives the same bytes. Streams are copied
/// untouched. A file lopdf cannot read is returned as it is.
fn canonical(pdf: Vec<u8>) -> Vec<u8> {
    renumbered(&pdf).unwrap_or(pdf)
}

fn renumbered(pdf: &[u8]) -> Option<Vec<u8>> {
    use lopdf::{Dictionary, Object, ObjectId};

    fn sorted(dictionary: &mut Dictionary) {
        let mut entries: Vec<(Vec<u8>, Object)> = std::mem::take(dictionary).into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        *dictionary = entries.into_iter().collect();
    }

    let mut doc = lopdf::Document::load_mem(pdf).ok()?;
    doc.prune_objects();
    sorted(&mut doc.trailer);
    // Sorting each dictionary as it is reached makes the order of reach a
    // function of the content alone.
    let order = doc.traverse_objects(|object| match object {
        Object::Dictionary(d) => sorted(d),
        Object::Stream(s) => sorted(&mut s.dict),
        _ => {}
    });
    let new_id: std::collections::BTreeMap<ObjectId, ObjectId> = order
        .iter()
        .enumerate()
        .map(|(k, &id)| Some((id, (u32::try_from(k + 1).ok()?, 0))))
        .collect::<Option<_>>()?;
    let objects = std::mem::take(&mut doc.objects);
    if objects.len() != order.len() {
        return None; // a reference to an object the file does not hold
    }
    doc.objects = objects
        .into_iter()
        .map(|(id, object)| Some((*new_id.get(&id)?, object)))
        .collect::<Option<_>>()?;
    // References are rewritten as lopdf's own renumbering does: the objects
    // already sit at their new numbers, so the walk follows the new ones.
    doc.traverse_objects(|object| {
        if let Object::Reference(id) = object {
            if let Some(new) = new_id.get(id) {
                *id = *new;
            }
        }
    });
    doc.max_id = u32::try_from(order.len()).ok()?;
    let mut out = Vec::with_capacity(pdf.len());
    doc.save_to(&mut out).ok()?;
    Some(out)
}

/// A PNG at [`PNG_SCALE`] pixels per CSS pixel.
///
/// The same bytes as tiny-skia's `encode_png` of a pixmap filled white and
/// drawn on, for less work: the pixels live in one buffer per thread, kept
/// from one figure to the next (a new buffer of a few MB for each figure
/// had the kernel hand out and clear fresh pages twice, for the pixmap and
/// for `encode_png`'s copy of it); a buffer of 255 bytes is the white
/// pixmap; and an opaque pixmap (every figure: its background is white) is
/// encoded from the buffer itself, since demultiplying an opaque pixel
/// leaves it as it is (`encode_png`'s copy exists for that step). A pixmap
/// with a pixel that is not opaque goes through `encode_png`.
pub(crate) fn png(tree: &usvg::Tree) -> Result<Vec<u8>, VectorError> {
    use resvg::tiny_skia::{IntSize, Pixmap, Transform};
    thread_local! {
        static CANVAS: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let size = tree.size();
    let w = (size.width() * PNG_SCALE).ceil() as u32;
    let h = (size.height() * PNG_SCALE).ceil() as u32;
    let too_big = VectorError::Pixmap { w, h };
    let px = IntSize::from_wh(w.max(1), h.max(1)).ok_or(too_big)?;
    let len = (px.width() as usize)
        .checked_mul(px.height() as usize)
        .and_then(|n| n.checked_mul(4))
        .ok_or(VectorError::Pixmap { w, h })?;
    let mut data = CANVAS.take();
    data.clear();
    if data.try_reserve(len).is_err() {
        return Err(VectorError::Pixmap { w, h });
    }
    data.resize(len, 255); // white, opaque: `Pixmap::fill(Color::WHITE)`
    let mut pixmap = Pixmap::from_vec(data, px).ok_or(VectorError::Pixmap { w, h })?;
    resvg::render(
        tree,
        Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    let bytes = if pixmap.data().chunks_exact(4).all(|p| p[3] == u8::MAX) {
        opaque_png(pixmap.data(), px.width(), px.height())
    } else {
        pixmap.encode_png()
    };
    CANVAS.set(pixmap.take());
    bytes.map_err(|e| VectorError::Png(e.into()))
}

/// The PNG of opaque RGBA pixels, written as tiny-skia's `encode_png`
/// writes a pixmap (8-bit RGBA and the encoder's default compression and
/// filter).
fn opaque_png(rgba: &[u8], w: u32, h: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut data = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut data, w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(rgba)?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Document, Object};

    /// The PNG as tiny-skia writes a pixmap filled white and drawn on.
    fn reference_png(tree: &usvg::Tree) -> Vec<u8> {
        use resvg::tiny_skia::{Color, Pixmap, Transform};
        let size = tree.size();
        let w = (size.width() * PNG_SCALE).ceil() as u32;
        let h = (size.height() * PNG_SCALE).ceil() as u32;
        let mut pixmap = Pixmap::new(w.max(1), h.max(1)).unwrap();
        pixmap.fill(Color::WHITE);
        resvg::render(
            tree,
            Transform::from_scale(PNG_SCALE, PNG_SCALE),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().unwrap()
    }

    fn drawing(w: u32, h: u32, opacity: &str) -> String {
        format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">
<rect x="3" y="4" width="{}" height="9" fill="#E69F00" fill-opacity="{opacity}"/>
<polyline points="1,1 20,17 {},{}" stroke="#0072B2" stroke-width="1.5" fill="none"/>
<circle cx="12" cy="9" r="4" fill="none" stroke="black" stroke-dasharray="2,1"/>
<text x="2" y="{}" font-size="8">p 0.5</text></svg>"##,
            w / 2,
            w - 1,
            h / 3,
            h - 2
        )
    }

    #[test]
    fn the_png_is_the_one_tiny_skia_writes_whatever_was_drawn_before() {
        // Sizes change and shrink, so a kept buffer larger than the figure,
        // and one with an earlier drawing in it, are both used.
        for (w, h, opacity) in [
            (40, 30, "1"),
            (61, 23, "0.4"),
            (40, 30, "0"),
            (9, 50, "0.7"),
        ] {
            let tree = tree(&drawing(w, h, opacity)).unwrap();
            let ours = png(&tree).unwrap();
            assert_eq!(ours, reference_png(&tree), "{w}x{h} opacity {opacity}");
        }
    }

    #[test]
    fn an_unreadable_svg_keeps_the_parser_error_as_its_cause() {
        let e = tree("<svg").expect_err("not an SVG");
        assert!(matches!(e, VectorError::Svg(_)), "{e:?}");
        assert_eq!(e.to_string(), "SVG not readable");
        let cause = std::error::Error::source(&e).expect("the usvg error as source");
        assert!(!cause.to_string().is_empty());
    }

    /// A PDF as pdf-writer lays it out, objects written in `order`, the font
    /// dictionary's entries in the order given.
    fn written(order: &[usize], fonts: &str) -> Vec<u8> {
        let page = format!("<<\n  /Font <<\n{fonts}  >>\n  /W [0 0 600 10 [12 0 3]]\n>>\n");
        let bodies = [
            "",
            "<<\n  /Type /Catalog\n  /Pages 2 0 R\n>>\n",
            "<<\n  /Type /Pages\n  /Kids [3 0 R]\n>>\n",
            &page,
            "<<\n  /BaseFont /A\n  /FontFile 6 0 R\n  /Length 9\n>>",
            "<<\n  /BaseFont /B\n>>\n",
            "<<\n  /Length 9\n>>",
            "<<\n  /Unreached true\n>>\n",
        ];
        let streams = [
            "",
            "",
            "",
            "",
            "\nstream\nx 1 0 R y\nendstream\n",
            "",
            "\nstream\n2 0 R 0 R\nendstream\n",
            "",
        ];
        let mut pdf = b"%PDF-1.7\n%bin\n\n".to_vec();
        let mut at = vec![0; bodies.len()];
        for &n in order {
            at[n] = pdf.len();
            pdf.extend(format!("{n} 0 obj\n{}{}endobj\n\n", bodies[n], streams[n]).bytes());
        }
        let xref = pdf.len();
        pdf.extend(format!("xref\n0 {}\n0000000000 65535 f\r\n", bodies.len()).bytes());
        for a in &at[1..] {
            pdf.extend(format!("{a:010} 00000 n\r\n").bytes());
        }
        pdf.extend(
            format!("trailer\n<<\n  /Size 8\n  /Root 1 0 R\n>>\nstartxref\n{xref}\n%%EOF").bytes(),
        );
        pdf
    }

    const FONTS: &str = "    /fo0 4 0 R\n    /fo1 5 0 R\n";

    /// Object `n`'s dictionary (a stream's too).
    fn dictionary(doc: &Document, n: u32) -> &lopdf::Dictionary {
        match doc.get_object((n, 0)).unwrap() {
            Object::Stream(s) => &s.dict,
            o => o.as_dict().unwrap(),
        }
    }

    fn base_font(doc: &Document, n: u32) -> String {
        let font = dictionary(doc, n);
        String::from_utf8_lossy(font.get(b"BaseFont").unwrap().as_name().unwrap()).into_owned()
    }

    #[test]
    fn objects_and_entries_written_in_any_order_come_out_the_same() {
        let a = written(&[1, 2, 3, 4, 6, 5, 7], FONTS);
        let b = written(&[7, 1, 2, 3, 5, 4, 6], FONTS);
        let c = written(&[1, 2, 3, 4, 5, 6, 7], "    /fo1 5 0 R\n    /fo0 4 0 R\n");
        assert_ne!(a, b);
        let (ca, cb, cc) = (canonical(a), canonical(b), canonical(c));
        assert_eq!(String::from_utf8_lossy(&ca), String::from_utf8_lossy(&cb));
        assert_eq!(String::from_utf8_lossy(&ca), String::from_utf8_lossy(&cc));
        assert_eq!(canonical(ca.clone()), ca, "not idempotent");

        // lopdf reads it back: the cross-reference table holds; streams are
        // copied as they are; numbers that are not references stay; the
        // object nothing refers to is gone.
        let doc = Document::load_mem(&ca).unwrap();
        assert_eq!(doc.objects.len(), 6);
        assert_eq!(base_font(&doc, 4), "A");
        let Object::Stream(font_file) = doc.get_object((6, 0)).unwrap() else {
            panic!("object 6 is not the font file");
        };
        assert_eq!(font_file.content, b"2 0 R 0 R");
        let Object::Stream(a_font) = doc.get_object((4, 0)).unwrap() else {
            panic!("object 4 is not the font A stream");
        };
        assert_eq!(a_font.content, b"x 1 0 R y");
        let int = Object::Integer;
        let w = vec![int(0), int(0), int(600), int(10)];
        let w = [w, vec![Object::Array(vec![int(12), int(0), int(3)])]].concat();
        assert_eq!(dictionary(&doc, 3).get(b"W").unwrap(), &Object::Array(w));
        let text = String::from_utf8_lossy(&ca);
        assert!(!text.contains("Unreached"), "{text}");
    }

    #[test]
    fn objects_are_numbered_in_order_of_reach() {
        // The font dictionary names 5 first (as /fo0): it becomes 4.
        let swapped = written(&[1, 2, 3, 4, 5, 6, 7], "    /fo0 5 0 R\n    /fo1 4 0 R\n");
        let doc = Document::load_mem(&canonical(swapped)).unwrap();
        assert_eq!(base_font(&doc, 4), "B");
        assert_eq!(base_font(&doc, 5), "A");
        let a = dictionary(&doc, 5);
        assert_eq!(a.get(b"FontFile").unwrap().as_reference().unwrap(), (6, 0));
        assert_eq!(
            doc.trailer.get(b"Root").unwrap().as_reference().unwrap(),
            (1, 0)
        );
        let page = doc.get_dictionary((3, 0)).unwrap();
        let fonts = page.get(b"Font").unwrap().as_dict().unwrap();
        assert_eq!(fonts.get(b"fo0").unwrap().as_reference().unwrap(), (4, 0));
        assert_eq!(fonts.get(b"fo1").unwrap().as_reference().unwrap(), (5, 0));
    }

    #[test]
    fn a_file_it_does_not_understand_is_left_as_it_is() {
        for bad in [&b"not a pdf"[..], b"%PDF-1.7\nstartxref\n99\n%%EOF", b""] {
            assert_eq!(canonical(bad.to_vec()), bad);
        }
    }
}
