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
