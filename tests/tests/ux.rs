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
        &["compare", "a", "b", "--jobs", "2"],
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

/// A small experiment with a model and a simulation, fast at both fidelities.
const TINY: &str = r#"
id: tiny
title: tiny credit experiment
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4, 8] }
series:
  model: { solver: credit.ctmc }
  sim: { solver: credit.sim, params: { batch_len: 2000 } }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.5 }
figures:
  - { id: tiny-L1, x: n, y: L1, series: [model, sim] }
tables:
  - { id: tiny-em, kind: error-measures }
"#;

#[test]
fn quick_results_never_overwrite_full_ones() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    let res = p.path().join("results");
    ok(&repro(p.path(), &["run", "--no-progress"]));
    let full_svg = std::fs::read_to_string(res.join("figures/tiny-L1.svg")).unwrap();
    let full_md = std::fs::read_to_string(res.join("tables/tiny-em.md")).unwrap();
    assert!(!full_svg.contains("quick"), "full figure says quick");
    let err = ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    assert!(err.contains("results/quick/index.html"), "{err}");
    // The paper-fidelity files are untouched; the quick ones sit apart and say so.
    assert_eq!(
        std::fs::read_to_string(res.join("figures/tiny-L1.svg")).unwrap(),
        full_svg
    );
    assert_eq!(
        std::fs::read_to_string(res.join("tables/tiny-em.md")).unwrap(),
        full_md
    );
    let quick_svg = std::fs::read_to_string(res.join("quick/figures/tiny-L1.svg")).unwrap();
    assert!(
        quick_svg.contains("[quick]"),
        "quick figure lacks its banner"
    );
    let quick_md = std::fs::read_to_string(res.join("quick/tables/tiny-em.md")).unwrap();
    assert!(quick_md.contains("Quick (CI) fidelity"), "{quick_md}");
    let full_index = std::fs::read_to_string(res.join("index.html")).unwrap();
    let quick_index = std::fs::read_to_string(res.join("quick/index.html")).unwrap();
    assert!(full_index.contains("fidelity <strong>full</strong>"));
    assert!(quick_index.contains("fidelity <strong>quick</strong>"));
    assert!(quick_index.contains("These are not the paper figures"));
    assert!(quick_index.contains("href=\"../index.html\""));
    // `report` re-renders each fidelity into its own folder.
    std::fs::remove_dir_all(res.join("figures")).unwrap();
    std::fs::remove_dir_all(res.join("quick")).unwrap();
    ok(&repro(p.path(), &["report"]));
    let again = std::fs::read_to_string(res.join("figures/tiny-L1.svg")).unwrap();
    assert!(
        !again.contains("quick"),
        "report put quick results into the full figure"
    );
    assert!(res.join("quick/figures/tiny-L1.svg").is_file());
    let full_index = std::fs::read_to_string(res.join("index.html")).unwrap();
    assert!(full_index.contains("href=\"quick/index.html\""));
}

#[test]
fn index_opens_with_a_summary_in_the_papers_order() {
    let p = project(&["yan-credit-downstream"]);
    write_manifest(p.path(), "tiny", TINY);
    let supp = TINY
        .replace("tiny-L1", "wu-3.4a")
        .replace("tiny-em", "supp-em")
        .replace("id: tiny", "id: supp");
    write_manifest(p.path(), "supp", &supp);
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    let html = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
    let summary = html.find("id=\"summary\"").expect("summary table");
    let first_section = html.find("<section class=\"exp\"").unwrap();
    assert!(summary < first_section, "summary is not at the top");
    // Paper order: Yan ch. 3 before ch. 4 before Wu; reproduced rows carry EMs.
    let pos = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(pos("<code>yan-T3.1</code>") < pos("<code>yan-4.5</code>"));
    assert!(pos("<code>yan-4.5</code>") < pos("<code>wu-3.4a</code>"));
    let row = |id: &str| {
        let i = pos(&format!("<code>{id}</code>"));
        html[i..i + html[i..].find("</tr>").unwrap()].to_string()
    };
    assert!(row("yan-4.5").contains("reproduced"), "{}", row("yan-4.5"));
    assert!(row("yan-4.5").contains('%'), "no EM in {}", row("yan-4.5"));
    assert!(row("wu-3.5a").contains("not yet"));
    // The project's own outputs follow the paper entries.
    assert!(pos("own validations") < pos("<code>tiny-L1</code>"));
    // A table of an experiment that reproduces a paper entry supports it: it is
    // not one of the project's own studies.
    let summary_html = &html[summary..summary + html[summary..].find("</section>").unwrap()];
    assert!(row("wu-3.4a").contains("reproduced"), "{}", row("wu-3.4a"));
    assert!(
        !summary_html.contains("<code>supp-em</code>"),
        "supporting table listed as the project's own"
    );
    // Long per-point tables are linked (CSV, Markdown), not inlined;
    // provenance is collapsed; a table of contents and back-to-top links.
    assert!(!html.contains("<details class=\"points\">"));
    assert!(html.contains("<details class=\"provenance\">"));
    assert!(html.contains("<nav class=\"toc\""));
    assert!(html.contains("href=\"#top\""));
}

