//! Table 7.2's configuration quantities (`wlan_access.config`).

use super::{common_docs, gateway, ring_size, ModelParams, MU_RING, N_EQ_RING, N_RING};
use crate::params::parse;
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

/// Configuration quantities of Table 7.2 with their consistency checks.
pub struct AccessConfigSolver;

impl Solver for AccessConfigSolver {
    fn name(&self) -> &'static str {
        "wlan_access.config"
    }
    fn version(&self) -> u32 {
        // 2: even grids; N_eq_ring<i> ((7.2)/(7.3)) and the gateway's
        // coordinates beside the enumerated N_ring<i> (wu-7.3-opt).
        2
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut metrics = vec![
            "MRs",
            "WLANs",
            "stations",
            "rings",
            "gateway_row",
            "gateway_col",
            "mu_station",
            "mu_ap",
        ];
        metrics.extend_from_slice(&N_RING);
        metrics.extend_from_slice(&N_EQ_RING);
        metrics.extend_from_slice(&MU_RING);
        let mut params = common_docs();
        params.push(ParamDoc {
            name: "output",
            doc: "accepted so that a wlan_access.model parameter set can be passed unchanged (`auto` or `finite`); no effect on the configuration",
        });
        SolverDoc {
            summary: "Wu Table 7.2: rings N_i by enumeration (checked against (7.2)/(7.3)), WLANs and stations (checked against the ring sums), derived service rates per ring (6.7)",
            params,
            metrics,
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: ModelParams = parse(params)?;
        crate::systems::wireless::check_model_scales(
            p.t_wlan,
            p.t_mesh,
            [p.phi1, p.phi2, p.lambda1, p.lambda2],
        )?;
        let a = p.access()?;
        let sizes = a.ring_sizes();
        for (i, &s) in sizes.iter().enumerate().skip(1) {
            if s != ring_size(a.n, i) {
                return Err(SolveError::Numerical(format!(
                    "ring {i} has {s} MRs by enumeration, not N_i = {} ((7.2)/(7.3))",
                    ring_size(a.n, i)
                )));
            }
        }
        let wlans: usize = sizes[1..].iter().sum();
        if wlans != a.n * a.n - 1 {
            return Err(SolveError::Numerical(format!(
                "rings hold {wlans} MRs, not n² − 1 = {}",
                a.n * a.n - 1
            )));
        }
        let mut o = Outcome::new()
            .with("MRs", (a.n * a.n) as f64)
            .with("WLANs", wlans as f64)
            .with("stations", (wlans * a.stations) as f64)
            .with("rings", a.rings as f64)
            .with("gateway_row", gateway(a.n) as f64)
            .with("gateway_col", gateway(a.n) as f64)
            .with("mu_station", a.mu_station())
            .with("mu_ap", a.mu_ap());
        for i in 1..=a.rings {
            o = o
                .with(N_RING[i - 1], sizes[i] as f64)
                .with(N_EQ_RING[i - 1], ring_size(a.n, i) as f64)
                .with(MU_RING[i - 1], a.mu_mr(i));
        }
        o.checked(self.name())
    }
}
