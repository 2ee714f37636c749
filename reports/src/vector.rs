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
    .map(|pdf| canonical(sorted_resources(pdf)))
    .map_err(|e| format!("PDF conversion: {e}"))
}

/// svg2pdf writes the embedded fonts in hash-map order, so the font
/// objects' numbers and places change from run to run. This renumbers every
/// object in the order it is first reached from the trailer (references read
/// in text order, breadth first) and writes the objects in that order with a
/// new cross-reference table: the same drawing always gives the same bytes.
/// Streams are copied untouched (only the dictionaries before them are read).
/// A file this pass does not understand is returned as it is.
fn canonical(pdf: Vec<u8>) -> Vec<u8> {
    renumbered(&pdf).unwrap_or(pdf)
}

/// A PDF object: its dictionary (or value) text and its stream part, if any
/// (from `stream` to just before `endobj`).
struct Object<'a> {
    head: &'a [u8],
    stream: &'a [u8],
}

fn renumbered(pdf: &[u8]) -> Option<Vec<u8>> {
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let rfind = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).rposition(|w| w == needle);
    let number = |b: &[u8]| std::str::from_utf8(b).ok()?.trim().parse::<usize>().ok();

    // The cross-reference table: one 20-byte entry per object number.
    let startxref = rfind(pdf, b"startxref")?;
    let xref_at = number(pdf[startxref + 9..].split(|b| *b == b'%').next()?)?;
    let table = pdf.get(xref_at..)?.strip_prefix(b"xref\n")?;
    let line_end = table.iter().position(|b| *b == b'\n')?;
    let mut range = table[..line_end].split(|b| *b == b' ');
    let (first, count) = (number(range.next()?)?, number(range.next()?)?);
    if first != 0 || range.next().is_some() {
        return None;
    }
    let entries = table.get(line_end + 1..line_end + 1 + 20 * count)?;
    let mut offsets: Vec<(usize, usize)> = Vec::new(); // (offset, number)
    for (n, e) in entries.chunks(20).enumerate() {
        if e[17] == b'n' {
            offsets.push((number(&e[..10])?, n));
        }
    }
    offsets.sort_unstable();
    let trailer_at = find(pdf, b"trailer", xref_at)?;
    let trailer = pdf.get(trailer_at + 7..startxref)?;

    // Each object's text, between its offset and the next one.
    let mut objects: Vec<Option<Object>> = (0..count).map(|_| None).collect();
    for (k, &(at, n)) in offsets.iter().enumerate() {
        let end = offsets.get(k + 1).map_or(xref_at, |o| o.0);
        let text = pdf.get(at..end)?;
        let body_at = find(text, b" obj\n", 0)? + 5;
        if number(text[..body_at - 5].split(|b| *b == b' ').next()?)? != n {
            return None;
        }
        let body_end = rfind(text, b"endobj")?;
        let body = &text[body_at..body_end];
        let split = find(body, b"\nstream\n", 0).unwrap_or(body.len());
        objects[n] = Some(Object {
            head: &body[..split],
            stream: &body[split..],
        });
    }

    // New numbers in the order the objects are reached from the trailer.
    let mut new_number = vec![0usize; count];
    let mut order = Vec::new();
    let mut queue: std::collections::VecDeque<usize> = references(trailer).collect();
    while let Some(n) = queue.pop_front() {
        if n >= count || new_number[n] != 0 || objects[n].is_none() {
            continue;
        }
        order.push(n);
        new_number[n] = order.len();
        queue.extend(references(objects[n].as_ref()?.head));
    }
    // Objects nothing refers to keep their relative order, after the rest.
    for &(_, n) in &offsets {
        if new_number[n] == 0 {
            order.push(n);
            new_number[n] = order.len();
        }
    }

    let mut out = pdf[..offsets.first()?.0].to_vec();
    let mut written = Vec::with_capacity(order.len());
    for &n in &order {
        let o = objects[n].as_ref()?;
        written.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", new_number[n]).as_bytes());
        out.extend(renumber(o.head, &new_number)?);
        out.extend_from_slice(o.stream);
        out.extend_from_slice(b"endobj\n\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f\r\n", order.len() + 1).as_bytes(),
    );
    for at in written {
        out.extend_from_slice(format!("{at:010} 00000 n\r\n").as_bytes());
    }
    out.extend_from_slice(b"trailer");
    out.extend(renumber(trailer, &new_number)?);
    out.extend_from_slice(format!("startxref\n{xref}\n%%EOF").as_bytes());
    Some(out)
}

/// Whether a byte ends a PDF token (white space or a delimiter).
fn delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || b"()<>[]{}/%".contains(&b)
}

