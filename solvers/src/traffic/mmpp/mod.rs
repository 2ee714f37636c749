//! MMPP and MAP traffic: two-state MMPP closed forms (Wu ch. 2), general MAPs
//! for exact superpositions, Bernoulli splitting, and the Heffes–Lucantoni
//! two-state fit of a superposition (Wu 3.19–3.34). See docs/models/queueing.md.

use crate::params::{parse, positive, show};
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

pub mod fit;
pub mod map;
pub mod mmpp2;

pub use fit::{fit_mmpp2, superpose_fit, Characteristics, Fit, FitCase};
pub use map::Map;
pub use mmpp2::{CountStats, Mmpp2};

pub fn register(r: &mut Registry) {
    r.add(MmppStats);
    r.add(MmppSuperpose);
}

/// The four MMPP parameters shared by every solver that takes a two-state MMPP.
pub(crate) fn mmpp_param_docs() -> Vec<ParamDoc> {
    vec![
        ParamDoc {
            name: "phi1",
            doc: "rate of leaving phase 1 (> 0)",
        },
        ParamDoc {
            name: "phi2",
            doc: "rate of leaving phase 2 (> 0)",
        },
        ParamDoc {
            name: "lambda1",
            doc: "arrival rate in phase 1 (>= 0; lambda1 + lambda2 > 0)",
        },
        ParamDoc {
            name: "lambda2",
            doc: "arrival rate in phase 2 (>= 0; 0 gives an interrupted Poisson process)",
        },
    ]
}

