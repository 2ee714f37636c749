//! Claims end to end: `repro check`'s exit code follows each claim's verdict
//! against its expectation; `--format json`, JUnit and index.html show every
//! claim; the ledger keeps a claim's earlier definitions, so a claim changed
//! or removed after results existed is shown with its old and new definition
//! and their dates.
//!
//! The claims below read exact models only (credit.ctmc), so their verdicts
//! do not depend on simulation noise: at n = 4, 8 (lambda 5, mu1 6, m 4),
//! L1 = 1.72, 3.28 with mu2 = 8 and 2.42, 5.77 with mu2 = 4; T = 4.27, 4.67
//! and 3.52, 3.66.

mod common;

use common::{project, repro, stderr, stdout, write_manifest};
use serde_json::Value;

const MANIFEST: &str = r#"
id: credits
title: credit flow control, two service rates
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4, 8] }
series:
  model: { solver: credit.ctmc }
  slow: { solver: credit.ctmc, params: { mu2: 4.0 } }
figures:
  - { id: credits-L1, x: n, y: L1, series: [model, slow] }
claims:
  - id: backlog-grows
    quote: "more credits, more packets wait at node 1"
    where: "test"
    entries: [credits-L1]
    holds: "increasing(model.L1)"
  - id: slow-node-longer-queue
    quote: "a slower node 2 keeps more packets at node 1"
    where: "test"
    entries: [credits-L1]
    holds: "slow.L1 > model.L1"
  - id: slow-node-slower
    quote: "a slower node 2 makes the sojourn longer"
    where: "test"
    entries: [credits-L1]
    holds: "slow.T > model.T"
    expect: fails
    why: "T is the throughput here, not a time: it falls with mu2"
  - id: blocking-is-a-probability
    quote: "blocking is a probability"
    where: "test"
    entries: [credits-L1]
    holds: "model.P_block <= 1"
"#;

fn check_json(dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["check", "--quick", "--no-progress", "--format", "json"];
    args.extend_from_slice(extra);
    let o = repro(dir, &args);
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

fn claim<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no claim {id} in {v}"))
}

/// 2026-11-27T03:10:00.000Z
fn is_date(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|t| t.len() == 24 && t.as_bytes()[10] == b'T' && t.ends_with('Z'))
}

