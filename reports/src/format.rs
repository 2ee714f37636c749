//! Number formatting shared by figures, tables and the index.

/// Trims trailing zeros (and a trailing dot) of a fixed-point decimal string.
fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Compact tick-label formatting: at most 6 significant digits, scientific
/// notation for very large or small magnitudes, float noise (0.30000000000000004)
/// rounded away.
pub fn format_tick(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.4e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{}", trim_zeros(m), e);
    }
    let decimals = (5 - a.log10().floor() as i32).max(0) as usize;
    let s = trim_zeros(&format!("{v:.decimals$}"));
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// Superscript form of an integer exponent ("-4" -> "⁻⁴").
fn superscript(e: i32) -> String {
    e.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            '9' => '⁹',
            c => c,
        })
        .collect()
}

/// Decimals (0..=6) that write every value exactly, up to `tol`.
fn decimals_for(values: &[f64], tol: f64) -> usize {
    (0..=6)
        .find(|d| {
            values.iter().all(|v| {
                let s = format!("{v:.d$}");
                s.parse::<f64>().is_ok_and(|p| (p - v).abs() <= tol)
            })
        })
        .unwrap_or(6)
}

/// One label format for every tick of an axis, so that a reader never sees
/// `2.5e-4` beside `0.00125`: fixed-point with one number of decimals, or
/// the values scaled by a power of ten named once in the axis label
/// (`×10⁻³`), or, on a log axis of many decades, powers of ten (`10⁻⁶`).
#[derive(Debug, Clone, PartialEq)]
pub struct TickFormat {
    kind: TickKind,
    decimals: usize,
    exponent: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TickKind {
    /// `v` with `decimals` decimals.
    Fixed,
    /// `v / 10^exponent` with `decimals` decimals; the axis label says `×10^e`.
    Scaled,
    /// `10ᵏ` (log axes whose ticks are all powers of ten).
    Power,
    /// `m×10ᵏ` (log axes over many decades with other mantissas).
    Mantissa,
    /// Each tick as short as it can be, fixed-point (log axes within 1e-3..1e6).
    Short,
}

impl TickFormat {
    /// Picks the format for the labelled ticks of an axis.
    pub fn for_ticks(ticks: &[f64], log: bool) -> TickFormat {
        let finite: Vec<f64> = ticks.iter().copied().filter(|v| v.is_finite()).collect();
        let mags: Vec<f64> = finite
            .iter()
            .map(|v| v.abs())
            .filter(|a| *a > 0.0)
            .collect();
        let fixed = |decimals| TickFormat {
            kind: TickKind::Fixed,
            decimals,
            exponent: 0,
        };
        if mags.is_empty() {
            return fixed(0);
        }
        let max = mags.iter().copied().fold(0.0, f64::max);
        let min = mags.iter().copied().fold(f64::INFINITY, f64::min);
        if log {
            let is_power = |v: &f64| {
                let e = v.log10().round();
                (v / 10f64.powf(e) - 1.0).abs() < 1e-9
            };
            let kind = if min >= 1e-3 && max < 1e6 {
                TickKind::Short
            } else if mags.iter().all(is_power) {
                TickKind::Power
            } else {
                TickKind::Mantissa
            };
            return TickFormat {
                kind,
                decimals: 0,
                exponent: 0,
            };
        }
        let spacing = finite
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let tol = if spacing.is_finite() {
            spacing * 1e-6
        } else {
            max * 1e-9
        };
        if (1e-2..1e5).contains(&max) {
            let d = decimals_for(&finite, tol);
            if d <= 4 {
                return fixed(d);
            }
        }
        let exponent = max.log10().floor() as i32;
        let scale = 10f64.powi(exponent);
        let scaled: Vec<f64> = finite.iter().map(|v| v / scale).collect();
        TickFormat {
            kind: TickKind::Scaled,
            decimals: decimals_for(&scaled, tol / scale),
            exponent,
        }
    }

    /// The label of one tick.
    pub fn label(&self, v: f64) -> String {
        if !v.is_finite() {
            return format!("{v}");
        }
        let d = self.decimals;
        let fixed = |v: f64| {
            let s = format!("{v:.d$}");
            // No "-0" or "-0.00".
            if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
                s[1..].to_string()
            } else {
                s
            }
        };
        match self.kind {
            TickKind::Fixed => fixed(v),
            TickKind::Scaled => fixed(v / 10f64.powi(self.exponent)),
            TickKind::Short => format_tick(v),
            TickKind::Power | TickKind::Mantissa if v <= 0.0 => format_tick(v),
            TickKind::Power => format!("10{}", superscript(v.log10().round() as i32)),
            TickKind::Mantissa => {
                let e = v.log10().floor() as i32;
                let m = v / 10f64.powi(e);
                if (m - 1.0).abs() < 1e-9 {
                    format!("10{}", superscript(e))
                } else {
                    format!("{}×10{}", trim_zeros(&format!("{m:.2}")), superscript(e))
                }
            }
        }
    }

