//! Tests of the chapter-3 model: the zero-load limit, an independent scalar
//! re-derivation in the Poisson/uniform case (Pollaczek–Khinchine and M/M/1
//! closed forms), saturation against the catalogue's hot-spot bound, the
//! direction of every variant, and bad input.

use super::*;
use serde_json::json;

fn mm(phi1: f64, phi2: f64, l1: f64) -> Mmpp2 {
    Mmpp2::new(phi1, phi2, l1, 0.0).unwrap()
}

fn solve(k: usize, omega: f64, v: usize, p: &Mmpp2, delta: f64, var: ModelVariant) -> ModelOutcome {
    solve_model(k, omega, v, p, delta, var).unwrap()
}

#[test]
fn zero_load_is_omega_plus_mean_distances() {
    for (k, delta) in [(12usize, 0.05), (16, 0.1), (8, 0.0), (7, 0.2)] {
        let r = solve(
            k,
            32.0,
            4,
            &mm(0.5, 0.5, 1e-9),
            delta,
            ModelVariant::default(),
        )
        .unwrap();
        let rings = Rings::of(k as u32);
        let n = (k * k) as f64;
        let d_hot: f64 = (1..=rings.dmax)
            .map(|j| j as f64 * rings.n_j[j] as f64 / (n - 1.0))
            .sum();
        let d_r = if k % 2 == 0 {
            k as f64 / 2.0
        } else {
            (k as f64 - 1.0 / k as f64) / 2.0
        };
        let expect = 32.0 + (1.0 - delta) * d_r + delta * d_hot;
        assert!(
            (r.latency - expect).abs() < 1e-4,
            "k={k}: {} vs {expect}",
            r.latency
        );
        assert!((r.v_bar - 1.0).abs() < 1e-6);
    }
}

/// The model with δ = 0 and a Poisson source, re-derived with scalar closed
/// forms: every channel is M/G/1 (Pollaczek–Khinchine) with service
/// ω + d_r + Exp(mean B), P_v of M/M/1 is (1 − ρ)ρ^v.
fn scalar_poisson_uniform(k: usize, omega: f64, v: usize, lam: f64) -> Option<f64> {
    let eta = k as f64 / 4.0;
    let d = 2.0 * eta;
    let q = 1.0 / eta;
    let lc = d / 4.0 * lam;
    let (mut w, mut pa, mut pad) = (0.0f64, 0.0f64, 0.0f64);
    let mut vbar = 1.0;
    let mut b = 0.0;
    for _ in 0..2000 {
        let pb = (1.0 - q).powi(2) * pad * pa + 2.0 * (1.0 - q) * q * pad;
        b = d * pb * w;
        let c = omega + d;
        let s1 = c + b;
        let s2 = c * c + 2.0 * c * b + 2.0 * b * b;
        let rho = lc * s1;
        if rho >= 1.0 {
            return None;
        }
        let w_new = lc * s2 / (2.0 * (1.0 - rho));
        let pv: Vec<f64> = (0..=v)
            .map(|x| {
                if x < v {
                    (1.0 - rho) * rho.powi(x as i32)
                } else {
                    rho.powi(v as i32)
                }
            })
            .collect();
        let vf = v as f64;
        let pa_new = pv[v] + 2.0 * pv[v - 1] / vf + pv[v - 2] / (vf * (vf - 1.0) / 2.0);
        let pad_new = pv[v] + 2.0 * pv[v - 1] / vf;
        let (a1, a2) = (1..=v).fold((0.0, 0.0), |(a, bb), x| {
            (a + x as f64 * pv[x], bb + (x * x) as f64 * pv[x])
        });
        vbar = a2 / a1;
        w = 0.5 * w + 0.5 * w_new;
        pa = 0.5 * pa + 0.5 * pa_new;
        pad = 0.5 * pad + 0.5 * pad_new;
    }
    let c = omega + d;
    let (s1, s2) = (c + b, c * c + 2.0 * c * b + 2.0 * b * b);
    let ls = lam / v as f64;
    let ws = ls * s2 / (2.0 * (1.0 - ls * s1));
    Some((s1 + ws) * vbar)
}

