//! Wu ch.6: WLANs interconnected by a WMN (catalogue §3.4).
//!
//! The model (§6.2): every entity is an MMPP/M/1 queue. Stations receive
//! MMPP_s; AP uplinks the superposition of their stations' fitted departure
//! processes; the WMN total MMPP_tr is the superposition of all uplink
//! outputs; MR_i receives MMPP_tr scaled by its visit ratio ε_i of
//! ε = A(I − P)⁻¹ (6.15–6.17, W-44), ⌊ε_i⌋ copies plus a split when ε_i > 1;
//! AP downlinks receive MR_i's fitted output split by σ/N_i^a (W-46). The
//! end-to-end delay is (6.20) with d̄ = 1/σ (6.19); the per-entity means enter
//! it traffic-weighted by default (exact for a Jackson network) or
//! unweighted as printed in (6.12) (`averaging: printed`). T_max is
//! (6.21–6.30) with W-46.
//!
//! The simulator runs the same network on `engines::qnet`: one queue per
//! station, AP uplink, MR and AP downlink, random-walk routing with exit
//! probability σ to a uniform AP of the current MR, else to a uniform
//! 4-neighbour (W-47).

use super::flow::Flow;
use super::{access_probability, access_rate, mmpp_docs, source_kind, source_mmpp, SourceKind};
use crate::params::{count, positive};
use crate::traffic::mmpp::Mmpp2;
use crate::{ParamDoc, SolveError};
use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

mod config;
mod model;
mod sim;

pub use config::MeshConfigSolver;
pub use model::{mesh_model, MeshModelSolver, MeshResult};
pub use sim::{
    mesh_layout, mesh_relaxation, mesh_split, mesh_whole_warmup, rbm_relaxation, MeshLayout,
    MeshSimSolver, G_AP_DOWN, G_AP_UP, G_MR, G_STATION,
};

/// Largest grid side: the visit ratios come from a dense LU of order n²
/// (441 at n = 21, a few ms). The same bound as ch.7 (`access::MAX_GRID`):
/// both chapters take any side, odd or even, up to 21.
pub const MAX_GRID: usize = 21;
/// Largest number of APs per MR and of stations per AP.
const MAX_PER: usize = 1000;
/// Smallest exit probability `sigma`: 10⁶ MR visits per packet on average.
const MIN_SIGMA: f64 = 1e-6;

/// One entry of `mr_types`: `count` MRs with `aps` APs of `stations` stations each.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MrTypeRaw {
    count: f64,
    aps: f64,
    stations: f64,
}

macro_rules! mesh_params {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            grid: f64,
            sigma: f64,
            mr_types: Vec<MrTypeRaw>,
            t_wlan: f64,
            t_mesh: f64,
            p_station: f64,
            p_ap_up: f64,
            p_ap_down: f64,
            p_mr: f64,
            phi1: f64,
            phi2: f64,
            lambda1: f64,
            lambda2: f64,
            #[serde(default)]
            source: Option<String>,
            $(#[serde(default)] $field: $ty,)*
        }
        impl $name {
            fn mesh(&self) -> Result<Mesh, SolveError> {
                Mesh::validate(
                    self.grid, self.sigma, &self.mr_types, self.t_wlan, self.t_mesh,
                    [self.p_station, self.p_ap_up, self.p_ap_down, self.p_mr],
                    source_mmpp(self.phi1, self.phi2, self.lambda1, self.lambda2)?,
                    source_kind(self.source.as_deref())?,
                )
            }
        }
    };
}

mesh_params!(ModelParams { averaging: Option<String> });
mesh_params!(ConfigParams {});
mesh_params!(SimParams {
    service: Option<String>,
    replications: Option<f64>,
    warmup: Option<f64>,
    horizon: Option<f64>,
    max_load: Option<f64>,
});

/// Configuration of one MR: its APs and the stations per AP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrConf {
    pub aps: usize,
    pub stations: usize,
}

/// A validated ch.6 network.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    pub n: usize,
    pub sigma: f64,
    /// Per MR, row-major.
    pub mrs: Vec<MrConf>,
    pub t_wlan: f64,
    pub t_mesh: f64,
    pub p_station: f64,
    pub p_ap_up: f64,
    pub p_ap_down: f64,
    pub p_mr: f64,
    pub mmpp: Mmpp2,
    pub source: SourceKind,
}

/// How the per-entity delays are averaged in (6.20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Averaging {
    /// Uplinks by station counts, MRs by ε_i, downlinks by σε_i/N_i^a.
    Traffic,
    /// Unweighted means over the entities, as printed in (6.12).
    Printed,
}

