//! Bundled fonts. CI machines have no system fonts, so every family/style the
//! figures use is registered from the `dejavu` crate before anything is drawn.

use plotters::style::{register_font, FontStyle};
use std::sync::Once;

/// The only font family figures use. The name carries a CSS fallback because
/// the SVG backend writes it verbatim into `font-family`: viewers without
/// DejaVu then fall back to a sans-serif face instead of a serif default.
pub const FAMILY: &str = "DejaVu Sans, sans-serif";

static REGISTER: Once = Once::new();

/// Registers DejaVu Sans (normal, bold, oblique/italic) under [`FAMILY`]; idempotent.
pub fn ensure_fonts() {
    REGISTER.call_once(|| {
        let fonts: [(FontStyle, &'static [u8]); 4] = [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
            (FontStyle::Oblique, dejavu::sans::oblique()),
            (FontStyle::Italic, dejavu::sans::oblique()),
        ];
        for (style, bytes) in fonts {
            // A failure here surfaces as a FontUnavailable draw error later,
            // which render_figure reports with the figure id.
            let _ = register_font(FAMILY, style, bytes);
        }
    });
}
