//! Wu ch.7: WLANs plus an Internet-access WMN (catalogue §3.5).
//!
//! n×n grid, 3 <= n <= 21, gateway with no WLAN (W-58) at the MR
//! ((n−1)/2, (n−1)/2) (0-based, integer division): the centre for odd n, the
//! upper-left of the four central MRs for even n ([`gateway`]); every other
//! MR has one AP with N stations. Hop rings by Chebyshev (8-neighbour)
//! distance, N_i by (7.2)/(7.3) ([`ring_size`], W-53, W-54).
//!
//! The model (§7.2): every entity an MMPP/M/1/K queue (K counts the packet in
//! service). Station: MMPP_s/M/1/K_s, effective input (7.4), output = that of
//! the infinite MMPP^e/M/1 (W-57, M-3). AP: the superposition of N station
//! outputs. Ring h_max receives the AP output; ring i < h_max receives
//! {N_{i+1} copies of the ring-(i+1) output, superposed, split by 1/N_i} ⊕
//! the AP output. Delay per ring (7.11), throughput (7.12 with W-56, 7.13),
//! average delay (7.14).
//!
//! The simulator: the same entities on `engines::qnet` with drop-tail
//! buffers and a shortest-path tree to the gateway, with split weights that
//! give every ring-i MR the same load (`balanced`, W-59) or a uniform choice
//! among ring-(i−1) neighbours (`uniform`).

use super::flow::Flow;
use super::{
    access_probability, access_rate, mmpp_docs, source_kind, source_mmpp, SimLength, SourceKind,
};
use crate::params::{count, positive};
use crate::traffic::mmpp::Mmpp2;
use crate::{ParamDoc, SolveError};
use serde::Deserialize;

mod config;
mod model;
mod sim;

pub use config::AccessConfigSolver;
pub use model::{access_model, access_model_with, AccessModelSolver, AccessResult};
pub use sim::{
    access_layout, ring_group, tree_weights, AccessLayout, AccessSimSolver, TreeRouting, G_AP,
    G_STATION,
};

/// Smallest grid side (one full ring around the gateway).
pub const MIN_GRID: usize = 3;
/// Largest grid side (at most 10 rings; metric names are static).
pub const MAX_GRID: usize = 21;

/// Gateway coordinate (row = column, 0-based) on an n×n grid: the centre
/// for odd n; for even n the upper-left of the four central MRs, n/2 − 1.
/// The four are equivalent (a rotation or reflection of the grid maps one
/// onto another, ring for ring), so the choice only names the MRs; this one
/// is the one for which (7.3)'s min(x, y), read with 0-based coordinates,
/// is the number of complete rings (W-54), and the one formula serves both
/// parities.
pub fn gateway(n: usize) -> usize {
    (n - 1) / 2
}

/// Number of rings h_max: the Chebyshev distance from the gateway to the
/// far corner, (n − 1)/2 for odd n and n/2 for even n.
pub fn h_max(n: usize) -> usize {
    n - 1 - gateway(n)
}

/// N_i, the number of MRs i hops from the gateway, by (7.2)/(7.3): 8i while
/// the ring is complete (i <= min(x, y) = gateway(n), every ring of an odd
/// grid, (7.2)); otherwise 2n − 1, the L-shaped last ring i = n/2 of an even
/// grid (W-54). Tested against enumeration for every n in 3..=21.
pub fn ring_size(n: usize, i: usize) -> usize {
    if i <= gateway(n) {
        8 * i
    } else {
        2 * n - 1
    }
}
const MAX_STATIONS: usize = 1000;
const MAX_K: usize = 100_000;

