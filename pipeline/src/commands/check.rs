//! `repro check`: `run`, then a verdict over every compared point.

use super::run::{drive, dry_run, print_run_summary, run_options, RunReport};
use super::runtime;
use crate::{CheckArgs, OutputFormat};
use anyhow::Context;
use pipeline::measure::claims::ClaimResult;
use pipeline::measure::precision::Resolve;
use pipeline::measure::status::{statuses_of, Derived, ExperimentFacts};
use pipeline::measure::verdict_of;
use pipeline::render::fidelity_dir;
use pipeline::shared::exit;
use solvers::Registry;
use std::process::ExitCode;
use verdicts::{ClaimStatus, EntryStatus, PointVerdict as Verdict};

/// `repro check`: `run`, then a verdict over every compared point.
pub(crate) fn check(args: CheckArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let mut opts = run_options(&args.run, "check")?;
    opts.resolve = match (args.resolve, args.resolve_max) {
        (false, _) => Resolve::Off,
        (true, max) => Resolve::On { max },
    };
    if args.run.dry_run {
        return dry_run(&opts, registry);
    }
    let report = runtime()?.block_on(drive(&opts, registry))?;
    print_run_summary(&report, &fidelity_dir(&opts.results_dir, opts.fidelity));
    if let Some(path) = &args.junit {
        reports::write_atomic(
            path,
            pipeline::render::junit::junit_xml(
                &report.manifests,
                &report.claims,
                &report.error_measures,
                &entry_statuses(&report),
                &report.exec.failed,
                &report.replications,
            )?,
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
    // Exit 1 exactly when a claim's verdict differs from its expectation
    // (a tolerance claim fails as soon as one of its points is bad, as before).
    let unexpected: Vec<&ClaimResult> = report
        .claims
        .iter()
        .filter(|c| c.status.is_unexpected())
        .collect();
    let code = if !unexpected.is_empty() || !bad.is_empty() {
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
        let claims: Vec<serde_json::Value> = report.claims.iter().map(claim_json).collect();
        let removed: Vec<serde_json::Value> = report
            .removed_claims
            .iter()
            .map(|d| serde_json::json!({"experiment": d.experiment, "id": d.claim_id, "definition": definition(&d.definition), "last_evaluated": d.last_evaluated, "last_verdict": d.last_verdict}))
            .collect();
        let entries: Vec<serde_json::Value> = entry_statuses(&report)
            .into_iter()
            .map(|(id, paper, d)| {
                serde_json::json!({
                    "entry": id,
                    "paper": paper,
                    "status": d.status,
                    "claims_holding": d.holding,
                    "claims_checkable": d.checkable,
                    "sanity_checks": d.sanity,
                    "fits": d.fits,
                })
            })
            .collect();
        let out = serde_json::json!({
            "passed": code == exit::OK,
            "entry_statuses": entries,
            "claims": claims,
            "removed_claims": removed,
            "claim_counts": counts(&report.claims),
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
    print_claims(&report.claims, &report.removed_claims);
    print_statuses(&entry_statuses(&report));
    if bad.is_empty() && unexpected.is_empty() {
        println!(
            "check passed: {checked} compared points within tolerance; every claim as expected"
        );
        return Ok(ExitCode::from(code));
    }
    if bad.is_empty() {
        println!(
            "check FAILED: {} claim(s) differ from their expectation",
            unexpected.len()
        );
        return Ok(ExitCode::from(exit::CHECK_FAILED));
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

/// The statuses of the entries the checked experiments show or make claims
/// about.
fn entry_statuses(report: &RunReport) -> Vec<(String, Option<&'static str>, Derived)> {
    let facts: Vec<ExperimentFacts> = report
        .manifests
        .iter()
        .map(|m| ExperimentFacts::of(m, &report.claims))
        .collect();
    statuses_of(&facts)
}

/// One line: how many entries have each status.
fn print_statuses(rows: &[(String, Option<&'static str>, Derived)]) {
    let counts: Vec<String> = EntryStatus::ALL
        .iter()
        .filter_map(|s| {
            let n = rows.iter().filter(|(_, _, d)| d.status == *s).count();
            (n > 0).then(|| format!("{n} {}", s.label()))
        })
        .collect();
    if !counts.is_empty() {
        println!("entries: {}", counts.join(", "));
    }
}

/// Claims per status, for the summary line and the JSON.
fn counts(claims: &[ClaimResult]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for s in ClaimStatus::ALL {
        let n = claims.iter().filter(|c| c.status == *s).count();
        m.insert(s.as_str().to_string(), n.into());
    }
    m.insert(
        "sanity".into(),
        claims.iter().filter(|c| c.sanity.is_some()).count().into(),
    );
    serde_json::Value::Object(m)
}

fn definition(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| text.into())
}

/// One claim in `check --format json`.
fn claim_json(c: &ClaimResult) -> serde_json::Value {
    let history: Vec<serde_json::Value> = c
        .history
        .iter()
        .map(|d| {
            serde_json::json!({
                "definition": definition(&d.definition),
                "hash": d.hash,
                "first_evaluated": d.first_seen,
                "last_evaluated": d.last_evaluated,
                "evaluations": d.evaluations,
                "last_verdict": d.last_verdict,
            })
        })
        .collect();
    serde_json::json!({
        "experiment": c.experiment,
        "version": c.version,
        "id": c.id,
        "kind": c.kind,
        "entries": c.entries,
        "quote": c.quote,
        "where": c.where_,
        "holds": c.holds,
        "points": c.points_filter,
        "tolerance": c.tolerance,
        "verdict": c.verdict,
        "expect": c.expect,
        "quick_expect": c.quick_expect,
        "quick_why": c.quick_why,
        "status": c.status,
        "why": c.why,
        "note": c.note,
        "sanity": c.sanity,
        "fit": c.fit,
        "reason": c.reason,
        "evaluated_points": c.points.len(),
        "skipped_points": c.skipped.len(),
        "steps": c.steps,
        "definition": c.definition,
        "first_evaluated": c.first_evaluated,
        "history": history,
    })
}

/// The claims in text: counts, then every claim whose verdict differs from its
/// expectation, every claim whose definition changed after results existed,
/// and the sanity checks apart.
fn print_claims(claims: &[ClaimResult], removed: &[store::ClaimDefinitionRow]) {
    if claims.is_empty() && removed.is_empty() {
        return;
    }
    let n = |s: ClaimStatus| claims.iter().filter(|c| c.status == s).count();
    println!(
        "claims: {} holds, {} fails as expected, {} FAIL, {} inconclusive, {} UNEXPECTEDLY HOLD{} ({} sanity checks, {} fits)",
        n(ClaimStatus::Holds),
        n(ClaimStatus::FailsAsExpected),
        n(ClaimStatus::Fails),
        n(ClaimStatus::Inconclusive),
        n(ClaimStatus::UnexpectedlyHolds),
        reports::quick_counts(
            n(ClaimStatus::InconclusiveAtQuick),
            n(ClaimStatus::DecidedAtQuick)
        ),
        claims.iter().filter(|c| c.sanity.is_some()).count(),
        claims.iter().filter(|c| c.fit.is_some()).count(),
    );
    for c in claims.iter().filter(|c| c.status.is_unexpected()) {
        if c.status == ClaimStatus::DecidedAtQuick {
            println!(
                "  {} {}/{}: {} {} at --quick although marked `quick: {{ expect: inconclusive }}`: decided at --quick: remove `quick:` (it said: {})",
                c.status.label(),
                c.experiment,
                c.id,
                c.holds,
                c.verdict,
                c.quick_why.as_deref().unwrap_or("")
            );
            continue;
        }
        println!(
            "  {} {}/{}: {} (expected {}){}",
            c.status.label(),
            c.experiment,
            c.id,
            c.holds,
            c.expect,
            c.reason
                .as_ref()
                .map_or(String::new(), |r| format!(": {r}"))
        );
    }
    for c in claims.iter().filter(|c| !c.history.is_empty()) {
        for d in &c.history {
            println!(
                "  changed after results: {}/{}: was {} (evaluated {} to {}, last {}), now {}{}",
                c.experiment,
                c.id,
                d.definition,
                d.first_seen,
                d.last_evaluated,
                d.last_verdict,
                c.definition,
                c.first_evaluated
                    .as_ref()
                    .map_or(String::new(), |t| format!(" (evaluated since {t})"))
            );
        }
    }
    for d in removed {
        println!(
            "  removed after results: {}/{}: was {} (last evaluated {}, {})",
            d.experiment, d.claim_id, d.definition, d.last_evaluated, d.last_verdict
        );
    }
    let sanity: Vec<&ClaimResult> = claims.iter().filter(|c| c.sanity.is_some()).collect();
    if !sanity.is_empty() {
        println!("  sanity checks (cannot fail; never enough to call an entry reproduced):");
        for c in sanity {
            println!(
                "    {}/{}: {} ({})",
                c.experiment,
                c.id,
                c.status.label(),
                c.sanity.as_deref().unwrap_or("")
            );
        }
    }
}
