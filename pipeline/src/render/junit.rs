//! `repro check --junit FILE`: JUnit XML for CI systems. One test suite per
//! experiment; one test case per compared quantity (a `compare` entry: metric,
//! reference, candidate), one per figure and one per claim; a failure lists the
//! offending points. Inconclusive points fail, as they do for `repro check`.
//! The entries' statuses get a suite of their own (one test case per entry,
//! its status in the class name), and so do failed tasks.

use crate::manifest::Manifest;
use crate::measure::claims::ClaimResult;
use crate::measure::precision::Replications;
use crate::measure::status::Derived;
use crate::plan::Task;
use reports::html_escape;
use store::ErrorMeasureRow;

fn bad(r: &ErrorMeasureRow) -> bool {
    r.verdict.is_bad()
}

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

fn case(
    xml: &mut String,
    suite: &str,
    name: &str,
    rows: &[&ErrorMeasureRow],
    reps: &Replications,
) -> bool {
    let offending: Vec<&&ErrorMeasureRow> = rows.iter().filter(|r| bad(r)).collect();
    xml.push_str(&format!(
        "    <testcase classname=\"{}\" name=\"{}\">\n",
        html_escape(suite),
        html_escape(name)
    ));
    let failed = !offending.is_empty();
    if failed {
        let text: Vec<String> = offending.iter().map(|r| point_line(r, reps)).collect();
        xml.push_str(&format!(
            "      <failure message=\"{}\" type=\"tolerance\">{}</failure>\n",
            html_escape(&format!(
                "{} of {} compared points fail or are inconclusive",
                offending.len(),
                rows.len()
            )),
            html_escape(&text.join("\n"))
        ));
    }
    xml.push_str("    </testcase>\n");
    failed
}

/// One claim as a test case: its verdict, expectation, status and
/// classification as properties; a failure when the verdict differs from the
/// expectation; an expected failure, and a claim inconclusive at `--quick` as
/// its `quick:` mark says, are reported as skipped (as pytest's xfail).
/// Returns whether it failed and whether it was skipped.
fn claim_case(xml: &mut String, c: &ClaimResult) -> (bool, bool) {
    xml.push_str(&format!(
        "    <testcase classname=\"{}\" name=\"{}\">\n      <properties>\n",
        html_escape(&c.experiment),
        html_escape(&format!("claim {}", c.id))
    ));
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
    for (k, v) in props {
        xml.push_str(&format!(
            "        <property name=\"{k}\" value=\"{}\"/>\n",
            html_escape(&v)
        ));
    }
    xml.push_str("      </properties>\n");
    let failed = c.status.is_unexpected();
    let mut skipped = false;
    if failed {
        let expected = match c.status {
            verdicts::ClaimStatus::DecidedAtQuick => format!(
                "{} at --quick, expected inconclusive there: remove `quick:`",
                c.verdict
            ),
            _ => format!("expected {}", c.expect),
        };
        xml.push_str(&format!(
            "      <failure message=\"{}\" type=\"claim\">{}</failure>\n",
            html_escape(&format!("{} ({expected})", c.status.label())),
            html_escape(&format!(
                "{}\n{}{}",
                c.holds,
                c.quote,
                c.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!("\n{r}"))
            ))
        ));
    } else {
        let skipped_as = match c.status {
            verdicts::ClaimStatus::FailsAsExpected => Some(("fails as expected", &c.why)),
            verdicts::ClaimStatus::InconclusiveAtQuick => {
                Some(("inconclusive at --quick as marked", &c.quick_why))
            }
            _ => None,
        };
        if let Some((what, why)) = skipped_as {
            skipped = true;
            xml.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                html_escape(&format!("{what}: {}", why.as_deref().unwrap_or("")))
            ));
        }
    }
    xml.push_str("    </testcase>\n");
    (failed, skipped)
}

/// The entries' statuses as one suite: a test case per entry, named by the
/// entry, in the class `entries.<status>` (so a CI's view by class counts the
/// entries per status), with the counts behind the status as properties. It
/// passes when the entry is reproduced and is skipped with its status
/// otherwise; it never fails: a claim whose verdict differs from its
/// expectation fails as its own test case, as it fails `repro check`.
/// Returns the suite and its number of test cases and of skipped ones.
fn entries_suite(entries: &[(String, Option<&'static str>, Derived)]) -> (String, usize, usize) {
    let mut body = String::new();
    let mut skipped = 0;
    for (id, paper, d) in entries {
        body.push_str(&format!(
            "    <testcase classname=\"entries.{}\" name=\"{}\">\n      <properties>\n",
            d.status.as_str(),
            html_escape(id)
        ));
        let props = [
            ("status", d.status.as_str().to_string()),
            ("paper", paper.unwrap_or("").to_string()),
            ("claims_holding", d.holding.to_string()),
            ("claims_checkable", d.checkable.to_string()),
            ("sanity_checks", d.sanity.to_string()),
            ("fits", d.fits.to_string()),
        ];
        for (k, v) in props {
            body.push_str(&format!(
                "        <property name=\"{k}\" value=\"{}\"/>\n",
                html_escape(&v)
            ));
        }
        body.push_str("      </properties>\n");
        if d.status != verdicts::EntryStatus::Reproduced {
            skipped += 1;
            let counts = if d.checkable > 0 {
                format!(": {} of {} claims hold", d.holding, d.checkable)
            } else {
                String::new()
            };
            body.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                html_escape(&format!("{}{counts}", d.status.label()))
            ));
        }
        body.push_str("    </testcase>\n");
    }
    let suite = format!(
        "  <testsuite name=\"entries\" tests=\"{}\" failures=\"0\" errors=\"0\" skipped=\"{skipped}\">\n{body}  </testsuite>\n",
        entries.len()
    );
    (suite, entries.len(), skipped)
}