const DELAY_RING: [&str; 10] = [
    "delay_ring1",
    "delay_ring2",
    "delay_ring3",
    "delay_ring4",
    "delay_ring5",
    "delay_ring6",
    "delay_ring7",
    "delay_ring8",
    "delay_ring9",
    "delay_ring10",
];
const LOSS_RING: [&str; 10] = [
    "P_loss_ring1",
    "P_loss_ring2",
    "P_loss_ring3",
    "P_loss_ring4",
    "P_loss_ring5",
    "P_loss_ring6",
    "P_loss_ring7",
    "P_loss_ring8",
    "P_loss_ring9",
    "P_loss_ring10",
];
const LOAD_RING: [&str; 10] = [
    "load_ring1",
    "load_ring2",
    "load_ring3",
    "load_ring4",
    "load_ring5",
    "load_ring6",
    "load_ring7",
    "load_ring8",
    "load_ring9",
    "load_ring10",
];
/// Model-only metrics that say where an entity is past saturation and how
/// its output was obtained: offered loads λ/μ of a station and an AP,
/// `output_*` = 0 for the infinite MMPP^e/M/1 output (W-57) and 1 for the
/// exact finite-queue output, and the count of finite-queue outputs over
/// all entities (MRs included).
const SATURATION_METRICS: [&str; 5] = [
    "rho_station",
    "rho_ap",
    "output_station",
    "output_ap",
    "finite_outputs",
];
const N_EQ_RING: [&str; 10] = [
    "N_eq_ring1",
    "N_eq_ring2",
    "N_eq_ring3",
    "N_eq_ring4",
    "N_eq_ring5",
    "N_eq_ring6",
    "N_eq_ring7",
    "N_eq_ring8",
    "N_eq_ring9",
    "N_eq_ring10",
];
const N_RING: [&str; 10] = [
    "N_ring1", "N_ring2", "N_ring3", "N_ring4", "N_ring5", "N_ring6", "N_ring7", "N_ring8",
    "N_ring9", "N_ring10",
];
const MU_RING: [&str; 10] = [
    "mu_mr_ring1",
    "mu_mr_ring2",
    "mu_mr_ring3",
    "mu_mr_ring4",
    "mu_mr_ring5",
    "mu_mr_ring6",
    "mu_mr_ring7",
    "mu_mr_ring8",
    "mu_mr_ring9",
    "mu_mr_ring10",
];

macro_rules! access_params {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            grid: f64,
            stations: f64,
            #[serde(rename = "K_s")]
            k_s: f64,
            #[serde(rename = "K_a")]
            k_a: f64,
            #[serde(rename = "K_r")]
            k_r: f64,
            t_wlan: f64,
            t_mesh: f64,
            p_station: f64,
            p_ap: f64,
            p_mr: Vec<f64>,
            phi1: f64,
            phi2: f64,
            lambda1: f64,
            lambda2: f64,
            #[serde(default)]
            source: Option<String>,
            $(#[serde(default)] $field: $ty,)*
        }
        impl $name {
            fn access(&self) -> Result<Access, SolveError> {
                Access::validate(
                    self.grid, self.stations, [self.k_s, self.k_a, self.k_r],
                    self.t_wlan, self.t_mesh, self.p_station, self.p_ap, &self.p_mr,
                    source_mmpp(self.phi1, self.phi2, self.lambda1, self.lambda2)?,
                    source_kind(self.source.as_deref())?,
                )
            }
        }
    };
}

access_params!(ModelParams {
    output: Option<String>,
});
access_params!(SimParams {
    routing: Option<String>,
    service: Option<String>,
    replications: Option<f64>,
    warmup: Option<f64>,
    horizon: Option<f64>,
});

/// A validated ch.7 network.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub n: usize,
    /// Number of rings h_max ([`h_max`]).
    pub rings: usize,
    /// Stations per WLAN (N).
    pub stations: usize,
    pub k_s: usize,
    pub k_a: usize,
    pub k_r: usize,
    pub t_wlan: f64,
    pub t_mesh: f64,
    pub p_station: f64,
    pub p_ap: f64,
    /// Per ring, ring 1 outward.
    pub p_mr: Vec<f64>,
    pub mmpp: Mmpp2,
    pub source: SourceKind,
}