/// The places of the indirect references `N 0 R` in a dictionary text:
/// (start, end, N).
fn reference_spans(text: &[u8]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < text.len() {
            let start = i;
            let at_token = start == 0 || delimiter(text[start - 1]);
            let digits = text[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if at_token && digits > 0 {
                let end = start + digits + 4;
                let rest = text.get(start + digits..end);
                if rest == Some(b" 0 R") && text.get(end).is_none_or(|b| delimiter(*b)) {
                    i = end;
                    let n = std::str::from_utf8(&text[start..start + digits]).ok()?;
                    return Some((start, end, n.parse().ok()?));
                }
                i = start + digits;
            } else {
                i += 1;
            }
        }
        None
    })
}

fn references(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    reference_spans(text).map(|(_, _, n)| n)
}

/// The text with every reference `N 0 R` written with N's new number.
fn renumber(text: &[u8], new_number: &[usize]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut last = 0;
    for (start, end, n) in reference_spans(text) {
        out.extend_from_slice(&text[last..start]);
        out.extend_from_slice(format!("{} 0 R", new_number.get(n).filter(|m| **m > 0)?).as_bytes());
        last = end;
    }
    out.extend_from_slice(&text[last..]);
    Some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A PDF as pdf-writer lays it out, objects written in `order`.
    fn written(order: &[usize]) -> Vec<u8> {
        let bodies = [
            "",
            "<<\n  /Type /Catalog\n  /Pages 2 0 R\n>>\n",
            "<<\n  /Type /Pages\n  /Kids [3 0 R]\n>>\n",
            "<<\n  /Font <<\n    /fo0 4 0 R\n    /fo1 5 0 R\n  >>\n  /W [0 0 600 10 [12 0 3]]\n>>\n",
            "<<\n  /BaseFont /A\n  /FontFile 6 0 R\n>>",
            "<<\n  /BaseFont /B\n>>\n",
            "<<\n  /Length 9\n>>",
        ];
        let streams = [
            "",
            "",
            "",
            "",
            "\nstream\nx 1 0 R y\nendstream\n",
            "",
            "\nstream\n2 0 R 0 R\nendstream\n",
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
            format!("trailer\n<<\n  /Size 7\n  /Root 1 0 R\n>>\nstartxref\n{xref}\n%%EOF").bytes(),
        );
        pdf
    }

    /// Every cross-reference entry points at `N 0 obj` with its own number.
    fn xref_holds(pdf: &[u8]) {
        let text = String::from_utf8_lossy(pdf);
        let xref: usize = text
            .rsplit("startxref\n")
            .next()
            .unwrap()
            .split('\n')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(text[xref..].starts_with("xref\n0 7\n"), "{text}");
        for (n, line) in text[xref..].lines().skip(3).take(6).enumerate() {
            let at: usize = line[..10].parse().unwrap();
            assert!(
                text[at..].starts_with(&format!("{} 0 obj\n", n + 1)),
                "object {}: {text}",
                n + 1
            );
        }
    }

    #[test]
    fn objects_written_in_any_order_come_out_the_same() {
        let a = written(&[1, 2, 3, 4, 6, 5]);
        let b = written(&[1, 2, 3, 5, 4, 6]);
        assert_ne!(a, b);
        let (ca, cb) = (canonical(a), canonical(b));
        assert_eq!(String::from_utf8_lossy(&ca), String::from_utf8_lossy(&cb));
        xref_holds(&ca);
        // Streams are copied as they are; references in dictionaries follow
        // the new numbers (here the same: the objects are already in order
        // of reach), numbers that are not references stay.
        let text = String::from_utf8_lossy(&ca);
        assert!(text.contains("stream\nx 1 0 R y\nendstream"), "{text}");
        assert!(text.contains("/W [0 0 600 10 [12 0 3]]"), "{text}");
        assert_eq!(canonical(ca.clone()), ca, "not idempotent");
    }

    #[test]
    fn objects_are_numbered_in_order_of_reach() {
        // The page tree refers to the fonts before the catalogue's number
        // order would: 5 is reached before 4 when the font dictionary lists it first.
        let pdf = written(&[1, 2, 3, 4, 5, 6]);
        let swapped = String::from_utf8_lossy(&pdf)
            .replace("/fo0 4 0 R\n    /fo1 5 0 R", "/fo0 5 0 R\n    /fo1 4 0 R")
            .into_bytes();
        let text = String::from_utf8_lossy(&canonical(swapped)).into_owned();
        assert!(text.contains("4 0 obj\n<<\n  /BaseFont /B"), "{text}");
        assert!(
            text.contains("5 0 obj\n<<\n  /BaseFont /A\n  /FontFile 6 0 R"),
            "{text}"
        );
        assert!(text.contains("/Root 1 0 R"), "{text}");
    }

    #[test]
    fn a_file_it_does_not_understand_is_left_as_it_is() {
        for bad in [&b"not a pdf"[..], b"%PDF-1.7\nstartxref\n99\n%%EOF", b""] {
            assert_eq!(canonical(bad.to_vec()), bad);
        }
    }
}
