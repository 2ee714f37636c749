//! Property tests of the MMPP queue solvers.

use super::{map_m1, mmpp_g1, mmpp_m1, mmpp_m1k, Service};
use crate::traffic::mmpp::{Map, Mmpp2};
use proptest::prelude::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-12)
}

/// An MMPP and a service rate with load rho in (0.05, 0.95).
fn queue() -> impl Strategy<Value = (Mmpp2, f64)> {
    (
        0.01f64..5.0,
        0.01f64..5.0,
        0.0f64..10.0,
        0.0f64..10.0,
        0.05f64..0.95,
    )
        .prop_map(|(p1, p2, l1, l2, rho)| {
            let p = Mmpp2 {
                phi1: p1,
                phi2: p2,
                lambda1: l1 + 0.01,
                lambda2: l2,
            };
            let mu = p.mean_rate() / rho;
            (p, mu)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn p_empty_is_one_minus_rho((p, mu) in queue()) {
        let q = mmpp_m1(&p, mu).unwrap();
        prop_assert!((q.level_prob(0) - (1.0 - q.rho)).abs() < 1e-9, "{} vs {}", q.level_prob(0), 1.0 - q.rho);
        prop_assert_eq!(q.p_empty, (mu - q.mean_rate) / mu);
        prop_assert!(close(q.w * q.mean_rate, q.l, 1e-14));
    }

    #[test]
    fn two_state_and_general_qbd_agree((p, mu) in queue()) {
        let a = mmpp_m1(&p, mu).unwrap();
        let b = map_m1(&Map::from_mmpp2(&p), mu).unwrap();
        prop_assert!(close(a.l, b.l, 1e-8), "{} vs {}", a.l, b.l);
    }

    #[test]
    fn finite_queue_flow_balance_and_littles_law((p, mu) in queue(), k in 1usize..80) {
        let q = mmpp_m1k(&p, mu, k).unwrap();
        let served = mu * (1.0 - q.level_prob(0));
        prop_assert!(close(q.throughput, served, 1e-10));
        prop_assert!(close(q.w * q.throughput, q.l, 1e-13));
        prop_assert!((0.0..=1.0).contains(&q.p_block));
    }

    #[test]
    fn exponential_mg1_is_mm1((p, mu) in queue()) {
        let q = mmpp_m1(&p, mu).unwrap();
        let g = mmpp_g1(&p, &Service::exponential(mu)).unwrap();
        prop_assert!(close(g.w, q.w - 1.0 / mu, 1e-7), "{} vs {}", g.w, q.w - 1.0 / mu);
        prop_assert!(close(g.wv, q.l / mu, 1e-7));
    }
}
