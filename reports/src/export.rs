//! Tidy export: one row per (experiment, version, series, point, metric).

use crate::{ReportError, Result, TidyRow};

/// Column names of the tidy CSV, in order.
pub const TIDY_HEADER: [&str; 9] = [
    "experiment",
    "version",
    "series",
    "solver",
    "point",
    "metric",
    "value",
    "half_width",
    "n",
];

/// Writes tidy CSV with header `experiment,version,series,solver,point,metric,value,half_width,n`.
/// `None` becomes an empty field; floats use Rust's shortest round-trip `{}`
/// formatting, so reading them back gives the stored bits.
pub fn write_tidy_csv<W: std::io::Write>(rows: &[TidyRow], out: W) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| ReportError::Write {
        path: "tidy CSV".to_string(),
        reason: e.to_string(),
    };
    let mut w = csv::Writer::from_writer(out);
    w.write_record(TIDY_HEADER).map_err(|e| err(&e))?;
    for r in rows {
        let version = r.version.to_string();
        let value = format!("{}", r.value);
        let hw = r.half_width.map(|h| format!("{h}")).unwrap_or_default();
        let n = r.n.map(|n| n.to_string()).unwrap_or_default();
        w.write_record([
            r.experiment.as_str(),
            &version,
            &r.series,
            &r.solver,
            &r.point,
            &r.metric,
            &value,
            &hw,
            &n,
        ])
        .map_err(|e| err(&e))?;
    }
    w.flush().map_err(|e| err(&e))?;
    Ok(())
}
