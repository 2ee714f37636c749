//! The claim ledger (migration 0003): every definition of a claim that was
//! evaluated is kept with when it was first and last evaluated, so a claim
//! changed or removed after results existed is found by its earlier
//! definitions.

mod common;

use common::open_in;
use store::*;
use verdicts::Verdict;

fn record(claim: &str, definition: &str, verdict: Verdict) -> ClaimRecord {
    ClaimRecord {
        experiment: "x".into(),
        version: 1,
        claim_id: claim.into(),
        // Any text naming the definition does; the pipeline hashes it.
        hash: format!("h-{definition}"),
        definition: definition.into(),
        verdict,
    }
}

/// A claim evaluated twice under one definition, then narrowed: its ledger
/// holds both definitions in the order they were first evaluated, with their
/// dates, counts and last verdicts; a re-evaluation in the same run and
/// fidelity replaces the earlier one; another experiment's claims are apart.
#[tokio::test]
async fn a_changed_definition_keeps_the_old_one_with_its_dates() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let wide = r#"{"holds":"sim.L < 2"}"#;
    let narrow = r#"{"holds":"sim.L < 1"}"#;

    let r1 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r1, "quick", &[record("c", wide, Verdict::Inconclusive)])
        .await
        .unwrap();
    // The same run re-evaluates after `--resolve`: one evaluation, new verdict.
    s.record_claims(r1, "quick", &[record("c", wide, Verdict::Holds)])
        .await
        .unwrap();
    let r2 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r2, "quick", &[record("c", wide, Verdict::Holds)])
        .await
        .unwrap();
    let mut other = record("c", wide, Verdict::Fails);
    other.experiment = "y".into();
    s.record_claims(r2, "quick", &[other]).await.unwrap();
    let r3 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(
        r3,
        "quick",
        &[
            record("c", narrow, Verdict::Fails),
            record("d", wide, Verdict::Holds),
        ],
    )
    .await
    .unwrap();

    let defs = s.claim_definitions("x").await.unwrap();
    let got: Vec<(&str, &str, i64, Verdict)> = defs
        .iter()
        .map(|d| {
            (
                d.claim_id.as_str(),
                d.definition.as_str(),
                d.evaluations,
                d.last_verdict,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("c", wide, 2, Verdict::Holds),
            ("c", narrow, 1, Verdict::Fails),
            ("d", wide, 1, Verdict::Holds),
        ]
    );
    for d in &defs {
        assert_eq!(d.hash, format!("h-{}", d.definition));
        for t in [&d.first_seen, &d.last_evaluated] {
            // 2026-11-27T03:10:00.000Z
            let b = t.as_bytes();
            assert!(
                t.len() == 24 && b[4] == b'-' && b[10] == b'T' && t.ends_with('Z'),
                "{d:?}"
            );
        }
        assert!(d.first_seen <= d.last_evaluated, "{d:?}");
    }
    assert!(defs[0].first_seen <= defs[1].first_seen);
    let y = s.claim_definitions("y").await.unwrap();
    assert_eq!(y.len(), 1);
    assert_eq!(y[0].last_verdict, Verdict::Fails);
    assert!(s.claim_definitions("z").await.unwrap().is_empty());
}

/// Recording nothing writes nothing; the same run at two fidelities is two
/// evaluations of one definition.
#[tokio::test]
async fn each_fidelity_of_a_run_is_an_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let r = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r, "quick", &[]).await.unwrap();
    assert!(s.claim_definitions("x").await.unwrap().is_empty());
    s.record_claims(r, "quick", &[record("c", "{}", Verdict::Inconclusive)])
        .await
        .unwrap();
    s.record_claims(r, "full", &[record("c", "{}", Verdict::Holds)])
        .await
        .unwrap();
    let defs = s.claim_definitions("x").await.unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(defs[0].evaluations, 2);
}

/// The last verdict of each definition per fidelity: a later run replaces an
/// earlier one at its fidelity only; each definition keeps its own. (A run
/// evaluates one definition of a claim per fidelity.)
#[tokio::test]
async fn the_last_verdict_of_each_definition_per_fidelity() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let r1 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r1, "quick", &[record("c", "a", Verdict::Inconclusive)])
        .await
        .unwrap();
    s.record_claims(r1, "full", &[record("c", "a", Verdict::Fails)])
        .await
        .unwrap();
    let r2 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r2, "quick", &[record("c", "a", Verdict::Holds)])
        .await
        .unwrap();
    // Changed later: its new definition has its own last verdict.
    let r3 = s.begin_run("v", "h", "check").await.unwrap();
    s.record_claims(r3, "quick", &[record("c", "b", Verdict::Fails)])
        .await
        .unwrap();
    let got: Vec<(String, String, String, Verdict)> = s
        .claim_last_verdicts("x")
        .await
        .unwrap()
        .into_iter()
        .map(|v| (v.claim_id, v.hash, v.fidelity, v.verdict))
        .collect();
    let row = |h: &str, f: &str, v| ("c".to_string(), format!("h-{h}"), f.to_string(), v);
    let mut want = vec![
        row("a", "full", Verdict::Fails),
        row("a", "quick", Verdict::Holds),
        row("b", "quick", Verdict::Fails),
    ];
    let mut got = got;
    got.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    want.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    assert_eq!(got, want);
    assert!(s.claim_last_verdicts("y").await.unwrap().is_empty());
}