impl Mesh {
    #[allow(clippy::too_many_arguments)]
    fn validate(
        grid: f64,
        sigma: f64,
        types: &[MrTypeRaw],
        t_wlan: f64,
        t_mesh: f64,
        p: [f64; 4],
        mmpp: Mmpp2,
        source: SourceKind,
    ) -> Result<Mesh, SolveError> {
        let n = count("grid", grid, 2)?;
        if n > MAX_GRID {
            return Err(SolveError::param(
                "grid",
                format!("must be <= {MAX_GRID} (dense visit-ratio solve), got {n}"),
            ));
        }
        // A packet makes 1/sigma MR visits on average: below 1e-6 the
        // visit ratios (about 1/sigma each) lose the precision their sum
        // check needs (sigma = 1e-9 failed it by 2e-8).
        if !(sigma.is_finite() && (MIN_SIGMA..=1.0).contains(&sigma)) {
            return Err(SolveError::param(
                "sigma",
                format!(
                    "must lie in [{MIN_SIGMA:e}, 1] (a packet makes 1/sigma MR visits on average), got {}",
                    crate::params::show(sigma)
                ),
            ));
        }
        if types.is_empty() {
            return Err(SolveError::param(
                "mr_types",
                "must list at least one MR type",
            ));
        }
        let mut mrs = Vec::with_capacity(n * n);
        for t in types {
            let c = count("mr_types.count", t.count, 0)?;
            let aps = count("mr_types.aps", t.aps, 1)?;
            let stations = count("mr_types.stations", t.stations, 1)?;
            if aps > MAX_PER || stations > MAX_PER {
                return Err(SolveError::param(
                    "mr_types",
                    format!("aps and stations must be <= {MAX_PER}"),
                ));
            }
            if mrs.len() + c > n * n {
                return Err(SolveError::param(
                    "mr_types",
                    format!("counts add up to more than grid² = {}", n * n),
                ));
            }
            mrs.extend(std::iter::repeat_n(MrConf { aps, stations }, c));
        }
        if mrs.len() != n * n {
            return Err(SolveError::param(
                "mr_types",
                format!("counts add up to {}, not grid² = {}", mrs.len(), n * n),
            ));
        }
        Ok(Mesh {
            n,
            sigma,
            mrs,
            t_wlan: positive("t_wlan", t_wlan)?,
            t_mesh: positive("t_mesh", t_mesh)?,
            p_station: access_probability("p_station", p[0])?,
            p_ap_up: access_probability("p_ap_up", p[1])?,
            p_ap_down: access_probability("p_ap_down", p[2])?,
            p_mr: access_probability("p_mr", p[3])?,
            mmpp,
            source,
        })
    }

    pub fn mu_station(&self) -> f64 {
        access_rate(self.p_station, self.t_wlan)
    }
    pub fn mu_ap_up(&self) -> f64 {
        access_rate(self.p_ap_up, self.t_wlan)
    }
    pub fn mu_ap_down(&self) -> f64 {
        access_rate(self.p_ap_down, self.t_wlan)
    }
    pub fn mu_mr(&self) -> f64 {
        access_rate(self.p_mr, self.t_mesh)
    }

    pub fn stations_at(&self, i: usize) -> usize {
        self.mrs[i].aps * self.mrs[i].stations
    }

    pub fn total_stations(&self) -> usize {
        (0..self.mrs.len()).map(|i| self.stations_at(i)).sum()
    }

    pub fn total_aps(&self) -> usize {
        self.mrs.iter().map(|m| m.aps).sum()
    }

    /// 4-neighbours of MR i (N, S, W, E; no wrap-around, W-47).
    pub fn neighbours(&self, i: usize) -> Vec<usize> {
        let n = self.n;
        let (r, c) = (i / n, i % n);
        let mut v = Vec::with_capacity(4);
        if r > 0 {
            v.push(i - n);
        }
        if r + 1 < n {
            v.push(i + n);
        }
        if c > 0 {
            v.push(i - 1);
        }
        if c + 1 < n {
            v.push(i + 1);
        }
        v
    }

    /// I − P, P the routing walk between MRs: to each neighbour with
    /// probability (1 − σ)/(its number of neighbours).
    pub fn i_minus_p(&self) -> DMatrix<f64> {
        let c = self.mrs.len();
        let mut m = DMatrix::<f64>::identity(c, c);
        for i in 0..c {
            let nb = self.neighbours(i);
            let w = (1.0 - self.sigma) / nb.len() as f64;
            for j in nb {
                m[(i, j)] -= w;
            }
        }
        m
    }

