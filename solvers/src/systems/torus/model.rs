//! `torus.model`: the analytical model of Wu §3.3 (eqs 3.2–3.50) as a damped
//! fixed point, with the catalogue's errata and variants (catalogue §3.1):
//!
//! - N_j enumerated (W-4); C_j inward (W-6 default) or all channels between
//!   rings ("printed", with ξ_j = C_j / 4N);
//! - P_a&d with the printed 2/V weight (W-8 default) or 1/V ("half");
//! - hot-spot blocking by remaining distance (W-7 default) or the printed
//!   η = j/2 substitution, clipped to [0, 1];
//! - channel arrivals: the superposition of Z copies of MMPP_s and one split
//!   copy (3.18–3.22), regular and hot-spot parts together, fitted by
//!   Heffes–Lucantoni at the W-5 time t = (1/φ1 + 1/φ2)/2;
//! - W_cj from MMPP/G/1 (3.37–3.38) with the **mixture** service law (W-12),
//!   exponential blocking parts with α (3.44) and β_j = 1/Σ_i b_hij (W-13),
//!   deterministic when the blocking is 0;
//! - P_vj from MMPP/M/1 with mean service t_cj (3.46–3.47, W-14), V̄_j by
//!   Dally (M-2), aggregated with ξ_j;
//! - source: MMPP_s split by 1/V, MMPP/G/1 with the mixture (3.48–3.50).
//!
//! Iteration (W-16): start at b = 0, W = 0; damping 0.5; stop when the
//! largest relative change of (W_cj, P_aj, P_a&dj) is below 1e-8; saturated
//! if any utilisation reaches 1 or there is no convergence in 2000 steps.

