//! Replications in rounds: which points of which simulation series need more
//! replications, after a round, to meet the series' precision target, or (with
//! `repro check --resolve`) to decide a point that is inconclusive.
//!
//! Decisions are made on whole rounds of stored results, and every replication
//! has its own seed derived from (solver, parameters, base seed, index), so
//! the counts reached, and the results, do not depend on `--jobs` or on which
//! executor ran the tasks; a rerun replays the same rounds from the cache.

use super::{verdict_of, ExperimentResults, PointStatus};
use crate::manifest::Series;
use crate::plan::MoreReplications;
use store::ErrorMeasureRow;
use verdicts::PointVerdict as Verdict;

/// Replications per (experiment, series, point index).
pub type Replications = std::collections::BTreeMap<(String, String, usize), u32>;

/// `check --resolve` on a series without `precision:`: at most this many
/// replications per point (or the series' own count, if larger).
pub const RESOLVE_MAX_REPLICATIONS: u32 = 64;

/// Whether series `s` runs a simulation (only those get replications in
/// rounds).
pub fn simulates(registry: &solvers::Registry, s: &Series) -> bool {
    registry.get(&s.solver).map(|x| x.kind()) == Some(solvers::Kind::Simulation)
}

/// The largest `--resolve-max` accepted (a point's replications are tasks).
pub const RESOLVE_MAX_LIMIT: u32 = 100_000;

/// `repro check --resolve`: off, or on with an optional cap on the
/// replications per point (`--resolve-max`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Resolve {
    #[default]
    Off,
    On {
        /// `--resolve-max`: the cap for every simulation series (at least its
        /// own count); without it, each series' `precision.max_replications`,
        /// else [`RESOLVE_MAX_REPLICATIONS`].
        max: Option<u32>,
    },
}

/// The most replications a point of `s` may get (`resolve`: for a verdict).
pub fn cap(s: &Series, resolve: Resolve) -> u32 {
    match (resolve, &s.precision) {
        (Resolve::On { max: Some(n) }, _) => n.max(s.replications),
        (_, Some(p)) => p.max_replications,
        (Resolve::On { max: None }, None) => RESOLVE_MAX_REPLICATIONS.max(s.replications),
        (Resolve::Off, None) => 0,
    }
}

/// How many replications a point with `n` of them and half-width `hw` needs
/// next for a target half-width `target`: the Student-t CI shrinks like
/// 1/sqrt(n), so about n·(hw/target)²; at least one more, at most twice as
/// many per round (a wild first estimate must not run to the cap at once),
/// never beyond `cap`.
pub fn next_count(n: u32, hw: f64, target: f64, cap: u32) -> u32 {
    let want = if target > 0.0 && hw.is_finite() {
        (f64::from(n) * (hw / target).powi(2))
            .ceil()
            .min(f64::from(u32::MAX)) as u32
    } else {
        n.saturating_mul(2)
    };
    want.clamp(n + 1, n.saturating_mul(2).max(n + 1)).min(cap)
}

/// The replications each point of `r`'s simulation series needs in the next
/// round (only points that need more are listed). `ems` are `r`'s error
/// measures; with `resolve`, the reference series of an inconclusive point
/// gets more replications (doubling per round) until its verdict is decided,
/// and so do the (series, point) pairs an inconclusive claim read (`undecided`,
/// from [`super::claims::undecided`]).
pub fn next_round(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    undecided: &[(String, usize)],
    resolve: Resolve,
    simulation: impl Fn(&Series) -> bool,
) -> MoreReplications {
    let m = &r.manifest;
    let mut out = MoreReplications::new();
    let mut want = |series: &str, point: usize, n: u32| {
        let e = out
            .entry((m.id.clone(), series.to_string(), point))
            .or_insert(n);
        *e = (*e).max(n);
    };
    for s in m.series.iter().filter(|s| simulation(s)) {
        let cap = cap(s, resolve);
        for p in &m.points {
            let n = r.replications(p.index, &s.name);
            if n >= cap || r.status.get(&(p.index, s.name.clone())) != Some(&PointStatus::Done) {
                continue;
            }
            if let Some(pr) = &s.precision {
                let Some(a) = r.get(p.index, &s.name, &pr.metric) else {
                    continue;
                };
                let target = pr.target.half_width_for(a.value);
                // One replication's own CI (batch means) does not count: the
                // target is on the spread across replications.
                let hw = if n >= 2 { a.half_width } else { None };
                match hw {
                    Some(hw) if hw <= target => {}
                    Some(hw) => want(&s.name, p.index, next_count(n, hw, target, cap)),
                    None => want(&s.name, p.index, 2.min(cap).max(n + 1)),
                }
            }
            if resolve != Resolve::Off {
                let undecided = ems.iter().any(|e| {
                    e.reference == s.name
                        && e.point_index as usize == p.index
                        && verdict_of(e) == Verdict::Inconclusive
                        && e.reference_value.is_some()
                        && e.candidate_value.is_some()
                }) || undecided
                    .iter()
                    .any(|(sn, pi)| *sn == s.name && *pi == p.index);
                if undecided {
                    want(&s.name, p.index, n.saturating_mul(2).max(n + 1).min(cap));
                }
            }
        }
    }
    out
}