#[test]
fn poisson_uniform_case_matches_scalar_closed_forms() {
    let var = ModelVariant {
        source: SourceLaw::Poisson,
        ..Default::default()
    };
    for (k, omega, v, lam) in [
        (8usize, 32.0, 4usize, 0.008),
        (12, 32.0, 5, 0.005),
        (16, 64.0, 4, 0.0015),
    ] {
        let expect = scalar_poisson_uniform(k, omega, v, lam).unwrap();
        // λ2 = 0 with φ1 = φ2: mean rate λ1/2.
        let r = solve(k, omega, v, &mm(0.5, 0.5, 2.0 * lam), 0.0, var).unwrap();
        assert!(
            (r.latency - expect).abs() < 1e-6 * expect,
            "k={k}: {} vs {expect}",
            r.latency
        );
        assert!(r.latency > omega + k as f64 / 2.0 + 0.5);
    }
}

/// Smallest λ1 (bisection) at which the model saturates.
fn saturation(
    k: usize,
    omega: f64,
    v: usize,
    phi: (f64, f64),
    delta: f64,
    var: ModelVariant,
) -> f64 {
    let (mut lo, mut hi) = (1e-6, 0.5);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        match solve(k, omega, v, &mm(phi.0, phi.1, mid), delta, var) {
            Ok(_) => lo = mid,
            Err(_) => hi = mid,
        }
    }
    lo
}

#[test]
fn saturation_lies_below_the_hot_spot_bound() {
    // Catalogue §3.1 "Ref": λ̄ < 1/(ω (f_r + f_h1)); wu-3.4a, ω = 32: λ_s1 < 0.0195.
    let s = saturation(12, 32.0, 4, (0.5, 0.5), 0.05, ModelVariant::default());
    assert!(s < 0.0195 && s > 0.3 * 0.0195, "{s}");
    // wu-3.5c, ω = 64: bound 0.0057.
    let s = saturation(16, 64.0, 6, (0.7, 0.35), 0.1, ModelVariant::default());
    assert!(s < 0.0057 && s > 0.3 * 0.0057, "{s}");
}

