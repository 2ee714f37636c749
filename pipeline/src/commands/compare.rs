//! `repro compare A B`.

use super::{fidelity_of, runtime};
use crate::{CompareArgs, OutputFormat};
use pipeline::exit;
use solvers::Registry;
use std::process::ExitCode;

/// `repro compare A B`.
pub(crate) fn compare(args: CompareArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let CompareArgs {
        a,
        b,
        metrics,
        format,
        quick,
        store,
    } = args;
    let rows = runtime()?.block_on(pipeline::compare(
        &store.store,
        &a,
        &b,
        &metrics,
        registry,
        fidelity_of(quick),
    ))?;
    if format == OutputFormat::Json {
        let agg = |v: Option<pipeline::measure::Agg>| {
            v.map(|x| serde_json::json!({"value": x.value, "half_width": x.half_width, "n": x.n}))
        };
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let point: serde_json::Value =
                    serde_json::from_str(&r.point).unwrap_or(serde_json::Value::Null);
                serde_json::json!({
                    "point": point, "series": r.series, "metric": r.metric,
                    "a": agg(r.a), "b": agg(r.b),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"a": a, "b": b, "rows": v}))?
        );
        return Ok(ExitCode::from(exit::OK));
    }
    if rows.is_empty() {
        println!("nothing in common to compare between {a} and {b}");
        return Ok(ExitCode::from(exit::OK));
    }
    let cell = |v: Option<pipeline::measure::Agg>| match v {
        Some(x) => match x.half_width {
            Some(h) if h.is_finite() => {
                format!(
                    "{} ± {}",
                    reports::format_tick(x.value),
                    reports::format_tick(h)
                )
            }
            _ => reports::format_tick(x.value),
        },
        None => "—".into(),
    };
    println!(
        "{:<26} {:<14} {:<10} {:>24} {:>24} {:>10}",
        "point", "series", "metric", a, b, "(B−A)/|A|"
    );
    for r in rows {
        let rel = match (r.a, r.b) {
            (Some(x), Some(y)) if x.value != 0.0 => {
                reports::format_percent((y.value - x.value) / x.value.abs())
            }
            _ => "—".into(),
        };
        println!(
            "{:<26} {:<14} {:<10} {:>24} {:>24} {:>10}",
            r.point,
            r.series,
            r.metric,
            cell(r.a),
            cell(r.b),
            rel
        );
    }
    Ok(ExitCode::from(exit::OK))
}
