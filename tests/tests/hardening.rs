//! Issue 11 (hardening) and issue 12 item 2 (solver parameters checked at
//! load time): one test per defect, each reproducing it with the binary.
//! Item 7 (read-only stores) is in `readonly.rs`.
//!
//! The defects were hangs and aborts; every command here runs under a
//! watchdog that kills it after a generous limit and fails the test, so a
//! regression shows as a failure with the command, not as a stuck suite.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above what any of these commands needs (they answer in well under a
/// second unloaded); only a hang or a runaway allocation reaches it.
const WATCHDOG: Duration = Duration::from_secs(90);

/// Runs repro in `dir`, killing it if it outlives the watchdog.
fn repro_guarded(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(repro_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("REPRO_STORE")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run repro");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > WATCHDOG {
            child.kill().ok();
            panic!("`repro {}` still ran after {WATCHDOG:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn manifest(sweep: &str, series: &str) -> String {
    format!(
        "id: m\ntitle: t\nversion: 1\nparams: {{ lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 4, m: 4 }}\nsweep:\n{sweep}series:\n{series}"
    )
}

const MODEL: &str = "  model: { solver: mm1k.exact }\n";

fn mm1k_manifest(sweep: &str) -> String {
    format!(
        "id: m\ntitle: t\nversion: 1\nparams: {{ lambda: 5.0 }}\nsweep:\n{sweep}series:\n{MODEL}"
    )
}

fn list_one(text: &str) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path(), "m", text);
    let o = repro_guarded(dir.path(), &["list", "m"]);
    (dir, o)
}

/// Defect 1: two axes of 100,000 values asked for 240 GB and aborted (SIGABRT).
#[test]
fn defect_1_a_huge_sweep_grid_is_refused_before_it_is_expanded() {
    let (_d, o) = list_one(&mm1k_manifest(
        "  mu: { from: 1, to: 100000 }\n  K: { from: 1, to: 100000 }\n",
    ));
    let err = refused(&o);
    assert!(err.contains("m.yaml:7:3: key `sweep.K`"), "{err}");
    assert!(
        err.contains("100000 × 100000") && err.contains("limit is 1000000 points"),
        "{err}"
    );
    let (_d, o) = list_one(&mm1k_manifest(
        "  mu: { from: 1, to: 1000 }\n  K: { from: 1, to: 1000 }\n  lambda: { from: 1, to: 1000 }\n",
    ));
    assert!(refused(&o).contains("1000 × 1000 × 1000"));
}

/// Defect 2: overflowing ranges gave an empty sweep and a successful run.
#[test]
fn defect_2_overflowing_ranges_are_errors_not_empty_sweeps() {
    for (range, expect) in [
        (
            "{from: 0, to: 1.0e300, step: 1}",
            "values; a sweep holds at most",
        ),
        ("{from: -1e308, to: 1e308}", "is not a finite number"),
        ("{from: 0, to: 1, step: 5e-324}", "is not a finite number"),
        ("{from: 1, to: 2, step: 0}", "must be > 0"),
        ("{from: 0, to: 1, step: 0.3}", "is not a whole number"),
        (
            "{from: 1e12, to: 1.000000000001e12, step: 0.01}",
            "below the resolution",
        ),
    ] {
        let (_d, o) = list_one(&mm1k_manifest(&format!("  K: {range}\n")));
        let err = refused(&o);
        // Line 6, at `K` (column 3) or at the range's `step` key.
        assert!(
            err.contains("m.yaml:6:3: key `sweep.K`")
                || (err.contains("m.yaml:6:") && err.contains(": key `sweep.K.step`")),
            "{range}: {err}"
        );
        assert!(err.contains(expect), "{range}: {err}");
    }
}

