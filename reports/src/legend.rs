//! The figure legend, laid out and drawn here rather than by plotters, so it
//! can sit outside the plot (right or below, in columns) and never cover data.

use crate::figure::{font, marker, path, px, text_width, Metrics, Prepared};
use crate::options::LegendPosition;
use crate::style::{self, Shape};
use crate::SeriesStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What a legend row shows left of its label.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Glyph {
    Line {
        color: RGBColor,
        dash: &'static [f64],
    },
    Trace {
        color: RGBColor,
    },
    Marker {
        color: RGBColor,
        shape: Shape,
        bar: bool,
    },
    Reference {
        color: RGBColor,
        shape: Shape,
    },
    /// A model line with its simulation's marker on it (one configuration).
    Pair {
        color: RGBColor,
        dash: &'static [f64],
        shape: Shape,
        bar: bool,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct LegendEntry {
    pub label: String,
    pub glyph: Glyph,
}

/// Entries in columns (filled top to bottom, then left to right).
#[derive(Debug, Clone)]
pub(crate) struct Block {
    entries: Vec<LegendEntry>,
    font: f64,
    rows: usize,
    col_w: f64,
    pub w: f64,
    pub h: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Corner {
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
}

#[derive(Debug, Clone)]
pub(crate) enum LegendLayout {
    None,
    Inside { corner: Corner, block: Block },
    Right { width: f64, block: Block },
    Below { height: f64, block: Block },
}

/// A label without the words that say model or simulation, so that a
/// model's and its simulation's labels can be compared: "simulation,
/// scenario (1) MMPP (95% CI)" -> "scenario (1) MMPP".
fn core_label(label: &str) -> String {
    let mut s = label.to_string();
    for w in [
        "(95% CI)",
        "95% CI",
        "simulation",
        "Simulation",
        "model",
        "Model",
        "analysis",
        "Analysis",
    ] {
        s = s.replace(w, " ");
    }
    let s = s.replace("()", " ");
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.trim_matches(|c: char| matches!(c, ',' | ';' | ':') || c.is_whitespace())
        .to_string()
}

/// The legend rows of a figure's series. When at least three simulations
/// each have a model line of their own look whose label says the same
/// ("scenario (1)" beside "simulation, scenario (1) (95% CI)"), each pair
/// becomes one row (the line with the marker on it), and two key rows say
/// which is which: the legend of sixteen series reads as eight.
pub(crate) fn entries(series: &[Prepared]) -> Vec<LegendEntry> {
    let shown: Vec<&Prepared> = series
        .iter()
        .filter(|s| !s.label.trim().is_empty() && !s.runs.is_empty())
        .collect();
    let same_look = |a: &Prepared, b: &Prepared| a.color == b.color && a.shape == b.shape;
    // (line index, marker index) pairs.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (j, sim) in shown.iter().enumerate() {
        if sim.style != SeriesStyle::Markers {
            continue;
        }
        let core = core_label(&sim.label);
        let line = shown.iter().enumerate().position(|(i, l)| {
            l.style == SeriesStyle::Line
                && same_look(l, sim)
                && !pairs.iter().any(|p| p.0 == i)
                && !core.is_empty()
                && core_label(&l.label) == core
        });
        if let Some(i) = line {
            pairs.push((i, j));
        }
    }
    let plain = |s: &Prepared| LegendEntry {
        label: s.label.clone(),
        glyph: s.glyph(),
    };
    if pairs.len() < 3 {
        return shown.into_iter().map(plain).collect();
    }
    let mut out = Vec::new();
    let mut any_bar = false;
    for (i, s) in shown.iter().enumerate() {
        if pairs.iter().any(|p| p.1 == i) {
            continue;
        }
        match pairs.iter().find(|p| p.0 == i) {
            Some(&(_, j)) => {
                let bar = shown[j].runs.iter().flatten().any(|p| p.bar.is_some());
                any_bar |= bar;
                out.push(LegendEntry {
                    label: core_label(&s.label),
                    glyph: Glyph::Pair {
                        color: s.color,
                        dash: s.dash,
                        shape: shown[j].shape,
                        bar,
                    },
                });
            }
            None => out.push(plain(s)),
        }
    }
    let key = RGBColor(60, 60, 60);
    out.push(LegendEntry {
        label: "line: model".to_string(),
        glyph: Glyph::Line {
            color: key,
            dash: &[],
        },
    });
    out.push(LegendEntry {
        label: if any_bar {
            "open marker: simulation (95% CI)".to_string()
        } else {
            "open marker: simulation".to_string()
        },
        glyph: Glyph::Marker {
            color: key,
            shape: Shape::Circle,
            bar: any_bar,
        },
    });
    out
}

fn line_h(font: f64) -> f64 {
    font * 1.45
}
fn glyph_w(font: f64) -> f64 {
    font * 2.6
}
fn gap(font: f64) -> f64 {
    font * 0.5
}
fn pad(font: f64) -> f64 {
    font * 0.5
}
fn col_gap(font: f64) -> f64 {
    font * 1.2
}

/// `label`, cut with "…" to at most `max` wide.
fn fit(label: &str, font: f64, max: f64) -> String {
    if text_width(label, font) <= max {
        return label.to_string();
    }
    let chars: Vec<char> = label.chars().collect();
    let mut n = chars.len();
    while n > 1 {
        n -= 1;
        let s: String = chars[..n].iter().collect::<String>() + "…";
        if text_width(&s, font) <= max {
            return s;
        }
    }
    "…".to_string()
}

/// A block of `entries` in `cols` columns at `font`, each label cut to
/// `max_label` wide.
fn block(entries: &[LegendEntry], font: f64, cols: usize, max_label: f64) -> Block {
    let entries: Vec<LegendEntry> = entries
        .iter()
        .map(|e| LegendEntry {
            label: fit(&e.label, font, max_label),
            glyph: e.glyph,
        })
        .collect();
    let cols = cols.clamp(1, entries.len().max(1));
    let rows = entries.len().div_ceil(cols);
    // Balance: 7 entries in 4 columns are 2 rows of 4 and 3, not 2, 2, 2, 1.
    let cols = entries.len().div_ceil(rows.max(1)).max(1);
    let col_w = entries
        .iter()
        .map(|e| glyph_w(font) + gap(font) + text_width(&e.label, font))
        .fold(0.0, f64::max);
    let w = cols as f64 * col_w + (cols - 1) as f64 * col_gap(font) + 2.0 * pad(font);
    let h = rows as f64 * line_h(font) + 2.0 * pad(font);
    Block {
        entries,
        font,
        rows,
        col_w,
        w,
        h,
    }
}

/// The widest label at `font`.
fn widest(entries: &[LegendEntry], font: f64) -> f64 {
    entries
        .iter()
        .map(|e| text_width(&e.label, font))
        .fold(0.0, f64::max)
}

/// Where the legend goes and how it is cut into columns: `plot` is the plot
/// area's size (without an outside legend), `avail_w` the figure's width
/// inside its margins, `samples` the data as axis fractions.
pub(crate) fn layout(
    entries: Vec<LegendEntry>,
    pos: LegendPosition,
    m: &Metrics,
    plot: (f64, f64),
    avail_w: f64,
    samples: &[(f64, f64)],
) -> LegendLayout {
    if entries.is_empty() || pos == LegendPosition::None {
        return LegendLayout::None;
    }
    let f = m.legend_font;
    let inset = m.font * 0.4;
    let inside = |corner: Corner| {
        let b = block(&entries, f, 1, plot.0 * 0.6);
        LegendLayout::Inside { corner, block: b }
    };
    let below = || {
        // As many columns as fit; a single column that does not fit gets a
        // smaller font (down to 80%), then cut labels.
        let mut font = f;
        let need = |font: f64| glyph_w(font) + gap(font) + widest(&entries, font) + 2.0 * pad(font);
        while need(font) > avail_w && font > f * 0.8 {
            font *= 0.95;
        }
        let max_label = avail_w - glyph_w(font) - gap(font) - 2.0 * pad(font);
        let one = block(&entries, font, 1, max_label);
        let cols = (((avail_w - 2.0 * pad(font) + col_gap(font)) / (one.col_w + col_gap(font)))
            .floor() as usize)
            .max(1);
        let b = block(&entries, font, cols, max_label);
        LegendLayout::Below {
            height: b.h + m.font * 0.3,
            block: b,
        }
    };
    let corner = match pos {
        LegendPosition::UpperRight => Some(Corner::UpperRight),
        LegendPosition::UpperLeft => Some(Corner::UpperLeft),
        LegendPosition::LowerRight => Some(Corner::LowerRight),
        LegendPosition::LowerLeft => Some(Corner::LowerLeft),
        _ => None,
    };
    if let Some(c) = corner {
        return inside(c);
    }
    match pos {
        LegendPosition::Right => {
            let max_label = avail_w * 0.4 - glyph_w(f) - gap(f) - 2.0 * pad(f);
            let b = block(&entries, f, 1, max_label.max(f * 4.0));
            LegendLayout::Right {
                width: b.w + m.font * 0.5,
                block: b,
            }
        }
        LegendPosition::Below => below(),
        _ => {
            // Auto: a short legend inside the first corner free of data.
            let b = block(&entries, f, 1, plot.0 * 0.6);
            let fw = (b.w + inset) / plot.0;
            let fh = (b.h + inset) / plot.1;
            if entries.len() <= 8 && fw <= 0.6 && fh <= 0.6 {
                let corners = [
                    (Corner::UpperRight, (1.0 - fw, 1.0), (1.0 - fh, 1.0)),
                    (Corner::UpperLeft, (0.0, fw), (1.0 - fh, 1.0)),
                    (Corner::LowerRight, (1.0 - fw, 1.0), (0.0, fh)),
                    (Corner::LowerLeft, (0.0, fw), (0.0, fh)),
                ];
                // A small margin around the box: nothing may touch it either.
                let (mx, my) = (0.01, 0.015);
                let free = corners.iter().find(|(_, (x0, x1), (y0, y1))| {
                    !samples.iter().any(|(sx, sy)| {
                        *sx >= x0 - mx && *sx <= x1 + mx && *sy >= y0 - my && *sy <= y1 + my
                    })
                });
                if let Some((c, _, _)) = free {
                    return LegendLayout::Inside {
                        corner: *c,
                        block: b,
                    };
                }
            }
            below()
        }
    }
}

type DrawResult<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws the legend: `plot` is the plot area's origin and size (backend
/// units), `outside` the origin of the area split off for an outside legend.
pub(crate) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    layout: &LegendLayout,
    m: &Metrics,
    plot: ((i32, i32), (u32, u32)),
    outside: Option<(i32, i32)>,
) -> DrawResult<DB> {
    let ((px0, py0), (pw, ph)) = plot;
    let inset = m.font * 0.4;
    let (block, origin, boxed) = match layout {
        LegendLayout::None => return Ok(()),
        LegendLayout::Inside { corner, block } => {
            let left = f64::from(px0) + inset;
            let right = f64::from(px0) + f64::from(pw) - inset - block.w;
            let top = f64::from(py0) + inset;
            let bottom = f64::from(py0) + f64::from(ph) - inset - block.h;
            let o = match corner {
                Corner::UpperRight => (right, top),
                Corner::UpperLeft => (left, top),
                Corner::LowerRight => (right, bottom),
                Corner::LowerLeft => (left, bottom),
            };
            (block, o, true)
        }
        LegendLayout::Right { block, .. } => {
            let (ox, _) = outside.unwrap_or((px0 + pw as i32, py0));
            (block, (f64::from(ox), f64::from(py0)), false)
        }
        LegendLayout::Below { block, .. } => {
            let (_, oy) = outside.unwrap_or((px0, py0 + ph as i32));
            let (w, _) = root.dim_in_pixel();
            let x = ((f64::from(w) - block.w) / 2.0).max(0.0);
            (block, (x, f64::from(oy)), false)
        }
    };
    let (ox, oy) = origin;
    if boxed {
        let r = [
            (ox.round() as i32, oy.round() as i32),
            ((ox + block.w).round() as i32, (oy + block.h).round() as i32),
        ];
        root.draw(&Rectangle::new(r, WHITE.mix(0.92).filled()))?;
        root.draw(&Rectangle::new(
            r,
            RGBColor(170, 170, 170).stroke_width(px(m.line * 0.5)),
        ))?;
    }
    let f = block.font;
    for (i, e) in block.entries.iter().enumerate() {
        let (col, row) = (i / block.rows, i % block.rows);
        let x0 = ox + pad(f) + col as f64 * (block.col_w + col_gap(f));
        let yc = oy + pad(f) + (row as f64 + 0.5) * line_h(f);
        glyph(root, e.glyph, (x0, yc), glyph_w(f), m)?;
        let style = TextStyle::from(font(f)).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            e.label.clone(),
            ((x0 + glyph_w(f) + gap(f)).round() as i32, yc.round() as i32),
            style,
        ))?;
    }
    Ok(())
}

