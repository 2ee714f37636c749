//! The §6.2 model: MMPP/M/1 entities, visit ratios, T_max, and its solver
//! `wlan_mesh.model`.

use super::{common_docs, parse_averaging, Averaging, Mesh, ModelParams};
use crate::params::parse;
use crate::systems::wireless::flow::Flow;
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

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
        crate::systems::wireless::check_model_scales(
            p.t_wlan,
            p.t_mesh,
            [p.phi1, p.phi2, p.lambda1, p.lambda2],
        )?;
        let m = p.mesh()?;
        let r = match mesh_model(&m, averaging) {
            Ok(Some(r)) => r,
            Ok(None) | Err(SolveError::Unstable(_)) => return Ok(Outcome::saturated()),
            Err(e) => {
                return Err(crate::systems::wireless::in_user_terms(
                    e, m.t_wlan, m.t_mesh, &m.mmpp,
                ))
            }
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