/// Defect 3: inputs within the old limits hung in planning. A grid of exactly
/// 10^6 points is planned (and listed); what is over a limit is refused.
#[test]
fn defect_3_large_inputs_are_planned_within_the_limits_or_refused() {
    let (_d, o) = list_one(&mm1k_manifest(
        "  mu: { from: 1, to: 1000 }\n  K: { from: 1, to: 1000 }\n",
    ));
    let out = ok(&o);
    let listing = stdout(&o);
    assert!(listing.contains("1000000"), "{listing}\n{out}");

    let reps = manifest(
        "  m: [2, 3]\n",
        "  sim: { solver: credit.sim, replications: 1000000 }\n",
    );
    let (_d, o) = list_one(&reps);
    let err = refused(&o);
    assert!(
        err.contains("key `series.sim.replications`") && err.contains("limit is 10000"),
        "{err}"
    );

    let (_d, o) = list_one(&mm1k_manifest(
        "  mu: { from: 1, to: 100000 }\n  K: { from: 1, to: 20 }\n",
    ));
    assert!(refused(&o).contains("100000 × 20"));

    let deep = format!(
        "id: m\ntitle: t\nversion: 1\nparams: {{ x: {}{} }}\nseries:\n{MODEL}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (_d, o) = list_one(&deep);
    let err = refused(&o);
    assert!(
        err.contains("m.yaml:4") && err.contains("nested more than 32 levels"),
        "{err}"
    );

    // Tasks per run: two manifests of 600,000 points each are fine alone, not together.
    let dir = tempfile::tempdir().unwrap();
    for id in ["a", "b"] {
        let text = format!(
            "id: {id}\ntitle: t\nversion: 1\nparams: {{ lambda: 5.0 }}\nsweep:\n  mu: {{ from: 1, to: 600 }}\n  K: {{ from: 1, to: 1000 }}\nseries:\n{MODEL}"
        );
        write_manifest(dir.path(), id, &text);
    }
    let o = repro_guarded(dir.path(), &["run", "--store", "s.sqlite"]);
    let err = refused(&o);
    assert!(
        err.contains("1200000 tasks") && err.contains("limit is 1000000 tasks per run"),
        "{err}"
    );
    assert!(
        !dir.path().join("s.sqlite").exists(),
        "nothing may run: {err}"
    );
}

/// Defect 4: a typo in `repro solve` asked for 5.4 GB or ran for hours.
#[test]
fn defect_4_solvers_refuse_work_beyond_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "credit.ctmc",
            r#"{"lambda":5,"mu1":6,"mu2":8,"n":12,"m":2000}"#,
            "parameter `n, m`",
        ),
        (
            "mm1k.exact",
            r#"{"lambda":5,"mu":6,"K":1e9}"#,
            "parameter `K`",
        ),
        (
            "credit.sim",
            r#"{"lambda":1e9,"mu1":6,"mu2":8,"n":12,"m":4}"#,
            "parameter `lambda`",
        ),
        (
            "credit.sim",
            r#"{"lambda":1e-308,"mu1":6,"mu2":8,"n":12,"m":4}"#,
            "parameter `lambda`",
        ),
        (
            "gege1n.sim",
            r#"{"lambda":1e-308,"mu":1,"ca2":1,"cs2":1,"N":5}"#,
            "parameter `lambda`",
        ),
        (
            "gege1n.sim",
            r#"{"lambda":1,"mu":2,"ca2":1e308,"cs2":1,"N":5}"#,
            "parameter `ca2`",
        ),
        (
            "gege1n.ctmc",
            r#"{"lambda":1,"mu":2,"ca2":1,"cs2":1,"N":2000}"#,
            "parameter `N`",
        ),
        (
            "mmpp_m1.sim",
            r#"{"phi1":1,"phi2":1e-308,"lambda1":1,"lambda2":0.5,"mu":3}"#,
            "parameter `phi2`",
        ),
        (
            "mmpp_g1.sim",
            r#"{"phi1":1,"phi2":1e-308,"lambda1":1,"lambda2":0.5,"service":{"rate":3}}"#,
            "parameter `phi2`",
        ),
        (
            "mmpp_m1.departure",
            r#"{"phi1":1,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":3,"t":1e-300}"#,
            "parameter `t`",
        ),
        (
            "mmpp_m1.departure",
            r#"{"phi1":1e-300,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":3}"#,
            "parameter `phi1`",
        ),
    ];
    for (solver, params, expect) in cases {
        let o = repro_guarded(dir.path(), &["solve", solver, "--params", params]);
        let err = refused(&o);
        assert!(err.contains(expect), "{solver} {params}: {err}");
    }
    // The departure moments no longer cost q·t uniformisation steps (they
    // are computed in the Laplace domain, O(levels)): the inputs that ran
    // for minutes are answered, with the limits they must tend to.
    for (params, idc_t) in [
        // Phase 1 lasts 1e-9: Poisson(0.5) arrivals, so Poisson departures.
        (
            r#"{"phi1":1e9,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":3}"#,
            1.0,
        ),
        // A window far longer than every time scale: IDC(inf) of the arrivals.
        (
            r#"{"phi1":1,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":3,"t":1e9}"#,
            1.0 + 2.0 * 0.25 / (4.0 * 1.5),
        ),
    ] {
        let o = repro_guarded(
            dir.path(),
            &["solve", "mmpp_m1.departure", "--params", params],
        );
        ok(&o);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let got = v["metrics"]["idc_t"].as_f64().unwrap();
        assert!(
            (got - idc_t).abs() < 1e-6,
            "{params}: idc_t {got} vs {idc_t}"
        );
    }
    let o = repro_guarded(
        dir.path(),
        &[
            "solve",
            "mmpp_m1.departure",
            "--params",
            r#"{"phi1":1,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":1e9}"#,
        ],
    );
    ok(&o);
    // Fast modulation is within the bounds: answered, not refused.
    let o = repro_guarded(
        dir.path(),
        &[
            "solve",
            "mmpp_m1.sim",
            "--quick",
            "--params",
            r#"{"phi1":1e9,"phi2":1,"lambda1":1,"lambda2":0.5,"mu":3}"#,
        ],
    );
    ok(&o);
}