/// Validates the four MMPP parameters of a solver: phi1, phi2 > 0; lambda1,
/// lambda2 >= 0 and not both 0. A zero lambda is allowed because every Wu
/// validation figure uses the interrupted Poisson process lambda2 = 0.
pub(crate) fn mmpp_from_params(
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
) -> Result<Mmpp2, SolveError> {
    let m = Mmpp2::new(phi1, phi2, lambda1, lambda2)?;
    use crate::params::{model_value, model_value_or_zero};
    model_value("phi1", phi1)?;
    model_value("phi2", phi2)?;
    model_value_or_zero("lambda1", lambda1)?;
    model_value_or_zero("lambda2", lambda2)?;
    Ok(m)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatsParams {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    #[serde(default)]
    t: Option<f64>,
}

struct MmppStats;

impl Solver for MmppStats {
    fn name(&self) -> &'static str {
        "mmpp.stats"
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut params = mmpp_param_docs();
        params.push(ParamDoc {
            name: "t",
            doc: "optional time at which IDC(t) is reported (> 0)",
        });
        SolverDoc {
            summary: "Two-state MMPP statistics: mean rate (2.11), SCV (2.14), lag-1 correlation (2.15), IDC(inf) and IDC(t) (2.12-2.13)",
            params,
            metrics: vec!["mean_rate", "scv", "lag1_corr", "idc_inf", "idc_t"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: StatsParams = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mut out = Outcome::new()
            .with("mean_rate", m.mean_rate())
            .with("scv", m.scv())
            .with("lag1_corr", m.lag1_corr())
            .with("idc_inf", m.idc_inf());
        if let Some(t) = p.t {
            let t = crate::params::model_value("t", t)?;
            out = out.with("idc_t", m.idc(t));
        }
        out.checked(self.name())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuperposeParams {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    factor: f64,
    #[serde(default)]
    t: Option<f64>,
}

/// Wu's channel traffic (3.17)–(3.34): `factor` f = Z + F copies of one
/// MMPP, i.e. Z whole copies plus one copy split with probability F, fitted
/// by a two-state MMPP.
struct MmppSuperpose;

impl Solver for MmppSuperpose {
    fn name(&self) -> &'static str {
        "mmpp.superpose"
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut params = mmpp_param_docs();
        params.push(ParamDoc {
            name: "factor",
            doc: "f > 0: floor(f) copies plus one copy split with probability frac(f) (Wu 3.17-3.18)",
        });
        params.push(ParamDoc {
            name: "t",
            doc: "optional fitting time (> 0); default the W-5 time",
        });
        SolverDoc {
            summary: "Two-state Heffes-Lucantoni fit of a superposition of MMPP copies (Wu 3.19-3.34, W-5, W-9, W-10)",
            params,
            metrics: vec!["phi1", "phi2", "lambda1", "lambda2", "mean_rate", "idc_t", "idc_inf", "t"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SuperposeParams = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let f = crate::params::within(
            "factor",
            positive("factor", p.factor)?,
            (1e-6, 1e6),
            " (copies of the source)",
        )?;
        let t = match p.t {
            Some(t) => Some(crate::params::model_value("t", t)?),
            None => None,
        };
        let (z, frac) = (f.floor(), f - f.floor());
        let mut comps = Vec::with_capacity(2);
        if z > 0.0 {
            comps.push((m, z));
        }
        if frac > 0.0 {
            comps.push((m.split(frac), 1.0));
        }
        let given = t.is_some();
        let t = t.unwrap_or_else(|| fit::default_fit_time(&comps));
        // A fit that fails is said with the inputs, blaming t when it was
        // given (IDC(t) has reached IDC(inf) to rounding) and otherwise
        // factor (the superposition's size).
        let inputs = format!(
            "phi1 = {}, phi2 = {}, lambda1 = {}, lambda2 = {}, factor = {}, t = {}",
            show(p.phi1),
            show(p.phi2),
            show(p.lambda1),
            show(p.lambda2),
            show(f),
            show(t)
        );
        let own = ["phi1", "phi2", "lambda1", "lambda2", "factor", "t"];
        let blame = if given { "t" } else { "factor" };
        let fit = superpose_fit(&comps, Some(t))
            .map_err(|e| fit::in_user_terms(e, &own, blame, &inputs))?;
        let c = Characteristics::superposition(&comps, t);
        Outcome::new()
            .with("phi1", fit.mmpp.phi1)
            .with("phi2", fit.mmpp.phi2)
            .with("lambda1", fit.mmpp.lambda1)
            .with("lambda2", fit.mmpp.lambda2)
            .with("mean_rate", c.rate)
            .with("idc_t", c.idc_t)
            .with("idc_inf", c.idc_inf)
            .with("t", t)
            .checked(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn superpose_solver_splits_the_factor() {
        let ctx = TaskContext::new(0, crate::Fidelity::Full);
        let o = MmppSuperpose
            .solve(
                &json!({"phi1": 0.09, "phi2": 0.06, "lambda1": 2.0, "lambda2": 0.5, "factor": 2.5}),
                &ctx,
            )
            .unwrap();
        let s = Mmpp2::new(0.09, 0.06, 2.0, 0.5).unwrap();
        assert!((o.get("mean_rate").unwrap() - 2.5 * s.mean_rate()).abs() < 1e-13);
        let f = superpose_fit(&[(s, 2.0), (s.split(0.5), 1.0)], None).unwrap();
        assert_eq!(o.get("phi1"), Some(f.mmpp.phi1));
        assert_eq!(o.get("lambda2"), Some(f.mmpp.lambda2));
        assert!((o.get("t").unwrap() - 0.5 * (1.0 / 0.09 + 1.0 / 0.06)).abs() < 1e-12);
        assert!(MmppSuperpose
            .solve(
                &json!({"phi1": 0.09, "phi2": 0.06, "lambda1": 2.0, "lambda2": 0.5, "factor": 0.0}),
                &ctx
            )
            .is_err());
    }

    #[test]
    fn solver_reports_the_closed_forms() {
        let ctx = TaskContext::new(0, crate::Fidelity::Full);
        let o = MmppStats
            .solve(
                &json!({"phi1": 0.6, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "t": 2.0}),
                &ctx,
            )
            .unwrap();
        let m = Mmpp2::new(0.6, 0.2, 2.0, 0.5).unwrap();
        assert_eq!(o.get("mean_rate"), Some(m.mean_rate()));
        assert!((o.get("mean_rate").unwrap() - 0.875).abs() < 1e-15);
        assert!((o.get("idc_t").unwrap() - m.idc(2.0)).abs() < 1e-14);
        let o2 = MmppStats
            .solve(
                &json!({"phi1": 0.6, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5}),
                &ctx,
            )
            .unwrap();
        assert!(o2.get("idc_t").is_none());
    }

    #[test]
    fn refuses_bad_parameters() {
        let ctx = TaskContext::new(0, crate::Fidelity::Full);
        for (bad, name) in [
            (
                json!({"phi1": 0.0, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5}),
                "phi1",
            ),
            (
                json!({"phi1": 0.1, "phi2": -0.2, "lambda1": 2.0, "lambda2": 0.5}),
                "phi2",
            ),
            (
                json!({"phi1": 0.1, "phi2": 0.2, "lambda1": -1.0, "lambda2": 0.5}),
                "lambda1",
            ),
            (
                json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 0.0, "lambda2": 0.0}),
                "lambda1",
            ),
            (
                json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 1.0, "lambda2": 0.5, "t": 0.0}),
                "t",
            ),
        ] {
            match MmppStats.solve(&bad, &ctx) {
                Err(SolveError::InvalidParam { param, .. }) => assert_eq!(param, name),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert!(matches!(
            MmppStats.solve(
                &json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 1.0, "lambda2": 0.5, "x": 1}),
                &ctx
            ),
            Err(SolveError::BadParams(_))
        ));
    }
}

#[cfg(test)]
mod proptests;
