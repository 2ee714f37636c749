//! What a new user meets first (issue 12): help and flags, error messages,
//! CI-native outputs, fidelity-separated results, the report page.

mod common;
use common::*;

#[test]
fn solve_short_help_lists_the_solvers_it_promises() {
    let dir = tempfile::tempdir().unwrap();
    let o = repro(dir.path(), &["solve", "-h"]);
    ok(&o);
    let out = stdout(&o);
    for s in ["credit.ctmc", "credit.sim", "threshold.me"] {
        assert!(out.contains(s), "solve -h lacks `{s}`:\n{out}");
    }
}

#[test]
fn commands_reject_flags_that_do_nothing_for_them() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["report", "--experiments", "x"][..],
        &["compare", "a", "b", "--results", "x"],
        &["compare", "a", "b", "--experiments", "x"],
        &["export", "--results", "x"],
        &["list", "--results", "x"],
        &["solve", "credit.ctmc", "--params", "{}", "--store", "x"],
    ] {
        let o = repro(dir.path(), args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?} accepted: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("unexpected argument"), "{args:?}");
    }
}

#[test]
fn negative_jobs_gets_a_plain_message_not_a_dash_dash_tip() {
    let dir = tempfile::tempdir().unwrap();
    let o = repro(dir.path(), &["run", "--jobs", "-1"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("must be at least 1"), "{err}");
    assert!(!err.contains("-- -1"), "{err}");
}

#[test]
fn every_error_line_starts_with_error_prefix() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["run"][..],
        &["report"],
        &["solve", "credit.nope", "--params", "{}"],
    ] {
        let o = repro(dir.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}

#[test]
fn list_shows_the_stored_versions_compare_accepts() {
    let p = project(&["yan-credit-both"]);
    let o = repro(p.path(), &["list"]);
    ok(&o);
    assert!(stdout(&o).contains("stored"), "{}", stdout(&o));
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    let o = repro(p.path(), &["list"]);
    ok(&o);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("yan-credit-both"))
        .unwrap_or_else(|| panic!("{out}"));
    // id, current version, stored versions.
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1], cols[2], "stored versions column: {line}");
}