#[test]
fn check_exits_by_expectation_and_reports_every_claim() {
    let p = project(&[]);
    write_manifest(p.path(), "credits", MANIFEST);
    let junit = p.path().join("junit.xml");
    let (code, v) = check_json(p.path(), &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{v}");
    let status = |id: &str| claim(&v, id)["status"].as_str().unwrap().to_string();
    assert_eq!(status("backlog-grows"), "holds");
    assert_eq!(status("slow-node-longer-queue"), "holds");
    assert_eq!(status("slow-node-slower"), "fails-as-expected");
    assert_eq!(claim(&v, "slow-node-slower")["verdict"], "fails");
    // A bound every probability meets is a sanity check, shown apart.
    assert!(claim(&v, "blocking-is-a-probability")["sanity"].is_string());
    assert!(claim(&v, "slow-node-longer-queue")["sanity"].is_null());
    assert_eq!(v["claim_counts"]["sanity"], 1);
    assert_eq!(claim(&v, "slow-node-longer-queue")["evaluated_points"], 2);
    assert!(
        is_date(&claim(&v, "backlog-grows")["first_evaluated"]),
        "{v}"
    );
    assert!(v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["history"].as_array().unwrap().is_empty()));

    // The entry's status: two of its three checkable claims hold (the one
    // that fails as expected counts as not holding); the sanity check apart.
    assert_eq!(
        v["entry_statuses"],
        serde_json::json!([{
            "entry": "credits-L1", "paper": null, "status": "partly-reproduced",
            "claims_holding": 2, "claims_checkable": 3, "sanity_checks": 1, "fits": 0
        }]),
        "{v}"
    );

    // export: the same status, and one row per claim.
    let o = repro(p.path(), &["export", "--quick", "--statuses"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "entry,paper,status,claims_holding,claims_checkable,sanity_checks,fits\n\
         credits-L1,,partly-reproduced,2,3,1,0\n"
    );
    let o = repro(
        p.path(),
        &["export", "--quick", "--claims", "--format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let row = rows
        .iter()
        .find(|r| r["claim"] == "slow-node-slower")
        .unwrap();
    assert_eq!(
        (
            &row["verdict"],
            &row["expect"],
            &row["status"],
            &row["entries"]
        ),
        (
            &Value::from("fails"),
            &Value::from("fails"),
            &Value::from("fails-as-expected"),
            &Value::from("credits-L1")
        )
    );
    let parquet = p.path().join("claims.parquet");
    let o = repro(
        p.path(),
        &[
            "export",
            "--quick",
            "--claims",
            "--format",
            "parquet",
            "--out",
            parquet.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&parquet).unwrap().starts_with(b"PAR1"));
    let o = repro(p.path(), &["export", "--statuses", "--claims"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // JUnit: one test case per claim; the expected failure is skipped.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("name=\"claim slow-node-longer-queue\""),
        "{xml}"
    );
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert!(
        xml.contains("<skipped message=\"fails as expected: T is the throughput"),
        "{xml}"
    );
    // ... and one per entry, its status as the class (skipped unless
    // reproduced, never failed: the claims fail), the counts as properties.
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let entry = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("credits-L1"))
        .unwrap_or_else(|| panic!("no test case for the entry: {xml}"));
    assert_eq!(
        entry.attribute("classname"),
        Some("entries.partly-reproduced")
    );
    let property = |name: &str| {
        entry
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some(name))
            .and_then(|n| n.attribute("value"))
            .map(str::to_string)
    };
    assert_eq!(property("claims_holding").as_deref(), Some("2"));
    assert_eq!(property("claims_checkable").as_deref(), Some("3"));
    assert_eq!(property("sanity_checks").as_deref(), Some("1"));
    let skipped = entry.children().find(|n| n.has_tag_name("skipped"));
    assert_eq!(
        skipped.and_then(|n| n.attribute("message")),
        Some("partly reproduced: 2 of 3 claims hold")
    );
    let suites = doc.root_element();
    assert_eq!(suites.attribute("failures"), Some("0"));
    // The expected failure and the entry.
    assert_eq!(suites.attribute("skipped"), Some("2"), "{xml}");

    // The index lists the claims with their verdicts.
    let html = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
    assert!(html.contains("a slower node 2 keeps more packets at node 1"));
    assert!(html.contains("Sanity checks and fits"));

    // A claim whose verdict differs from its expectation fails the check:
    // expected to hold but fails, and expected to fail but holds.
    let flipped = MANIFEST
        .replace("    expect: fails\n    why: \"T is the throughput here, not a time: it falls with mu2\"\n", "")
        .replace(
            "    holds: \"slow.L1 > model.L1\"",
            "    holds: \"slow.L1 > model.L1\"\n    expect: fails\n    why: \"a test of the exit code\"",
        );
    write_manifest(p.path(), "credits", &flipped);
    let (code, v) = check_json(p.path(), &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["passed"], false);
    assert_eq!(claim(&v, "slow-node-slower")["status"], "fails");
    assert_eq!(
        claim(&v, "slow-node-longer-queue")["status"],
        "unexpectedly-holds"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"2\""), "{xml}");
    let o = repro(p.path(), &["check", "--quick", "--no-progress"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("credits/slow-node-slower"), "{out}");
    assert!(
        out.contains("2 claim(s) differ from their expectation"),
        "{out}"
    );
    // Two of three checkable claims hold (one of them against expectation).
    assert!(out.contains("entries: 1 partly reproduced"), "{out}");
}

/// A claim narrowed after it was evaluated keeps its old definition in the
/// ledger: `check --format json` gives it under `history` with the dates it
/// was evaluated and its last verdict, beside the new definition and the date
/// from which that one is evaluated; a claim removed after results is listed
/// as removed; index.html shows both.
#[test]
fn a_claim_changed_after_results_shows_old_and_new_definition_with_dates() {
    let p = project(&[]);
    write_manifest(p.path(), "credits", MANIFEST);
    let (code, first) = check_json(p.path(), &[]);
    assert_eq!(code, Some(0), "{first}");
    let old_date = claim(&first, "slow-node-longer-queue")["first_evaluated"].clone();
    assert!(is_date(&old_date), "{first}");

    let changed = MANIFEST
        .replace("holds: \"slow.L1 > model.L1\"", "holds: \"slow.L1 > 1.2 * model.L1\"")
        .replace(
            "  - id: blocking-is-a-probability\n    quote: \"blocking is a probability\"\n    where: \"test\"\n    entries: [credits-L1]\n    holds: \"model.P_block <= 1\"\n",
            "",
        );
    assert_ne!(changed, MANIFEST);
    write_manifest(p.path(), "credits", &changed);
    let (code, v) = check_json(p.path(), &[]);
    assert_eq!(code, Some(0), "{v}");
    let c = claim(&v, "slow-node-longer-queue");
    assert_eq!(c["holds"], "slow.L1 > 1.2 * model.L1");
    assert_eq!(c["definition"]["holds"], "slow.L1 > 1.2 * model.L1", "{c}");
    let history = c["history"].as_array().unwrap();
    assert_eq!(history.len(), 1, "{c}");
    let old = &history[0];
    assert_eq!(old["definition"]["holds"], "slow.L1 > model.L1", "{old}");
    assert_eq!(old["first_evaluated"], old_date);
    assert!(is_date(&old["last_evaluated"]));
    assert_eq!(old["last_verdict"], "holds");
    assert_eq!(old["evaluations"], 1);
    assert!(is_date(&c["first_evaluated"]));
    assert!(c["first_evaluated"].as_str() >= old_date.as_str(), "{c}");
    // Unchanged claims have no history.
    assert!(claim(&v, "backlog-grows")["history"]
        .as_array()
        .unwrap()
        .is_empty());
    let removed = v["removed_claims"].as_array().unwrap();
    assert_eq!(removed.len(), 1, "{v}");
    assert_eq!(removed[0]["id"], "blocking-is-a-probability");
    assert_eq!(removed[0]["definition"]["holds"], "model.P_block <= 1");
    assert!(is_date(&removed[0]["last_evaluated"]));

    // The text output says it too.
    let o = repro(p.path(), &["check", "--quick", "--no-progress"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("changed after results: credits/slow-node-longer-queue")
            && out.contains("removed after results: credits/blocking-is-a-probability"),
        "{out}"
    );

    // index.html, written by check and again by report from the store.
    for cmd in [None, Some("report")] {
        if let Some(cmd) = cmd {
            // `report` must write it again, from the store's ledger.
            std::fs::remove_file(p.path().join("results/quick/index.html")).unwrap();
            let o = repro(p.path(), &[cmd]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        let html = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
        let block = html
            .split("Claims changed after results existed")
            .nth(1)
            .unwrap_or_else(|| panic!("no changed-claims block ({cmd:?})"));
        let block = &block[..block.find("</ul>").unwrap()];
        let changed_line = block
            .lines()
            .find(|l| l.contains("<code>slow-node-longer-queue</code> changed"))
            .unwrap_or_else(|| panic!("{block}"));
        assert!(
            changed_line.contains("slow.L1 &gt; model.L1")
                && changed_line.contains("slow.L1 &gt; 1.2 * model.L1")
                && changed_line.contains(old_date.as_str().unwrap())
                && changed_line.contains("evaluated since"),
            "{changed_line}"
        );
        assert!(
            block.contains("<code>blocking-is-a-probability</code> removed"),
            "{block}"
        );
    }
}

/// `quick: { expect: inconclusive, why }`: at `--quick` a marked claim is
/// expected to be inconclusive (check passes, JSON/JUnit/index show the mark);
/// a marked claim that a quick run decides fails the check with "remove
/// `quick:`"; at full fidelity the mark is ignored, so the same inconclusive
/// claim fails the check. Adding the mark after results is a definition
/// change in the ledger.
///
/// `sim.L1 >= sim.L1` is inconclusive by construction whenever the CI has a
/// width: a name written twice is two independent intervals, which overlap.
/// The simulation's run length is fixed in the manifest, so quick and full
/// runs cost the same here.
#[test]
fn a_quick_mark_expects_inconclusive_at_quick_and_is_ignored_at_full_fidelity() {
    const NOISY: &str = r#"
id: noisy
title: a claim a short simulation cannot decide
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4] }
series:
  model: { solver: credit.ctmc }
  sim: { solver: credit.sim, replications: 2, params: { warmup: 500, batches: 4, batch_len: 500 } }
figures:
  - { id: noisy-L1, x: n, y: L1, series: [model, sim] }
claims:
  - id: model-queue
    quote: "node 1 holds packets"
    where: "test"
    entries: [noisy-L1]
    holds: "model.L1 > 1"
  - id: straddles
    quote: "the simulation agrees with itself"
    where: "test"
    entries: [noisy-L1]
    holds: "sim.L1 >= sim.L1"
"#;
    const MARK: &str = "    quick:\n      expect: inconclusive\n      why: \"at --quick sim.L1 is compared with itself: the CIs overlap\"\n";
    let p = project(&[]);
    // Unmarked: inconclusive at quick is a failed check.
    write_manifest(p.path(), "noisy", NOISY);
    let (code, v) = check_json(p.path(), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(claim(&v, "straddles")["status"], "inconclusive");
    assert!(claim(&v, "straddles")["quick_expect"].is_null(), "{v}");

    // Marked: inconclusive at quick as expected.
    let marked = format!("{NOISY}{MARK}");
    write_manifest(p.path(), "noisy", &marked);
    let junit = p.path().join("junit.xml");
    let (code, v) = check_json(p.path(), &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{v}");
    let c = claim(&v, "straddles");
    assert_eq!(
        (
            &c["verdict"],
            &c["status"],
            &c["expect"],
            &c["quick_expect"]
        ),
        (
            &Value::from("inconclusive"),
            &Value::from("inconclusive-at-quick"),
            &Value::from("holds"),
            &Value::from("inconclusive")
        ),
        "{c}"
    );
    assert!(c["quick_why"].as_str().unwrap().contains("CIs overlap"));
    assert_eq!(v["claim_counts"]["inconclusive-at-quick"], 1, "{v}");
    // The mark is part of the definition: added after results, it shows.
    assert_eq!(c["history"].as_array().unwrap().len(), 1, "{c}");
    assert!(c["history"][0]["definition"]["quick"].is_null(), "{c}");
    assert_eq!(c["definition"]["quick"]["expect"], "inconclusive");
    // The entry's status comes from verdicts as before: one of two holds.
    assert_eq!(v["entry_statuses"][0]["status"], "partly-reproduced", "{v}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"0\""), "{xml}");
    assert!(
        xml.contains("<skipped message=\"inconclusive at --quick as marked: at --quick sim.L1"),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"quick_expect\" value=\"inconclusive\""),
        "{xml}"
    );
    let html = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
    assert!(
        html.contains("at --quick: expected inconclusive")
            && html.contains("inconclusive at --quick, as marked"),
        "index.html lacks the mark"
    );
    let o = repro(p.path(), &["check", "--quick", "--no-progress"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 inconclusive at --quick as marked"),
        "{}",
        stdout(&o)
    );

    // A marked claim that a quick run decides fails the check.
    let decided = marked.replace(
        "    holds: \"model.L1 > 1\"\n",
        &format!("    holds: \"model.L1 > 1\"\n{MARK}"),
    );
    write_manifest(p.path(), "noisy", &decided);
    let (code, v) = check_json(p.path(), &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{v}");
    let c = claim(&v, "model-queue");
    assert_eq!(
        (&c["verdict"], &c["status"]),
        (&Value::from("holds"), &Value::from("decided-at-quick")),
        "{c}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("failures=\"1\"") && xml.contains("remove `quick:`"),
        "{xml}"
    );
    let o = repro(p.path(), &["check", "--quick", "--no-progress"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("noisy/model-queue") && out.contains("decided at --quick: remove `quick:`"),
        "{out}"
    );

    // Full fidelity ignores the mark: the inconclusive claim fails the check,
    // the decided one holds.
    write_manifest(p.path(), "noisy", &decided);
    let o = repro(p.path(), &["check", "--no-progress", "--format", "json"]);
    let v: Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["fidelity"], "full");
    assert_eq!(claim(&v, "straddles")["status"], "inconclusive", "{v}");
    assert_eq!(claim(&v, "model-queue")["status"], "holds", "{v}");
    assert_eq!(claim(&v, "straddles")["quick_expect"], "inconclusive");
}

/// `repro list --claims`: every claim as written, with the last verdict the
/// ledger holds for its current definition at each fidelity; a claim changed
/// since is listed without a verdict and says so. Nothing is evaluated.
#[test]
fn list_claims_shows_each_claim_with_its_last_verdicts() {
    let p = project(&[]);
    write_manifest(p.path(), "credits", MANIFEST);
    let list_json = |dir: &std::path::Path| -> Vec<Value> {
        let o = repro(dir, &["list", "--claims", "--format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    let row = |rows: &[Value], id: &str| {
        rows.iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no {id}"))
            .clone()
    };
    // No store yet: listed, never evaluated, and no store is created.
    let o = repro(p.path(), &["list", "--claims"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("slow-node-slower")
            && out.contains("4 claims in 1 manifests: 1 expected to fail, 0 marked inconclusive at --quick, 1 sanity checks, 0 fits"),
        "{out}"
    );
    assert!(!p.path().join("results/repro.sqlite").exists());
    let rows = list_json(p.path());
    assert_eq!(rows.len(), 4);
    assert!(row(&rows, "backlog-grows")["last_quick"].is_null());

    let (code, _) = check_json(p.path(), &[]);
    assert_eq!(code, Some(0));
    let rows = list_json(p.path());
    let r = row(&rows, "slow-node-slower");
    assert_eq!(
        (&r["expect"], &r["last_quick"]["verdict"], &r["last_full"]),
        (&Value::from("fails"), &Value::from("fails"), &Value::Null),
        "{r}"
    );
    assert!(row(&rows, "blocking-is-a-probability")["sanity"].is_string());

    // Changed after results: the old definition's verdict is not shown as its.
    let changed = MANIFEST.replace(
        "holds: \"slow.L1 > model.L1\"",
        "holds: \"slow.L1 > 1.2 * model.L1\"",
    );
    write_manifest(p.path(), "credits", &changed);
    let rows = list_json(p.path());
    let r = row(&rows, "slow-node-longer-queue");
    assert!(r["last_quick"].is_null(), "{r}");
    assert_eq!(r["earlier_definition_evaluated"], true);
    assert_eq!(
        row(&rows, "backlog-grows")["last_quick"]["verdict"],
        "holds"
    );
    let out = stdout(&repro(p.path(), &["list", "--claims"]));
    let line = out
        .lines()
        .find(|l| l.contains("slow-node-longer-queue"))
        .unwrap();
    assert!(line.contains("— (changed)"), "{line}");
}
