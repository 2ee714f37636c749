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
use super::{
    access_probability, access_rate, group_sojourn, mmpp_docs, ratio, service_kind,
    sim_length_docs, source_kind, source_mmpp, Replications, ServiceKind, SimLength, SourceKind,
};
use crate::engines::qnet::{self, Entity, EntityId, Hop, Markov, Source};
use crate::params::{count, parse, positive};
use crate::traffic::mmpp::Mmpp2;
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

/// Largest grid side: the visit ratios come from a dense LU of order n²
/// (441 at n = 21, a few ms). The same bound as ch.7 (`access::MAX_GRID`):
/// both chapters take any side, odd or even, up to 21.
pub const MAX_GRID: usize = 21;
/// Largest number of APs per MR and of stations per AP.
const MAX_PER: usize = 1000;

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
        if !(sigma.is_finite() && sigma > 0.0 && sigma <= 1.0) {
            return Err(SolveError::param(
                "sigma",
                format!("must lie in (0, 1], got {sigma}"),
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

    /// Visit ratios ε = A(I − P)⁻¹ (6.16–6.17, W-44), with A_i the share of
    /// the stations at MR i: MR_i's mean arrival rate is ε_i times the total
    /// rate entering the WMN, and Σε_i = 1/σ.
    pub fn visit_ratios(&self) -> Result<Vec<f64>, SolveError> {
        let c = self.mrs.len();
        let total = self.total_stations() as f64;
        // (I − P)ᵀ εᵀ = Aᵀ.
        let mut m = DMatrix::<f64>::identity(c, c);
        for i in 0..c {
            let nb = self.neighbours(i);
            let w = (1.0 - self.sigma) / nb.len() as f64;
            for j in nb {
                m[(j, i)] -= w;
            }
        }
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

/// Model results (seconds; T_max in packets/s per station).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshResult {
    pub delay: f64,
    pub d_station: f64,
    pub d_ap_up: f64,
    pub d_mr: f64,
    pub d_ap_down: f64,
    pub t_max: f64,
}

/// The §6.2 model. `Ok(None)`: the point is at or past saturation (6.30).
pub fn mesh_model(m: &Mesh, averaging: Averaging) -> Result<Option<MeshResult>, SolveError> {
    let eps = m.visit_ratios()?;
    let (t_max, _) = m.max_throughput(&eps);
    let src = m.station_flow();
    if src.rate() >= t_max {
        return Ok(None);
    }
    let d_station = src.sojourn(m.mu_station())?;
    let out_s = src.departure(m.mu_station())?;
    // AP uplinks: one computation per distinct number of stations per AP.
    let mut kinds: Vec<(usize, f64, Flow, usize)> = Vec::new(); // (stations, D_au, output, APs)
    for mr in &m.mrs {
        if let Some(k) = kinds.iter_mut().find(|k| k.0 == mr.stations) {
            k.3 += mr.aps;
            continue;
        }
        let input = Flow::superpose(&[(out_s, mr.stations as f64)])?;
        let d = input.sojourn(m.mu_ap_up())?;
        kinds.push((mr.stations, d, input.departure(m.mu_ap_up())?, mr.aps));
    }
    let tr = Flow::superpose(&kinds.iter().map(|k| (k.2, k.3 as f64)).collect::<Vec<_>>())?;
    // MRs and their downlinks; MRs with equal ε (grid symmetry) and equal
    // AP count share one computation.
    let mut cache: Vec<(f64, usize, f64, f64)> = Vec::new(); // (eps, aps, D_r, D_ad)
    let mut d_r = Vec::with_capacity(eps.len());
    let mut d_ad = Vec::with_capacity(eps.len());
    for (i, &e) in eps.iter().enumerate() {
        let aps = m.mrs[i].aps;
        let hit = cache
            .iter()
            .find(|c| c.1 == aps && (c.0 - e).abs() <= 1e-13 * e);
        let (dr, dad) = match hit {
            Some(c) => (c.2, c.3),
            None => {
                let input = tr.scaled(e)?;
                let dr = input.sojourn(m.mu_mr())?;
                let down = input.departure(m.mu_mr())?.split(m.sigma / aps as f64);
                let dad = down.sojourn(m.mu_ap_down())?;
                cache.push((e, aps, dr, dad));
                (dr, dad)
            }
        };
        d_r.push(dr);
        d_ad.push(dad);
    }
    let total = m.total_stations() as f64;
    let ap_delay = |st: usize| kinds.iter().find(|k| k.0 == st).map_or(0.0, |k| k.1);
    let (d_ap_up, d_mr, d_ap_down) = match averaging {
        Averaging::Traffic => {
            let up = m
                .mrs
                .iter()
                .map(|mr| (mr.aps * mr.stations) as f64 * ap_delay(mr.stations))
                .sum::<f64>()
                / total;
            let se: f64 = eps.iter().sum();
            let r = eps.iter().zip(&d_r).map(|(e, d)| e * d).sum::<f64>() / se;
            let ad = eps.iter().zip(&d_ad).map(|(e, d)| e * d).sum::<f64>() / se;
            (up, r, ad)
        }
        Averaging::Printed => {
            let aps = m.total_aps() as f64;
            let up = m
                .mrs
                .iter()
                .map(|mr| mr.aps as f64 * ap_delay(mr.stations))
                .sum::<f64>()
                / aps;
            let r = d_r.iter().sum::<f64>() / d_r.len() as f64;
            let ad = m
                .mrs
                .iter()
                .zip(&d_ad)
                .map(|(mr, d)| mr.aps as f64 * d)
                .sum::<f64>()
                / aps;
            (up, r, ad)
        }
    };
    let d_bar = 1.0 / m.sigma;
    // (6.20), transmission terms as printed (W-45).
    let delay = d_bar * m.t_mesh + 4.0 * m.t_wlan + d_ap_up + d_bar * d_mr + d_ap_down + d_station;
    Ok(Some(MeshResult {
        delay,
        d_station,
        d_ap_up,
        d_mr,
        d_ap_down,
        t_max,
    }))
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
        ParamDoc {
            name: "t_wlan",
            doc: "WLAN slot = packet airtime t_l (s, > 0; the model: 1e-9..=1e3, with phi1, phi2 in 1e-6..=1e6/s and lambda1, lambda2 <= 1e9/s)",
        },
        ParamDoc {
            name: "t_mesh",
            doc: "mesh slot = packet airtime t_m (s, > 0; the model: 1e-9..=1e3)",
        },
        ParamDoc {
            name: "p_station",
            doc: "station access probability per slot, in (0, 1)",
        },
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
    ];
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

pub struct MeshModelSolver;

impl Solver for MeshModelSolver {
    fn name(&self) -> &'static str {
        "wlan_mesh.model"
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
        let mut params = common_docs();
        params.push(ParamDoc {
            name: "averaging",
            doc: "`traffic` (default: traffic-weighted means in 6.20, exact for Jackson networks) or `printed` (unweighted means of 6.12)",
        });
        SolverDoc {
            summary: "Wu ch.6 WLANs + WMN: every entity an MMPP/M/1 queue, end-to-end delay (6.20) and maximum throughput (6.30)",
            params,
            metrics: vec!["delay", "D_station", "D_ap_up", "D_mr", "D_ap_down", "T_max"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: ModelParams = parse(params)?;
        let averaging = parse_averaging(p.averaging.as_deref())?;
        super::check_model_scales(p.t_wlan, p.t_mesh, [p.phi1, p.phi2, p.lambda1, p.lambda2])?;
        let m = p.mesh()?;
        let r = match mesh_model(&m, averaging) {
            Ok(Some(r)) => r,
            Ok(None) | Err(SolveError::Unstable(_)) => return Ok(Outcome::saturated()),
            Err(e) => return Err(super::in_user_terms(e, m.t_wlan, m.t_mesh, &m.mmpp)),
        };
        Outcome::new()
            .with("delay", r.delay)
            .with("D_station", r.d_station)
            .with("D_ap_up", r.d_ap_up)
            .with("D_mr", r.d_mr)
            .with("D_ap_down", r.d_ap_down)
            .with("T_max", r.t_max)
            .checked(self.name())
    }
}

/// Configuration quantities of Table 6.2 with their consistency checks.
pub struct MeshConfigSolver;

impl Solver for MeshConfigSolver {
    fn name(&self) -> &'static str {
        "wlan_mesh.config"
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Wu Table 6.2: MRs, APs, stations (per MR and total), derived service rates (6.7), visit-ratio range and sum (= 1/sigma, checked), T_max bounds (6.22-6.29)",
            params: common_docs(),
            metrics: vec![
                "MRs", "APs", "stations", "stations_per_MR_min", "stations_per_MR_max",
                "mu_station", "mu_ap_up", "mu_ap_down", "mu_mr", "eps_min", "eps_max",
                "eps_sum", "T_s", "T_au", "T_r", "T_ad", "T_max",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: ConfigParams = parse(params)?;
        let m = p.mesh()?;
        let eps = m.visit_ratios()?;
        let eps_sum: f64 = eps.iter().sum();
        // Consistency: every packet makes 1/σ MR visits on average (6.19).
        if (eps_sum * m.sigma - 1.0).abs() > 1e-9 {
            return Err(SolveError::Numerical(format!(
                "visit ratios sum to {eps_sum}, not 1/sigma = {}",
                1.0 / m.sigma
            )));
        }
        let per_mr: Vec<usize> = (0..m.mrs.len()).map(|i| m.stations_at(i)).collect();
        let stations: usize = per_mr.iter().sum();
        let (t_max, b) = m.max_throughput(&eps);
        Outcome::new()
            .with("MRs", m.mrs.len() as f64)
            .with("APs", m.total_aps() as f64)
            .with("stations", stations as f64)
            .with(
                "stations_per_MR_min",
                *per_mr.iter().min().unwrap_or(&0) as f64,
            )
            .with(
                "stations_per_MR_max",
                *per_mr.iter().max().unwrap_or(&0) as f64,
            )
            .with("mu_station", m.mu_station())
            .with("mu_ap_up", m.mu_ap_up())
            .with("mu_ap_down", m.mu_ap_down())
            .with("mu_mr", m.mu_mr())
            .with("eps_min", eps.iter().copied().fold(f64::INFINITY, f64::min))
            .with("eps_max", eps.iter().copied().fold(0.0, f64::max))
            .with("eps_sum", eps_sum)
            .with("T_s", b[0])
            .with("T_au", b[1])
            .with("T_r", b[2])
            .with("T_ad", b[3])
            .with("T_max", t_max)
            .checked(self.name())
    }
}

/// Entity layout of the simulated network: stations, AP uplinks, MRs, AP downlinks.
pub struct MeshLayout {
    pub scenario: qnet::Scenario,
    pub routing: Markov,
    /// Offered load of the busiest entity (slotted capacity P/t; exponential mu).
    pub max_rho: f64,
}

pub const G_STATION: usize = 0;
pub const G_AP_UP: usize = 1;
pub const G_MR: usize = 2;
pub const G_AP_DOWN: usize = 3;

/// Builds the simulated network. Offered loads come from the routing
/// equations (the visit ratios), not from the model.
pub fn mesh_layout(m: &Mesh, service: ServiceKind) -> Result<MeshLayout, SolveError> {
    let n_st = m.total_stations();
    let n_ap = m.total_aps();
    let c = m.mrs.len();
    let (ap0, mr0, ad0) = (n_st, n_st + n_ap, n_st + n_ap + c);
    let ent = |slot: f64, p: f64, g: usize| Entity {
        slot,
        p,
        mu: access_rate(p, slot),
        capacity: u32::MAX,
        group: g as u16,
    };
    let mut entities = Vec::with_capacity(n_st + 2 * n_ap + c);
    let mut table: Vec<Vec<(Hop, f64)>> = Vec::with_capacity(n_st + 2 * n_ap + c);
    let mut sources = Vec::with_capacity(n_st);
    let (lam, phi) = match m.source {
        SourceKind::Mmpp => ([m.mmpp.lambda1, m.mmpp.lambda2], [m.mmpp.phi1, m.mmpp.phi2]),
        SourceKind::Poisson => ([m.mmpp.mean_rate(); 2], [0.0, 0.0]),
    };
    let mut ap = 0;
    let mut first_ap = Vec::with_capacity(c);
    for mr in &m.mrs {
        first_ap.push(ap);
        for _ in 0..mr.aps {
            for _ in 0..mr.stations {
                sources.push(Source {
                    entity: EntityId(entities.len() as u32),
                    lambda: lam,
                    phi,
                    class: 0,
                });
                entities.push(ent(m.t_wlan, m.p_station, G_STATION));
                table.push(vec![(Hop::To(EntityId((ap0 + ap) as u32)), 1.0)]);
            }
            ap += 1;
        }
    }
    for (i, mr) in m.mrs.iter().enumerate() {
        for _ in 0..mr.aps {
            entities.push(ent(m.t_wlan, m.p_ap_up, G_AP_UP));
            table.push(vec![(Hop::To(EntityId((mr0 + i) as u32)), 1.0)]);
        }
    }
    for (i, mr) in m.mrs.iter().enumerate() {
        entities.push(ent(m.t_mesh, m.p_mr, G_MR));
        let nb = m.neighbours(i);
        let mut row = Vec::with_capacity(mr.aps + nb.len());
        for a in 0..mr.aps {
            row.push((
                Hop::To(EntityId((ad0 + first_ap[i] + a) as u32)),
                m.sigma / mr.aps as f64,
            ));
        }
        for j in &nb {
            row.push((
                Hop::To(EntityId((mr0 + j) as u32)),
                (1.0 - m.sigma) / nb.len() as f64,
            ));
        }
        table.push(row);
    }
    for _ in 0..n_ap {
        entities.push(ent(m.t_wlan, m.p_ap_down, G_AP_DOWN));
        table.push(vec![(Hop::Exit, 1.0)]);
    }
    // Offered loads from the routing equations.
    let eps = m.visit_ratios()?;
    let lam_bar = m.mmpp.mean_rate();
    let cap = |p: f64, t: f64| match service {
        ServiceKind::Slotted => p / t,
        ServiceKind::Exponential => access_rate(p, t),
    };
    let total = n_st as f64 * lam_bar;
    let mut max_rho = lam_bar / cap(m.p_station, m.t_wlan);
    for (i, mr) in m.mrs.iter().enumerate() {
        max_rho = max_rho
            .max(mr.stations as f64 * lam_bar / cap(m.p_ap_up, m.t_wlan))
            .max(eps[i] * total / cap(m.p_mr, m.t_mesh))
            .max(m.sigma * eps[i] * total / mr.aps as f64 / cap(m.p_ap_down, m.t_wlan));
    }
    Ok(MeshLayout {
        scenario: qnet::Scenario {
            entities,
            sources,
            groups: 4,
            classes: 1,
        },
        routing: Markov::new(&table),
        max_rho,
    })
}

pub struct MeshSimSolver;

const SIM_METRICS: [&str; 6] = [
    "delay",
    "D_station",
    "D_ap_up",
    "D_mr",
    "D_ap_down",
    "throughput",
];

impl Solver for MeshSimSolver {
    fn name(&self) -> &'static str {
        "wlan_mesh.sim"
    }
    fn version(&self) -> u32 {
        // 2: qnet timer heaps and one-log service draws (new random streams).
        // 3: qnet splits the entity timers into fast and slow heaps, which
        // orders events at equal times differently (frequent with slotted
        // service on large networks).
        // 4: qnet draws each service time one service ahead, which changes
        // the order of an entity's service and routing draws.
        // 5: a mean over no packets is undefined with a note (was 0), and a
        // horizon expecting no packet is refused (issue 32); every run in
        // which each metric saw a packet gives the results of version 4.
        5
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = common_docs();
        params.extend(sim_length_docs());
        params.push(ParamDoc {
            name: "max_load",
            doc: "simulate only if the busiest queue's offered load (from the routing equations) is <= max_load, in (0, 1]; default 1. Above 1 the outcome is `saturated`; between max_load and 1 it is `undefined` (outside the simulated range)",
        });
        SolverDoc {
            summary: "Wu ch.6 WLANs + WMN, packet-level simulation on the qnet engine (SIM-6): random-walk routing with exit probability sigma, infinite FIFO queues, slotted or exponential service",
            params,
            metrics: SIM_METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SimParams = parse(params)?;
        let m = p.mesh()?;
        let service = service_kind(p.service.as_deref())?;
        let len = SimLength::resolve(
            p.replications,
            p.warmup,
            p.horizon,
            ctx.fidelity,
            SimLength {
                replications: 5,
                warmup: 10.0,
                horizon: 60.0,
            },
            SimLength {
                replications: 3,
                warmup: 5.0,
                horizon: 15.0,
            },
        )?;
        let max_load = match p.max_load {
            Some(x) if x.is_finite() && x > 0.0 && x <= 1.0 => x,
            Some(x) => {
                return Err(SolveError::param(
                    "max_load",
                    format!("must lie in (0, 1], got {x}"),
                ))
            }
            None => 1.0,
        };
        let layout = mesh_layout(&m, service)?;
        if layout.max_rho >= 1.0 {
            return Ok(Outcome::saturated());
        }
        if layout.max_rho > max_load {
            return Ok(Outcome::undefined(format!(
                "not simulated: the busiest queue's offered load {:.3} exceeds max_load = {max_load}",
                layout.max_rho
            )));
        }
        let offered = m.total_stations() as f64 * m.mmpp.mean_rate();
        len.check_work(offered)?;
        len.check_not_empty(offered)?;
        simulate(&layout, service, len, ctx)
    }
}

fn simulate(
    layout: &MeshLayout,
    service: ServiceKind,
    len: SimLength,
    ctx: &TaskContext,
) -> Result<Outcome, SolveError> {
    let mut reps = Replications::new(&SIM_METRICS);
    let run_len = qnet::RunLength {
        warmup: len.warmup,
        horizon: len.horizon,
        max_packets: 20_000_000,
    };
    for rep in 0..len.replications {
        ctx.check_cancel()?;
        let c = service.run(&layout.scenario, &layout.routing, run_len, ctx, rep)?;
        if c.stop != qnet::Stop::Completed {
            return Ok(Outcome::saturated());
        }
        let cl = c.classes[0];
        reps.push(&[
            ratio(cl.delay_sum, cl.delivered),
            group_sojourn(&c, G_STATION),
            group_sojourn(&c, G_AP_UP),
            group_sojourn(&c, G_MR),
            group_sojourn(&c, G_AP_DOWN),
            cl.delivered as f64 / c.window,
        ]);
    }
    reps.into_outcome(&len, "wlan_mesh.sim")
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