fn glyph<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: Glyph,
    (x0, yc): (f64, f64),
    w: f64,
    m: &Metrics,
) -> DrawResult<DB> {
    let y = yc.round() as i32;
    let c = ((x0 + w / 2.0).round() as i32, y);
    match g {
        Glyph::Line { color, dash } => line(root, color, dash, (x0, yc), w, m)?,
        Glyph::Pair {
            color,
            dash,
            shape,
            bar,
        } => {
            line(root, color, dash, (x0, yc), w, m)?;
            glyph(root, Glyph::Marker { color, shape, bar }, (x0, yc), w, m)?;
        }
        Glyph::Trace { color } => {
            root.draw(&PathElement::new(
                vec![(x0.round() as i32, y), ((x0 + w).round() as i32, y)],
                color.stroke_width(px(m.trace)),
            ))?;
        }
        Glyph::Marker { color, shape, bar } => {
            marker(root, c, shape, m.marker, &WHITE, color, px(m.bar))?;
            if bar {
                let half = (m.marker * 1.7).round() as i32;
                let cap = (m.marker * 0.75).round() as i32;
                let st = color.stroke_width(px(m.bar));
                path(root, vec![(c.0, c.1 - half), (c.0, c.1 + half)], st)?;
                for yy in [c.1 - half, c.1 + half] {
                    path(root, vec![(c.0 - cap, yy), (c.0 + cap, yy)], st)?;
                }
            }
        }
        Glyph::Reference { color, shape } => {
            marker(
                root,
                c,
                shape,
                m.marker * 1.1,
                &color,
                RGBColor(30, 30, 30),
                px(m.bar * 0.7),
            )?;
        }
    }
    Ok(())
}

fn line<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    color: RGBColor,
    dash: &[f64],
    (x0, yc): (f64, f64),
    w: f64,
    m: &Metrics,
) -> DrawResult<DB> {
    let pattern: Vec<f64> = dash.iter().map(|d| d * m.line).collect();
    for seg in style::dash_segments(&[(x0, yc), (x0 + w, yc)], &pattern) {
        let seg: Vec<(i32, i32)> = seg
            .iter()
            .map(|(a, b)| (a.round() as i32, b.round() as i32))
            .collect();
        path(root, seg, color.stroke_width(px(m.line)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::core_label;

    #[test]
    fn core_labels_drop_model_and_simulation() {
        assert_eq!(
            core_label("simulation, scenario (1) C = 4, MMPP (95% CI)"),
            "scenario (1) C = 4, MMPP"
        );
        assert_eq!(
            core_label("scenario (1) C = 4, MMPP"),
            "scenario (1) C = 4, MMPP"
        );
        assert_eq!(core_label("model, L_f = 256"), "L_f = 256");
        assert_eq!(core_label("analysis (CTMC)"), "(CTMC)");
    }
}
