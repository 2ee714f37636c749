//! `repro compare A B`: text, JSON, CSV or Parquet, and with `--figure` the
//! overlay figures and difference table.

use super::export::output;
use super::{fidelity_of, runtime};
use crate::{CompareArgs, CompareFormat};
use pipeline::measure::compare::{join, Comparison};
use pipeline::measure::{code_versions, collect_fidelity, stored_manifest};
use pipeline::render::compare::write_comparison;
use pipeline::render::fidelity_dir;
use pipeline::shared::{exit, open_existing_store, InputError};
use reports::{format_em, format_tick, Value, VersionDiff};
use solvers::{Fidelity, Registry};
use std::io::Write;
use std::process::ExitCode;

fn value_json(v: Option<Value>, n: Option<i64>) -> serde_json::Value {
    match v {
        Some(x) => serde_json::json!({"value": x.value, "half_width": x.half_width, "n": n}),
        None => serde_json::Value::Null,
    }
}

fn json(c: &Comparison) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = c
        .diffs
        .iter()
        .map(|r| {
            let point: serde_json::Value =
                serde_json::from_str(&r.point).unwrap_or(serde_json::Value::Null);
            serde_json::json!({
                "point": point, "series": r.series, "metric": r.metric,
                "a": value_json(r.a, r.a_n), "b": value_json(r.b, r.b_n),
                "diff": r.diff, "em": r.em,
            })
        })
        .collect();
    serde_json::json!({"a": c.a, "b": c.b, "differences": c.differences, "rows": rows})
}

fn csv(c: &Comparison, w: &mut dyn Write) -> anyhow::Result<()> {
    let mut out = ::csv::Writer::from_writer(w);
    out.write_record([
        "point",
        "series",
        "metric",
        "value_a",
        "half_width_a",
        "ci_n_a",
        "value_b",
        "half_width_b",
        "ci_n_b",
        "diff",
        "em",
    ])?;
    let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let n = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in &c.diffs {
        out.write_record([
            r.point.clone(),
            r.series.clone(),
            r.metric.clone(),
            f(r.a.map(|x| x.value)),
            f(r.a.and_then(|x| x.half_width)),
            n(r.a_n),
            f(r.b.map(|x| x.value)),
            f(r.b.and_then(|x| x.half_width)),
            n(r.b_n),
            f(r.diff),
            f(r.em),
        ])?;
    }
    out.flush()?;
    Ok(())
}

fn cell(v: Option<Value>) -> String {
    match v {
        Some(x) => match x.half_width {
            Some(h) if h.is_finite() => format!("{} ± {}", format_tick(x.value), format_tick(h)),
            _ => format_tick(x.value),
        },
        None => "—".into(),
    }
}

fn text(c: &Comparison, w: &mut dyn Write) -> anyhow::Result<()> {
    for d in &c.differences {
        writeln!(w, "{d}")?;
    }
    if c.diffs.is_empty() {
        writeln!(
            w,
            "nothing in common to compare between {} and {}",
            c.a, c.b
        )?;
        return Ok(());
    }
    writeln!(
        w,
        "{:<26} {:<14} {:<10} {:>24} {:>24} {:>12} {:>10}",
        "point", "series", "metric", c.a, c.b, "B − A", "EM"
    )?;
    for r in &c.diffs {
        let VersionDiff {
            point,
            series,
            metric,
            a,
            b,
            diff,
            em,
            ..
        } = r;
        writeln!(
            w,
            "{point:<26} {series:<14} {metric:<10} {:>24} {:>24} {:>12} {:>10}",
            cell(*a),
            cell(*b),
            diff.map_or("—".into(), format_tick),
            format_em(*em)
        )?;
    }
    Ok(())
}

/// Both sides' results at `fidelity`, read from the store, joined.
async fn both(
    args: &CompareArgs,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Comparison> {
    let store = open_existing_store(&args.store.store).await?;
    let (ma, mb) = (
        stored_manifest(&store, registry, &args.a).await?,
        stored_manifest(&store, registry, &args.b).await?,
    );
    let (ra, rb) = (
        collect_fidelity(&store, &ma, registry, fidelity).await?,
        collect_fidelity(&store, &mb, registry, fidelity).await?,
    );
    let code = code_versions(&store).await?;
    store.close().await;
    join(ra, rb, &args.metrics, &code, fidelity)
}

/// `repro compare A B`.
pub(crate) fn compare(args: CompareArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let binary = (args.format == CompareFormat::Parquet).then_some("parquet");
    let mut w = output(args.out.as_deref(), binary)?;
    let fidelity = fidelity_of(args.quick);
    let c = runtime()?.block_on(both(&args, registry, fidelity))?;
    // Refused before anything is written: a `--metric` neither side has,
    // and `--figure` when the two versions have no figure in common.
    check_metrics(&c, &args.metrics)?;
    if args.figure {
        check_figures(&c, registry)?;
    }
    match args.format {
        CompareFormat::Text => text(&c, &mut w)?,
        CompareFormat::Json => writeln!(w, "{}", serde_json::to_string_pretty(&json(&c))?)?,
        CompareFormat::Csv => csv(&c, &mut w)?,
        CompareFormat::Parquet => reports::write_parquet(&mut c.frame.clone(), &mut w)?,
    }
    w.finish()?;
    if args.figure {
        let name = format!("{}-vs-{}", c.a.replace('@', "-v"), c.b.replace('@', "-v"));
        let dir = fidelity_dir(&args.results.results, fidelity)
            .join("compare")
            .join(name);
        let written = write_comparison(&c, registry, &dir, "")?;
        if !crate::quiet() {
            eprintln!(
                "{} overlay figures and the table {} in {}",
                written.figures.len(),
                written.table.id,
                dir.display()
            );
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// Every `--metric` is one that A or B has values of.
fn check_metrics(c: &Comparison, metrics: &[String]) -> anyhow::Result<()> {
    let known: std::collections::BTreeSet<&str> = [&c.ra, &c.rb]
        .into_iter()
        .flat_map(|r| r.values.keys().map(|(_, _, m)| m.as_str()))
        .collect();
    for m in metrics {
        if known.contains(m.as_str()) {
            continue;
        }
        let known: Vec<&str> = known.iter().copied().collect();
        let hint = external::spec::nearest(m, known.iter().copied())
            .map_or(String::new(), |n| format!("did you mean `{n}`? "));
        return Err(InputError(format!(
            "--metric {m}: neither {} nor {} has values of `{m}`; {hint}their metrics: {}",
            c.a,
            c.b,
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        ))
        .into());
    }
    Ok(())
}

/// `--figure` draws the figures A and B have in common (by id): refuse when
/// there is none, naming each side's figures.
fn check_figures(c: &Comparison, registry: &Registry) -> anyhow::Result<()> {
    let ids = |r| -> Vec<String> {
        pipeline::render::figures(r, registry)
            .into_iter()
            .map(|f| f.id)
            .collect()
    };
    let (a, b) = (ids(&c.ra), ids(&c.rb));
    if a.iter().any(|f| b.contains(f)) {
        return Ok(());
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    Err(InputError(format!(
        "--figure: {} and {} have no figure in common, nothing to overlay ({} has: {}; {} has: {})",
        c.a,
        c.b,
        c.a,
        list(&a),
        c.b,
        list(&b)
    ))
    .into())
}