/// Defect 5: figure and table ids were checked only after every task ran.
#[test]
fn defect_5_output_ids_are_checked_at_load_time() {
    for (key, line) in [("figures", 11), ("tables", 13)] {
        let dir = tempfile::tempdir().unwrap();
        let (fig, tab) = if key == "figures" {
            ("../../x", "t1")
        } else {
            ("f1", "../t")
        };
        let text = format!(
            "id: m\ntitle: t\nversion: 1\nparams: {{ lambda: 5.0, mu: 6.0 }}\nsweep:\n  K: [1, 2]\nseries:\n{MODEL}\
             figures:\n  - {{ id: f0, x: K, y: L, series: [model] }}\n  - {{ id: \"{fig}\", x: K, y: L, series: [model] }}\n\
             tables:\n  - {{ id: \"{tab}\", kind: values }}\n"
        );
        write_manifest(dir.path(), "m", &text);
        let o = repro_guarded(dir.path(), &["run", "m"]);
        let err = refused(&o);
        assert!(
            err.contains(&format!("m.yaml:{line}:7: key `{key}.")),
            "{err}"
        );
        assert!(
            err.contains("is not a valid id") && err.contains("nothing was run"),
            "{err}"
        );
        assert!(
            !dir.path().join("results").exists(),
            "nothing may run: {err}"
        );
    }
}

/// Defect 6: exit code 4 was not documented; a failure after the tasks ran
/// must say that their results are stored and how to render them again.
#[test]
fn defect_6_exit_code_4_is_documented_and_a_late_failure_points_to_report() {
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&repro_guarded(dir.path(), &["--help"]));
    assert!(help.contains("4 internal error"), "{help}");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    assert!(
        readme.contains("4 internal error"),
        "README lacks exit code 4"
    );

    let text = format!(
        "id: m\ntitle: t\nversion: 1\nparams: {{ lambda: 5.0, mu: 6.0 }}\nsweep:\n  K: [1, 2]\nseries:\n{MODEL}\
         figures:\n  - {{ id: f0, x: K, y: L, series: [model] }}\n"
    );
    write_manifest(dir.path(), "m", &text);
    // The results folder cannot be created: a file is in its way.
    std::fs::write(dir.path().join("blocked"), "a file, not a folder").unwrap();
    let o = repro_guarded(
        dir.path(),
        &["run", "m", "--store", "s.sqlite", "--results", "blocked"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("results are stored in s.sqlite")
            && err.contains("repro report --store s.sqlite"),
        "{err}"
    );
    // And indeed they are: report renders them once the way is clear.
    std::fs::remove_file(dir.path().join("blocked")).unwrap();
    ok(&repro_guarded(
        dir.path(),
        &["report", "--store", "s.sqlite", "--results", "blocked"],
    ));
    assert!(dir.path().join("blocked/figures/f0.png").is_file());
}