#[test]
fn every_shipped_figure_is_in_the_figure_list_or_a_project_study() {
    let list = std::fs::read_to_string(shipped_experiments().join("../docs/figures.md")).unwrap();
    for entry in std::fs::read_dir(shipped_experiments()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // Figures only: tables (`-em`, `-values`) support the figures they sit with.
        let mut in_figures = false;
        for line in text.lines() {
            if !line.starts_with([' ', '-', '#']) && !line.is_empty() {
                in_figures = line.starts_with("figures:");
            }
            let Some(i) = line.find("id: ") else { continue };
            if !in_figures || !line.trim_start().starts_with('-') {
                continue;
            }
            let id: String = line[i + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
                .collect();
            let own = id.starts_with("lib-") || id.starts_with("alt-");
            let listed = list.lines().any(|l| {
                l.strip_prefix("| ")
                    .and_then(|r| r.split(' ').next())
                    .is_some_and(|e| id == e || id.starts_with(&format!("{e}-")))
            });
            assert!(
                own || listed,
                "{}: output `{id}` is not in docs/figures.md",
                path.display()
            );
        }
    }
}

#[test]
fn misspelled_ids_and_paths_get_useful_errors() {
    let p = project(&["yan-credit-both", "yan-credit-downstream"]);
    let o = repro(p.path(), &["run", "--quick", "yan-credit-bot"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("did you mean `yan-credit-both`?"), "{err}");
    assert!(
        err.contains("known ids: yan-credit-both, yan-credit-downstream"),
        "{err}"
    );
    // A path is a path: no `experiments/experiments/nope.yaml.yaml`.
    let o = repro(p.path(), &["run", "experiments/nope.yaml"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no manifest file or folder `experiments/nope.yaml`"),
        "{err}"
    );
    assert!(!err.contains(".yaml.yaml"), "{err}");
    // An id from a subfolder gets the same hint as no argument.
    let sub = p.path().join("results");
    std::fs::create_dir_all(&sub).unwrap();
    let o = repro(&sub, &["run", "yan-credit-both"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("run repro from the project root"), "{err}");
}

#[test]
fn log_lines_carry_no_colour_when_piped() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    let o = std::process::Command::new(repro_bin())
        .args(["run", "--quick", "--no-progress"])
        .current_dir(p.path())
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains("planned"), "no info log line: {err}");
    assert!(
        !err.contains('\u{1b}'),
        "ANSI escape in piped stderr: {err:?}"
    );
}

#[test]
fn progress_lines_appear_when_stderr_is_not_a_terminal() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    let o = std::process::Command::new(repro_bin())
        .args(["run", "--quick", "--jobs", "1"])
        .current_dir(p.path())
        .env("REPRO_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    let err = ok(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!lines.is_empty(), "no progress line: {err}");
    assert!(lines.last().unwrap().contains("4/4 tasks"), "{lines:?}");
    let o = std::process::Command::new(repro_bin())
        .args(["run", "--quick", "--force", "--no-progress"])
        .current_dir(p.path())
        .env("REPRO_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    assert!(
        !ok(&o).contains("progress: "),
        "--no-progress still printed progress"
    );
}

#[test]
fn dry_run_plans_without_running_or_storing() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    let o = repro(p.path(), &["run", "--dry-run"]);
    ok(&o);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("tiny "))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = line.split_whitespace().collect();
    // id, v, tasks, cached, to run: sim, to run: model
    assert_eq!(cols[2..], ["4", "0", "2", "2"], "{line}");
    assert!(
        !p.path().join("results").exists(),
        "a dry run wrote results"
    );
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    // Quick run cached the models (fidelity "any") and the quick simulations.
    let o = repro(p.path(), &["run", "--dry-run", "--quick"]);
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("tiny "))
        .unwrap()
        .to_string();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[2..], ["4", "4", "0", "0"], "{line}");
    let o = repro(p.path(), &["run", "--dry-run"]);
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("tiny "))
        .unwrap()
        .to_string();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[2..], ["4", "2", "2", "0"], "{line}");
}

