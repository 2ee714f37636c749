//! End-to-end: drive the `repro` binary in temporary folders.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CREDIT: [&str; 2] = ["yan-credit-downstream", "yan-credit-both"];

#[test]
fn run_produces_figures_tables_index_and_store_and_a_rerun_executes_nothing() {
    let p = project(&CREDIT);
    let first = ok(&repro(p.path(), &["run", "--quick"]));
    let (total, cached, run, failed) = summary(&first);
    assert_eq!((cached, failed), (0, 0), "{first}");
    assert_eq!(run, total);
    // 10 + 7 points, one model task and one simulation task each.
    assert_eq!(total, 34);
    // Quick results live apart from the paper figures (issue 12, item 1).
    let res = p.path().join("results/quick");
    for n in 5..=12 {
        for ext in ["png", "svg"] {
            let f = res.join("figures").join(format!("yan-4.{n}.{ext}"));
            assert!(f.is_file(), "missing {}", f.display());
            assert!(std::fs::metadata(&f).unwrap().len() > 1000);
        }
    }
    for t in ["yan-4.5-4.8-em", "yan-4.9-4.12-em", "yan-4.5-4.8-values"] {
        assert!(res.join("tables").join(format!("{t}.md")).is_file());
        assert!(res.join("tables").join(format!("{t}.csv")).is_file());
    }
    assert!(p.path().join("results/repro.sqlite").is_file());
    let index = std::fs::read_to_string(res.join("index.html")).unwrap();
    assert!(index.contains("figures/yan-4.5.png") && index.contains("figures/yan-4.12.svg"));
    assert!(index.contains(env!("CARGO_PKG_VERSION")));

    // A rerun with every task cached writes no figure or table again (what
    // each shows is unchanged), only a figure one of whose files is gone,
    // which is drawn again whole.
    let written = |dir: &std::path::Path| -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
        let mut v: Vec<_> = ["figures", "tables"]
            .iter()
            .flat_map(|d| std::fs::read_dir(dir.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .map(|f| {
                let t = std::fs::metadata(&f).unwrap().modified().unwrap();
                (f, t)
            })
            .collect();
        v.sort();
        v
    };
    let gone = res.join("figures/yan-4.7.png");
    let before: Vec<_> = written(&res)
        .into_iter()
        .filter(|(f, _)| f.file_stem() != gone.file_stem())
        .collect();
    assert!(before.len() > 30, "{}", before.len());
    std::fs::remove_file(&gone).unwrap();
    let second = ok(&repro(p.path(), &["run", "--quick"]));
    assert_eq!(summary(&second), (34, 34, 0, 0), "{second}");
    assert!(std::fs::metadata(&gone).unwrap().len() > 1000);
    let after: Vec<_> = written(&res)
        .into_iter()
        .filter(|(f, _)| f.file_stem() != gone.file_stem())
        .collect();
    assert_eq!(after, before);

    // `report` re-renders from the store alone, even with the manifests gone.
    std::fs::remove_dir_all(res.join("figures")).unwrap();
    std::fs::remove_dir_all(p.path().join("experiments")).unwrap();
    ok(&repro(p.path(), &["report"]));
    assert!(res.join("figures").join("yan-4.9.png").is_file());
}

#[test]
fn check_passes_on_every_shipped_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let exp = shipped_experiments();
    let o = repro(
        dir.path(),
        &["check", "--quick", "--experiments", exp.to_str().unwrap()],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "check failed:\n{out}\n{}", stderr(&o));
    assert!(out.contains("check passed"), "{out}");
}

const TWO_MODELS: &str = r#"
id: impossible
title: two different models compared with a tight tolerance
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4, 8] }
series:
  a: { solver: credit.ctmc }
  b: { solver: credit.ctmc, params: { mu2: 4.0 } }
  sim: { solver: credit.sim, params: { batch_len: 2000 } }
compare:
  - { metric: L1, reference: a, candidate: b, tolerance: 0.01 }
  - { metric: L1, reference: sim, candidate: a, tolerance: 0.0 }
figures:
  - { id: impossible-L1, x: n, y: L1, series: [a, b, sim] }
tables:
  - { id: impossible-em, kind: error-measures }
"#;

