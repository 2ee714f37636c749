//! Table 6.2's configuration quantities (`wlan_mesh.config`).

use super::{common_docs, ConfigParams};
use crate::params::parse;
use crate::{Kind, Outcome, SolveError, Solver, SolverDoc, TaskContext};

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
        crate::systems::wireless::check_model_scales(
            p.t_wlan,
            p.t_mesh,
            [p.phi1, p.phi2, p.lambda1, p.lambda2],
        )?;
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