#[test]
fn why_names_the_field_that_differs_from_the_nearest_stored_task() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    // Change one simulation parameter: the sim tasks are no longer cached.
    write_manifest(
        p.path(),
        "tiny",
        &TINY.replace("batch_len: 2000", "batch_len: 3000"),
    );
    let o = repro(p.path(), &["why", "tiny", "sim", "n=4", "--quick"]);
    ok(&o);
    let out = stdout(&o);
    assert!(out.contains("0 of 1 tasks cached"), "{out}");
    assert!(out.contains("params.batch_len"), "{out}");
    assert!(out.contains("stored 2000, now 3000"), "{out}");
    // At full fidelity the nearest stored task differs in fidelity too.
    let o = repro(p.path(), &["why", "tiny", "sim", "0", "--format", "json"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let fields: Vec<&str> = v[0]["diffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"fidelity"), "{v}");
    // Cached tasks are reported as such.
    let o = repro(p.path(), &["why", "tiny", "model", "--quick"]);
    assert!(stdout(&o).contains("2 of 2 tasks cached"), "{}", stdout(&o));
    let o = repro(p.path(), &["why", "tiny", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("has no series `nope`"));
}

#[test]
fn check_writes_junit_and_json() {
    let p = project(&[]);
    // One comparison that passes, one that must fail (two different models, 1%).
    let text = TINY.replace(
        "  - { metric: L1, reference: sim, candidate: model, tolerance: 0.5 }",
        "  - { metric: L1, reference: sim, candidate: model, tolerance: 0.5 }\n  - { metric: L1, reference: model, candidate: slow, tolerance: 0.01 }",
    )
    .replace(
        "  model: { solver: credit.ctmc }",
        "  model: { solver: credit.ctmc }\n  slow: { solver: credit.ctmc, params: { mu2: 4.0 } }",
    )
    .replace("series: [model, sim]", "series: [model, sim, slow]");
    write_manifest(p.path(), "tiny", &text);
    let junit = p.path().join("junit.xml");
    let o = repro(
        p.path(),
        &[
            "check",
            "--quick",
            "--no-progress",
            "--junit",
            junit.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["failing_points"].as_array().unwrap().len(), 2, "{v}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"));
    // Two compared quantities + one figure = 3 test cases; the failing
    // comparison and the figure that shows it fail, with the offending points.
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite") && n.attribute("name") == Some("tiny v1"))
        .unwrap_or_else(|| panic!("no suite of the experiment: {xml}"));
    assert_eq!(
        (suite.attribute("tests"), suite.attribute("failures")),
        (Some("3"), Some("2")),
        "{xml}"
    );
    assert!(xml.contains("name=\"EM L1: slow vs model\""), "{xml}");
    assert!(xml.contains("name=\"figure tiny-L1\""), "{xml}");
    assert!(
        xml.contains("2 of 2 compared points fail or are inconclusive"),
        "{xml}"
    );
    assert!(xml.contains("point {&quot;n&quot;:4}"), "{xml}");
}

#[test]
fn list_compare_and_export_speak_json() {
    let p = project(&[]);
    write_manifest(p.path(), "tiny", TINY);
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    let o = repro(p.path(), &["list", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(ok_out(&o))).unwrap();
    assert_eq!(v[0]["id"], "tiny");
    assert_eq!(v[0]["stored_versions"], serde_json::json!([1]));
    let o = repro(
        p.path(),
        &["compare", "--quick", "tiny", "tiny", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(ok_out(&o))).unwrap();
    assert!(!v["rows"].as_array().unwrap().is_empty());
    assert_eq!(v["rows"][0]["point"]["n"], 4);
    let o = repro(p.path(), &["export", "--quick", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(ok_out(&o))).unwrap();
    assert_eq!(v[0]["experiment"], "tiny");
    assert!(v[0]["point"]["n"].is_number());
    let o = repro(p.path(), &["export", "--quick"]);
    let out = stdout(ok_out(&o));
    assert_eq!(
        out.lines().next().unwrap(),
        "experiment,version,series,solver,n,metric,value,half_width,ci_n"
    );
}

fn ok_out(o: &std::process::Output) -> &std::process::Output {
    ok(o);
    o
}
