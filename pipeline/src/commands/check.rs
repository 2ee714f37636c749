//! `repro check`: `run`, then a verdict over every compared point.

use super::run::{drive, dry_run, print_run_summary, run_options};
use super::runtime;
use crate::{CheckArgs, OutputFormat};
use anyhow::Context;
use pipeline::measure::verdict_of;
use pipeline::render::fidelity_dir;
use pipeline::shared::exit;
use reports::em::Verdict;
use solvers::Registry;
use std::process::ExitCode;

/// `repro check`: `run`, then a verdict over every compared point.
pub(crate) fn check(args: CheckArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let mut opts = run_options(&args.run, "check")?;
    opts.resolve = args.resolve;
    if args.run.dry_run {
        return dry_run(&opts, registry);
    }
    let report = runtime()?.block_on(drive(&opts, registry))?;
    print_run_summary(&report, &fidelity_dir(&opts.results_dir, opts.fidelity));
    if let Some(path) = &args.junit {
        std::fs::write(
            path,
            pipeline::render::junit::junit_xml(
                &report.manifests,
                &report.error_measures,
                &report.exec.failed,
                &report.replications,
            ),
        )
        .with_context(|| format!("writing JUnit XML to {}", path.display()))?;
    }
    if report.exec.cancelled {
        return Ok(ExitCode::from(exit::INTERRUPTED));
    }
    let bad: Vec<&store::ErrorMeasureRow> = report
        .error_measures
        .iter()
        .filter(|r| verdict_of(r).is_bad())
        .collect();
    let checked = report
        .error_measures
        .iter()
        .filter(|r| verdict_of(r) != Verdict::Unchecked)
        .count();
    let code = if !bad.is_empty() {
        exit::CHECK_FAILED
    } else if report.exec.failed.is_empty() {
        exit::OK
    } else {
        exit::TASKS_FAILED
    };
    if args.format == OutputFormat::Json {
        let failed_tasks: Vec<serde_json::Value> = report
            .exec
            .failed
            .iter()
            .map(|(t, e)| serde_json::json!({"key": t.key, "solver": t.solver.to_string(), "error": e, "rerun": t.solve_command()}))
            .collect();
        // Each failing point with the replications of its reference series.
        let reps_of = |r: &store::ErrorMeasureRow| {
            report
                .replications
                .get(&(
                    r.experiment.clone(),
                    r.reference.clone(),
                    r.point_index as usize,
                ))
                .copied()
        };
        let failing: Vec<serde_json::Value> = bad
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("row serialises");
                if let Some(n) = reps_of(r) {
                    v["reference_replications"] = n.into();
                }
                v
            })
            .collect();
        let replications: Vec<serde_json::Value> = report
            .replications
            .iter()
            .map(|((e, s, p), n)| serde_json::json!({"experiment": e, "series": s, "point_index": p, "replications": n}))
            .collect();
        let unmet: Vec<serde_json::Value> = report
            .unmet
            .iter()
            .map(|(e, s, p, n, hw, t)| serde_json::json!({"experiment": e, "series": s, "point_index": p, "replications": n, "half_width": hw, "target": t}))
            .collect();
        let out = serde_json::json!({
            "passed": bad.is_empty(),
            "exit_code": code,
            "fidelity": opts.fidelity.as_str(),
            "compared_points": checked,
            "failing_points": failing,
            "replications": replications,
            "precision_not_met": unmet,
            "tasks": {
                "total": report.exec.total,
                "cached": report.exec.cached,
                "run": report.exec.executed,
                "failed": failed_tasks,
            },
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::from(code));
    }
    if bad.is_empty() {
        println!("check passed: {checked} compared points within tolerance");
        return Ok(ExitCode::from(code));
    }
    println!(
        "check FAILED: {} of {checked} compared points fail or are inconclusive",
        bad.len()
    );
    println!(
        "{:<28} {:<22} {:<8} {:>24} {:>14} {:>9} {:>9}  verdict",
        "experiment", "point", "metric", "reference ± 95% CI", "candidate", "EM", "tol"
    );
    for r in bad {
        let n = report.replications.get(&(
            r.experiment.clone(),
            r.reference.clone(),
            r.point_index as usize,
        ));
        let refv = match (r.reference_value, r.reference_half_width) {
            (Some(v), Some(h)) if n.is_some() => {
                format!("{v:.6} ± {h:.2e} (n={})", n.expect("some"))
            }
            (Some(v), Some(h)) => format!("{v:.6} ± {h:.2e}"),
            (Some(v), None) => format!("{v:.6}"),
            _ => "missing".into(),
        };
        println!(
            "{:<28} {:<22} {:<8} {:>24} {:>14} {:>9} {:>9}  {}",
            format!("{} v{}", r.experiment, r.version),
            r.point,
            r.metric,
            refv,
            r.candidate_value
                .map_or("missing".into(), |v| format!("{v:.6}")),
            r.em.map_or("—".into(), |e| format!("{:.3}%", e * 100.0)),
            r.tolerance
                .map_or("—".into(), |t| format!("{:.2}%", t * 100.0)),
            r.verdict
        );
    }
    Ok(ExitCode::from(exit::CHECK_FAILED))
}
