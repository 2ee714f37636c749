//! Wu ch.3: the k×k torus under MMPP sources with hot-spot destinations,
//! Duato's fully adaptive wormhole routing (catalogue §3.1).
//!
//! `torus.model` is the fixed point of Wu §3.3 with the catalogue's errata
//! (W-4 … W-20) and its variants; `torus.sim` runs the flit engine
//! (`engines/flit`) on the same network. docs/models/torus.md records every
//! equation and choice.

use crate::engines::flit::torus::KaryNcube;
use crate::engines::flit::Topology;
use crate::Registry;

mod model;
mod sim;

pub use model::{solve_model, ModelOutcome, ModelResult, ModelVariant};
pub use sim::{bench_run, bench_run_timed};

pub fn register(r: &mut Registry) {
    r.add(model::TorusModel);
    r.add(sim::TorusSim);
}

/// Largest network either solver accepts (nodes).
pub(crate) const MAX_NODES: usize = 65_536;

/// Ring structure of the k×k torus around a node (the hot spot), enumerated
/// (erratum W-4 for N_j, W-6 / M-5 for C_j).
#[derive(Debug, Clone, PartialEq)]
pub struct Rings {
    /// d_max = 2⌊k/2⌋ (3.10).
    pub dmax: usize,
    /// N_j, nodes at distance j, j = 0..=dmax.
    pub n_j: Vec<u64>,
    /// Inward channels from ring j to ring j − 1 (index j; index 0 unused).
    pub c_in: Vec<u64>,
    /// All directed channels between rings j − 1 and j (the "as printed" C_j).
    pub c_all: Vec<u64>,
}

impl Rings {
    pub fn of(k: u32) -> Rings {
        let t = KaryNcube::new(k, 2);
        let nodes = t.nodes() as u32;
        let dist: Vec<usize> = (0..nodes).map(|v| t.distance(0, v) as usize).collect();
        let dmax = *dist.iter().max().unwrap();
        let mut n_j = vec![0u64; dmax + 1];
        for &d in &dist {
            n_j[d] += 1;
        }
        let mut c_in = vec![0u64; dmax + 1];
        let mut c_all = vec![0u64; dmax + 1];
        for u in 0..nodes {
            for p in 0..t.ports() as u32 {
                let v = t.link(u, p).unwrap().0;
                let (du, dv) = (dist[u as usize], dist[v as usize]);
                if dv + 1 == du {
                    c_in[du] += 1;
                    c_all[du] += 1;
                } else if du + 1 == dv {
                    c_all[dv] += 1;
                }
            }
        }
        Rings {
            dmax,
            n_j,
            c_in,
            c_all,
        }
    }

    /// N_{≥j} = N − Σ_{i<j} N_i.
    pub fn n_ge(&self, j: usize) -> u64 {
        self.n_j[j..].iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_match_the_catalogue() {
        // W-6: inward C_j for 12x12 and the closed form 4(2j-1), mirrored.
        let r = Rings::of(12);
        assert_eq!(r.dmax, 12);
        assert_eq!(
            &r.c_in[1..],
            &[4, 12, 20, 28, 36, 44, 44, 36, 28, 20, 12, 4]
        );
        assert_eq!(r.c_in.iter().sum::<u64>(), 2 * 144);
        assert_eq!(r.c_all.iter().sum::<u64>(), 4 * 144);
        // W-4: the antipode is counted; N_j sums to N.
        assert_eq!(r.n_j.iter().sum::<u64>(), 144);
        assert_eq!(r.n_j[12], 1);
        assert_eq!(r.n_j[6], 2 * (12 - 1));
        let r16 = Rings::of(16);
        for j in 1..=8 {
            assert_eq!(r16.c_in[j], 4 * (2 * j as u64 - 1));
            assert_eq!(r16.c_in[17 - j], 4 * (2 * j as u64 - 1));
        }
        assert_eq!(r16.n_ge(1), 255);
    }
}
