//! Tests of `claims:`, `calibrated:`, the sanity and fit classification and
//! the load-time refusal of unknown metric names.

use crate::manifest::{parse, Manifest, ManifestError};
use solvers::Registry;
use std::path::Path;
use verdicts::{ClaimKind, Expectation};

const BASE: &str = r#"
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
reference_data:
  paper: { source: "a printed table", values: { L1: 1.5, P_block: 0.1 } }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.05 }
  - { metric: P_block, reference: paper, candidate: model, tolerance: 10.0 }
figures:
  - { id: f1, x: n, y: L1, series: [model, sim] }
"#;

fn load(extra: &str) -> Result<Manifest, ManifestError> {
    parse(
        Path::new("t1.yaml"),
        &format!("{BASE}{extra}"),
        &Registry::with_all(),
    )
}

fn err(extra: &str) -> String {
    let e = load(extra).expect_err("should be refused");
    e.to_string()
}

const CLAIM: &str = r#"claims:
  - id: l1-grows
    quote: "the mean queue length increases"
    where: "§4.3, Fig. 4.9"
    entries: [yan-4.9, f1]
    holds: "increasing(model.L1) and increasing(sim.L1)"
"#;

#[test]
fn claims_parse_with_their_defaults_and_compare_tolerances_join_them() {
    let m = load(CLAIM).unwrap();
    let ids: Vec<(&str, ClaimKind)> = m.claims.iter().map(|c| (c.id.as_str(), c.kind)).collect();
    assert_eq!(
        ids,
        vec![
            ("l1-grows", ClaimKind::Predicate),
            ("em-model-sim-L1", ClaimKind::Tolerance),
            ("em-model-paper-P_block", ClaimKind::Tolerance),
        ]
    );
    let c = &m.claims[0];
    assert_eq!(c.expect, Expectation::Holds);
    assert!(c.sanity.is_none() && c.fit.is_none());
    // The tolerance claim of L1 belongs to the figure that draws it.
    assert_eq!(m.claims[1].entries, vec!["f1"]);
}

#[test]
fn claim_errors_name_file_line_key_and_the_rule() {
    let dup = format!("{CLAIM}{}", &CLAIM["claims:\n".len()..]);
    let e = err(&dup);
    assert!(e.contains("claims.1.id") && e.contains("used twice"), "{e}");
    let e = err(&CLAIM.replace("yan-4.9, f1", "yan-4.99"));
    assert!(
        e.starts_with("t1.yaml:")
            && e.contains("claims.0.entries")
            && e.contains("did you mean `yan-4.9`"),
        "{e}"
    );
    let e = err(&CLAIM.replace("increasing(model.L1)", "increasing(model.L3)"));
    assert!(
        e.contains("claims.0.holds") && e.contains("column 12") && e.contains("did you mean"),
        "{e}"
    );
    let line = BASE.lines().count() + 6;
    assert!(
        e.starts_with(&format!("t1.yaml:{line}:")),
        "{e} (line {line})"
    );
    let e = err(&format!("{CLAIM}    expect: fails\n"));
    assert!(
        e.contains("claims.0.expect") && e.contains("needs `why:`"),
        "{e}"
    );
    let e = err(&format!("{CLAIM}    points: \"n > 100\"\n"));
    assert!(e.contains("selects no point"), "{e}");
    let e = err(&format!("{CLAIM}    points: \"sim.L1 > 1\"\n"));
    assert!(e.contains("not by results"), "{e}");
    let e = err(&CLAIM.replace("l1-grows", "L1_grows"));
    assert!(e.contains("not a claim id"), "{e}");
}

#[test]
fn sanity_checks_are_found_at_load() {
    let claims = r#"claims:
  - { id: printed, quote: q, where: w, entries: [f1], holds: "paper.L1 > 1" }
  - { id: band, quote: q, where: w, entries: [f1], holds: "model.P_block <= 1 and sim.P_block >= 0" }
  - { id: real, quote: q, where: w, entries: [f1], holds: "model.P_block <= 0.5" }
"#;
    let m = load(claims).unwrap();
    let sanity = |id: &str| m.claims.iter().find(|c| c.id == id).unwrap().sanity.clone();
    assert!(sanity("printed")
        .unwrap()
        .contains("reads no solver output"));
    assert!(
        sanity("band").unwrap().contains("every value"),
        "{:?}",
        sanity("band")
    );
    assert_eq!(sanity("real"), None);
    // EM of a probability against 0.1 is at most 9: a tolerance of 10 cannot fail.
    let t = sanity("em-model-paper-P_block").unwrap();
    assert!(t.contains("contains every value"), "{t}");
    assert_eq!(sanity("em-model-sim-L1"), None);
}

