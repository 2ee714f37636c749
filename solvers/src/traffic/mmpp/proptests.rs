//! Property tests of the MMPP/MAP library invariants.

use super::fit::{fit_mmpp2, superpose_fit, Characteristics, FitCase};
use super::{Map, Mmpp2};
use proptest::prelude::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-12)
}

/// A bursty two-state MMPP (rates differ by at least 10%, so IDC - 1 is not
/// lost in rounding).
fn mmpp() -> impl Strategy<Value = Mmpp2> {
    (0.01f64..10.0, 0.01f64..10.0, 0.0f64..10.0, 0.0f64..1.0).prop_map(|(p1, p2, hi, frac)| {
        let hi = hi + 0.1;
        Mmpp2 {
            phi1: p1,
            phi2: p2,
            lambda1: hi,
            lambda2: hi * 0.9 * frac,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn splitting_keeps_q_and_scales_lambda(p in mmpp(), s in 0.01f64..1.0) {
        let a = Map::from_mmpp2(&p).split(s);
        let b = Map::from_mmpp2(&p.split(s));
        prop_assert!((a.d0 - b.d0).abs().max() < 1e-12);
        prop_assert!((a.d1 - b.d1).abs().max() < 1e-12);
        let q = p.split(s);
        prop_assert_eq!((q.phi1, q.phi2), (p.phi1, p.phi2));
        prop_assert!(close(q.mean_rate(), s * p.mean_rate(), 1e-13));
    }

    #[test]
    fn superposed_mean_rates_add(a in mmpp(), b in mmpp()) {
        let m = Map::from_mmpp2(&a).superpose(&Map::from_mmpp2(&b));
        prop_assert!(close(m.mean_rate().unwrap(), a.mean_rate() + b.mean_rate(), 1e-11));
        let c = Characteristics::superposition(&[(a, 1.0), (b, 1.0)], 1.3);
        prop_assert!(close(c.rate, a.mean_rate() + b.mean_rate(), 1e-14));
    }

    #[test]
    fn idc_inf_is_scv_times_correlation_sum(p in mmpp()) {
        // IDC(inf) = C^2 (1 + 2 sum_k r_k), r_k = r_1 gamma^{k-1}.
        let g = p.lag_decay();
        let sum = p.lag1_corr() / (1.0 - g);
        prop_assert!(close(p.idc_inf(), p.scv() * (1.0 + 2.0 * sum), 1e-10),
            "{} vs {}", p.idc_inf(), p.scv() * (1.0 + 2.0 * sum));
    }

    #[test]
    fn closed_forms_match_the_map_algorithms(p in mmpp(), t in 0.05f64..20.0) {
        let m = Map::from_mmpp2(&p);
        let c = m.count_stats(t).unwrap();
        prop_assert!(close(c.var, p.var_count(t), 1e-9));
        let z3 = m.factorial_moments(t).unwrap()[2];
        prop_assert!(close(p.third_factorial(t), z3, 1e-8));
        prop_assert!(close(m.scv().unwrap(), p.scv(), 1e-10));
        prop_assert!((m.lag_corr(1).unwrap() - p.lag1_corr()).abs() < 1e-10);
    }

    #[test]
    fn fit_reproduces_its_four_characteristics(p in mmpp()) {
        let t = 0.5 * (1.0 / p.phi1 + 1.0 / p.phi2);
        let c = Characteristics::of(&p, t);
        let f = fit_mmpp2(&c).unwrap();
        let b = Characteristics::of(&f.mmpp, t);
        prop_assert!(close(b.rate, c.rate, 1e-13));
        prop_assert!(close(b.idc_inf, c.idc_inf, 1e-10));
        prop_assert!(close(b.idc_t, c.idc_t, 1e-10));
        if f.case != FitCase::ClampedIpp {
            prop_assert!(close(b.third_central_t, c.third_central_t, 1e-10),
                "{} vs {}", b.third_central_t, c.third_central_t);
        }
    }

    #[test]
    fn superposition_fit_reproduces_its_characteristics(a in mmpp(), b in mmpp(), n in 1u32..6) {
        let comps = [(a, n as f64), (b, 1.0)];
        let f = superpose_fit(&comps, None).unwrap();
        let t = super::fit::default_fit_time(&comps);
        let want = Characteristics::superposition(&comps, t);
        let got = Characteristics::of(&f.mmpp, t);
        prop_assert!(f.mmpp.lambda1 >= 0.0 && f.mmpp.lambda2 >= 0.0);
        prop_assert!(f.mmpp.phi1 > 0.0 && f.mmpp.phi2 > 0.0);
        prop_assert!(close(got.rate, want.rate, 1e-13));
        prop_assert!(close(got.idc_inf, want.idc_inf, 1e-10));
        prop_assert!(close(got.idc_t, want.idc_t, 1e-10));
        if f.case != FitCase::ClampedIpp {
            prop_assert!(close(got.third_central_t, want.third_central_t, 1e-10));
        }
    }
}
