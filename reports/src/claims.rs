//! Claims and entry statuses in `index.html`: the count per status that opens
//! the summary, each summary row's status, and each experiment's claims
//! (quote, where, predicate, values with their CIs, verdict, expectation),
//! with sanity checks and fits apart and every definition changed after
//! results existed.

use crate::index::html_escape as e;
use crate::{
    Index, IndexClaim, IndexClaimChange, IndexClaimStep, IndexEntryStatus, IndexExperiment,
};
use std::fmt::Write as _;
use verdicts::{ClaimStatus, EntryStatus, Verdict};

/// CSS for what this module writes.
pub(crate) const CSS: &str = r#"
.badge.xfail { background: #ececf6; color: #4a4a7a; }
.status.reproduced { color: var(--pass); font-weight: 600; }
.status.partly-reproduced, .status.inconclusive { color: var(--inc); font-weight: 600; }
.status.not-reproduced { color: var(--fail); font-weight: 600; }
.status.calibrated { color: #8a5a00; font-weight: 600; }
.status.drawn { color: #555; }
table.claims q { font-style: italic; }
table.claims td.pred code { white-space: normal; }
.counts span { margin-right: 1rem; }
.changed { background: var(--inc-bg); border: 1px solid #e5c76b; border-radius: 6px; padding: .4rem .8rem; margin: .5rem 0; }
"#;

/// A number with four significant digits.
fn num(v: f64) -> String {
    if !v.is_finite() {
        return if v > 0.0 {
            "∞".into()
        } else if v < 0.0 {
            "−∞".into()
        } else {
            "?".into()
        };
    }
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// An interval as `value` or `mid ± half` (JUnit, check and the index).
pub fn interval((lo, hi): (f64, f64)) -> String {
    if lo == hi {
        num(lo)
    } else if lo.is_finite() && hi.is_finite() {
        format!("{} ± {}", num((lo + hi) / 2.0), num((hi - lo) / 2.0))
    } else {
        format!("[{}, {}]", num(lo), num(hi))
    }
}

fn status_badge(s: ClaimStatus) -> String {
    let class = match s {
        ClaimStatus::Holds => "pass",
        ClaimStatus::FailsAsExpected | ClaimStatus::InconclusiveAtQuick => "xfail",
        ClaimStatus::Fails | ClaimStatus::UnexpectedlyHolds | ClaimStatus::DecidedAtQuick => "fail",
        ClaimStatus::Inconclusive => "inconclusive",
    };
    format!(r#"<span class="badge {class}">{}</span>"#, s.label())
}

fn verdict_word(v: Verdict) -> &'static str {
    v.as_str()
}

/// The status cell of a summary row.
pub(crate) fn status_cell(s: Option<&IndexEntryStatus>) -> String {
    let Some(s) = s else {
        return r#"<td class="status notyet">not yet</td>"#.into();
    };
    let mut extra = String::new();
    if s.checkable > 0 && s.status != EntryStatus::Reproduced {
        let _ = write!(extra, " ({} of {} claims hold)", s.holding, s.checkable);
    } else if s.checkable > 0 {
        let _ = write!(extra, " ({} claims)", s.checkable);
    }
    if s.sanity > 0 {
        let _ = write!(extra, "; {} sanity", s.sanity);
    }
    if s.fits > 0 {
        let _ = write!(extra, "; {} fit(s)", s.fits);
    }
    format!(
        "<td class=\"status {}\">{}<span class=\"notes\">{}</span></td>",
        s.status.as_str(),
        s.status.label(),
        e(&extra)
    )
}

/// The count of entries per status, opening the summary.
pub(crate) fn status_counts(h: &mut String, index: &Index) {
    let catalogue: Vec<&IndexEntryStatus> = index
        .statuses
        .iter()
        .filter(|s| index.catalogue.iter().any(|c| c.id == s.id))
        .collect();
    if catalogue.is_empty() {
        return;
    }
    h.push_str("<p class=\"counts\"><strong>Paper entries by status:</strong> ");
    for st in EntryStatus::ALL {
        let n = catalogue.iter().filter(|s| s.status == *st).count();
        if n > 0 {
            let _ = write!(
                h,
                "<span class=\"status {}\">{} {}</span>",
                st.as_str(),
                n,
                st.label()
            );
        }
    }
    h.push_str("</p>\n");
    let claims: Vec<&IndexClaim> = index.experiments.iter().flat_map(|x| &x.claims).collect();
    if !claims.is_empty() {
        let n = |s: ClaimStatus| claims.iter().filter(|c| c.status == s).count();
        let _ = writeln!(
            h,
            "<p class=\"meta\">Claims: {} hold, {} fail as expected, {} fail, {} inconclusive, {} unexpectedly hold{}; {} sanity checks and {} fits shown apart.</p>",
            n(ClaimStatus::Holds),
            n(ClaimStatus::FailsAsExpected),
            n(ClaimStatus::Fails),
            n(ClaimStatus::Inconclusive),
            n(ClaimStatus::UnexpectedlyHolds),
            quick_counts(
                n(ClaimStatus::InconclusiveAtQuick),
                n(ClaimStatus::DecidedAtQuick)
            ),
            claims.iter().filter(|c| c.sanity.is_some()).count(),
            claims.iter().filter(|c| c.fit.is_some()).count(),
        );
    }
}

/// The `quick:` marks' part of a count line: empty when no claim is marked.
pub fn quick_counts(as_marked: usize, decided: usize) -> String {
    if as_marked + decided == 0 {
        return String::new();
    }
    format!(", {as_marked} inconclusive at --quick as marked, {decided} decided at --quick although marked")
}

/// Comparisons that do not hold shown in the index per claim; all of them,
/// holding or not, are in the experiment's claims CSV.
const SHOWN_NOT_HOLDING: usize = 8;

/// Where an experiment's per-point comparisons go, beside `index.html`.
pub(crate) fn claims_csv_path(experiment: &str) -> String {
    format!("claims/{experiment}.csv")
}

/// Every per-point comparison of an experiment's claims as CSV (one row per
/// comparison: claim, point, the comparison, each side's interval, verdict),
/// or `None` when its claims have none.
pub(crate) fn claims_csv(x: &IndexExperiment) -> crate::Result<Option<String>> {
    let rows: Vec<[String; 9]> = x
        .claims
        .iter()
        .flat_map(|c| c.steps.iter().map(move |s| (c, s)))
        .filter_map(|(c, s)| {
            let point = s.point.as_deref()?;
            Some([
                c.id.clone(),
                point.to_string(),
                s.text.clone(),
                s.lhs.0.to_string(),
                s.lhs.1.to_string(),
                s.op.clone(),
                s.rhs.0.to_string(),
                s.rhs.1.to_string(),
                s.verdict.as_str().to_string(),
            ])
        })
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let header = [
        "claim",
        "point",
        "comparison",
        "left_low",
        "left_high",
        "op",
        "right_low",
        "right_high",
        "verdict",
    ];
    let path = claims_csv_path(&x.id);
    crate::csv_text(std::path::Path::new(&path), &header, rows).map(Some)
}

/// The values a claim was judged on: aggregate comparisons in full, per-point
/// ones counted and linked (the experiment's claims CSV), with the first
/// that do not hold shown.
fn values(experiment: &str, c: &IndexClaim) -> String {
    let mut out = String::new();
    let aggregate: Vec<&IndexClaimStep> = c.steps.iter().filter(|s| s.point.is_none()).collect();
    for s in &aggregate {
        let _ = write!(
            out,
            "<div><code>{}</code>: {} {} {} → {}</div>",
            e(&s.text),
            e(&interval(s.lhs)),
            e(&s.op),
            e(&interval(s.rhs)),
            verdict_word(s.verdict)
        );
    }
    let per: Vec<&IndexClaimStep> = c.steps.iter().filter(|s| s.point.is_some()).collect();
    if !per.is_empty() {
        let n = |v: Verdict| per.iter().filter(|s| s.verdict == v).count();
        let _ = write!(
            out,
            "<div>{} comparison(s) at {} point(s): {} hold, {} fail, {} inconclusive (<a href=\"{}\">all as CSV</a>)</div>",
            per.len(),
            c.evaluated,
            n(Verdict::Holds),
            n(Verdict::Fails),
            n(Verdict::Inconclusive),
            e(&claims_csv_path(experiment))
        );
        let not_holding: Vec<&&IndexClaimStep> =
            per.iter().filter(|s| s.verdict != Verdict::Holds).collect();
        if !not_holding.is_empty() {
            out.push_str(
                "<table class=\"cmp\"><thead><tr><th>point</th><th>comparison</th><th>left ± CI</th><th></th><th>right ± CI</th><th>verdict</th></tr></thead><tbody>",
            );
            for s in not_holding.iter().take(SHOWN_NOT_HOLDING) {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    e(s.point.as_deref().unwrap_or("")),
                    e(&s.text),
                    e(&interval(s.lhs)),
                    e(&s.op),
                    e(&interval(s.rhs)),
                    verdict_word(s.verdict)
                );
            }
            out.push_str("</tbody></table>");
            if not_holding.len() > SHOWN_NOT_HOLDING {
                let _ = write!(
                    out,
                    "<div class=\"notes\">the first {SHOWN_NOT_HOLDING} of {} that do not hold; all in the CSV</div>",
                    not_holding.len()
                );
            }
        }
    }
    if !c.skipped.is_empty() {
        let _ = write!(
            out,
            "<div class=\"notes\">evaluated at {} point(s); {} left out: {}</div>",
            c.evaluated,
            c.skipped.len(),
            e(&c.skipped
                .iter()
                .take(4)
                .map(|(p, w)| format!("{p} ({w})"))
                .collect::<Vec<_>>()
                .join(", "))
        );
    }
    if let Some(r) = &c.reason {
        let _ = write!(out, "<div class=\"notes\">{}</div>", e(r));
    }
    out
}

fn claim_row(h: &mut String, experiment: &str, c: &IndexClaim) {
    let mut who = format!("<code>{}</code>", e(&c.id));
    if !c.quote.is_empty() {
        let _ = write!(who, "<br><q>{}</q>", e(&c.quote));
    }
    let _ = write!(
        who,
        "<br><span class=\"notes\">{} · {}</span>",
        e(&c.where_),
        e(&c.entries.join(", "))
    );
    let mut pred = format!("<code>{}</code>", e(&c.holds));
    if let Some(p) = &c.points {
        let _ = write!(
            pred,
            "<br><span class=\"notes\">at points where <code>{}</code></span>",
            e(p)
        );
    }
    if let Some(n) = &c.note {
        let _ = write!(pred, "<br><span class=\"notes\">{}</span>", e(n));
    }
    for (label, why) in [("sanity", &c.sanity), ("fit", &c.fit)] {
        if let Some(w) = why {
            let _ = write!(
                pred,
                "<br><span class=\"notes\"><strong>{label}:</strong> {}</span>",
                e(w)
            );
        }
    }
    let mut expect = format!(
        "expected to {}",
        if c.expect == verdicts::Expectation::Holds {
            "hold"
        } else {
            "fail"
        }
    );
    if let Some(w) = &c.why {
        let _ = write!(expect, "<br><span class=\"notes\">{}</span>", e(w));
    }
    if let Some(q) = c.quick_expect {
        let _ = write!(
            expect,
            "<br>at --quick: expected {q}<br><span class=\"notes\">{}</span>",
            e(c.quick_why.as_deref().unwrap_or(""))
        );
    }
    // The verdict beside the badge when the badge's words do not say it
    // ("DECIDED AT --quick (holds)"; not "holds (holds)").
    let verdict = c.verdict.to_string();
    let verdict = if c.status.label().to_lowercase().contains(&verdict) {
        String::new()
    } else {
        format!(" <span class=\"notes\">({verdict})</span>")
    };
    let _ = writeln!(
        h,
        "<tr><td>{who}</td><td class=\"pred\">{pred}</td><td>{}</td><td>{}{verdict}</td><td>{expect}</td></tr>",
        values(experiment, c),
        status_badge(c.status),
    );
}

fn claims_table(h: &mut String, experiment: &str, claims: &[&IndexClaim]) {
    h.push_str(
        "<div class=\"scroll\"><table class=\"claims\"><thead><tr><th>claim (quote, where, entries)</th>\
         <th>predicate</th><th>values (± 95% CI)</th><th>verdict</th><th>expectation</th></tr></thead><tbody>\n",
    );
    for c in claims {
        claim_row(h, experiment, c);
    }
    h.push_str("</tbody></table></div>\n");
}

fn change(h: &mut String, what: &str, d: &IndexClaimChange, now: Option<&IndexClaim>) {
    let _ = writeln!(
        h,
        "<li><code>{}</code> {what} after results: was <code>{}</code> (evaluated {} to {}, last verdict {}){}</li>",
        e(&d.id),
        e(&d.definition),
        e(&d.first_evaluated),
        e(&d.last_evaluated),
        d.last_verdict,
        now.map_or(String::new(), |c| format!(
            "; now <code>{}</code>{}",
            e(if c.definition.is_empty() { &c.holds } else { &c.definition }),
            c.first_evaluated
                .as_ref()
                .map_or(String::new(), |t| format!(" (evaluated since {})", e(t)))
        ))
    );
}

/// An experiment's claims: the checkable ones, then sanity checks and fits
/// apart, then every definition changed or removed after results existed.
pub(crate) fn claims_block(h: &mut String, x: &IndexExperiment) {
    if x.claims.is_empty() && x.removed_claims.is_empty() {
        return;
    }
    let changed: Vec<&IndexClaim> = x.claims.iter().filter(|c| !c.history.is_empty()).collect();
    if !changed.is_empty() || !x.removed_claims.is_empty() {
        h.push_str(
            "<div class=\"changed\"><strong>Claims changed after results existed</strong><ul>\n",
        );
        for c in &changed {
            for d in &c.history {
                change(h, "changed", d, Some(c));
            }
        }
        for d in &x.removed_claims {
            change(h, "removed", d, None);
        }
        h.push_str("</ul></div>\n");
    }
    let checkable: Vec<&IndexClaim> = x
        .claims
        .iter()
        .filter(|c| c.sanity.is_none() && c.fit.is_none())
        .collect();
    let apart: Vec<&IndexClaim> = x
        .claims
        .iter()
        .filter(|c| c.sanity.is_some() || c.fit.is_some())
        .collect();
    if !checkable.is_empty() {
        h.push_str("<h3>Claims</h3>\n");
        claims_table(h, &x.id, &checkable);
    }
    if !apart.is_empty() {
        h.push_str("<h3>Sanity checks and fits</h3>\n<p class=\"notes\">A sanity check cannot fail (it reads no solver output, or its band holds every value the metric can take); a fit compares with numbers the parameters were calibrated against. Neither makes an entry reproduced.</p>\n");
        claims_table(h, &x.id, &apart);
    }
}