    /// Visit ratios ε = A(I − P)⁻¹ (6.16–6.17, W-44), with A_i the share of
    /// the stations at MR i: MR_i's mean arrival rate is ε_i times the total
    /// rate entering the WMN, and Σε_i = 1/σ.
    pub fn visit_ratios(&self) -> Result<Vec<f64>, SolveError> {
        let c = self.mrs.len();
        let total = self.total_stations() as f64;
        // (I − P)ᵀ εᵀ = Aᵀ.
        let m = self.i_minus_p().transpose();
        let a = DVector::from_iterator(c, (0..c).map(|i| self.stations_at(i) as f64 / total));
        let eps = m
            .lu()
            .solve(&a)
            .ok_or_else(|| SolveError::Numerical("I - P is singular".into()))?;
        Ok(eps.iter().copied().collect())
    }

    /// Traffic generated by one station.
    pub fn station_flow(&self) -> Flow {
        match self.source {
            SourceKind::Mmpp => Flow::Mmpp(self.mmpp),
            SourceKind::Poisson => Flow::Poisson(self.mmpp.mean_rate()),
        }
    }

    /// Maximum throughput (6.21–6.30, W-46) in mean station rate, and the
    /// bounds of each entity kind [T_s, T_au, T_r, T_ad].
    pub fn max_throughput(&self, eps: &[f64]) -> (f64, [f64; 4]) {
        let total = self.total_stations() as f64;
        let t_s = self.mu_station();
        let t_au = self
            .mrs
            .iter()
            .map(|m| self.mu_ap_up() / m.stations as f64)
            .fold(f64::INFINITY, f64::min);
        let t_r = eps
            .iter()
            .map(|e| self.mu_mr() / (e * total))
            .fold(f64::INFINITY, f64::min);
        let t_ad = eps
            .iter()
            .zip(&self.mrs)
            .map(|(e, m)| self.mu_ap_down() / (self.sigma * e * total / m.aps as f64))
            .fold(f64::INFINITY, f64::min);
        (t_s.min(t_au).min(t_r).min(t_ad), [t_s, t_au, t_r, t_ad])
    }
}

fn common_docs() -> Vec<ParamDoc> {
    let mut v = vec![
        ParamDoc {
            name: "grid",
            doc: "side n of the n x n MR grid (2..=21, odd or even: no gateway in ch.6), 4-neighbour links (W-47)",
        },
        ParamDoc {
            name: "sigma",
            doc: "probability that a packet leaving an MR exits to one of its APs, in (0, 1]",
        },
        ParamDoc {
            name: "mr_types",
            doc: "list of {count, aps, stations}: MR types assigned in row-major order; stations per AP; counts add up to grid²",
        },
    ];
    v.extend(super::slot_docs());
    v.extend([
        ParamDoc {
            name: "p_ap_up",
            doc: "AP uplink access probability per slot, in (0, 1)",
        },
        ParamDoc {
            name: "p_ap_down",
            doc: "AP downlink access probability per slot, in (0, 1)",
        },
        ParamDoc {
            name: "p_mr",
            doc: "MR access probability per slot, in (0, 1)",
        },
    ]);
    v.extend(mmpp_docs());
    v
}

fn parse_averaging(s: Option<&str>) -> Result<Averaging, SolveError> {
    match s.unwrap_or("traffic") {
        "traffic" => Ok(Averaging::Traffic),
        "printed" => Ok(Averaging::Printed),
        other => Err(SolveError::param(
            "averaging",
            format!("must be `traffic` or `printed`, got `{other}`"),
        )),
    }
}

impl Mesh {
    /// A mesh with the Table 6.2 radio parameters (slot times and success
    /// probabilities of Figs 6.3–6.4), for tests and benchmarks.
    pub fn with_table_6_2_radio(
        n: usize,
        sigma: f64,
        mrs: Vec<MrConf>,
        mmpp: Mmpp2,
        source: SourceKind,
    ) -> Mesh {
        Mesh {
            n,
            sigma,
            mrs,
            t_wlan: 7.27e-4,
            t_mesh: 1.48e-4,
            p_station: 9e-3,
            p_ap_up: 2e-2,
            p_ap_down: 4e-2,
            p_mr: 6e-2,
            mmpp,
            source,
        }
    }

    /// The benchmark network: 9×9 Case 1 (3 APs × 5 stations per MR),
    /// σ = 0.1, φ = (0.09, 0.06), λ_s2 = 0 and the given λ_s1.
    pub fn bench_case1(lambda1: f64) -> Result<Mesh, SolveError> {
        Ok(Mesh::with_table_6_2_radio(
            9,
            0.1,
            vec![
                MrConf {
                    aps: 3,
                    stations: 5
                };
                81
            ],
            Mmpp2::new(0.09, 0.06, lambda1, 0.0)?,
            SourceKind::Mmpp,
        ))
    }
}
