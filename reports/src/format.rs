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
fn parse_cell(s: &str) -> Option<(f64, Option<f64>)> {
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

/// Rewrites every column whose non-empty cells are all numbers (`v` or
/// `v ± h`) in one format per column (values and half-widths each), so that
/// a column reads down without switching between fixed and scientific notation.
/// Text cells such as "—" or "saturated" are left as they are.
pub fn unify_number_columns(t: &mut crate::Table) {
    let n = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    for c in 0..n {
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
