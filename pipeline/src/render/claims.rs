//! Claims as the index shows them: the measure stage's [`ClaimResult`]s and
//! the ledger's definitions of removed or changed claims, as `reports` types.

use crate::measure::claims::ClaimResult;
use crate::measure::ExperimentResults;
use reports::{IndexClaim, IndexClaimChange, IndexClaimStep};
use verdicts::Verdict;

/// An earlier definition of a claim (or one the manifest no longer has).
pub(super) fn change(d: &store::ClaimDefinitionRow) -> IndexClaimChange {
    IndexClaimChange {
        id: d.claim_id.clone(),
        definition: d.definition.clone(),
        first_evaluated: d.first_seen.clone(),
        last_evaluated: d.last_evaluated.clone(),
        last_verdict: d.last_verdict,
    }
}

/// A claim result as the index shows it.
pub(super) fn index_claim(c: &ClaimResult, r: &ExperimentResults) -> IndexClaim {
    IndexClaim {
        id: c.id.clone(),
        kind: c.kind,
        quote: c.quote.clone(),
        where_: c.where_.clone(),
        entries: c.entries.clone(),
        holds: c.holds.clone(),
        points: c.points_filter.clone(),
        expect: c.expect,
        why: c.why.clone(),
        quick_expect: c.quick_expect,
        quick_why: c.quick_why.clone(),
        note: c.note.clone(),
        sanity: c.sanity.clone(),
        fit: c.fit.clone(),
        verdict: c.verdict,
        status: c.status,
        reason: c.reason.clone(),
        evaluated: c.points.len(),
        skipped: c
            .skipped
            .iter()
            .map(|(p, w)| (r.point(*p).map(|x| x.json()).unwrap_or_default(), w.clone()))
            .collect(),
        steps: c
            .steps
            .iter()
            .map(|s| IndexClaimStep {
                text: s.text.clone(),
                point: s.point.clone(),
                lhs: (s.lhs.lo, s.lhs.hi),
                op: s.op.clone(),
                rhs: (s.rhs.lo, s.rhs.hi),
                verdict: Verdict::from(s.truth),
            })
            .collect(),
        history: c.history.iter().map(change).collect(),
        definition: c.definition.to_string(),
        first_evaluated: c.first_evaluated.clone(),
    }
}
