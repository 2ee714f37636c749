//! MAP/G/1 mean waiting times: the exact counterpart of [`super::mg1`] for a
//! general MAP (e.g. an exact superposition), so that the two-state fit of a
//! superposition can be checked against the process it approximates.
//!
//! Same mean-value formula as (3.37)–(3.38) with Q -> D = D0 + D1 and
//! Lambda -> D1 (Lucantoni 1991), in the cancellation-free form
//! Wv = [lam t2 + 2t ((1-rho) g + t pi D1) Z D1 e] / (2(1-rho)),
//! Z = (e pi - D)^{-1} - e pi the deviation matrix of D. G comes from the
//! functional iteration from a stochastic start (general m, dense matrices:
//! meant for cross-checks, not inner loops); g is the stationary vector of
//! the generator M = D0 + D1 G (GTH).

use super::mg1::Service;
use crate::markov::ctmc::gth;
use crate::traffic::mmpp::Map;
use crate::SolveError;
use nalgebra::{DMatrix, DVector, RowDVector};

#[derive(Debug, Clone, PartialEq)]
pub struct MapG1 {
    pub w: f64,
    pub wv: f64,
    pub rho: f64,
    pub g: DMatrix<f64>,
}

fn kernel(service: &Service, m: &DMatrix<f64>) -> Result<DMatrix<f64>, SolveError> {
    let n = m.nrows();
    let id = DMatrix::<f64>::identity(n, n);
    let mut k = DMatrix::<f64>::zeros(n, n);
    for p in &service.parts {
        let mut part = if p.shift > 0.0 {
            (m * p.shift).exp()
        } else {
            id.clone()
        };
        if let Some(a) = p.rate {
            let inv = (&id * a - m)
                .try_inverse()
                .ok_or_else(|| SolveError::Numerical("alpha I - M is singular".into()))?;
            part = part * inv * a;
        }
        k += part * p.weight;
    }
    Ok(k)
}

/// Stationary vector of a generator given as a dense matrix (GTH).
fn stationary(m: &DMatrix<f64>) -> Result<RowDVector<f64>, SolveError> {
    let n = m.nrows();
    if n == 1 {
        return Ok(RowDVector::from_element(1, 1.0));
    }
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                a[i * n + j] = m[(i, j)].max(0.0);
            }
        }
    }
    Ok(RowDVector::from_vec(gth(n, a)?))
}

pub fn map_g1(map: &Map, service: &Service) -> Result<MapG1, SolveError> {
    let n = map.phases();
    let lam = map.mean_rate()?;
    let (t1, t2) = (service.mean(), service.second_moment());
    let rho = lam * t1;
    if rho >= 1.0 {
        return Err(SolveError::Unstable(format!(
            "rho = mean arrival rate x mean service time = {rho} >= 1"
        )));
    }
    let pi = RowDVector::from_vec(map.stationary()?);
    let e = DVector::<f64>::from_element(n, 1.0);
    let mut g = &e * &pi;
    let mut converged = false;
    for _ in 0..1_000_000 {
        let next = kernel(service, &(&map.d0 + &map.d1 * &g))?;
        let diff = (&next - &g).abs().max();
        g = next;
        if diff < 1e-15 {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(SolveError::Numerical(
            "MAP/G/1: functional iteration for G did not converge".into(),
        ));
    }
    let gv = stationary(&(&map.d0 + &map.d1 * &g))?;
    let d = map.generator();
    let z = (&e * &pi - &d)
        .try_inverse()
        .ok_or_else(|| SolveError::Numerical("e pi - D is singular".into()))?
        - &e * &pi;
    let r = &gv * (1.0 - rho) + &pi * &map.d1 * t1;
    let x = 2.0 * t1 * (r * z * &map.d1 * e)[(0, 0)];
    let wv = (lam * t2 + x) / (2.0 * (1.0 - rho));
    let w = (lam * t2 + x / rho) / (2.0 * (1.0 - rho));
    Ok(MapG1 { w, wv, rho, g })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queueing::mmpp::mg1::{mmpp_g1, ShiftExp};
    use crate::queueing::mmpp::mm1::map_m1;
    use crate::traffic::mmpp::Mmpp2;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn two_state_map_equals_mmpp_g1() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        for s in [
            Service::deterministic(0.9),
            Service::new(vec![
                ShiftExp {
                    weight: 0.4,
                    shift: 0.3,
                    rate: Some(2.0),
                },
                ShiftExp {
                    weight: 0.6,
                    shift: 0.6,
                    rate: None,
                },
            ])
            .unwrap(),
        ] {
            let a = map_g1(&Map::from_mmpp2(&p), &s).unwrap();
            let b = mmpp_g1(&p, &s).unwrap();
            assert!(rel(a.w, b.w) < 1e-10, "{} vs {}", a.w, b.w);
            assert!(rel(a.wv, b.wv) < 1e-10);
        }
    }

    /// A MAP whose arrivals change the phase (not an MMPP), exponential
    /// service: the formula with Lambda -> D1 must match the MAP/M/1 QBD.
    #[test]
    fn phase_changing_map_with_exponential_service_matches_the_qbd() {
        let d0 = DMatrix::from_row_slice(3, 3, &[-3.0, 0.5, 0.2, 0.1, -1.0, 0.3, 0.4, 0.0, -0.9]);
        let d1 = DMatrix::from_row_slice(3, 3, &[1.0, 1.3, 0.0, 0.0, 0.2, 0.4, 0.1, 0.1, 0.3]);
        let m = Map::new(d0, d1).unwrap();
        let mu = 2.0;
        let a = map_g1(&m, &Service::exponential(mu)).unwrap();
        let q = map_m1(&m, mu).unwrap();
        assert!(
            rel(a.w, q.w - 1.0 / mu) < 1e-10,
            "{} vs {}",
            a.w,
            q.w - 1.0 / mu
        );
        assert!(rel(a.wv, q.l / mu) < 1e-10);
    }
}