    /// What the axis label gains: " (×10⁻³)" for scaled ticks.
    pub fn axis_note(&self) -> Option<String> {
        (self.kind == TickKind::Scaled && self.exponent != 0)
            .then(|| format!("×10{}", superscript(self.exponent)))
    }
}

#[cfg(test)]
mod tick_format_tests {
    use super::TickFormat;

    fn labels(ticks: &[f64], log: bool) -> (Vec<String>, Option<String>) {
        let f = TickFormat::for_ticks(ticks, log);
        (ticks.iter().map(|t| f.label(*t)).collect(), f.axis_note())
    }

    #[test]
    fn one_format_per_axis() {
        let t: Vec<f64> = (0..6).map(|k| f64::from(k) * 0.00025).collect();
        let (l, note) = labels(&t, false);
        assert_eq!(l, ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25"]);
        assert_eq!(note.as_deref(), Some("×10⁻³"));
        let (l, note) = labels(&[0.0, 0.5, 1.0, 1.5], false);
        assert_eq!(l, ["0.0", "0.5", "1.0", "1.5"]);
        assert_eq!(note, None);
        let (l, _) = labels(&[0.0, 100.0, 200.0, 300.0], false);
        assert_eq!(l, ["0", "100", "200", "300"]);
        let (l, note) = labels(&[0.0, 5e5, 1e6, 1.5e6], false);
        assert_eq!(l, ["0.0", "0.5", "1.0", "1.5"]);
        assert_eq!(note.as_deref(), Some("×10⁶"));
        let (l, _) = labels(&[-0.1, 0.0, 0.1], false);
        assert_eq!(l, ["-0.1", "0.0", "0.1"]);
    }

    #[test]
    fn log_axes() {
        let (l, _) = labels(&[1e-9, 1e-6, 1e-3, 1.0], true);
        assert_eq!(l, ["10⁻⁹", "10⁻⁶", "10⁻³", "10⁰"]);
        let (l, _) = labels(&[2.0, 5.0, 10.0, 20.0], true);
        assert_eq!(l, ["2", "5", "10", "20"]);
        let (l, _) = labels(&[2e-5, 5e-5, 1e-4], true);
        assert_eq!(l, ["2×10⁻⁵", "5×10⁻⁵", "10⁻⁴"]);
    }
}

/// An error measure (a fraction: 0.0123 = 1.23%) as a percentage with 2–3
/// significant digits; `None` (undefined EM) as an em dash.
pub fn format_em(em: Option<f64>) -> String {
    match em {
        None => "—".to_string(),
        Some(e) => format_percent(e),
    }
}

/// A fraction as a percentage with 2–3 significant digits.
pub fn format_percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if !p.is_finite() {
        return format!("{p}%");
    }
    let a = p.abs();
    if a == 0.0 {
        "0%".to_string()
    } else if a >= 100.0 {
        format!("{p:.0}%")
    } else if a >= 10.0 {
        format!("{p:.1}%")
    } else if a >= 1e-3 {
        // 3 significant digits: 1.23%, 0.123%, 0.0123%, 0.00123%.
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{p:.decimals$}%")
    } else {
        format!("{p:.1e}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        assert_eq!(format_tick(0.1 + 0.2), "0.3");
        assert_eq!(format_tick(16.0), "16");
        assert_eq!(format_tick(-2.5), "-2.5");
        assert_eq!(format_tick(1e-5), "1e-5");
        assert_eq!(format_tick(2.5e-7), "2.5e-7");
        assert_eq!(format_tick(0.001), "0.001");
        assert_eq!(format_tick(123456.0), "123456");
        assert_eq!(format_tick(1e7), "1e7");
        assert_eq!(format_tick(0.0), "0");
    }

    #[test]
    fn percentages() {
        assert_eq!(format_em(None), "—");
        assert_eq!(format_em(Some(0.0)), "0%");
        assert_eq!(format_em(Some(0.0123)), "1.23%");
        assert_eq!(format_em(Some(0.12345)), "12.3%");
        assert_eq!(format_em(Some(0.000123)), "0.0123%");
        assert_eq!(format_em(Some(1.5)), "150%");
        assert_eq!(format_em(Some(0.05)), "5.00%");
        assert_eq!(format_em(Some(1e-9)), "1.0e-7%");
    }
}

/// A numeric cell: `v` or `v ± h` (as the pipeline writes them).
pub(crate) fn parse_cell(s: &str) -> Option<(f64, Option<f64>)> {
    let s = s.trim();
    match s.split_once(" ± ") {
        Some((v, h)) => Some((v.trim().parse().ok()?, Some(h.trim().parse().ok()?))),
        None => Some((s.parse().ok()?, None)),
    }
}

/// One format for every number of a column: fixed-point with the decimals that
/// give its smallest non-zero magnitude 4 significant digits, or, when the
/// magnitudes span too much for that, scientific notation with 3 decimals.
fn column_format(values: &[f64]) -> impl Fn(f64) -> String {
    let mags: Vec<f64> = values
        .iter()
        .map(|v| v.abs())
        .filter(|a| *a > 0.0 && a.is_finite())
        .collect();
    let min = mags.iter().copied().fold(f64::INFINITY, f64::min);
    let max = mags.iter().copied().fold(0.0, f64::max);
    let all_integers = values.iter().all(|v| v.fract() == 0.0 && v.abs() < 1e15);
    let fixed = mags.is_empty() || (min >= 1e-4 && max < 1e6);
    let decimals = if all_integers || mags.is_empty() {
        0
    } else {
        (3 - min.log10().floor() as i32).clamp(0, 8) as usize
    };
    move |v: f64| {
        if !v.is_finite() {
            format!("{v}")
        } else if fixed || v == 0.0 {
            format!("{v:.decimals$}")
        } else {
            format!("{v:.3e}")
        }
    }
}

/// A percentage cell ("0.386%"), as the fraction it stands for.
pub(crate) fn parse_percent(s: &str) -> Option<f64> {
    let p = s.trim().strip_suffix('%')?.trim();
    let v: f64 = p.parse().ok()?;
    // Shifting the decimal point in the text ("1.42" -> 1.42e-2) gives the
    // double nearest to the decimal fraction, without the noise of v / 100.
    if p.contains(['e', 'E']) {
        Some(v / 100.0)
    } else {
        format!("{p}e-2").parse().ok()
    }
}

/// How a table column reads: numbers (`v` or `v ± h`), percentages, or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    Number { half_widths: bool },
    Percent,
    Text,
}

