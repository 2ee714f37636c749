//! Tests of manifest parsing and validation.

use super::*;
use solvers::Registry;
use std::path::Path;

fn reg() -> Registry {
    Registry::with_all()
}

const GOOD: &str = r#"
id: t1
title: test
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0 }
sweep:
  nm: { zip: { n: { from: 4, to: 6 }, m: [4, 5, 6] } }
series:
  model: { solver: credit.ctmc }
  sim:
    solver: credit.sim
    params: { batch_len: 1000 }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.05 }
figures:
  - { id: f1, x: n, y: L1, series: [model, sim] }
tables:
  - { id: f1-em, kind: error-measures }
"#;

#[test]
fn parses_and_expands_zipped_axes() {
    let m = parse(Path::new("t1.yaml"), GOOD, &reg()).unwrap();
    assert_eq!(m.axes, vec!["n", "m"]);
    assert_eq!(m.points.len(), 3);
    assert_eq!(m.points.get(2).unwrap().json(), r#"{"m":6,"n":6}"#);
    assert_eq!(m.params["lambda"], serde_json::json!(5));
}

#[test]
fn grid_and_float_ranges() {
    let text = GOOD.replace(
        "nm: { zip: { n: { from: 4, to: 6 }, m: [4, 5, 6] } }",
        "n: [4, 5]\n  m: { from: 0.1, to: 0.3, step: 0.1 }",
    );
    let text = text.replace("x: n", "x: m");
    let m = parse(Path::new("t1.yaml"), &text, &reg()).unwrap();
    assert_eq!(m.points.len(), 6);
    assert_eq!(m.points.get(2).unwrap().values["m"], serde_json::json!(0.3));
}

fn err_of(text: &str) -> ManifestError {
    parse(Path::new("t1.yaml"), text, &reg()).unwrap_err()
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let e = err_of(&GOOD.replace("version: 1", "version: 1\ncolour: red"));
    assert_eq!(e.key, "colour");
    assert_eq!((e.line, e.column), (Some(5), Some(1)));
    assert!(
        e.to_string().starts_with("t1.yaml:5:1: key `colour`"),
        "{e}"
    );
}

#[test]
fn unknown_key_inside_a_series() {
    let e = err_of(&GOOD.replace("params: { batch_len: 1000 }", "parms: { batch_len: 1000 }"));
    assert_eq!(e.key, "series.sim.parms");
    assert_eq!(e.line, Some(12), "{e}");
}

#[test]
fn wrong_type_gives_line() {
    let e = err_of(&GOOD.replace("version: 1", "version: one"));
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("invalid type"), "{e}");
}

#[test]
fn unknown_solver() {
    let e = err_of(&GOOD.replace("solver: credit.ctmc", "solver: credit.magic"));
    assert_eq!(e.key, "series.model.solver");
    assert_eq!(e.line, Some(9));
    assert!(e.message.contains("unknown solver `credit.magic`"));
}

#[test]
fn inconsistent_and_empty_sweeps() {
    let e = err_of(&GOOD.replace("m: [4, 5, 6]", "m: [4, 5]"));
    assert!(e.message.contains("same length"), "{e}");
    assert_eq!(e.line, Some(7));
    let e = err_of(&GOOD.replace("m: [4, 5, 6]", "m: []"));
    assert!(e.message.contains("empty list"), "{e}");
    let e = err_of(&GOOD.replace("n: { from: 4, to: 6 }", "n: { from: 6, to: 4 }"));
    assert!(e.message.contains("empty range"), "{e}");
}

#[test]
fn dangling_references() {
    let e = err_of(&GOOD.replace("series: [model, sim]", "series: [model, simu]"));
    assert_eq!(e.key, "figures.0.series");
    let e = err_of(&GOOD.replace("reference: sim", "reference: simu"));
    assert_eq!(e.key, "compare.0.reference");
    let e = err_of(&GOOD.replace("x: n", "x: lambda"));
    assert_eq!(e.key, "figures.0.x");
}