#[test]
fn calibrated_marks_fits() {
    let m = load("calibrated: { params: [mu2], against: [paper.P_block] }\n").unwrap();
    let fit = |id: &str| m.claims.iter().find(|c| c.id == id).unwrap().fit.clone();
    assert!(fit("em-model-paper-P_block")
        .unwrap()
        .contains("mu2 fitted against paper.P_block"));
    assert_eq!(fit("em-model-sim-L1"), None);
    let e = err("calibrated: { params: [mu3], against: [paper] }\n");
    assert!(e.contains("calibrated.params"), "{e}");
    let e = err("calibrated: { params: [mu2], against: [papr] }\n");
    assert!(
        e.contains("calibrated.against") && e.contains("did you mean `paper`"),
        "{e}"
    );
}

#[test]
fn unknown_metrics_are_refused_where_they_are_named() {
    let e = err("tables:\n  - { id: t, kind: values, metrics: [L1, L22] }\n");
    assert!(e.contains("tables.0.metrics") && e.contains("L22"), "{e}");
    let text = BASE.replace("y: L1, series", "y: L11, series");
    let e = parse(Path::new("t1.yaml"), &text, &Registry::with_all())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("figures.0.y") && e.contains("did you mean `L1`"),
        "{e}"
    );
    let text = BASE.replace(
        "{ metric: L1, reference: sim",
        "{ metric: L7, reference: sim",
    );
    let e = parse(Path::new("t1.yaml"), &text, &Registry::with_all())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("compare.0.metric") && e.contains("`sim` produces no metric `L7`"),
        "{e}"
    );
}

#[test]
fn a_quick_mark_says_a_verdict_other_than_expect_with_why_or_is_refused() {
    let quick = |body: &str| format!("{CLAIM}    quick:\n{body}");
    let m = load(&quick(
        "      expect: inconclusive\n      why: \"at --quick 1.2 ± 0.3 (2 replications)\"\n",
    ))
    .unwrap();
    let c = &m.claims[0];
    assert_eq!(
        c.quick.as_ref().map(|q| q.why.as_str()),
        Some("at --quick 1.2 ± 0.3 (2 replications)")
    );
    // The claim's own expectation is untouched; the mark applies at quick only.
    assert_eq!(c.expect, Expectation::Holds);
    use verdicts::Verdict;
    assert_eq!(
        c.quick_expect_at(solvers::Fidelity::Quick),
        Some(Verdict::Inconclusive)
    );
    assert_eq!(c.quick_expect_at(solvers::Fidelity::Full), None);
    assert_eq!(m.claims[1].quick_expect_at(solvers::Fidelity::Quick), None);
    // A decided verdict at --quick that differs from `expect:` (here: the
    // claim is expected to hold, and a quick run shows it failing).
    let fails = load(&quick("      expect: fails\n      why: \"w\"\n")).unwrap();
    assert_eq!(
        fails.claims[0].quick_expect_at(solvers::Fidelity::Quick),
        Some(Verdict::Fails)
    );
    assert_eq!(fails.claims[0].definition(None)["quick"]["expect"], "fails");
    // The mark is part of the definition; an unmarked claim's definition has
    // no `quick` key, so definitions written before marks keep their hashes.
    let d = c.definition(None);
    assert_eq!(d["quick"]["expect"], "inconclusive");
    assert_eq!(d["quick"]["why"], "at --quick 1.2 ± 0.3 (2 replications)");
    let unmarked = load(CLAIM).unwrap().claims[0].definition(None);
    assert!(unmarked.get("quick").is_none(), "{unmarked}");
    let mut without = d.clone();
    without.as_object_mut().unwrap().remove("quick");
    assert_eq!(without, unmarked);

    let line = BASE.lines().count() + 7; // the `quick:` line
    let cases = [
        (
            "      expect: holds\n      why: \"w\"\n",
            "claims.0.quick.expect",
            line + 1,
            "is the claim's own `expect:`",
        ),
        (
            "      expect: maybe\n      why: \"w\"\n",
            "claims.0.quick.expect",
            line + 1,
            "`maybe` is not allowed",
        ),
        (
            "      why: \"w\"\n",
            "claims.0.quick",
            line,
            "needs `expect:`",
        ),
        (
            "      expect: inconclusive\n",
            "claims.0.quick.why",
            line,
            "needs `why:`",
        ),
        (
            "      expect: inconclusive\n      why: \"  \"\n",
            "claims.0.quick.why",
            line + 2,
            "must not be empty",
        ),
        (
            "      expect: inconclusive\n      why: \"w\"\n      replications: 3\n",
            "replications",
            line + 3,
            "unknown field",
        ),
    ];
    for (body, key, at, says) in cases {
        let e = err(&quick(body));
        assert!(
            e.starts_with(&format!("t1.yaml:{at}:")) && e.contains(key) && e.contains(says),
            "{body}: {e} (want line {at}, key {key}, {says:?})"
        );
    }
}