/// Precision targets not met at the cap: (series, point index, replications,
/// half-width, target), for the run's summary ("stops at the cap and says so").
pub fn unmet(r: &ExperimentResults) -> Vec<(String, usize, u32, Option<f64>, f64)> {
    let mut out = Vec::new();
    for s in &r.manifest.series {
        let Some(pr) = &s.precision else { continue };
        for p in &r.manifest.points {
            let Some(a) = r.get(p.index, &s.name, &pr.metric) else {
                continue;
            };
            let n = r.replications(p.index, &s.name);
            let target = pr.target.half_width_for(a.value);
            let hw = if n >= 2 { a.half_width } else { None };
            if hw.is_none_or(|h| h > target) {
                out.push((s.name.clone(), p.index, n, hw, target));
            }
        }
    }
    out
}

/// Replications per point of the simulation series that have a precision
/// target or more replications than planned, and the targets not met.
#[allow(clippy::type_complexity)]
pub fn report(
    r: &ExperimentResults,
    registry: &solvers::Registry,
    fidelity: solvers::Fidelity,
) -> (
    Vec<((String, String, usize), u32)>,
    Vec<(String, String, usize, u32, Option<f64>, f64)>,
) {
    let m = &r.manifest;
    let mut reps = Vec::new();
    for s in &m.series {
        if !simulates(registry, s) {
            continue;
        }
        let counts: Vec<u32> = m
            .points
            .iter()
            .map(|p| r.replications(p.index, &s.name))
            .collect();
        let planned = match fidelity {
            solvers::Fidelity::Quick => s.quick_replications.unwrap_or(s.replications),
            solvers::Fidelity::Full => s.replications,
        };
        if s.precision.is_some() || counts.iter().any(|n| *n != planned) {
            for (p, n) in m.points.iter().zip(counts) {
                reps.push(((m.id.clone(), s.name.clone(), p.index), n));
            }
        }
    }
    let unmet = unmet(r)
        .into_iter()
        .map(|(s, p, n, hw, t)| (m.id.clone(), s, p, n, hw, t))
        .collect();
    (reps, unmet)
}

#[cfg(test)]
mod tests {
    use super::{cap, next_count, Resolve, RESOLVE_MAX_REPLICATIONS};
    use crate::manifest::{Precision, PrecisionTarget, Series};

    fn series(replications: u32, max_replications: Option<u32>) -> Series {
        Series {
            name: "sim".into(),
            solver: "mm1.sim".into(),
            label: "sim".into(),
            params: Default::default(),
            replications,
            seed: 1,
            quick_params: Default::default(),
            quick_replications: None,
            precision: max_replications.map(|m| Precision {
                metric: "L".into(),
                target: PrecisionTarget::Relative(0.01),
                max_replications: m,
            }),
        }
    }

    #[test]
    fn resolve_max_sets_the_cap_of_every_simulation_series() {
        let plain = series(200, None);
        let target = series(3, Some(20));
        // No rounds without a target or --resolve; a target's own cap.
        assert_eq!(cap(&plain, Resolve::Off), 0);
        assert_eq!(cap(&target, Resolve::Off), 20);
        // --resolve: the target's cap, else 64, never below the series' count.
        let on = Resolve::On { max: None };
        assert_eq!(cap(&target, on), 20);
        assert_eq!(cap(&series(3, None), on), RESOLVE_MAX_REPLICATIONS);
        assert_eq!(cap(&plain, on), 200);
        // --resolve-max N: N for every series, never below its count.
        let max = Resolve::On { max: Some(3000) };
        assert_eq!(cap(&plain, max), 3000);
        assert_eq!(cap(&target, max), 3000);
        assert_eq!(cap(&plain, Resolve::On { max: Some(50) }), 200);
    }

    #[test]
    fn next_count_grows_with_the_gap_and_stays_within_bounds() {
        // hw twice the target: about 4n wanted, at most 2n per round.
        assert_eq!(next_count(4, 0.2, 0.1, 64), 8);
        // Nearly there: one more at least.
        assert_eq!(next_count(10, 0.101, 0.1, 64), 11);
        // A moderate gap: n·(hw/target)², rounded up.
        assert_eq!(next_count(10, 0.12, 0.1, 64), 15);
        // Never beyond the cap.
        assert_eq!(next_count(40, 1.0, 0.1, 64), 64);
    }
}
