//! A plotters coordinate with hand-picked ticks, linear or log10.
//!
//! plotters' own log coordinate puts no tick at all on a range narrower than a
//! decade, and its f64 ticks on a short integer range fall on halves; both are
//! wrong for buffer-size sweeps and tight model-vs-simulation plots, so ticks
//! are chosen here and the mapping is done by this type.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// Upper bound on generated ticks, whatever the range (guards degenerate input).
const MAX_TICKS: usize = 200;

#[derive(Debug, Clone)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Axis {
    /// Linear axis on `[lo, hi]` with about `target` labelled ticks; integer
    /// axes only get integer ticks.
    pub fn linear(lo: f64, hi: f64, target: usize, integer: bool) -> Axis {
        let step = nice_step(hi - lo, target, integer);
        let bold = ticks(lo, hi, step);
        let light_step = if integer && step < 5.0 {
            step
        } else {
            step / 5.0
        };
        let light = ticks(lo, hi, light_step);
        Axis {
            lo,
            hi,
            log: false,
            bold,
            light,
        }
    }

    /// Log10 axis on `[lo, hi]`, `0 < lo < hi`.
    pub fn log(lo: f64, hi: f64) -> Axis {
        let (bold, light) = log_ticks(lo, hi);
        Axis {
            lo,
            hi,
            log: true,
            bold,
            light,
        }
    }

    pub fn bounds(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    pub fn is_log(&self) -> bool {
        self.log
    }

    /// Labelled tick values.
    pub fn ticks(&self) -> &[f64] {
        &self.bold
    }

    fn t(&self, v: f64) -> f64 {
        if self.log {
            // Non-positive values cannot be placed; pin them to the axis floor.
            v.max(self.lo).log10()
        } else {
            v
        }
    }

    /// Position of `v` as a fraction of the axis (0 = lo, 1 = hi).
    pub fn fraction(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        let f = (self.t(v) - a) / (b - a);
        if f.is_finite() {
            f
        } else {
            0.0
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        // Clamped so that stray values can never overflow pixel arithmetic.
        let f = self.fraction(*value).clamp(-10.0, 11.0);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// A 1-2-2.5-5 step giving at most about `target` intervals over `span`.
fn nice_step(span: f64, target: usize, integer: bool) -> f64 {
    let span = if span.is_finite() && span > 0.0 {
        span
    } else {
        1.0
    };
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    if integer {
        step = step.max(1.0);
        if step.fract() != 0.0 {
            // 2.5 at magnitude 1: take the next integer 1-2-5 step.
            step = 5.0;
        }
    }
    step
}

fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let mut out = Vec::new();
    if !(step > 0.0 && lo.is_finite() && hi.is_finite()) {
        return out;
    }
    let eps = step * 1e-9;
    let mut k = ((lo - eps) / step).ceil();
    while out.len() < MAX_TICKS {
        let v = k * step;
        if v > hi + eps {
            break;
        }
        out.push(if v.abs() < eps { 0.0 } else { v });
        let next = k + 1.0;
        if next == k {
            break;
        }
        k = next;
    }
    out
}

fn in_range(v: f64, lo: f64, hi: f64) -> bool {
    v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9)
}

fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let d_lo = lo.log10().floor() as i32;
    let d_hi = hi.log10().ceil() as i32;
    if !(lo > 0.0 && hi > lo) || d_hi - d_lo > 600 {
        return (Vec::new(), Vec::new());
    }
    let with_mults = |mults: &[f64]| -> Vec<f64> {
        (d_lo..=d_hi)
            .flat_map(|d| mults.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|v| in_range(*v, lo, hi))
            .collect()
    };
    let decades: Vec<i32> = (d_lo..=d_hi)
        .filter(|d| in_range(10f64.powi(*d), lo, hi))
        .collect();
    let all: Vec<f64> = with_mults(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    // Up to three decades: label 1, 2 and 5 of each (10, 20, 50, 100, ..).
    if (2..=3).contains(&decades.len()) {
        let bold = with_mults(&[1.0, 2.0, 5.0]);
        return (bold, all);
    }
    if decades.len() >= 2 {
        let stride = decades.len().div_ceil(8);
        let bold = decades
            .iter()
            .filter(|d| ((*d - decades[0]) as usize).is_multiple_of(stride))
            .map(|d| 10f64.powi(*d))
            .collect();
        let light = if stride == 1 {
            all
        } else {
            decades.iter().map(|d| 10f64.powi(*d)).collect()
        };
        return (bold, light);
    }
    // Less than two decades visible: label 1-2-5 (or every) mantissa.
    for mults in [
        &[1.0, 2.0, 5.0][..],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        let bold = with_mults(mults);
        if bold.len() >= 3 {
            return (bold, all);
        }
    }
    // Narrower than a factor of ~3: linear ticks read best.
    let step = nice_step(hi - lo, 5, false);
    (ticks(lo, hi, step), ticks(lo, hi, step / 5.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_axis_has_integer_ticks() {
        let a = Axis::linear(0.9, 4.1, 10, true);
        assert_eq!(a.ticks(), &[1.0, 2.0, 3.0, 4.0]);
        let a = Axis::linear(-0.2, 64.5, 10, true);
        assert!(a.ticks().iter().all(|t| t.fract() == 0.0));
        assert!(a.ticks().len() >= 5);
    }

    #[test]
    fn linear_ticks_are_nice() {
        let a = Axis::linear(-0.013, 0.31, 8, false);
        assert_eq!(a.ticks()[0], 0.0);
        assert!(a.ticks().len() >= 4 && a.ticks().len() <= 9);
    }

    #[test]
    fn log_ticks_on_narrow_and_wide_ranges() {
        let a = Axis::log(1e-9, 1.0);
        assert!(a.ticks().len() >= 5 && a.ticks().len() <= 10);
        let a = Axis::log(2.0, 9.0);
        assert!(a.ticks().len() >= 3, "{:?}", a.ticks());
        let a = Axis::log(2.0, 2.2);
        assert!(!a.ticks().is_empty());
        assert_eq!(a.fraction(-1.0), 0.0);
    }

    #[test]
    fn degenerate_ranges_do_not_loop() {
        let a = Axis::linear(1e20, 1e20 + 1.0, 10, false);
        assert!(a.ticks().len() <= MAX_TICKS);
        let a = Axis::linear(0.0, 0.0, 10, false);
        assert!(a.ticks().len() <= MAX_TICKS);
    }
}