#[test]
fn id_must_match_file_name() {
    let e = parse(Path::new("other.yaml"), GOOD, &reg()).unwrap_err();
    assert_eq!(e.key, "id");
}

#[test]
fn a_misspelt_key_gets_a_suggestion() {
    let text =
        "id: x\ntitle: t\nversion: 1\nswep:\n  a: [1]\nseries:\n  s:\n    solver: mm1k.model\n";
    let e = parse(Path::new("x.yaml"), text, &reg()).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(4), "swep"), "{e}");
    assert!(e.message.ends_with("(did you mean `sweep`?)"), "{e}");
}

#[test]
fn syntax_error_has_line() {
    let e = err_of("id: t1\ntitle: [unclosed\n");
    assert!(e.line.is_some(), "{e}");
}

#[test]
fn locate_finds_flow_and_block_keys() {
    let t = "a:\n  b: { c: 1 }\n  d:\n    e: 2\n  f:\n    - x\n    - { g: 3 }\n";
    let at = |path| locate(t, path).map(|p| (p.line, p.column));
    assert_eq!(at("a.b.c"), Some((2, 8)));
    assert_eq!(at("a.d.e"), Some((4, 5)));
    assert_eq!(at("a.f.1"), Some((7, 7)));
    assert_eq!(at("a.f.1.g"), Some((7, 9)));
    // A key the text does not hold: its nearest ancestor that it does.
    assert_eq!(at("a.x"), Some((1, 1)));
    assert_eq!(locate("a: [", "a"), None);
}

/// Issue 36 item 6: with a block-style list inside figure 0, an error in
/// `figures.2.series` was reported on a line of figure 0's list (the text
/// search counted its items as figures); the parser's places name the line
/// and column of figure 2's key.
#[test]
fn an_error_after_a_block_style_list_names_its_own_line() {
    let text = GOOD.replace(
        "  - { id: f1, x: n, y: L1, series: [model, sim] }\n",
        "  - id: f1\n    x: n\n    y: L1\n    series:\n      - model\n      - sim\n  \
         - { id: f2, x: n, y: L1, series: [model] }\n  \
         - { id: f3, x: n, y: L1, series: [model, simu] }\n",
    );
    let line = 1 + text.lines().position(|l| l.contains("f3")).unwrap();
    let e = err_of(&text);
    assert_eq!(e.key, "figures.2.series", "{e}");
    assert_eq!((e.line, e.column), (Some(line), Some(28)), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("t1.yaml:{line}:28: key `figures.2.series`")),
        "{e}"
    );
}

#[test]
fn type_and_syntax_errors_name_line_and_column() {
    let e = err_of(&GOOD.replace("version: 1", "version: one"));
    assert_eq!(
        (e.line, e.column, e.key.as_str()),
        (Some(4), Some(10), "version"),
        "{e}"
    );
    assert!(
        e.message.contains("invalid type") && e.message.contains("\"one\""),
        "{e}"
    );
    let e = err_of("id: t1\ntitle: [unclosed\nversion: 1\n");
    assert!(e.line.is_some() && e.column.is_some(), "{e}");
    assert!(e.message.starts_with("YAML syntax"), "{e}");
    // Tags are refused by the pre-scan (limits.rs), with line and column.
    let e = err_of(&GOOD.replace("mu1: 6.0", "mu1: !custom 6.0"));
    assert_eq!((e.line, e.column), (Some(5), Some(29)), "{e}");
    assert!(e.message.contains("YAML tag `!custom`"), "{e}");
    // The parser's own check behind it names the key too.
    let (at, key, message) = place::Places::read("a:\n  b: !custom 6\n").unwrap_err();
    assert_eq!(
        (at.map(|p| (p.line, p.column)), key.as_str()),
        (Some((2, 14)), "a.b")
    );
    assert!(message.contains("YAML tag `!custom`"), "{message}");
}