#[test]
fn check_exits_1_and_tabulates_failing_and_inconclusive_points() {
    let p = project(&[]);
    write_manifest(p.path(), "impossible", TWO_MODELS);
    let o = repro(p.path(), &["check", "--quick"]);
    assert_eq!(o.status.code(), Some(1), "{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("check FAILED"), "{out}");
    assert!(out.contains("fail"), "{out}");
    // A zero tolerance can never be confirmed by a simulation with a CI.
    assert!(out.contains("inconclusive"), "{out}");
    assert!(out.contains("impossible v1"), "{out}");
    // `run` on the same manifest succeeds: measuring is not checking.
    ok(&repro(p.path(), &["run", "--quick"]));
}

#[test]
fn malformed_manifests_give_file_line_and_key_without_panicking() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "version: 1",
            "version: 1\nfigure_colour: red",
            "bad.yaml:5:1: key `figure_colour`",
        ),
        (
            "solver: credit.ctmc }",
            "solver: credit.ctm }",
            "bad.yaml:8:8: key `series.a.solver`: unknown solver",
        ),
        ("version: 1", "version: first", "bad.yaml:4"),
        (
            "sweep: { n: [4, 8] }",
            "sweep: { n: [] }",
            "key `sweep.n`: empty list",
        ),
        (
            "params: { batch_len: 2000 }",
            "params: { batch_len: 2000 ",
            "bad.yaml:",
        ),
    ];
    for (from, to, expect) in cases {
        let p = project(&[]);
        let text = TWO_MODELS
            .replace("id: impossible", "id: bad")
            .replacen(from, to, 1);
        write_manifest(p.path(), "bad", &text);
        let o = repro(p.path(), &["run", "--quick"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{to}: {err}");
        assert!(err.contains(expect), "expected `{expect}` in:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains("nothing was run"), "{err}");
        assert!(
            !p.path().join("results").join("repro.sqlite").exists(),
            "a task ran before validation"
        );
    }
}

#[test]
fn every_manifest_is_validated_before_any_task_runs() {
    let p = project(&["yan-credit-both"]);
    write_manifest(
        p.path(),
        "zz-bad",
        "id: zz-bad\ntitle: x\nversion: 1\nseries: {}\n",
    );
    let o = repro(p.path(), &["run", "--quick"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("zz-bad.yaml"));
    assert!(!p.path().join("results").exists());
}

#[test]
fn a_failed_task_prints_the_command_that_reruns_it() {
    let p = project(&[]);
    let text = TWO_MODELS.replace("sweep: { n: [4, 8] }", "sweep: { n: [0, 4] }");
    write_manifest(p.path(), "impossible", &text);
    let o = repro(p.path(), &["run", "--quick"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("repro solve credit.ctmc"))
        .unwrap_or_else(|| panic!("no rerun command in:\n{err}"));
    assert!(err.contains("parameter `n`"), "{err}");
    // The printed command reproduces the failure.
    let json = line.split('\'').nth(1).unwrap();
    let again = repro(p.path(), &["solve", "credit.ctmc", "--params", json]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("parameter `n`: must be >= 1"),
        "{}",
        stderr(&again)
    );
    // The good points were stored and rendered anyway.
    assert!(p
        .path()
        .join("results/quick/figures/impossible-L1.png")
        .is_file());
}

#[test]
fn results_do_not_depend_on_jobs() {
    let a = project(&["yan-credit-both"]);
    let b = project(&["yan-credit-both"]);
    ok(&repro(a.path(), &["run", "--quick", "--jobs", "1"]));
    ok(&repro(b.path(), &["run", "--quick", "--jobs", "2"]));
    let ea = repro(a.path(), &["export", "--quick", "--format", "csv"]);
    let eb = repro(b.path(), &["export", "--quick", "--format", "csv"]);
    ok(&ea);
    assert!(!stdout(&ea).is_empty());
    assert_eq!(stdout(&ea), stdout(&eb));
}

#[test]
fn export_is_tidy_with_one_column_per_zipped_axis() {
    let p = project(&["yan-credit-both"]);
    ok(&repro(p.path(), &["run", "--quick"]));
    // A quick run is exported with --quick; without it the user learns why not.
    let full = repro(p.path(), &["export", "--format", "csv", "yan-credit-both"]);
    assert_eq!(full.status.code(), Some(2));
    assert!(
        stderr(&full).contains("no full-fidelity results") && stderr(&full).contains("add --quick"),
        "{}",
        stderr(&full)
    );
    let all = repro(p.path(), &["export", "--format", "csv"]);
    assert_eq!(all.status.code(), Some(2), "{}", stdout(&all));
    let o = repro(
        p.path(),
        &["export", "--quick", "--format", "csv", "yan-credit-both"],
    );
    ok(&o);
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "experiment,version,series,solver,m,n,metric,value,half_width,ci_n"
    );
    let model_l1 = out
        .lines()
        .find(|l| l.contains(",model,credit.ctmc,4,4,L1,"))
        .unwrap_or_else(|| panic!("no model L1 row at n = m = 4:\n{out}"));
    let value: f64 = model_l1.split(',').nth(7).unwrap().parse().unwrap();
    assert!((value - 1.7228).abs() < 1e-4, "{model_l1}");
    let sim_row = out
        .lines()
        .find(|l| l.contains(",sim,credit.sim,") && l.contains(",L1,"))
        .unwrap();
    let cols: Vec<&str> = sim_row.rsplitn(3, ',').collect();
    assert!(
        !cols[1].is_empty() && cols[0] == "10",
        "half_width and n of a simulation: {sim_row}"
    );
    let bad = repro(
        p.path(),
        &["export", "--format", "csv", "no-such-experiment"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_killed_run_resumes_without_redoing_finished_tasks() {
    let p = project(&[]);
    // Slow enough to be killed midway: 8 simulation tasks, one at a time.
    let text = r#"
id: slow
title: slow
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 12 }
sweep: { m: { from: 2, to: 9 } }
series:
  sim: { solver: credit.sim, params: { batch_len: 400000 }, quick: { params: { batch_len: 400000 } } }
"#;
    write_manifest(p.path(), "slow", text);
    let mut child = Command::new(repro_bin())
        .args(["run", "--quick", "--jobs", "1", "--no-progress"])
        .current_dir(p.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until at least one task is stored, then kill -9.
    let start = Instant::now();
    let mut cached_before = 0;
    while start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
        if !p.path().join("results/repro.sqlite").exists() {
            continue;
        }
        let l = repro(p.path(), &["list"]);
        if !l.status.success() {
            // The run is still creating the store (schema, migrations):
            // `list` refuses a half-made store; ask again.
            continue;
        }
        // The run is --quick: read the right-aligned "cached quick" column,
        // found by where its header ends.
        let out = stdout(&l);
        let end = out
            .lines()
            .next()
            .and_then(|h| h.find("cached quick"))
            .expect("`repro list` has a `cached quick` column")
            + "cached quick".len();
        if let Some(line) = out.lines().find(|l| l.starts_with("slow ")) {
            let cached: usize = line[..end.min(line.len())]
                .split_whitespace()
                .last()
                .unwrap()
                .split('/')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            if cached >= 1 {
                cached_before = cached;
                break;
            }
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(cached_before >= 1, "no task finished within 60 s");
    assert!(
        !status.success(),
        "the run finished before it could be killed; make it slower"
    );
    let again = ok(&repro(p.path(), &["run", "--quick", "--jobs", "2"]));
    let (total, cached, run, failed) = summary(&again);
    assert_eq!(total, 8);
    assert!(cached >= cached_before, "{again}");
    assert!(
        cached < 8,
        "everything was cached: the kill came too late to test resuming"
    );
    assert_eq!((run, failed), (8 - cached, 0));
}

#[test]
fn a_store_from_a_newer_repro_is_refused() {
    let p = project(&["yan-credit-both"]);
    ok(&repro(p.path(), &["run", "--quick"]));
    let db = p.path().join("results/repro.sqlite");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use sqlx::Connection;
            let url = format!("sqlite://{}", db.display());
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            sqlx::query("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
                .execute(&mut c)
                .await
                .unwrap();
            c.close().await.unwrap();
        });
    let o = repro(p.path(), &["run", "--quick"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("schema version 99") && err.contains("newer"),
        "{err}"
    );
}

#[test]
fn solve_prints_json_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let o = repro(
        dir.path(),
        &[
            "solve",
            "credit.ctmc",
            "--params",
            r#"{"lambda":5,"mu1":6,"mu2":8,"n":12,"m":2}"#,
        ],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((v["metrics"]["L1"].as_f64().unwrap() - 7.4228).abs() < 1e-4);
    assert!((v["metrics"]["T"].as_f64().unwrap() - 4.4212).abs() < 1e-4);

    let o = repro(
        dir.path(),
        &[
            "solve",
            "credit.sim",
            "--quick",
            "--seed",
            "3",
            "--params",
            r#"{"lambda":5,"mu1":6,"mu2":8,"n":4,"m":4}"#,
        ],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let l1 = &v["metrics"]["L1"];
    assert!(
        l1["value"].as_f64().is_some() && l1["half_width"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    assert_eq!(v["seed"], 3);
}

#[test]
fn bad_solver_parameters_and_flags_are_clean_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "solve",
                "credit.ctmc",
                "--params",
                r#"{"lambda":-5,"mu1":6,"mu2":8,"n":12,"m":2}"#,
            ],
            "parameter `lambda`: must be > 0",
        ),
        (
            &[
                "solve",
                "credit.ctmc",
                "--params",
                r#"{"lambda":5,"mu1":0,"mu2":8,"n":12,"m":2}"#,
            ],
            "parameter `mu1`: must be > 0",
        ),
        (
            &[
                "solve",
                "credit.ctmc",
                "--params",
                r#"{"lambda":5,"mu1":6,"mu2":8,"n":0,"m":2}"#,
            ],
            "parameter `n`: must be >= 1",
        ),
        (
            &[
                "solve",
                "credit.ctmc",
                "--params",
                r#"{"lambda":5,"mu1":6,"mu2":8,"n":2.5,"m":2}"#,
            ],
            "parameter `n`: must be a whole number",
        ),
        (
            &[
                "solve",
                "credit.ctmc",
                "--params",
                r#"{"lambda":"NaN","mu1":6,"mu2":8,"n":2,"m":2}"#,
            ],
            "invalid type",
        ),
        (
            &["solve", "credit.ctmc", "--params", "{not json"],
            "not valid JSON",
        ),
        (
            &["solve", "credit.nope", "--params", "{}"],
            "unknown solver `credit.nope`",
        ),
        (&["run", "--jobs", "0"], "must be at least 1"),
    ];
    for (args, expect) in cases {
        let o = repro(dir.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected `{expect}` in {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = repro(dir.path(), &["run", "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2));
    let o = repro(dir.path(), &["run"]);
    assert_eq!(o.status.code(), Some(2), "no experiments folder");
    assert!(stderr(&o).contains("no manifest folder"));
}

#[test]
fn help_documents_the_solvers() {
    let dir = tempfile::tempdir().unwrap();
    let o = repro(dir.path(), &["solve", "--help"]);
    let out = stdout(&o);
    ok(&o);
    for s in [
        "credit.ctmc",
        "credit.sim",
        "lambda",
        "metrics: L1, L2, L, T, R, P_block",
    ] {
        assert!(out.contains(s), "solve --help lacks `{s}`");
    }
    let o = repro(dir.path(), &["list", "--solvers"]);
    ok(&o);
    assert!(stdout(&o).contains("threshold.me"));
}

#[test]
fn printed_formulas_that_break_are_reported_point_by_point_not_failed() {
    let p = project(&["yan-5.3-5.5"]);
    let err = ok(&repro(p.path(), &["run", "--quick"]));
    let (_, _, _, failed) = summary(&err);
    assert_eq!(failed, 0, "{err}");
    assert!(err.contains("15 undefined"), "{err}");
    let table =
        std::fs::read_to_string(p.path().join("results/quick/tables/yan-5.3-printed.md")).unwrap();
    assert!(table.contains("| undefined"), "{table}");
    assert!(table.contains("lambda=1 — `et_printed` undefined: as-printed ME formulas break here: x2 (5.17) = 2.03"), "{table}");
    let index = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
    assert!(
        index.contains("undefined at 15 of 15 points"),
        "provenance lacks the count"
    );
}

#[test]
fn compare_shows_two_versions_side_by_side() {
    let p = project(&["yan-credit-both"]);
    ok(&repro(p.path(), &["run", "--quick"]));
    let path = p.path().join("experiments/yan-credit-both.yaml");
    let v2 = std::fs::read_to_string(&path)
        .unwrap()
        .replace("version: 1", "version: 2")
        .replace("mu2: 8.0", "mu2: 16.0");
    std::fs::write(&path, v2).unwrap();
    ok(&repro(p.path(), &["run", "--quick"]));
    let o = repro(
        p.path(),
        &[
            "compare",
            "--quick",
            "yan-credit-both@1",
            "yan-credit-both@2",
            "--metric",
            "L2",
        ],
    );
    ok(&o);
    let out = stdout(&o);
    let row = out
        .lines()
        .find(|l| l.starts_with("{\"m\":4,\"n\":4}") && l.contains(" model "))
        .unwrap_or_else(|| panic!("no model row at n = m = 4:\n{out}"));
    // A faster downstream server empties Node 2: L2 drops.
    assert!(
        row.contains("0.961") && row.trim_end().ends_with('%') && row.contains('-'),
        "{row}"
    );
    assert!(!out.contains(" L1 "), "--metric filters:\n{out}");
    let bad = repro(
        p.path(),
        &["compare", "yan-credit-both@7", "yan-credit-both"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn reading_commands_never_create_a_store() {
    let p = project(&["yan-credit-both"]);
    let l = repro(p.path(), &["list"]);
    ok(&l);
    assert!(stdout(&l).contains("0/14"), "{}", stdout(&l));
    for args in [
        &["report"][..],
        &["export", "--format", "csv"],
        &["compare", "a", "b"],
    ] {
        let o = repro(p.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("run `repro run` first"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert!(!p.path().join("results").exists());
}

#[test]
fn export_of_everything_includes_reference_data_rows() {
    // `repro export` with no ids used to panic on a manifest whose
    // `reference_data` joins the series (gran-s1, gran-s2).
    let p = project(&[]);
    let text = r#"
id: printed
title: a model beside a paper's printed number
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4, n: 4 }
series:
  model: { solver: credit.ctmc }
reference_data:
  paper:
    source: "a number printed in a paper"
    values: { L1: 1.7 }
compare:
  - { metric: L1, reference: paper, candidate: model, tolerance: 0.5 }
"#;
    write_manifest(p.path(), "printed", text);
    ok(&repro(p.path(), &["run", "--quick"]));
    let o = repro(p.path(), &["export", "--quick", "--format", "csv"]);
    ok(&o);
    let out = stdout(&o);
    let row = out
        .lines()
        .find(|l| l.starts_with("printed,1,paper,reference_data,"))
        .unwrap_or_else(|| panic!("no reference row in:\n{out}"));
    assert!(row.contains(",L1,1.7,"), "{row}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("printed,1,model,credit.ctmc,")),
        "{out}"
    );
}

#[test]
fn list_solvers_as_json_gives_every_solver_interface() {
    let p = project(&[]);
    let o = repro(p.path(), &["list", "--solvers", "--format", "json"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(&o)));
    let solvers = v.as_array().expect("an array of solvers");
    let text = repro(p.path(), &["list", "--solvers"]);
    for s in solvers {
        let name = s["name"].as_str().unwrap();
        assert!(stdout(&text).contains(&format!("  {name} (v")), "{name}");
    }
    let credit = solvers
        .iter()
        .find(|s| s["name"] == "credit.ctmc")
        .expect("credit.ctmc listed");
    assert_eq!(credit["kind"], "analytic");
    assert!(credit["version"].as_u64().unwrap() >= 1);
    assert!(credit["params"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "lambda" && !p["doc"].as_str().unwrap().is_empty()));
    assert!(!credit["metrics"].as_array().unwrap().is_empty());
}

/// Another store that drew into the same results folder, or `repro report`,
/// leaves the folder unmarked, so the next run draws its index's other
/// experiments again instead of trusting its own store's record of what it
/// once drew there; a run after it from the same store trusts that record.
#[test]
fn a_folder_drawn_from_another_store_is_drawn_again_whole() {
    let p = project(&["yan-credit-both", "lib-gege1n"]);
    let fig = p.path().join("results/quick/figures/yan-4.9.png");
    let mtime = || std::fs::metadata(&fig).unwrap().modified().unwrap();
    ok(&repro(p.path(), &["run", "--quick"]));
    ok(&repro(
        p.path(),
        &[
            "run",
            "--quick",
            "--store",
            "other.sqlite",
            "yan-credit-both",
        ],
    ));
    let by_other = mtime();
    // The default store's run of the other manifest: yan-credit-both is on
    // its index, and its figure was last drawn from the other store.
    ok(&repro(p.path(), &["run", "--quick", "lib-gege1n"]));
    let again = mtime();
    assert!(again > by_other, "yan-4.9 was not drawn again");
    // The same store once more: its record describes the folder now.
    ok(&repro(p.path(), &["run", "--quick", "lib-gege1n"]));
    assert_eq!(mtime(), again, "yan-4.9 was drawn again without a change");
    // `repro report` draws without a record: the next run draws all again.
    ok(&repro(p.path(), &["report"]));
    let reported = mtime();
    ok(&repro(p.path(), &["run", "--quick", "lib-gege1n"]));
    assert!(
        mtime() > reported,
        "yan-4.9 was not drawn again after report"
    );
}
