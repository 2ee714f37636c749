//! `repro check --junit FILE`: JUnit XML for CI systems (written by
//! quick-junit). One test suite per experiment; one test case per compared
//! quantity (a `compare` entry: metric, reference, candidate), one per figure
//! and one per claim; a failure lists the offending points. Inconclusive
//! points fail, as they do for `repro check`. The entries' statuses get a
//! suite of their own (one test case per entry, its status in the class
//! name), and so do failed tasks.

use crate::manifest::Manifest;
use crate::measure::claims::ClaimResult;
use crate::measure::precision::Replications;
use crate::measure::status::Derived;
use crate::plan::Task;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use store::ErrorMeasureRow;
use verdicts::{ClaimStatus, EntryStatus};

/// One offending point, as a line of the failure text.
fn point_line(r: &ErrorMeasureRow, reps: &Replications) -> String {
    let num = |v: Option<f64>| v.map_or("missing".to_string(), |v| format!("{v:.6}"));
    let n = reps
        .get(&(
            r.experiment.clone(),
            r.reference.clone(),
            r.point_index as usize,
        ))
        .map_or(String::new(), |n| format!(", {n} replications"));
    format!(
        "{} point {}: {} = {} (reference {} = {}{}{n}), EM {}, tolerance {} -> {}",
        r.metric,
        r.point,
        r.candidate,
        num(r.candidate_value),
        r.reference,
        num(r.reference_value),
        r.reference_half_width
            .map_or(String::new(), |h| format!(" ± {h:.2e}")),
        r.em.map_or("—".into(), |e| format!("{:.3}%", e * 100.0)),
        r.tolerance
            .map_or("—".into(), |t| format!("{:.2}%", t * 100.0)),
        r.verdict
    )
}

/// A failure of `kind` with its message and text.
fn failure(ty: &str, message: String, text: String) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status
        .set_type(ty)
        .set_message(message)
        .set_description(text);
    status
}

fn skipped(message: String) -> TestCaseStatus {
    let mut status = TestCaseStatus::skipped();
    status.set_message(message);
    status
}

/// A test case over compared points: it fails when one of them fails or is
/// inconclusive, listing those.
fn points_case(
    suite: &str,
    name: &str,
    rows: &[&ErrorMeasureRow],
    reps: &Replications,
) -> TestCase {
    let offending: Vec<&&ErrorMeasureRow> = rows.iter().filter(|r| r.verdict.is_bad()).collect();
    let status = if offending.is_empty() {
        TestCaseStatus::success()
    } else {
        let text: Vec<String> = offending.iter().map(|r| point_line(r, reps)).collect();
        failure(
            "tolerance",
            format!(
                "{} of {} compared points fail or are inconclusive",
                offending.len(),
                rows.len()
            ),
            text.join("\n"),
        )
    };
    let mut case = TestCase::new(name, status);
    case.set_classname(suite);
    case
}

/// One claim as a test case: its verdict, expectation, status and
/// classification as properties; a failure when the verdict differs from the
/// expectation; an expected failure, and a claim inconclusive at `--quick` as
/// its `quick:` mark says, are reported as skipped (as pytest's xfail).
fn claim_case(c: &ClaimResult) -> TestCase {
    let mut props = vec![
        ("verdict", c.verdict.to_string()),
        ("expect", c.expect.to_string()),
        ("status", c.status.to_string()),
        ("entries", c.entries.join(", ")),
        ("holds", c.holds.clone()),
    ];
    if let (Some(q), Some(w)) = (c.quick_expect, &c.quick_why) {
        props.push(("quick_expect", q.to_string()));
        props.push(("quick_why", w.clone()));
    }
    if let Some(s) = &c.sanity {
        props.push(("sanity", s.clone()));
    }
    if let Some(f) = &c.fit {
        props.push(("fit", f.clone()));
    }
    let status = if c.status.is_unexpected() {
        let expected = match c.status {
            ClaimStatus::DecidedAtQuick => format!(
                "{} at --quick, expected inconclusive there: remove `quick:`",
                c.verdict
            ),
            _ => format!("expected {}", c.expect),
        };
        failure(
            "claim",
            format!("{} ({expected})", c.status.label()),
            format!(
                "{}\n{}{}",
                c.holds,
                c.quote,
                c.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!("\n{r}"))
            ),
        )
    } else {
        match c.status {
            ClaimStatus::FailsAsExpected => skipped(format!(
                "fails as expected: {}",
                c.why.as_deref().unwrap_or("")
            )),
            ClaimStatus::InconclusiveAtQuick => skipped(format!(
                "inconclusive at --quick as marked: {}",
                c.quick_why.as_deref().unwrap_or("")
            )),
            _ => TestCaseStatus::success(),
        }
    };
    let mut case = TestCase::new(format!("claim {}", c.id), status);
    case.set_classname(c.experiment.as_str());
    case.add_properties(props.into_iter().map(|(k, v)| Property::new(k, v)));
    case
}