impl Access {
    #[allow(clippy::too_many_arguments)]
    fn validate(
        grid: f64,
        stations: f64,
        k: [f64; 3],
        t_wlan: f64,
        t_mesh: f64,
        p_station: f64,
        p_ap: f64,
        p_mr: &[f64],
        mmpp: Mmpp2,
        source: SourceKind,
    ) -> Result<Access, SolveError> {
        let n = count("grid", grid, MIN_GRID as u64)?;
        if n > MAX_GRID {
            return Err(SolveError::param(
                "grid",
                format!("must be <= {MAX_GRID} (at most 10 rings), got {n}"),
            ));
        }
        let rings = h_max(n);
        let stations = count("stations", stations, 1)?;
        if stations > MAX_STATIONS {
            return Err(SolveError::param(
                "stations",
                format!("must be <= {MAX_STATIONS}"),
            ));
        }
        let mut ks = [0usize; 3];
        for (i, name) in ["K_s", "K_a", "K_r"].iter().enumerate() {
            ks[i] = count(name, k[i], 1)?;
            if ks[i] > MAX_K {
                return Err(SolveError::param(
                    name,
                    format!("must be <= {MAX_K} (size of the finite chain)"),
                ));
            }
        }
        if p_mr.len() < rings {
            return Err(SolveError::param(
                "p_mr",
                format!(
                    "needs one probability per ring ({rings} rings on a {n}x{n} grid), got {}",
                    p_mr.len()
                ),
            ));
        }
        let p_mr = p_mr[..rings]
            .iter()
            .map(|&p| access_probability("p_mr", p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Access {
            n,
            rings,
            stations,
            k_s: ks[0],
            k_a: ks[1],
            k_r: ks[2],
            t_wlan: positive("t_wlan", t_wlan)?,
            t_mesh: positive("t_mesh", t_mesh)?,
            p_station: access_probability("p_station", p_station)?,
            p_ap: access_probability("p_ap", p_ap)?,
            p_mr,
            mmpp,
            source,
        })
    }

    /// Ring (Chebyshev distance to the gateway) of MR i, row-major; 0 = gateway.
    pub fn ring(&self, i: usize) -> usize {
        let c = gateway(self.n);
        let (r, col) = (i / self.n, i % self.n);
        r.abs_diff(c).max(col.abs_diff(c))
    }

    /// N_i by enumeration (checked against (7.2)/(7.3) by `wlan_access.config`).
    pub fn ring_sizes(&self) -> Vec<usize> {
        let mut v = vec![0; self.rings + 1];
        for i in 0..self.n * self.n {
            v[self.ring(i)] += 1;
        }
        v
    }

    /// The ring of every MR as text, one grid row per line, `G` for the
    /// gateway (docs/models/wireless.md shows the 5×5 and 6×6 maps).
    pub fn ring_map(&self) -> String {
        let mut s = String::new();
        for r in 0..self.n {
            let row: Vec<String> = (0..self.n)
                .map(|c| match self.ring(r * self.n + c) {
                    0 => "G".to_string(),
                    k => k.to_string(),
                })
                .collect();
            s.push_str(&row.join(" "));
            s.push('\n');
        }
        s
    }

    /// 8-neighbours of MR i.
    pub fn neighbours(&self, i: usize) -> Vec<usize> {
        let n = self.n as isize;
        let (r, c) = ((i / self.n) as isize, (i % self.n) as isize);
        let mut v = Vec::with_capacity(8);
        for dr in -1..=1 {
            for dc in -1..=1 {
                let (rr, cc) = (r + dr, c + dc);
                if (dr, dc) != (0, 0) && (0..n).contains(&rr) && (0..n).contains(&cc) {
                    v.push((rr * n + cc) as usize);
                }
            }
        }
        v
    }

    pub fn mu_station(&self) -> f64 {
        access_rate(self.p_station, self.t_wlan)
    }
    pub fn mu_ap(&self) -> f64 {
        access_rate(self.p_ap, self.t_wlan)
    }
    pub fn mu_mr(&self, ring: usize) -> f64 {
        access_rate(self.p_mr[ring - 1], self.t_mesh)
    }

    /// Default warm-up of the simulation (both fidelities): twice the time a
    /// packet needs to drain through full buffers along the longest path,
    /// K_s/μ_s + K_a/μ_a + Σ_i K_r/μ_r,i, and at least 10 s. Past AP
    /// saturation the buffers fill during the warm-up; a shorter one (the
    /// former quick 5 s, with drain paths of 15–20 s in Figs 7.5–7.8)
    /// measures packets that met half-empty queues and biased the quick
    /// delays 20–50% low.
    pub fn default_warmup(&self) -> f64 {
        let drain = self.k_s as f64 / self.mu_station()
            + self.k_a as f64 / self.mu_ap()
            + (1..=self.rings)
                .map(|i| self.k_r as f64 / self.mu_mr(i))
                .sum::<f64>();
        (2.0 * drain).max(10.0)
    }

    /// The default warm-up is derived from the slot times: when it alone
    /// makes a run too long (issue 32: `t_wlan: 1e308` gave an infinite
    /// warm-up and blamed `horizon`), the error names the slot time behind
    /// the longer drain, `t_wlan` (stations and APs) or `t_mesh` (rings).
    fn check_default_warmup(&self, len: &SimLength, offered: f64) -> Result<(), SolveError> {
        let no_warmup = SimLength {
            warmup: 0.0,
            ..*len
        };
        if len.check_work(offered).is_ok() || no_warmup.check_work(offered).is_err() {
            return Ok(());
        }
        let wlan = self.k_s as f64 / self.mu_station() + self.k_a as f64 / self.mu_ap();
        let mesh: f64 = (1..=self.rings)
            .map(|i| self.k_r as f64 / self.mu_mr(i))
            .sum();
        let (field, t) = if wlan >= mesh {
            ("t_wlan", self.t_wlan)
        } else {
            ("t_mesh", self.t_mesh)
        };
        Err(SolveError::param(
            field,
            format!(
                "{field} = {t:e} s makes the default warm-up (twice the time full buffers take to drain) {:.3e} s, too long for the packet limit of a run; give a smaller {field} or a `warmup`",
                len.warmup
            ),
        ))
    }

    /// The offered load of every entity with a buffer, before any loss: a
    /// station, an AP (its N stations) and one MR of each ring (the traffic
    /// of the WLANs of that ring and the rings beyond, shared by its N_i
    /// MRs), each at most [`super::MAX_LOAD`].
    pub fn check_model(&self) -> Result<(), SolveError> {
        let source = "lambda1, lambda2, phi1, phi2";
        let lam = self.mmpp.mean_rate();
        super::check_load(
            "a station",
            lam / self.mu_station(),
            &format!("{source}, t_wlan and p_station"),
        )?;
        let ap = self.stations as f64 * lam;
        super::check_load(
            "an AP",
            ap / self.mu_ap(),
            &format!("{source}, stations, t_wlan and p_ap"),
        )?;
        let mut beyond = 0.0;
        for i in (1..=self.rings).rev() {
            let n_i = ring_size(self.n, i) as f64;
            beyond += n_i * ap;
            super::check_load(
                &format!("an MR of ring {i}"),
                beyond / n_i / self.mu_mr(i),
                &format!("{source}, stations, grid, t_mesh and p_mr[{}]", i - 1),
            )?;
        }
        Ok(())
    }

    pub fn station_flow(&self) -> Flow {
        match self.source {
            SourceKind::Mmpp => Flow::Mmpp(self.mmpp),
            SourceKind::Poisson => Flow::Poisson(self.mmpp.mean_rate()),
        }
    }
}

fn common_docs() -> Vec<ParamDoc> {
    let mut v = vec![
        ParamDoc {
            name: "grid",
            doc: "side n of the n x n MR grid, 3..=21, odd or even; gateway without WLAN at the centre (odd n) or at the upper-left of the four central MRs, 0-based (n/2-1, n/2-1) (even n, equivalent by symmetry); 8-neighbour links (W-53); N_i by (7.2)/(7.3)",
        },
        ParamDoc {
            name: "stations",
            doc: "stations per WLAN N (>= 1); one AP per non-gateway MR",
        },
        ParamDoc {
            name: "K_s",
            doc: "station buffer incl. the packet in service (>= 1)",
        },
        ParamDoc {
            name: "K_a",
            doc: "AP buffer incl. the packet in service (>= 1)",
        },
        ParamDoc {
            name: "K_r",
            doc: "MR buffer incl. the packet in service (>= 1)",
        },
    ];
    v.extend(super::slot_docs());
    v.extend([
        ParamDoc {
            name: "p_ap",
            doc: "AP access probability per slot, in (0, 1)",
        },
        ParamDoc {
            name: "p_mr",
            doc: "MR access probability per slot for rings 1, 2, ... outward (list, at least one per ring)",
        },
    ]);
    v.extend(mmpp_docs());
    v
}

fn ring_metrics(h: usize) -> Vec<&'static str> {
    let mut m = vec![
        "delay",
        "throughput",
        "D_station",
        "D_ap",
        "P_loss_station",
        "P_loss_ap",
    ];
    m.extend_from_slice(&DELAY_RING[..h]);
    m.extend_from_slice(&LOSS_RING[..h]);
    m.extend_from_slice(&LOAD_RING[..h]);
    m
}

#[cfg(test)]
pub(crate) fn test_access(
    n: usize,
    stations: usize,
    k: usize,
    mmpp: Mmpp2,
    source: SourceKind,
) -> Access {
    Access {
        n,
        rings: h_max(n),
        stations,
        k_s: k,
        k_a: k,
        k_r: k,
        t_wlan: 7.27e-4,
        t_mesh: 1.48e-4,
        p_station: 2.5e-3,
        p_ap: 7e-3,
        p_mr: vec![
            8.2e-2, 7.3e-2, 6.4e-2, 5.5e-2, 5.0e-2, 4.5e-2, 4.0e-2, 3.5e-2, 3.0e-2, 2.5e-2,
        ],
        mmpp,
        source,
    }
}