/// Defect 8: unknown YAML tags were accepted, type errors inside a series had
/// no line, and a 50 MB title or 100,000 series took seconds.
#[test]
fn defect_8_tags_lines_and_sizes() {
    let (_d, o) = list_one(
        &manifest("  m: [2, 3]\n", "  model: { solver: credit.ctmc }\n")
            .replace("mu1: 6.0", "mu1: !custom 6.0"),
    );
    let err = refused(&o);
    assert!(
        err.contains("m.yaml:4") && err.contains("YAML tag `!custom`"),
        "{err}"
    );

    let (_d, o) = list_one(&manifest("  m: [2, 3]\n", "  model: { solver: credit.ctmc }\n  sim:\n    solver: credit.sim\n    replications: many\n"));
    let err = refused(&o);
    assert!(
        err.contains("m.yaml:11:19: key `series.sim.replications`: invalid type"),
        "{err}"
    );

    let big = format!(
        "id: m\ntitle: \"{}\"\nversion: 1\nseries:\n{MODEL}",
        "x".repeat(50 << 20)
    );
    let (_d, o) = list_one(&big);
    assert!(refused(&o).contains("a manifest has at most 1048576 bytes"));

    let mut many =
        String::from("id: m\ntitle: t\nversion: 1\nparams: { lambda: 1, mu: 2, K: 3 }\nseries:\n");
    for i in 0..5000 {
        many.push_str(&format!("  s{i}: {{ solver: mm1k.exact }}\n"));
    }
    let (_d, o) = list_one(&many);
    assert!(refused(&o).contains("more than 64 series"));

    let long_title = format!(
        "id: m\ntitle: \"{}\"\nversion: 1\nparams: {{ lambda: 1, mu: 2, K: 3 }}\nseries:\n{MODEL}",
        "x".repeat(20_000)
    );
    let (_d, o) = list_one(&long_title);
    let err = refused(&o);
    assert!(
        err.contains("key `title`") && err.contains("limit is 16384"),
        "{err}"
    );
}

/// Issue 12 item 2: a misspelt solver parameter is reported at load time
/// with its file, line and key, and nothing runs.
#[test]
fn solver_parameters_are_checked_against_the_solver_at_load_time() {
    let dir = tempfile::tempdir().unwrap();
    let text = manifest(
        "  m: [2, 3]\n",
        "  model: { solver: credit.ctmc }\n  sim:\n    solver: credit.sim\n    params: { batch_lenn: 1000 }\n",
    );
    write_manifest(dir.path(), "m", &text);
    let o = repro_guarded(dir.path(), &["run", "m"]);
    let err = refused(&o);
    assert!(
        err.contains("m.yaml:11:15: key `series.sim.params.batch_lenn`"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `batch_len`?") && err.contains("nothing was run"),
        "{err}"
    );
    assert!(!dir.path().join("results").exists());
    // A shared parameter that one series' solver does not take is named where it is written.
    let text = manifest(
        "  m: [2, 3]\n",
        "  model: { solver: credit.ctmc }\n  other: { solver: mm1k.exact }\n",
    );
    write_manifest(dir.path(), "m", &text);
    let err = refused(&repro_guarded(dir.path(), &["list", "m"]));
    assert!(
        err.contains("m.yaml:4:50: key `params.") && err.contains("solver `mm1k.exact`"),
        "{err}"
    );
}
