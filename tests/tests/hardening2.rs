//! Issue 32 (hardening, second round), with the binary: outputs never
//! destroyed (item 4) and the load-time checks (item 3).

mod common;
use common::*;
use std::path::Path;

const SMALL: &str = "id: m\ntitle: t\nversion: 1\nparams: { lambda: 5.0, mu: 6.0 }\nsweep:\n  K: [1, 2]\nseries:\n  model: { solver: mm1k.exact }\n";

/// A project with `m` run at quick fidelity into `s.sqlite`.
fn stored() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path(), "m", SMALL);
    ok(&repro(
        dir.path(),
        &["run", "--quick", "--store", "s.sqlite", "m"],
    ));
    dir
}

/// Temporary files left beside `f.csv` (`.f.csv.<random>.tmp`).
fn litter(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".f.csv"))
        .collect()
}

/// Item 4: a failed `export` or `compare` used to truncate an existing
/// `--out` file to 0 bytes; it is now left as it was, with no temporary file
/// beside it, and a successful one replaces it.
#[test]
fn a_failed_export_or_compare_leaves_the_out_file_as_it_was() {
    let dir = stored();
    let d = dir.path();
    std::fs::write(d.join("f.csv"), "keep\n").unwrap();
    let o = repro(
        d,
        &[
            "export", "--quick", "--store", "s.sqlite", "--out", "f.csv", "nope",
        ],
    );
    assert!(!o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("f.csv")).unwrap(), "keep\n");
    let o = repro(
        d,
        &[
            "compare", "--quick", "--store", "s.sqlite", "--out", "f.csv", "m@1", "nope@1",
        ],
    );
    assert!(!o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("f.csv")).unwrap(), "keep\n");
    assert_eq!(litter(d), Vec::<String>::new());

    ok(&repro(
        d,
        &[
            "export", "--quick", "--store", "s.sqlite", "--out", "f.csv", "m",
        ],
    ));
    let text = std::fs::read_to_string(d.join("f.csv")).unwrap();
    assert!(text.lines().count() > 2 && !text.contains("keep"), "{text}");
    assert_eq!(litter(d), Vec::<String>::new());
}

/// Item 3: a type error in a series parameter was accepted at load time and
/// failed every task at run time (exit 3); it is refused at load with file,
/// line and key, and nothing runs. The same for a sweep value.
#[test]
fn a_type_error_in_a_parameter_is_refused_at_load_time() {
    let dir = tempfile::tempdir().unwrap();
    let text = "id: m\ntitle: t\nversion: 1\nparams: { lambda: 5.0, mu: 6.0 }\nseries:\n  model:\n    solver: mm1k.exact\n    params: { K: \"NaN\" }\n";
    write_manifest(dir.path(), "m", text);
    let err = refused(&repro(dir.path(), &["run", "--store", "s.sqlite", "m"]));
    assert!(
        err.contains("m.yaml:8:15: key `series.model.params.K`")
            && err.contains("\"NaN\"")
            && err.contains("invalid type"),
        "{err}"
    );
    assert!(!dir.path().join("results").exists());
    let text = "id: m\ntitle: t\nversion: 1\nparams: { lambda: 5.0, mu: 6.0 }\nsweep:\n  K: [1, 2.5x, 3]\nseries:\n  model: { solver: mm1k.exact }\n";
    write_manifest(dir.path(), "m", text);
    let err = refused(&repro(dir.path(), &["list", "m"]));
    assert!(
        err.contains("m.yaml:6:3: key `sweep.K`") && err.contains("\"2.5x\""),
        "{err}"
    );
    // Well-typed values still load.
    write_manifest(dir.path(), "m", SMALL);
    ok(&repro(dir.path(), &["list", "m"]));
}

/// Item 3: `reference_data` numbers under a metric no series makes passed
/// and became "missing" rows; refused at load with a "did you mean".
#[test]
fn reference_data_for_a_metric_no_series_makes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let refs =
        "reference_data:\n  paper:\n    source: \"Table 1\"\n    values: { L: 0.8, Wq: 0.1 }\n";
    write_manifest(dir.path(), "m", &format!("{SMALL}{refs}"));
    let err = refused(&repro(dir.path(), &["list", "m"]));
    assert!(
        err.contains("m.yaml:12:23: key `reference_data.paper.values.Wq`")
            && err.contains("did you mean `W`?"),
        "{err}"
    );
    let refs =
        "reference_data:\n  paper:\n    source: \"Table 1\"\n    values: { L: 0.8, W: 0.1 }\n";
    write_manifest(dir.path(), "m", &format!("{SMALL}{refs}"));
    ok(&repro(dir.path(), &["list", "m"]));
}