use super::{Rings, MAX_NODES};
use crate::params::{count, parse, probability};
use crate::queueing::mmpp::{mmpp_g1, mmpp_m1, Service, ShiftExp};
use crate::traffic::mmpp::{superpose_fit, Mmpp2};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Cj {
    #[default]
    Inward,
    Printed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pad {
    /// 2/V weight of the one-free-VC state (3.15 as printed).
    #[default]
    Printed,
    /// 1/V (W-8 variant).
    Half,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum HotPb {
    #[default]
    Remaining,
    Printed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SourceLaw {
    #[default]
    Mmpp,
    Poisson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelVariant {
    pub cj: Cj,
    pub pad: Pad,
    pub hotspot_pb: HotPb,
    pub source: SourceLaw,
}

/// A converged model point.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResult {
    pub latency: f64,
    pub t_r: f64,
    pub t_h: f64,
    pub w_s: f64,
    pub v_bar: f64,
    pub t_net: f64,
    pub rho_max: f64,
    pub iterations: u32,
    pub fit_t: f64,
    /// Predicted flits per cycle on a channel j hops from the hot spot,
    /// (λ_cr + λ_chj) ω, j = 1..=d_max.
    pub util_ring: Vec<(f64, f64)>,
    pub w_c: Vec<f64>,
}

/// Result or the reason the point is past saturation.
pub type ModelOutcome = Result<ModelResult, String>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    k: f64,
    omega: f64,
    #[serde(rename = "V")]
    v: f64,
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: Option<f64>,
    delta: Option<f64>,
    #[serde(default)]
    cj: Cj,
    #[serde(default)]
    pad: Pad,
    #[serde(default)]
    hotspot_pb: HotPb,
    #[serde(default)]
    source: SourceLaw,
}

const MAX_ITER: u32 = 2000;
const TOL: f64 = 1e-8;

fn clip01(x: f64) -> f64 {
    x.clamp(0.0, 1.0)
}

/// Solves the model for a k×k torus, messages of `omega` flits, `v` VCs,
/// source `mmpp`, hot-spot fraction `delta`.
pub fn solve_model(
    k: usize,
    omega: f64,
    v: usize,
    mmpp: &Mmpp2,
    delta: f64,
    var: ModelVariant,
) -> Result<ModelOutcome, SolveError> {
    let n = (k * k) as f64;
    let rings = Rings::of(k as u32);
    let dmax = rings.dmax;
    // (3.4): mean hops per dimension and in total (source included, W-20).
    let eta = if k.is_multiple_of(2) {
        k as f64 / 4.0
    } else {
        (k as f64 - 1.0 / k as f64) / 4.0
    };
    let d_r = 2.0 * eta;
    // Probability of ending in the current dimension, 1/η (3.13), at most 1
    // (k < 4 makes η < 1; the formula would give negative probabilities).
    let q_r = (1.0 / eta).min(1.0);
    let p_j: Vec<f64> = (0..=dmax)
        .map(|j| {
            if j == 0 {
                0.0
            } else {
                rings.n_j[j] as f64 / (n - 1.0)
            }
        })
        .collect();
    let c_j: Vec<f64> = (0..=dmax)
        .map(|j| match var.cj {
            Cj::Inward => rings.c_in[j] as f64,
            Cj::Printed => rings.c_all[j] as f64,
        })
        .collect();
    let c_sum: f64 = c_j.iter().sum();
    let xi: Vec<f64> = c_j
        .iter()
        .map(|c| match var.cj {
            Cj::Inward => c / c_sum,
            Cj::Printed => c / (4.0 * n),
        })
        .collect();
    let lam = mmpp.mean_rate();
    let src = match var.source {
        SourceLaw::Mmpp => *mmpp,
        SourceLaw::Poisson => Mmpp2::poisson(lam),
    };
    // Channel traffic (3.17), (3.35) and the fitted MMPP_cj (3.19–3.34).
    let f_r = d_r / 4.0 * (1.0 - delta);
    let mut fits = vec![Mmpp2::poisson(1.0); dmax + 1];
    let mut lam_cr = vec![0.0; dmax + 1];
    let mut lam_ch = vec![0.0; dmax + 1];
    let mut fit_t = 0.0;
    for j in 1..=dmax {
        let f_h = if c_j[j] > 0.0 {
            rings.n_ge(j) as f64 * delta / c_j[j]
        } else {
            0.0
        };
        let mut comps = Vec::with_capacity(4);
        for f in [f_r, f_h] {
            let (z, frac) = (f.floor(), f - f.floor());
            if z > 0.0 {
                comps.push((src, z));
            }
            if frac > 1e-12 {
                comps.push((src.split(frac), 1.0));
            }
        }
        let fit = superpose_fit(&comps, None)?;
        fit_t = crate::traffic::mmpp::fit::default_fit_time(&comps);
        fits[j] = fit.mmpp;
        lam_cr[j] = f_r * lam;
        lam_ch[j] = f_h * lam;
    }
    let lam_c: Vec<f64> = (0..=dmax).map(|j| lam_cr[j] + lam_ch[j]).collect();

    let binom2 = (v * (v - 1)) as f64 / 2.0;
    let vf = v as f64;
    let pad_coef = match var.pad {
        Pad::Printed => 2.0,
        Pad::Half => 1.0,
    };
    // Fixed-point state: W_cj, P_aj, P_a&dj.
    let mut w_c = vec![0.0; dmax + 1];
    let mut pa = vec![0.0; dmax + 1];
    let mut pad = vec![0.0; dmax + 1];
    let mut vbar_j = vec![1.0; dmax + 1];
    let mut rho_max: f64 = 0.0;
    let mut iterations = 0;
    let mut converged = false;
    // Blocking quantities derived from the state.
    let blocking = |w_c: &[f64], pa: &[f64], pad: &[f64]| {
        let pb_r = |j: usize| {
            clip01((1.0 - q_r).powi(2) * pad[j] * pa[j] + 2.0 * (1.0 - q_r) * q_r * pad[j])
        };
        let b_r = d_r * (1..=dmax).map(|j| xi[j] * pb_r(j) * w_c[j]).sum::<f64>();
        let mut b_h = vec![0.0; dmax + 1];
        for (j, bh) in b_h.iter_mut().enumerate().skip(1) {
            let mut s = 0.0;
            for i in 1..=j {
                let r = j - i + 1;
                let pb = match var.hotspot_pb {
                    HotPb::Remaining => {
                        if r == 1 {
                            pad[r]
                        } else {
                            let pe = (2.0 / r as f64).min(1.0);
                            clip01(
                                (1.0 - pe).powi(2) * pad[r] * pa[r]
                                    + 2.0 * (1.0 - pe) * pe * pad[r],
                            )
                        }
                    }
                    HotPb::Printed => {
                        let pe = 2.0 / j as f64;
                        clip01((1.0 - pe).powi(2) * pad[r] * pa[r] + 2.0 * (1.0 - pe) * pe * pad[r])
                    }
                };
                s += pb * w_c[r];
            }
            *bh = s;
        }
        (b_r, b_h)
    };
    let shift_exp = |weight: f64, shift: f64, block: f64| ShiftExp {
        weight,
        shift,
        rate: (block > 0.0).then(|| 1.0 / block),
    };
    for it in 1..=MAX_ITER {
        iterations = it;
        let (b_r, b_h) = blocking(&w_c, &pa, &pad);
        let t_r = omega + d_r + b_r;
        let mut change: f64 = 0.0;
        rho_max = 0.0;
        let mut new = Vec::with_capacity(dmax + 1);
        for j in 1..=dmax {
            let t_hj = omega + j as f64 + b_h[j];
            let t_c = (lam_cr[j] * t_r + lam_ch[j] * t_hj) / lam_c[j];
            let rho = lam_c[j] * t_c;
            rho_max = rho_max.max(rho);
            if rho >= 1.0 {
                return Ok(Err(format!(
                    "channel utilisation rho_{j} = {rho:.4} >= 1 at iteration {it}"
                )));
            }
            let mut parts = vec![shift_exp(lam_cr[j] / lam_c[j], omega + d_r, b_r)];
            if lam_ch[j] > 0.0 {
                parts.push(shift_exp(lam_ch[j] / lam_c[j], omega + j as f64, b_h[j]));
            }
            let svc = Service::new(parts)?;
            let w = match mmpp_g1(&fits[j], &svc) {
                Ok(q) => q.w,
                Err(SolveError::Unstable(m)) => return Ok(Err(m)),
                Err(e) => return Err(e),
            };
            let m1 = match mmpp_m1(&fits[j], 1.0 / t_c) {
                Ok(q) => q,
                Err(SolveError::Unstable(m)) => return Ok(Err(m)),
                Err(e) => return Err(e),
            };
            let pv: Vec<f64> = (0..=v)
                .map(|x| {
                    if x < v {
                        m1.level_prob(x)
                    } else {
                        m1.tail_prob(v)
                    }
                })
                .collect();
            let pa_new = pv[v] + 2.0 * pv[v - 1] / vf + pv[v - 2] / binom2;
            let pad_new = pv[v] + pad_coef * pv[v - 1] / vf;
            let (s1, s2) = (1..=v).fold((0.0, 0.0), |(a, b), x| {
                (a + x as f64 * pv[x], b + (x * x) as f64 * pv[x])
            });
            vbar_j[j] = if s1 > 1e-300 { s2 / s1 } else { 1.0 };
            new.push((w, pa_new, pad_new));
        }
        for (j, (w, a, d)) in (1..=dmax).zip(new) {
            for (old, x) in [(&mut w_c[j], w), (&mut pa[j], a), (&mut pad[j], d)] {
                let next = 0.5 * *old + 0.5 * x;
                let scale = next.abs().max(old.abs());
                if scale > 1e-300 {
                    change = change.max((next - *old).abs() / scale);
                }
                *old = next;
            }
        }
        if change < TOL {
            converged = true;
            break;
        }
    }
    if !converged {
        return Ok(Err(format!(
            "no convergence in {MAX_ITER} iterations (treated as saturated)"
        )));
    }
    let (b_r, b_h) = blocking(&w_c, &pa, &pad);
    let t_r = omega + d_r + b_r;
    let t_hj: Vec<f64> = (0..=dmax).map(|j| omega + j as f64 + b_h[j]).collect();
    let t_h: f64 = (1..=dmax).map(|j| p_j[j] * t_hj[j]).sum();
    // Source queues (3.48–3.50): MMPP_v = MMPP_s split by 1/V.
    let src_v = src.split(1.0 / vf);
    let mut w_s = 0.0;
    for j in 1..=dmax {
        let mut parts = vec![shift_exp(1.0 - delta, omega + d_r, b_r)];
        if delta > 0.0 {
            parts.push(shift_exp(delta, omega + j as f64, b_h[j]));
        }
        let svc = Service::new(parts)?;
        rho_max = rho_max.max(src_v.mean_rate() * svc.mean());
        let w = match mmpp_g1(&src_v, &svc) {
            Ok(q) => q.w,
            Err(SolveError::Unstable(m)) => return Ok(Err(format!("source queue: {m}"))),
            Err(e) => return Err(e),
        };
        w_s += p_j[j] * w;
    }
    let t_net = (1.0 - delta) * t_r + delta * t_h;
    let v_bar: f64 = (1..=dmax).map(|j| xi[j] * vbar_j[j]).sum();
    Ok(Ok(ModelResult {
        latency: (t_net + w_s) * v_bar,
        t_r,
        t_h,
        w_s,
        v_bar,
        t_net,
        rho_max,
        iterations,
        fit_t,
        util_ring: (1..=dmax).map(|j| (j as f64, lam_c[j] * omega)).collect(),
        w_c: w_c[1..].to_vec(),
    }))
}

pub(super) struct TorusModel;

impl Solver for TorusModel {
    fn name(&self) -> &'static str {
        "torus.model"
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Wu ch.3 analytical model of the k×k torus with Duato routing, MMPP sources and a hot spot (eqs 3.2–3.50, errata W-4…W-20; docs/models/torus.md)",
            params: vec![
                ParamDoc { name: "k", doc: "nodes per dimension (integer >= 2)" },
                ParamDoc { name: "omega", doc: "message length in flits (integer >= 1)" },
                ParamDoc { name: "V", doc: "virtual channels per physical channel (integer >= 3)" },
                ParamDoc { name: "phi1", doc: "MMPP rate of leaving phase 1 (> 0)" },
                ParamDoc { name: "phi2", doc: "MMPP rate of leaving phase 2 (> 0)" },
                ParamDoc { name: "lambda1", doc: "message rate in phase 1 (messages/node/cycle)" },
                ParamDoc { name: "lambda2", doc: "message rate in phase 2 (default 0, Wu's convention)" },
                ParamDoc { name: "delta", doc: "hot-spot fraction in [0, 1) (default 0: uniform traffic without a hot spot, not a case of Wu ch.3, whose figures give 0.05, 0.1 or 0.2; the manifests give it)" },
                ParamDoc { name: "cj", doc: "inward (default, W-6) or printed: the C_j of (3.11)/(3.35)" },
                ParamDoc { name: "pad", doc: "printed (default, 2/V) or half (1/V): the P_a&d weight (W-8)" },
                ParamDoc { name: "hotspot_pb", doc: "remaining (default, W-7) or printed: hot-spot blocking probability" },
                ParamDoc { name: "source", doc: "mmpp (default) or poisson (same mean rate; Fig 3.6)" },
            ],
            metrics: vec![
                "latency", "t_r", "t_h", "W_s", "V_bar", "T", "rho_max", "iterations", "fit_t",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, _: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        let k = count("k", p.k, 2)?;
        if k * k > MAX_NODES {
            return Err(SolveError::param(
                "k",
                format!(
                    "k^2 = {} nodes is more than the model accepts ({MAX_NODES})",
                    k * k
                ),
            ));
        }
        let omega = count("omega", p.omega, 1)? as f64;
        if omega > 1e6 {
            return Err(SolveError::param("omega", "must be <= 1e6 flits"));
        }
        let v = count("V", p.v, 3)?;
        if v > 64 {
            return Err(SolveError::param("V", format!("must be <= 64, got {v}")));
        }
        let delta = probability("delta", p.delta.unwrap_or(0.0))?;
        if delta >= 1.0 {
            return Err(SolveError::param("delta", "must lie in [0, 1), got 1"));
        }
        let mmpp = crate::traffic::mmpp::mmpp_from_params(
            p.phi1,
            p.phi2,
            p.lambda1,
            p.lambda2.unwrap_or(0.0),
        )?;
        let var = ModelVariant {
            cj: p.cj,
            pad: p.pad,
            hotspot_pb: p.hotspot_pb,
            source: p.source,
        };
        match solve_model(k, omega, v, &mmpp, delta, var)? {
            Err(why) => Ok(Outcome::saturated_because(why)),
            Ok(r) => {
                let mut o = Outcome::new()
                    .with("latency", r.latency)
                    .with("t_r", r.t_r)
                    .with("t_h", r.t_h)
                    .with("W_s", r.w_s)
                    .with("V_bar", r.v_bar)
                    .with("T", r.t_net)
                    .with("rho_max", r.rho_max)
                    .with("iterations", r.iterations as f64)
                    .with("fit_t", r.fit_t);
                o.series.insert("util_ring".into(), r.util_ring);
                let rings = Rings::of(k as u32);
                o.series.insert(
                    "cj".into(),
                    (1..=rings.dmax)
                        .map(|j| (j as f64, rings.c_in[j] as f64))
                        .collect(),
                );
                o.series.insert(
                    "n_ge".into(),
                    (1..=rings.dmax)
                        .map(|j| (j as f64, rings.n_ge(j) as f64))
                        .collect(),
                );
                o.checked("torus.model")
            }
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
