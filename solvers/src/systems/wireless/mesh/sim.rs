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
    /// Relaxation time of the mesh (the largest over the MRs and AP
    /// downlinks), [`mesh_relaxation`].
    pub relax: f64,
    /// Stations and AP uplinks: the entities no packet returns to, which a
    /// split warm-up runs alone ([`mesh_split`]).
    pub upstream: Vec<EntityId>,
}

/// The split warm-up of a ch.6 run with warm-up `warmup`
/// (docs/models/wireless.md, "Split warm-up, second attempt"): the whole
/// network runs for the last X seconds of it, X = [`mesh_whole_warmup`];
/// before, only the stations and AP uplinks. `None` (no split) when X ≥
/// `warmup`.
pub fn mesh_split(layout: &MeshLayout, warmup: f64, default_warmup: f64) -> Option<qnet::Split> {
    let x = mesh_whole_warmup(layout, default_warmup);
    (x < warmup).then(|| qnet::Split {
        upstream: layout.upstream.clone(),
        start: warmup - x,
    })
}

/// X of [`mesh_split`]: how long the whole network runs before measurement,
/// max(`default_warmup`, the solver's default at the task's fidelity, and
/// ten relaxation times of the mesh, [`MeshLayout::relax`]).
pub fn mesh_whole_warmup(layout: &MeshLayout, default_warmup: f64) -> f64 {
    default_warmup.max(10.0 * layout.relax)
}

/// Heavy-traffic relaxation time of a single-server queue: its content as
/// a reflected Brownian motion with drift λ − μ and variance rate
/// `var_rate` + μc² (`var_rate` = λ × the input's IDC(∞)) approaches
/// stationarity at the rate (μ − λ)²/(2σ²). Infinite when λ ≥ μ.
pub fn rbm_relaxation(lambda: f64, var_rate: f64, mu: f64, scv: f64) -> f64 {
    if lambda < mu {
        2.0 * (var_rate + mu * scv) / ((mu - lambda) * (mu - lambda))
    } else {
        f64::INFINITY
    }
}

/// The mesh's relaxation time (docs/models/wireless.md, "Split warm-up,
/// second attempt"): the largest [`rbm_relaxation`] over the MRs and AP
/// downlinks, each with the exact asymptotic variance rate of its arrivals.
/// A packet entering the mesh at MR m visits MR i V times, E[V] = G_mi and
/// E[V²] = G_mi (2 G_ii − 1), G = (I − P)⁻¹ of the routing walk (first visit
/// counted); the stations' packets leave their AP uplinks with the source's
/// IDC(∞) I_s (a stable queue keeps it); stations are independent, so the
/// arrivals at MR i have variance rate Σ_s λ̄ (Var V_s + I_s E[V_s]²). An AP
/// downlink of MR i receives a packet at most once, with probability
/// G_mi σ / N_i^a. `mu`, `scv`: capacity and squared coefficient of
/// variation of the service of an MR and of an AP downlink. Infinite (no
/// split) when something cannot be computed.
pub fn mesh_relaxation(m: &Mesh, mu: [f64; 2], scv: [f64; 2]) -> f64 {
    let c = m.mrs.len();
    let Some(g) = m.i_minus_p().try_inverse() else {
        return f64::INFINITY;
    };
    let lam_bar = m.mmpp.mean_rate();
    let idc = match m.source {
        SourceKind::Mmpp => m.mmpp.idc_inf(),
        SourceKind::Poisson => 1.0,
    };
    // The larger, or +∞ if a time could not be computed (NaN, which `max`
    // would drop).
    let worst = |tau: f64, t: f64| {
        if t.is_nan() {
            f64::INFINITY
        } else {
            tau.max(t)
        }
    };
    let mut tau: f64 = 0.0;
    for i in 0..c {
        let (mut lam, mut var, mut lam_d, mut var_d) = (0.0, 0.0, 0.0, 0.0);
        let down = m.sigma / m.mrs[i].aps as f64;
        for k in 0..c {
            let rate = m.stations_at(k) as f64 * lam_bar;
            let q = g[(k, i)];
            lam += rate * q;
            var += rate * (q * (2.0 * g[(i, i)] - 1.0) - q * q + idc * q * q);
            let qd = q * down;
            lam_d += rate * qd;
            var_d += rate * (qd * (1.0 - qd) + idc * qd * qd);
        }
        tau = worst(tau, rbm_relaxation(lam, var, mu[0], scv[0]));
        tau = worst(tau, rbm_relaxation(lam_d, var_d, mu[1], scv[1]));
    }
    tau
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
    let scv = |p: f64| match service {
        ServiceKind::Slotted => 1.0 - p,
        ServiceKind::Exponential => 1.0,
    };
    let relax = mesh_relaxation(
        m,
        [cap(m.p_mr, m.t_mesh), cap(m.p_ap_down, m.t_wlan)],
        [scv(m.p_mr), scv(m.p_ap_down)],
    );
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
        relax,
        upstream: (0..mr0).map(|e| EntityId(e as u32)).collect(),
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
        // 6: split warm-up (mesh_split): the stations and AP uplinks run
        // alone until the last X seconds of the warm-up; a run with X >=
        // warm-up (every run at the default warm-up) gives the results of
        // version 5.
        6
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = common_docs();
        params.extend(sim_length_docs().into_iter().map(|mut d| {
            if d.name == "warmup" {
                d.doc = "simulated seconds discarded at the start of each replication (default 10, quick 5). Split warm-up: the stations and AP uplinks run all of it, the MRs and AP downlinks only its last X = max(default warm-up, 10 tau) seconds, tau = 2(lambda I + mu c^2)/(mu - lambda)^2 the largest heavy-traffic relaxation time of an MR or AP downlink with I its input's IDC(inf), starting empty (all of it when X >= warmup)";
            }
            d
        }));
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
        let (full, quick) = (
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
        );
        let default_warmup = SimLength::default_for(ctx.fidelity, full, quick).warmup;
        let len = SimLength::resolve(
            p.replications,
            p.warmup,
            p.horizon,
            ctx.fidelity,
            full,
            quick,
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
        let mut layout = mesh_layout(&m, service)?;
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
        layout.scenario.split = mesh_split(&layout, len.warmup, default_warmup);
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