/// A cell that stands for no value ("—", "-" or empty).
pub(crate) fn is_blank(s: &str) -> bool {
    matches!(s.trim(), "" | "—" | "-")
}

/// The kind of column `c`: numeric when every cell that is not blank and not
/// a status word ("saturated") is a number, and at least one is.
pub(crate) fn column_kind(t: &crate::Table, c: usize) -> ColumnKind {
    let cells: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.get(c).map(String::as_str))
        .filter(|s| !is_blank(s))
        .collect();
    let numbers: Vec<(f64, Option<f64>)> = cells.iter().filter_map(|s| parse_cell(s)).collect();
    let percents = cells.iter().filter(|s| parse_percent(s).is_some()).count();
    let words = cells
        .iter()
        .filter(|s| {
            s.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch == ' ' || ch == '-')
        })
        .count();
    if !numbers.is_empty() && numbers.len() + words == cells.len() {
        ColumnKind::Number {
            half_widths: numbers.iter().any(|n| n.1.is_some()),
        }
    } else if percents > 0 && percents == cells.len() {
        ColumnKind::Percent
    } else {
        ColumnKind::Text
    }
}

/// Rewrites every column whose non-empty cells are all numbers (`v` or
/// `v ± h`) in one format per column (values and half-widths each), so that
/// a column reads down without switching between fixed and scientific
/// notation, and every percentage column with 2–3 significant digits.
/// Text cells such as "—" or "saturated" are left as they are. Tables are
/// built with full-precision numbers (their CSV keeps them); this is the
/// display of the Markdown and HTML.
pub fn unify_number_columns(t: &mut crate::Table) {
    let n = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    for c in 0..n {
        if column_kind(t, c) == ColumnKind::Percent {
            for r in t.rows.iter_mut() {
                if let Some(slot) = r.get_mut(c) {
                    if let Some(f) = parse_percent(slot) {
                        *slot = format_percent(f);
                    }
                }
            }
            continue;
        }
        let cells: Vec<Option<(f64, Option<f64>)>> = t
            .rows
            .iter()
            .map(|r| r.get(c).and_then(|s| parse_cell(s)))
            .collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let values: Vec<f64> = cells.iter().flatten().map(|x| x.0).collect();
        let hws: Vec<f64> = cells.iter().flatten().filter_map(|x| x.1).collect();
        let fv = column_format(&values);
        let fh = column_format(&hws);
        for (r, cell) in t.rows.iter_mut().zip(&cells) {
            if let (Some(slot), Some((v, h))) = (r.get_mut(c), cell) {
                *slot = match h {
                    Some(h) => format!("{} ± {}", fv(*v), fh(*h)),
                    None => fv(*v),
                };
            }
        }
    }
}

#[cfg(test)]
mod column_tests {
    use super::*;

    #[test]
    fn a_column_keeps_one_format() {
        let mut t = crate::Table {
            id: "t".into(),
            title: String::new(),
            header: vec!["x".into(), "v".into(), "s".into()],
            rows: vec![
                vec!["2".into(), "0.5 ± 0.01".into(), "done".into()],
                vec!["4".into(), "0.00123 ± 0.0004".into(), "saturated".into()],
                vec!["8".into(), "—".into(), "1e-9".into()],
            ],
            notes: vec![],
        };
        unify_number_columns(&mut t);
        assert_eq!(t.rows[0][0], "2");
        assert_eq!(t.rows[0][1], "0.500000 ± 0.0100000");
        assert_eq!(t.rows[1][1], "0.001230 ± 0.0004000");
        assert_eq!(t.rows[2][1], "—");
        assert_eq!(t.rows[1][2], "saturated");
        // Magnitudes 1e-9 alone: scientific.
        assert_eq!(t.rows[2][2], "1.000e-9");
    }
}
