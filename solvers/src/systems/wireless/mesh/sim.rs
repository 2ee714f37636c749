//! The simulator (`wlan_mesh.sim`): the same network on `engines::qnet`
//! with random-walk routing.

use super::{common_docs, Mesh, SimParams};
use crate::engines::qnet::{self, Entity, EntityId, Hop, Markov, Source};
use crate::params::parse;
use crate::systems::wireless::{
    access_rate, group_sojourn, ratio, service_kind, sim_length_docs, Replications, ServiceKind,
    SimLength, SourceKind,
};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

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
            split: None,
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
