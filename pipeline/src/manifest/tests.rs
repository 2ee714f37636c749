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
    assert_eq!(e.line, Some(5));
    assert!(e.to_string().starts_with("t1.yaml:5: key `colour`"), "{e}");
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
    let t = "a:\n  b: { c: 1 }\n  d:\n    e: 2\n";
    assert_eq!(locate(t, "a.b.c"), Some(2));
    assert_eq!(locate(t, "a.d.e"), Some(4));
    assert_eq!(locate(t, "a.x"), None);
}