/// The JUnit XML of a `check` run: its manifests, their error measures and
/// claims, the statuses of the entries they touch (as `statuses_of` gives
/// them) and the tasks that failed (with their errors).
pub fn junit_xml(
    manifests: &[Manifest],
    claims: &[ClaimResult],
    error_measures: &[ErrorMeasureRow],
    entries: &[(String, Option<&'static str>, Derived)],
    failed: &[(Task, String)],
    reps: &Replications,
) -> String {
    let mut suites = String::new();
    let (mut total_tests, mut total_failures, mut total_skipped) = (0, 0, 0);
    for m in manifests {
        let ems: Vec<&ErrorMeasureRow> = error_measures
            .iter()
            .filter(|r| r.experiment == m.id && r.version == m.version)
            .collect();
        let mut body = String::new();
        let (mut tests, mut failures, mut skipped) = (0, 0, 0);
        for c in &m.compare {
            let rows: Vec<&ErrorMeasureRow> = ems
                .iter()
                .copied()
                .filter(|r| {
                    r.metric == c.metric && r.reference == c.reference && r.candidate == c.candidate
                })
                .collect();
            let name = format!("EM {}: {} vs {}", c.metric, c.candidate, c.reference);
            tests += 1;
            failures += usize::from(case(&mut body, &m.id, &name, &rows, reps));
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
            tests += 1;
            failures += usize::from(case(
                &mut body,
                &m.id,
                &format!("figure {}", f.id),
                &rows,
                reps,
            ));
        }
        for c in claims
            .iter()
            .filter(|c| c.experiment == m.id && c.kind == verdicts::ClaimKind::Predicate)
        {
            let (failed, skip) = claim_case(&mut body, c);
            tests += 1;
            failures += usize::from(failed);
            skipped += usize::from(skip);
        }
        suites.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{body}  </testsuite>\n",
            html_escape(&format!("{} v{}", m.id, m.version))
        ));
        total_tests += tests;
        total_failures += failures;
        total_skipped += skipped;
    }
    if !entries.is_empty() {
        let (suite, tests, skipped) = entries_suite(entries);
        suites.push_str(&suite);
        total_tests += tests;
        total_skipped += skipped;
    }
    if !failed.is_empty() {
        let mut body = String::new();
        for (t, err) in failed {
            body.push_str(&format!(
                "    <testcase classname=\"tasks\" name=\"{}\">\n      <error message=\"{}\" type=\"task\">{}</error>\n    </testcase>\n",
                html_escape(&format!("{} {}", t.solver, t.key)),
                html_escape(err),
                html_escape(&t.solve_command())
            ));
        }
        suites.push_str(&format!(
            "  <testsuite name=\"tasks\" tests=\"{n}\" failures=\"0\" errors=\"{n}\">\n{body}  </testsuite>\n",
            n = failed.len()
        ));
        total_tests += failed.len();
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"repro check\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"{}\" skipped=\"{total_skipped}\">\n{suites}</testsuites>\n",
        failed.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdicts::EntryStatus;

    fn derived(status: EntryStatus, holding: usize, checkable: usize) -> Derived {
        Derived {
            status,
            holding,
            checkable,
            sanity: 1,
            fits: 0,
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
        let xml = junit_xml(&[], &[], &[], &entries, &[], &Replications::new());
        assert!(
            xml.contains("<testsuites name=\"repro check\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\">"),
            "{xml}"
        );
        assert!(
            xml.contains("<testsuite name=\"entries\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\">"),
            "{xml}"
        );
        // A reproduced entry passes: no <skipped> in its test case.
        let case = |id: &str| {
            let at = xml.find(&format!("name=\"{id}\"")).unwrap();
            let end = at + xml[at..].find("</testcase>").unwrap();
            xml[..end].rsplit("<testcase").next().unwrap().to_string()
        };
        assert!(case("yan-4.5").contains("classname=\"entries.reproduced\""));
        assert!(!case("yan-4.5").contains("<skipped"), "{}", case("yan-4.5"));
        let partly = case("yan-3.4");
        assert!(partly.contains("classname=\"entries.partly-reproduced\""));
        assert!(partly.contains("<skipped message=\"partly reproduced: 2 of 3 claims hold\"/>"));
        assert!(partly.contains("<property name=\"claims_holding\" value=\"2\"/>"));
        assert!(partly.contains("<property name=\"paper\" value=\"yan2012\"/>"));
        let drawn = case("wu-3.2");
        assert!(drawn.contains("classname=\"entries.drawn\""));
        assert!(drawn.contains("<skipped message=\"drawn\"/>"), "{drawn}");
        // No entries, no suite.
        let none = junit_xml(&[], &[], &[], &[], &[], &Replications::new());
        assert!(!none.contains("<testsuite "), "{none}");
    }
}
