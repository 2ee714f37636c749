//! The figure style: a colour-blind-safe palette, dash patterns and marker
//! shapes, so that configurations differ in colour *and* in dash or marker
//! (and survive grayscale print).

use plotters::style::RGBColor;

/// Okabe & Ito's colour-blind-safe palette (2008), in the order that keeps
/// the first colours most distinct; its yellow is left out (it cannot be seen
/// on white).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

/// Number of colours before they repeat (with another dash or marker).
pub const PALETTE_LEN: usize = PALETTE.len();

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Dash patterns in multiples of the line width: on, off, on, off, ..
/// (empty: solid). Solid, dashed, dotted, dash-dot, long dashes, dash-dot-dot.
const DASHES: [&[f64]; 6] = [
    &[],
    &[5.0, 3.0],
    &[1.2, 2.2],
    &[6.0, 2.5, 1.2, 2.5],
    &[10.0, 3.5],
    &[6.0, 2.5, 1.2, 2.5, 1.2, 2.5],
];

pub const DASH_COUNT: usize = DASHES.len();

pub fn dash(i: usize) -> &'static [f64] {
    DASHES[i % DASHES.len()]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Hexagon,
}

const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Hexagon,
];

pub fn shape(i: usize) -> Shape {
    SHAPES[i % SHAPES.len()]
}

impl Shape {
    /// Outline around the centre for a marker of radius `r` (closed: the
    /// last point is the first). Areas are roughly equal across shapes.
    pub fn outline(self, r: f64) -> Vec<(i32, i32)> {
        let poly = |n: usize, start: f64, r: f64| -> Vec<(f64, f64)> {
            (0..n)
                .map(|k| {
                    let a = start + k as f64 * std::f64::consts::TAU / n as f64;
                    (r * a.cos(), r * a.sin())
                })
                .collect()
        };
        use std::f64::consts::FRAC_PI_2;
        let pts = match self {
            Shape::Circle => poly(24, 0.0, r),
            Shape::Square => {
                let s = r * 0.89;
                vec![(-s, -s), (s, -s), (s, s), (-s, s)]
            }
            Shape::Triangle => poly(3, -FRAC_PI_2, r * 1.3)
                .into_iter()
                .map(|(x, y)| (x, y + r * 0.2))
                .collect(),
            Shape::TriangleDown => poly(3, FRAC_PI_2, r * 1.3)
                .into_iter()
                .map(|(x, y)| (x, y - r * 0.2))
                .collect(),
            Shape::Diamond => poly(4, -FRAC_PI_2, r * 1.22),
            Shape::Hexagon => poly(6, 0.0, r * 1.08),
        };
        let mut v: Vec<(i32, i32)> = pts
            .into_iter()
            .map(|(x, y)| (x.round() as i32, y.round() as i32))
            .collect();
        v.push(v[0]);
        v
    }
}

/// Splits a polyline into the dash segments of `pattern` (lengths in the
/// polyline's units); an empty pattern returns the polyline itself.
pub fn dash_segments(points: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    if pattern.is_empty() || pattern.iter().any(|p| p.is_nan() || *p <= 0.0) {
        return vec![points.to_vec()];
    }
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut k = 0; // index into pattern
    let mut left = pattern[0]; // length left in the current dash or gap
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        if !len.is_finite() {
            continue;
        }
        let mut t = 0.0;
        let at = |t: f64| (a.0 + (b.0 - a.0) * t / len, a.1 + (b.1 - a.1) * t / len);
        if k % 2 == 0 && cur.is_empty() {
            cur.push(a);
        }
        while len - t > left {
            t += left;
            if k % 2 == 0 {
                cur.push(at(t));
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![at(t)];
            }
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= len - t;
        if k % 2 == 0 {
            cur.push(b);
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_cover_the_pattern() {
        let segs = dash_segments(&[(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)], &[3.0, 2.0]);
        // 0-3, 5-8, 10-13, 15-18.
        assert_eq!(segs.len(), 4, "{segs:?}");
        assert_eq!(segs[0], vec![(0.0, 0.0), (3.0, 0.0)]);
        assert_eq!(segs[2], vec![(10.0, 0.0), (13.0, 0.0)]);
        // A dash that spans a corner bends with it.
        let segs = dash_segments(&[(0.0, 0.0), (6.0, 0.0), (6.0, 10.0)], &[3.0, 2.0]);
        assert_eq!(segs[1], vec![(5.0, 0.0), (6.0, 0.0), (6.0, 2.0)]);
        assert_eq!(dash_segments(&[(0.0, 0.0), (1.0, 1.0)], &[]).len(), 1);
    }

    #[test]
    fn shapes_are_closed_and_distinct() {
        let outlines: Vec<Vec<(i32, i32)>> = SHAPES.iter().map(|s| s.outline(20.0)).collect();
        for o in &outlines {
            assert_eq!(o.first(), o.last());
        }
        for i in 0..outlines.len() {
            for j in 0..i {
                assert_ne!(outlines[i], outlines[j]);
            }
        }
    }
}