/// The entries' statuses as one suite: a test case per entry, named by the
/// entry, in the class `entries.<status>` (so a CI's view by class counts the
/// entries per status), with the counts behind the status as properties. It
/// passes when the entry is reproduced and is skipped with its status
/// otherwise; it never fails: a claim whose verdict differs from its
/// expectation fails as its own test case, as it fails `repro check`.
fn entries_suite(entries: &[(String, Option<&'static str>, Derived)]) -> TestSuite {
    let mut suite = TestSuite::new("entries");
    for (id, paper, d) in entries {
        let status = if d.status == EntryStatus::Reproduced {
            TestCaseStatus::success()
        } else if d.checkable > 0 {
            skipped(format!(
                "{}: {} of {} claims hold",
                d.status.label(),
                d.holding,
                d.checkable
            ))
        } else {
            skipped(d.status.label().to_string())
        };
        let mut case = TestCase::new(id.as_str(), status);
        case.set_classname(format!("entries.{}", d.status.as_str()));
        case.add_properties(
            [
                ("status", d.status.as_str().to_string()),
                ("paper", paper.unwrap_or("").to_string()),
                ("claims_holding", d.holding.to_string()),
                ("claims_checkable", d.checkable.to_string()),
                ("sanity_checks", d.sanity.to_string()),
                ("fits", d.fits.to_string()),
            ]
            .map(|(k, v)| Property::new(k, v)),
        );
        suite.add_test_case(case);
    }
    suite
}

/// The JUnit report of a `check` run: its manifests, their error measures
/// and claims, the statuses of the entries they touch (as `statuses_of`
/// gives them) and the tasks that failed (with their errors).
pub fn junit_report(
    manifests: &[Manifest],
    claims: &[ClaimResult],
    error_measures: &[ErrorMeasureRow],
    entries: &[(String, Option<&'static str>, Derived)],
    failed: &[(Task, String)],
    reps: &Replications,
) -> Report {
    let mut report = Report::new("repro check");
    for m in manifests {
        let ems: Vec<&ErrorMeasureRow> = error_measures
            .iter()
            .filter(|r| r.experiment == m.id && r.version == m.version)
            .collect();
        let mut suite = TestSuite::new(format!("{} v{}", m.id, m.version));
        for c in &m.compare {
            let rows: Vec<&ErrorMeasureRow> = ems
                .iter()
                .copied()
                .filter(|r| {
                    r.metric == c.metric && r.reference == c.reference && r.candidate == c.candidate
                })
                .collect();
            let name = format!("EM {}: {} vs {}", c.metric, c.candidate, c.reference);
            suite.add_test_case(points_case(&m.id, &name, &rows, reps));
        }
        for f in &m.figures {
            let rows: Vec<&ErrorMeasureRow> = ems
                .iter()
                .copied()
                .filter(|r| {
                    f.y.contains(&r.metric)
                        && f.series.contains(&r.reference)
                        && f.series.contains(&r.candidate)
                })
                .collect();
            let name = format!("figure {}", f.id);
            suite.add_test_case(points_case(&m.id, &name, &rows, reps));
        }
        suite.add_test_cases(
            claims
                .iter()
                .filter(|c| c.experiment == m.id && c.kind == verdicts::ClaimKind::Predicate)
                .map(claim_case),
        );
        report.add_test_suite(suite);
    }
    if !entries.is_empty() {
        report.add_test_suite(entries_suite(entries));
    }
    if !failed.is_empty() {
        let mut suite = TestSuite::new("tasks");
        for (t, err) in failed {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_type("task")
                .set_message(err.as_str())
                .set_description(t.solve_command());
            let mut case = TestCase::new(format!("{} {}", t.solver, t.key), status);
            case.set_classname("tasks");
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
}

/// [`junit_report`] as XML.
pub fn junit_xml(
    manifests: &[Manifest],
    claims: &[ClaimResult],
    error_measures: &[ErrorMeasureRow],
    entries: &[(String, Option<&'static str>, Derived)],
    failed: &[(Task, String)],
    reps: &Replications,
) -> anyhow::Result<String> {
    let report = junit_report(manifests, claims, error_measures, entries, failed, reps);
    Ok(report.to_string()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derived(status: EntryStatus, holding: usize, checkable: usize) -> Derived {
        Derived {
            status,
            holding,
            checkable,
            sanity: 1,
            fits: 0,
        }
    }

    fn message(status: &TestCaseStatus) -> Option<&str> {
        match status {
            TestCaseStatus::Skipped { message, .. } => message.as_ref().map(|m| m.as_str()),
            _ => None,
        }
    }

    #[test]
    fn one_test_case_per_entry_with_its_status_as_class_and_properties() {
        let entries = vec![
            (
                "yan-4.5".to_string(),
                Some("yan2012"),
                derived(EntryStatus::Reproduced, 2, 2),
            ),
            (
                "yan-3.4".to_string(),
                Some("yan2012"),
                derived(EntryStatus::PartlyReproduced, 2, 3),
            ),
            (
                "wu-3.2".to_string(),
                None,
                derived(EntryStatus::Drawn, 0, 0),
            ),
        ];
        let report = junit_report(&[], &[], &[], &entries, &[], &Replications::new());
        assert_eq!(
            (report.tests, report.failures, report.errors, report.skipped),
            (3, 0, 0, 2)
        );
        let [suite] = &report.test_suites[..] else {
            panic!("{:?}", report.test_suites);
        };
        assert_eq!(suite.name.as_str(), "entries");
        let case = |id: &str| {
            suite
                .test_cases
                .iter()
                .find(|c| c.name.as_str() == id)
                .unwrap()
        };
        let class = |id: &str| case(id).classname.as_ref().unwrap().as_str().to_string();
        let property = |id: &str, name: &str| {
            let p = case(id).properties.iter().find(|p| p.name.as_str() == name);
            p.unwrap().value.as_str().to_string()
        };
        assert_eq!(class("yan-4.5"), "entries.reproduced");
        assert!(matches!(
            case("yan-4.5").status,
            TestCaseStatus::Success { .. }
        ));
        assert_eq!(class("yan-3.4"), "entries.partly-reproduced");
        assert_eq!(
            message(&case("yan-3.4").status),
            Some("partly reproduced: 2 of 3 claims hold")
        );
        assert_eq!(property("yan-3.4", "claims_holding"), "2");
        assert_eq!(property("yan-3.4", "paper"), "yan2012");
        assert_eq!(class("wu-3.2"), "entries.drawn");
        assert_eq!(message(&case("wu-3.2").status), Some("drawn"));
        // The XML says the same.
        let xml = report.to_string().unwrap();
        assert!(
            xml.contains("<skipped message=\"partly reproduced: 2 of 3 claims hold\"/>"),
            "{xml}"
        );
        // No entries, no suite.
        let none = junit_report(&[], &[], &[], &[], &[], &Replications::new());
        assert!(none.test_suites.is_empty());
    }
}