#[test]
fn variants_move_the_latency_the_expected_way() {
    let p = mm(0.5, 0.5, 0.008);
    let base = solve(12, 32.0, 4, &p, 0.05, ModelVariant::default()).unwrap();
    let printed_cj = solve(
        12,
        32.0,
        4,
        &p,
        0.05,
        ModelVariant {
            cj: Cj::Printed,
            ..Default::default()
        },
    )
    .unwrap();
    // Twice the channels share the hot-spot load.
    assert!(printed_cj.latency < base.latency);
    assert!(printed_cj.util_ring[0].1 < base.util_ring[0].1);
    let half = solve(
        12,
        32.0,
        4,
        &p,
        0.05,
        ModelVariant {
            pad: Pad::Half,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(half.t_r < base.t_r);
    // MMPP above Poisson at the same mean rate (Fig 3.6), gap growing with load.
    let fig36 = |l1: f64, source| {
        solve(
            8,
            64.0,
            4,
            &mm(0.006, 0.006, l1),
            0.05,
            ModelVariant {
                source,
                ..Default::default()
            },
        )
        .unwrap()
        .latency
    };
    let g1 = fig36(0.003, SourceLaw::Mmpp) - fig36(0.003, SourceLaw::Poisson);
    let g2 = fig36(0.006, SourceLaw::Mmpp) - fig36(0.006, SourceLaw::Poisson);
    assert!(g1 > 0.0 && g2 > g1, "{g1} {g2}");
    // Latency grows with load; larger δ saturates earlier (Fig 3.7).
    let a = solve(
        8,
        32.0,
        4,
        &mm(0.9, 0.45, 0.01),
        0.05,
        ModelVariant::default(),
    )
    .unwrap();
    let b = solve(
        8,
        32.0,
        4,
        &mm(0.9, 0.45, 0.02),
        0.05,
        ModelVariant::default(),
    )
    .unwrap();
    assert!(b.latency > a.latency);
    let s05 = saturation(8, 32.0, 4, (0.9, 0.45), 0.05, ModelVariant::default());
    let s20 = saturation(8, 32.0, 4, (0.9, 0.45), 0.2, ModelVariant::default());
    assert!(s20 < s05);
    // The printed hot-spot blocking stays a probability and converges.
    let pr = solve(
        12,
        32.0,
        4,
        &p,
        0.05,
        ModelVariant {
            hotspot_pb: HotPb::Printed,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(pr.latency.is_finite() && pr.t_h > 32.0);
}

#[test]
fn solver_outcomes_and_bad_input() {
    let ctx = TaskContext::new(0, crate::Fidelity::Full);
    let ok = json!({"k": 12, "omega": 32, "V": 4, "phi1": 0.5, "phi2": 0.5, "lambda1": 0.008, "delta": 0.05});
    let o = TorusModel.solve(&ok, &ctx).unwrap();
    assert_eq!(o.status, crate::Status::Ok);
    assert!(o.get("latency").unwrap() > 38.0);
    assert_eq!(o.series["cj"].len(), 12);
    let mut sat = ok.clone();
    sat["lambda1"] = json!(0.05);
    assert_eq!(
        TorusModel.solve(&sat, &ctx).unwrap().status,
        crate::Status::Saturated
    );
    let cases: [(&str, serde_json::Value, &str); 7] = [
        ("k", json!(1), "k"),
        ("V", json!(2), "V"),
        ("omega", json!(0), "omega"),
        ("delta", json!(1.0), "delta"),
        ("delta", json!(-0.5), "delta"),
        ("phi2", json!(0.0), "phi2"),
        ("lambda1", json!(-1.0), "lambda1"),
    ];
    for (key, val, name) in cases {
        let mut p = ok.clone();
        p[key] = val;
        match TorusModel.solve(&p, &ctx) {
            Err(SolveError::InvalidParam { param, .. }) => assert_eq!(param, name, "{key}"),
            other => panic!("{key}: {other:?}"),
        }
    }
    let mut p = ok.clone();
    p["cj"] = json!("sideways");
    assert!(matches!(
        TorusModel.solve(&p, &ctx),
        Err(SolveError::BadParams(_))
    ));
}

#[test]
#[ignore]
fn print_saturation_points() {
    let d = ModelVariant::default();
    for (k, v, p1, p2, delta) in [
        (12, 4, 0.5, 0.5, 0.05),
        (12, 5, 0.6, 0.2, 0.05),
        (12, 6, 0.8, 0.4, 0.1),
        (12, 7, 0.9, 0.7, 0.1),
        (16, 4, 0.8, 0.6, 0.05),
        (16, 5, 0.6, 0.4, 0.05),
        (16, 6, 0.7, 0.35, 0.1),
        (16, 7, 0.9, 0.3, 0.1),
    ] {
        for omega in [32.0, 64.0] {
            let s = saturation(k, omega, v, (p1, p2), delta, d);
            let r = solve(k, omega, v, &mm(p1, p2, 0.9 * s), delta, d).unwrap();
            eprintln!("k={k} V={v} phi=({p1},{p2}) delta={delta} omega={omega}: sat lambda1={s:.5} lat(0.9)={:.1} it={}", r.latency, r.iterations);
        }
    }
    for k in [8, 16] {
        for src in [SourceLaw::Mmpp, SourceLaw::Poisson] {
            let var = ModelVariant { source: src, ..d };
            eprintln!(
                "fig3.6 k={k} {src:?}: sat lambda1 {:.5}",
                saturation(k, 64.0, 4, (0.006, 0.006), 0.05, var)
            );
        }
        for delta in [0.05, 0.1, 0.2] {
            eprintln!(
                "fig3.7 k={k} delta={delta}: sat lambda1 {:.5}",
                saturation(k, 32.0, 4, (0.9, 0.45), delta, d)
            );
        }
    }
    eprintln!(
        "poisson uniform 8x8 w32 V4 sat lambda_bar {:.5}",
        saturation(
            8,
            32.0,
            4,
            (0.5, 0.5),
            0.0,
            ModelVariant {
                source: SourceLaw::Poisson,
                ..d
            }
        ) / 2.0
    );
}
