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
        quick_svg.contains("quick CI fidelity"),
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
    assert!(row("wu-3.4a").contains("not yet"));
    // The project's own outputs follow the paper entries.
    assert!(pos("own validations") < pos("<code>tiny-L1</code>"));
    // Per-point tables and provenance are collapsed.
    assert!(html.contains("<details class=\"points\">"));
    assert!(html.contains("<details class=\"provenance\">"));
    assert!(!html.contains("<details class=\"points\" open"));
}

#[test]
fn every_shipped_output_is_in_the_figure_list_or_a_project_study() {
    let list = std::fs::read_to_string(shipped_experiments().join("../docs/figures.md")).unwrap();
    for entry in std::fs::read_dir(shipped_experiments()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(i) = line.find("id: ") else { continue };
            if !line.trim_start().starts_with('-') {
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