/// Item 3: `compare --metric Lzz` answered "nothing in common" with exit 0,
/// and `compare --figure` drew "0 overlay figures" with exit 0; both are
/// refused (exit 2) before anything is written.
#[test]
fn compare_refuses_an_unknown_metric_and_a_figure_it_cannot_draw() {
    let dir = stored();
    let d = dir.path();
    let figure = "figures:\n  - { id: f, x: K, y: L, series: [model] }\n";
    let v2 = SMALL.replace("version: 1", "version: 2");
    write_manifest(d, "m", &format!("{v2}{figure}"));
    ok(&repro(d, &["run", "--quick", "--store", "s.sqlite", "m"]));
    let store = ["--quick", "--store", "s.sqlite"];
    let args = |more: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["compare"];
        v.extend(store);
        v.extend(more);
        v
    };
    let err = refused(&repro(d, &args(&["m@1", "m@2", "--metric", "Lzz"])));
    assert!(
        err.contains("`Lzz`") && err.contains("did you mean `L`?"),
        "{err}"
    );
    ok(&repro(d, &args(&["m@1", "m@2", "--metric", "L"])));
    // Version 1 has no figure: nothing to overlay.
    let err = refused(&repro(d, &args(&["m@2", "m@1", "--figure"])));
    assert!(err.contains("no figure in common"), "{err}");
    assert!(
        !d.join("results/quick/compare/m-v2-vs-m-v1").exists(),
        "something was written"
    );
}

/// Item 5: a UTF-8 byte order mark gave "missing field `title`"; serde's
/// internal type names (`RawManifest`, `RawQuick`, `f64`) reached users;
/// a type error in a solver parameter named no parameter.
#[test]
fn a_bom_is_read_and_messages_name_no_internal_type() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_manifest(d, "m", &format!("\u{feff}{SMALL}"));
    ok(&repro(d, &["list", "--store", "s.sqlite", "m"]));
    for (text, key) in [
        ("- a\n- b\n".to_string(), "a manifest: a mapping"),
        (
            SMALL.replace("mm1k.exact }", "mm1k.exact, quick: 4 }"),
            "`series.model.quick`",
        ),
        (
            SMALL.replace("mm1k.exact }", "mm1k.exact, precision: 3 }"),
            "`series.model.precision`",
        ),
        (
            format!("{SMALL}figures:\n  - {{ id: f, x: K, y: {{ a: 1 }}, series: [model] }}\n"),
            "`figures.0.y`: y must be a metric name or a list of metric names",
        ),
        (format!("{SMALL}figures: 3\n"), "`figures`"),
    ] {
        write_manifest(d, "m", &text);
        let err = refused(&repro(d, &["list", "--store", "s.sqlite", "m"]));
        assert!(err.contains(key), "{key} not in {err}");
        for leak in ["Raw", "struct ", "enum ", "f64", "u32"] {
            assert!(!err.contains(leak), "`{leak}` in {err}");
        }
    }
    let o = repro(
        d,
        &[
            "solve",
            "mm1k.exact",
            "--params",
            r#"{"K": "NaN", "lambda": 1, "mu": 2}"#,
        ],
    );
    let err = refused(&o);
    assert!(
        err.contains("parameter `K`") && err.contains("expected a number"),
        "{err}"
    );
}

/// Item 5, found by item 7's campaign: extreme rates and times ended inside
/// the numerics ("metric L is not finite (NaN); this is a bug", "GTH
/// normalisation failed", "fit: characteristics are not finite", a parameter
/// `rate` the user never gave). Each is now refused naming the user's
/// parameter, its value and the accepted range; an overloaded finite queue
/// (weights of ρ^level past f64's range) is answered.
#[test]
fn extreme_rates_are_refused_naming_the_parameter_and_its_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (solver, params, expect) in [
        (
            "gege1n.me",
            r#"{"N":1000000.0,"ca2":7.0,"cs2":1.0000001,"lambda":13,"mu":1e-300}"#,
            "parameter `mu`: must lie in [1e-12, 1e12]",
        ),
        (
            "mm1k.exact",
            r#"{"K":10,"lambda":1e300,"mu":1}"#,
            "parameter `lambda`: must lie in [1e-12, 1e12]",
        ),
        (
            "mmpp.stats",
            r#"{"lambda1":10,"lambda2":8,"phi1":9,"phi2":7,"t":1e308}"#,
            "parameter `t`: must lie in [1e-12, 1e12]",
        ),
        (
            "mmpp_m1.mg",
            r#"{"lambda1":5e-324,"lambda2":0,"mu":1,"phi1":1,"phi2":1}"#,
            "parameter `lambda1`: must lie in [1e-12, 1e12]",
        ),
        (
            "threshold.me",
            r#"{"K":16,"ca2":5,"cs2":1e308,"lambda":0.5,"mus":[8,32],"thresholds":[2],"variant":"derived"}"#,
            "parameter `cs2`: must lie in [1, 1e6]",
        ),
        (
            "mmpp.superpose",
            r#"{"factor":1.0,"lambda1":16,"lambda2":16.5,"phi1":7.0,"phi2":0.09,"t":1e12}"#,
            "parameter `t`: with phi1 = 7",
        ),
    ] {
        let err = refused(&repro(d, &["solve", solver, "--params", params]));
        assert!(err.contains(expect), "{solver} {params}: {err}");
        assert!(!err.contains("this is a bug"), "{err}");
    }
    // MMPP/M/1/K at ρ ≈ 8 with K = 1000: GTH's weights grow like 8^level.
    let o = repro(
        d,
        &[
            "solve",
            "mmpp_m1k.ctmc",
            "--params",
            r#"{"K":1000,"lambda1":10,"lambda2":0,"mu":1,"phi1":0.25,"phi2":0.25}"#,
        ],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Throughput is mu times the probability the server is busy: at this
    // overload the queue is almost never empty, so it is just below mu.
    let thr = v["metrics"]["throughput"].as_f64().unwrap();
    assert!(thr > 0.99 && thr <= 1.0 + 1e-12, "throughput {thr}");
}
