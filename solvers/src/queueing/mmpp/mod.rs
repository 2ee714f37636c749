//! MMPP queues: QBD / matrix-geometric solver, MMPP/M/1, MMPP/M/1/K,
//! MMPP/G/1 mean waits and the departure process of MMPP/M/1.
//! Equations and departures from the printed formulas: docs/models/queueing.md.

use crate::params::{parse, show};
use crate::traffic::mmpp::{mmpp_from_params, mmpp_param_docs};
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

pub mod counts;
pub mod departure;
pub mod map_g1;
pub mod mg1;
pub mod mm1;
pub mod mm1k;
pub mod qbd;

pub use departure::{departure_mmpp2, interdeparture_moments, DepartureFit};
pub use map_g1::{map_g1, MapG1};
pub use mg1::{mmpp_g1, MmppG1, Service, ShiftExp};
pub use mm1::{map_m1, mmpp_m1, MapM1, MmppM1};
pub use mm1k::{map_m1k, mmpp_m1k, MmppM1K};
pub use qbd::{Qbd, QbdSolution};

pub fn register(r: &mut Registry) {
    r.add(MmppM1Mg);
    r.add(MmppM1kCtmc);
    r.add(MmppG1MeanWait);
    r.add(MmppM1Departure);
}

fn with_mu(mut v: Vec<ParamDoc>, extra: &[(&'static str, &'static str)]) -> Vec<ParamDoc> {
    for (name, doc) in extra {
        v.push(ParamDoc { name, doc });
    }
    v
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct M1Params {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    mu: f64,
}

struct MmppM1Mg;

impl Solver for MmppM1Mg {
    fn name(&self) -> &'static str {
        "mmpp_m1.mg"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_empty")]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "MMPP/M/1 infinite buffer by the matrix-geometric method (Wu 6.8-6.11, W-41): L, W = L / mean rate, P(empty)",
            params: with_mu(mmpp_param_docs(), &[("mu", "service rate (> 0); needs rho = mean rate / mu < 1")]),
            metrics: vec!["L", "W", "P_empty"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: M1Params = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mu = crate::params::model_value("mu", p.mu)?;
        let q = mmpp_m1(&m, mu)?;
        Outcome::new()
            .with("L", q.l)
            .with("W", q.w)
            .with("P_empty", q.p_empty)
            .checked(self.name())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct M1kParams {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    mu: f64,
    #[serde(rename = "K")]
    k: f64,
}

struct MmppM1kCtmc;

impl Solver for MmppM1kCtmc {
    fn name(&self) -> &'static str {
        "mmpp_m1k.ctmc"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_block")]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "MMPP/M/1/K (K counts the one in service) by GTH on the bivariate chain (Wu 7.5-7.10): L, arrival-weighted blocking, throughput, W = L / throughput",
            params: with_mu(
                mmpp_param_docs(),
                &[
                    ("mu", "service rate (> 0)"),
                    ("K", "capacity including the packet in service (integer >= 1)"),
                ],
            ),
            metrics: vec!["L", "P_block", "throughput", "W"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: M1kParams = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mu = crate::params::model_value("mu", p.mu)?;
        let k = crate::params::capacity("K", p.k, 1)?;
        let q = mmpp_m1k(&m, mu, k)?;
        Outcome::new()
            .with("L", q.l)
            .with("P_block", q.p_block)
            .with("throughput", q.throughput)
            .with("W", q.w)
            .checked(self.name())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MixPart {
    weight: f64,
    #[serde(default)]
    shift: Option<f64>,
    #[serde(default)]
    rate: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceParams {
    #[serde(default)]
    shift: Option<f64>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    mixture: Option<Vec<MixPart>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct G1Params {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    service: ServiceParams,
}

fn part(weight: f64, shift: Option<f64>, rate: Option<f64>) -> Result<ShiftExp, SolveError> {
    if shift.is_none() && rate.is_none() {
        return Err(SolveError::param(
            "service",
            "give `shift` (deterministic part), `rate` (exponential part) or both",
        ));
    }
    let shift = match shift {
        Some(c) => crate::params::model_value_or_zero("service.shift", c)?,
        None => 0.0,
    };
    let rate = match rate {
        Some(a) => Some(crate::params::model_value("service.rate", a)?),
        None => None,
    };
    Ok(ShiftExp {
        weight,
        shift,
        rate,
    })
}

/// Parses and validates the `service` parameter shared by `mmpp_g1.mean_wait`
/// and `mmpp_g1.sim`: `{shift, rate}` or `{mixture: [{weight, shift, rate}, ...]}`.
pub fn parse_service(value: &serde_json::Value) -> Result<Service, SolveError> {
    let s: ServiceParams = serde_json::from_value(value.clone())
        .map_err(|e| SolveError::BadParams(format!("service: {e}")))?;
    service_from_params(&s)
}

fn service_from_params(s: &ServiceParams) -> Result<Service, SolveError> {
    match &s.mixture {
        Some(mix) => {
            if s.shift.is_some() || s.rate.is_some() {
                return Err(SolveError::param(
                    "service",
                    "give either `mixture` or `shift`/`rate`, not both",
                ));
            }
            let parts = mix
                .iter()
                .map(|m| part(m.weight, m.shift, m.rate))
                .collect::<Result<Vec<_>, _>>()?;
            Service::new(parts)
        }
        None => Service::new(vec![part(1.0, s.shift, s.rate)?]),
    }
}

struct MmppG1MeanWait;

impl Solver for MmppG1MeanWait {
    fn name(&self) -> &'static str {
        "mmpp_g1.mean_wait"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("rho")]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "MMPP/G/1 mean waiting times (Wu 3.37-3.38, W-11) with Lucantoni's G; service = shift + exponential or a mixture of those",
            params: with_mu(
                mmpp_param_docs(),
                &[(
                    "service",
                    "{shift, rate}: deterministic shift (>= 0) plus Exp(rate), either may be absent; or {mixture: [{weight, shift, rate}, ...]} with weights summing to 1",
                )],
            ),
            metrics: vec!["W", "Wv", "rho"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: G1Params = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let s = service_from_params(&p.service)?;
        let r = mmpp_g1(&m, &s)?;
        Outcome::new()
            .with("W", r.w)
            .with("Wv", r.wv)
            .with("rho", r.rho)
            .checked(self.name())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DepartureParams {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    mu: f64,
    #[serde(default)]
    t: Option<f64>,
}

struct MmppM1Departure;

impl Solver for MmppM1Departure {
    fn name(&self) -> &'static str {
        "mmpp_m1.departure"
    }
    fn version(&self) -> u32 {
        // 2: departure counting moments in the Laplace domain (same values
        // to about 1e-10; no work bounds or long-window shortcut needed).
        2
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Departure process of MMPP/M/1: exact counting characteristics of the (truncated) departure MAP and their two-state MMPP fit (Wu 6.13-6.14, catalogue M-3)",
            params: with_mu(
                mmpp_param_docs(),
                &[
                    ("mu", "service rate (> 0); needs rho < 1"),
                    ("t", "optional fitting time (> 0); default (1/phi1 + 1/phi2)/2"),
                ],
            ),
            metrics: vec![
                "rate", "idc_t", "idc_inf", "third_central_t", "t", "scv", "phi1", "phi2",
                "lambda1", "lambda2",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: DepartureParams = parse(params)?;
        let m = mmpp_from_params(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mu = crate::params::model_value("mu", p.mu)?;
        let t = match p.t {
            Some(t) => Some(crate::params::model_value("t", t)?),
            None => None,
        };
        // A tail too long to truncate or characteristics the fit cannot
        // take: said with the inputs, blaming t when it was given (a t at
        // which IDC(t) has reached IDC(inf) to rounding) and otherwise mu,
        // which sets rho and with it the tail.
        let inputs = format!(
            "phi1 = {}, phi2 = {}, lambda1 = {}, lambda2 = {}, mu = {}{}",
            show(p.phi1),
            show(p.phi2),
            show(p.lambda1),
            show(p.lambda2),
            show(mu),
            t.map_or(String::new(), |t| format!(", t = {}", show(t)))
        );
        let own = ["phi1", "phi2", "lambda1", "lambda2", "mu", "t"];
        let blame = if t.is_some() { "t" } else { "mu" };
        let user = |e| crate::traffic::mmpp::fit::in_user_terms(e, &own, blame, &inputs);
        let d = departure_mmpp2(&m, mu, t).map_err(user)?;
        let mo = interdeparture_moments(&m, mu).map_err(user)?;
        Outcome::new()
            .with("rate", d.target.rate)
            .with("idc_t", d.target.idc_t)
            .with("idc_inf", d.target.idc_inf)
            .with("third_central_t", d.target.third_central_t)
            .with("t", d.target.t)
            .with("scv", mo[1] / (mo[0] * mo[0]) - 1.0)
            .with("phi1", d.fit.mmpp.phi1)
            .with("phi2", d.fit.mmpp.phi2)
            .with("lambda1", d.fit.mmpp.lambda1)
            .with("lambda2", d.fit.mmpp.lambda2)
            .checked(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::mmpp::Mmpp2;
    use serde_json::json;

    #[test]
    fn departure_solver_reports_rate_and_fit() {
        let o = MmppM1Departure
            .solve(
                &json!({"phi1": 0.3, "phi2": 0.1, "lambda1": 2.0, "lambda2": 0.2, "mu": 2.4}),
                &ctx(),
            )
            .unwrap();
        assert!((o.get("rate").unwrap() - 0.65).abs() < 1e-9);
        let fitted = Mmpp2::new(
            o.get("phi1").unwrap(),
            o.get("phi2").unwrap(),
            o.get("lambda1").unwrap(),
            o.get("lambda2").unwrap(),
        )
        .unwrap();
        assert!((fitted.idc(o.get("t").unwrap()) - o.get("idc_t").unwrap()).abs() < 1e-9);
        assert!(o.get("scv").unwrap() > 1.0);
        assert!(matches!(
            MmppM1Departure.solve(
                &json!({"phi1": 0.3, "phi2": 0.1, "lambda1": 2.0, "lambda2": 0.2, "mu": 0.6}),
                &ctx()
            ),
            Err(SolveError::Unstable(_))
        ));
    }

    fn ctx() -> TaskContext {
        TaskContext::new(0, crate::Fidelity::Full)
    }

    #[test]
    fn solvers_are_registered_under_their_names() {
        let r = Registry::with_all();
        for n in [
            "mmpp.stats",
            "mmpp_m1.mg",
            "mmpp_m1k.ctmc",
            "mmpp_g1.mean_wait",
        ] {
            assert!(r.get(n).is_some(), "{n}");
        }
    }

    #[test]
    fn m1_solver_littles_law_and_errors() {
        let o = MmppM1Mg
            .solve(
                &json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 2.5}),
                &ctx(),
            )
            .unwrap();
        let l = o.get("L").unwrap();
        assert!((o.get("W").unwrap() - l / 1.5).abs() < 1e-14);
        assert!((o.get("P_empty").unwrap() - 0.4).abs() < 1e-12);
        match MmppM1Mg.solve(
            &json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 1.4}),
            &ctx(),
        ) {
            Err(SolveError::Unstable(m)) => assert!(m.contains("rho")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            MmppM1Mg.solve(
                &json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": -1.0}),
                &ctx()
            ),
            Err(SolveError::InvalidParam { .. })
        ));
    }

    #[test]
    fn m1k_solver_and_errors() {
        let o = MmppM1kCtmc
            .solve(&json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 1.0, "K": 8}), &ctx())
            .unwrap();
        let thr = o.get("throughput").unwrap();
        assert!((thr - 1.5 * (1.0 - o.get("P_block").unwrap())).abs() < 1e-14);
        assert!((o.get("W").unwrap() - o.get("L").unwrap() / thr).abs() < 1e-14);
        for (k, ok) in [(json!(0), false), (json!(2.5), false), (json!(1), true)] {
            let r = MmppM1kCtmc.solve(
                &json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 1.0, "K": k}),
                &ctx(),
            );
            assert_eq!(r.is_ok(), ok, "K = {k}");
            if let Err(SolveError::InvalidParam { param, .. }) = r {
                assert_eq!(param, "K");
            }
        }
    }

    #[test]
    fn g1_solver_service_forms() {
        let base = |service: serde_json::Value| json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "service": service});
        let exp = MmppG1MeanWait
            .solve(&base(json!({"rate": 2.5})), &ctx())
            .unwrap();
        let q = mmpp_m1(&Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 2.5).unwrap();
        assert!((exp.get("W").unwrap() - (q.w - 0.4)).abs() < 1e-9 * q.w);
        assert!((exp.get("rho").unwrap() - 0.6).abs() < 1e-14);
        let mix = MmppG1MeanWait
            .solve(
                &base(json!({"mixture": [{"weight": 0.5, "shift": 0.2, "rate": 5.0}, {"weight": 0.5, "shift": 0.3}]})),
                &ctx(),
            )
            .unwrap();
        assert!(mix.get("W").unwrap() > 0.0);
        for bad in [
            json!({}),
            json!({"shift": -1.0}),
            json!({"rate": 0.0}),
            json!({"mixture": [{"weight": 0.5, "rate": 1.0}]}),
            json!({"mixture": [], "rate": 1.0}),
            json!({"rate": 1.0, "extra": 2}),
            json!({"rate": 1.0}), // rho = 1.5: unstable
        ] {
            assert!(
                MmppG1MeanWait.solve(&base(bad.clone()), &ctx()).is_err(),
                "{bad}"
            );
        }
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod wide_range_tests {
    use super::*;
    use crate::des::Stream;
    use crate::traffic::mmpp::{superpose_fit, Mmpp2};

    /// Log-uniform random inputs over wide ranges: every block returns finite
    /// results, and the two independent G algorithms (logarithmic reduction in
    /// MMPP/M/1, Newton in MMPP/G/1) give the same waiting time.
    #[test]
    fn wide_range_inputs_stay_finite_and_consistent() {
        let mut r = Stream::new(1, 1);
        let lu = |r: &mut Stream, a: f64, b: f64| (a.ln() + (b.ln() - a.ln()) * r.uniform()).exp();
        for i in 0..3000 {
            let p = Mmpp2 {
                phi1: lu(&mut r, 1e-3, 1e1),
                phi2: lu(&mut r, 1e-3, 1e1),
                lambda1: lu(&mut r, 1e-2, 1e2),
                lambda2: if i % 3 == 0 {
                    0.0
                } else {
                    lu(&mut r, 1e-2, 1e2)
                },
            };
            let rho = lu(&mut r, 1e-3, 0.999);
            let mu = p.mean_rate() / rho;
            let q = mmpp_m1(&p, mu).unwrap();
            let g = mmpp_g1(&p, &Service::exponential(mu)).unwrap();
            let e = ((g.w - (q.w - 1.0 / mu)) / g.w).abs();
            assert!(e < 1e-9, "{p:?} mu={mu}: {} vs {}", g.w, q.w - 1.0 / mu);
            let c = lu(&mut r, 1e-3, 1.0) / p.mean_rate() * rho;
            let s = Service::new(vec![
                ShiftExp {
                    weight: 0.5,
                    shift: c,
                    rate: None,
                },
                ShiftExp {
                    weight: 0.5,
                    shift: c * 0.5,
                    rate: Some(2.0 / c),
                },
            ])
            .unwrap();
            let d = mmpp_g1(&p, &s).unwrap();
            assert!(
                d.w.is_finite() && d.w >= 0.0 && d.wv.is_finite(),
                "{p:?} {c} {d:?}"
            );
            let k = mmpp_m1k(&p, mu, 1 + (i % 300)).unwrap();
            assert!(k.l.is_finite() && (0.0..=1.0).contains(&k.p_block));
            if let Ok(f) = superpose_fit(&[(p, 1.0 + (i % 7) as f64), (p.split(0.3), 1.0)], None) {
                let m = f.mmpp;
                assert!(
                    m.lambda1 >= 0.0 && m.lambda2 >= 0.0 && m.phi1 > 0.0 && m.phi2 > 0.0,
                    "{p:?} {f:?}"
                );
            }
        }
    }
}
