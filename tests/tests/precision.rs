//! Precision targets (replications in rounds) and `repro check --resolve`
//! (issue 19), driven through the binary on an M/M/1 queue: the library's
//! GE/GE/1/N simulator with SCVs 1 (Poisson arrivals, exponential service)
//! and a buffer far beyond what the load fills, against the M/M/1/K closed
//! form. The spread of its replication means is a property of the simulator,
//! not of the test: the targets below are reached by adding replications.

mod common;
use common::*;
use serde_json::Value;

/// An M/M/1 experiment: short runs (2 batches of 2,000 customers), so one
/// replication's mean L is noisy and the target needs several of them.
fn mm1(id: &str, precision: &str, tolerance: f64) -> String {
    format!(
        r#"id: {id}
title: "M/M/1 with a precision target"
source: "test"
version: 1
params: {{ mu: 1.0 }}
sweep:
  lambda: [0.3, 0.5, 0.7]
series:
  exact: {{ solver: mm1k.exact, params: {{ K: 60 }} }}
  sim:
    solver: gege1n.sim
    seed: 3
    params: {{ ca2: 1.0, cs2: 1.0, N: 60, warmup: 1000, batches: 2, batch_len: 2000 }}
    replications: 3
{precision}
compare:
  - {{ metric: L, reference: sim, candidate: exact, tolerance: {tolerance} }}
tables:
  - {{ id: {id}-em, kind: error-measures }}
"#
    )
}

/// The simulated L rows of an export: (lambda, value, half_width, ci_n).
fn sim_l(dir: &std::path::Path, id: &str) -> Vec<(f64, f64, f64, u64)> {
    let o = repro(dir, &["export", "--format", "json", id]);
    ok(&o);
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("export JSON");
    let mut out: Vec<(f64, f64, f64, u64)> = rows
        .iter()
        .filter(|r| r["series"] == "sim" && r["metric"] == "L")
        .map(|r| {
            (
                r["point"]["lambda"].as_f64().unwrap(),
                r["value"].as_f64().unwrap(),
                r["half_width"].as_f64().expect("a CI across replications"),
                r["ci_n"].as_u64().expect("ci_n"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(out.len(), 3, "{rows:?}");
    out
}

#[test]
fn every_point_meets_its_target_and_replications_grow_as_the_target_shrinks() {
    let p = tempfile::tempdir().unwrap();
    let mut counts = Vec::new();
    for (id, rel) in [("mm1-loose", 0.08), ("mm1-tight", 0.03)] {
        let precision =
            format!("    precision: {{ metric: L, rel_half_width: {rel}, max_replications: 200 }}");
        write_manifest(p.path(), id, &mm1(id, &precision, 0.5));
        let err = ok(&repro(p.path(), &["run", id, "--no-progress"]));
        assert!(!err.contains("precision not met"), "{err}");
        let rows = sim_l(p.path(), id);
        for (lambda, value, hw, n) in &rows {
            assert!(
                *hw <= rel * value.abs(),
                "{id} λ = {lambda}: half-width {hw} > {rel} × {value} with {n} replications"
            );
            assert!(*n >= 3 && *n < 200, "{id} λ = {lambda}: {n} replications");
        }
        counts.push(rows.iter().map(|r| r.3).collect::<Vec<_>>());
    }
    // A tighter target needs more replications at every point, and the
    // heavier load (more variance) needs more than the lighter one.
    for (loose, tight) in counts[0].iter().zip(&counts[1]) {
        assert!(tight > loose, "{counts:?}");
    }
    assert!(counts[1][2] > counts[1][0], "{counts:?}");
}

#[test]
fn replication_rounds_do_not_depend_on_jobs_and_a_rerun_is_cached() {
    let precision = "    precision: { metric: L, rel_half_width: 0.04, max_replications: 100 }";
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        write_manifest(d.path(), "mm1", &mm1("mm1", precision, 0.5));
    }
    ok(&repro(a.path(), &["run", "--jobs", "1", "--no-progress"]));
    ok(&repro(b.path(), &["run", "--jobs", "2", "--no-progress"]));
    let ea = stdout(&repro(a.path(), &["export", "--format", "csv"]));
    let eb = stdout(&repro(b.path(), &["export", "--format", "csv"]));
    assert!(!ea.is_empty());
    assert_eq!(ea, eb);
    // Every round is in the store: a rerun runs nothing.
    let (total, cached, run, _) = summary(&ok(&repro(a.path(), &["run", "--no-progress"])));
    assert_eq!((cached, run), (total, 0));
    // `repro report` replays the rounds from the store: its EM table (which
    // shows each point's CI) is the one `run` wrote, not the first round's.
    let table = a.path().join("results/tables/mm1-em.csv");
    let from_run = std::fs::read_to_string(&table).expect("run wrote the EM table");
    ok(&repro(a.path(), &["report"]));
    assert_eq!(std::fs::read_to_string(&table).unwrap(), from_run);
}

#[test]
fn a_point_inconclusive_at_three_replications_is_decided_by_resolve() {
    let p = tempfile::tempdir().unwrap();
    // No precision target: three replications, a tolerance inside the CI.
    write_manifest(p.path(), "mm1", &mm1("mm1", "", 0.08));
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--no-progress", "--format", "json"];
        args.extend_from_slice(extra);
        let o = repro(p.path(), &args);
        let v: Value = serde_json::from_str(&stdout(&o)).expect("check JSON");
        (o.status.code(), v)
    };
    let (code, before) = check(&[]);
    assert_eq!(code, Some(1), "{before}");
    let inconclusive: Vec<&Value> = before["failing_points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "inconclusive")
        .collect();
    assert!(!inconclusive.is_empty(), "{before}");
    let (_, after) = check(&["--resolve"]);
    let verdicts: Vec<&Value> = after["failing_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["verdict"])
        .collect();
    assert!(verdicts.iter().all(|v| *v == "fail"), "{after}");
    // The JSON says how many replications each resolved point needed.
    for r in &inconclusive {
        let point = r["point_index"].as_u64().unwrap();
        let n = after["replications"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["series"] == "sim" && x["point_index"].as_u64() == Some(point))
            .unwrap_or_else(|| panic!("no replication count at point {point}: {after}"))
            ["replications"]
            .as_u64()
            .unwrap();
        assert!(n > 3 && n <= 64, "point {point}: {n} replications");
    }
}

#[test]
fn resolve_max_caps_the_replications_resolve_adds() {
    let p = tempfile::tempdir().unwrap();
    write_manifest(p.path(), "mm1", &mm1("mm1", "", 0.08));
    // Without --resolve, or out of range: refused before anything runs.
    for bad in [
        &["--resolve-max", "8"][..],
        &["--resolve", "--resolve-max", "0"],
    ] {
        let mut args = vec!["check", "--no-progress"];
        args.extend_from_slice(bad);
        let o = repro(p.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(!p.path().join("results/repro.sqlite").exists(), "{bad:?}");
    }
    // A cap of 6: rounds from 3 stop at 6, whatever is still undecided.
    let o = repro(
        p.path(),
        &[
            "check",
            "--no-progress",
            "--format",
            "json",
            "--resolve",
            "--resolve-max",
            "6",
        ],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).expect("check JSON");
    let counts: Vec<u64> = v["replications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["replications"].as_u64().unwrap())
        .collect();
    assert!(!counts.is_empty(), "{v}");
    assert!(counts.iter().all(|n| (3..=6).contains(n)), "{counts:?}");
    assert!(counts.contains(&6), "{counts:?}");
}

#[test]
fn a_precision_target_is_checked_when_the_manifest_is_loaded() {
    let p = tempfile::tempdir().unwrap();
    for (bad, says) in [
        (
            "    precision: { metric: L, max_replications: 10 }",
            "exactly one of rel_half_width",
        ),
        (
            "    precision: { metric: L, rel_half_width: -0.1, max_replications: 10 }",
            "rel_half_width",
        ),
        (
            "    precision: { metric: L, half_width: 0.1, max_replications: 2 }",
            "max_replications",
        ),
    ] {
        write_manifest(p.path(), "mm1", &mm1("mm1", bad, 0.5));
        let o = repro(p.path(), &["check", "--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{bad}: {}", stderr(&o));
    }
}
