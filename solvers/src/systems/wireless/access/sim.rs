//! The simulator (`wlan_access.sim`): the same entities on `engines::qnet`
//! with tree routing to the gateway.

use super::{common_docs, ring_metrics, Access, SimParams};
use crate::engines::qnet::{self, Entity, EntityId, Hop, Markov, Source};
use crate::params::parse;
use crate::systems::wireless::{
    access_rate, group_loss, group_sojourn, ratio, service_kind, sim_length_docs, Replications,
    ServiceKind, SimLength, SourceKind,
};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

/// Routing towards the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeRouting {
    /// Split weights that load every ring-i MR equally (W-59).
    Balanced,
    /// Uniform among the ring-(i−1) neighbours.
    Uniform,
}

/// Split weights from ring i+1 to ring i: for each ring-(i+1) MR, its
/// ring-i neighbours and their probabilities. Balanced weights come from
/// Sinkhorn scaling of the adjacency to row sums 1 and equal column sums
/// N_{i+1}/N_i over the ring-i MRs (the transport plan that loads ring i
/// evenly when every ring-(i+1) MR carries the same load: always on an odd
/// grid). On an even grid the last ring reaches only part of ring n/2 − 1
/// (see below), the column sums are equal over the MRs it reaches, and the
/// rings inside carry unequal loads: the model's "evenly distributed"
/// (§7.2) is then an approximation that the even-grid series measures
/// (docs/models/wireless.md).
pub fn tree_weights(
    a: &Access,
    routing: TreeRouting,
) -> Result<Vec<Vec<(usize, f64)>>, SolveError> {
    let cells = a.n * a.n;
    let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); cells];
    for ring in 2..=a.rings {
        let outer: Vec<usize> = (0..cells).filter(|&i| a.ring(i) == ring).collect();
        let inner: Vec<usize> = (0..cells).filter(|&i| a.ring(i) == ring - 1).collect();
        let pos = |k: usize| inner.iter().position(|&x| x == k).unwrap_or(0);
        let mut rows: Vec<Vec<(usize, f64)>> = outer
            .iter()
            .map(|&m| {
                a.neighbours(m)
                    .into_iter()
                    .filter(|&k| a.ring(k) == ring - 1)
                    .map(|k| (pos(k), 1.0))
                    .collect()
            })
            .collect();
        for r in &mut rows {
            let s = r.len() as f64;
            for x in r.iter_mut() {
                x.1 /= s;
            }
        }
        if routing == TreeRouting::Balanced {
            // Ring-i MRs with a ring-(i+1) neighbour. All of them on an odd
            // grid and on every inner ring; on an even grid the L-shaped
            // last ring (2n − 1 MRs) reaches only the 2n − 3 MRs of the two
            // far sides of ring n/2 − 1, the others get no transit traffic.
            let mut reached = vec![false; inner.len()];
            for r in &rows {
                for &(k, _) in r {
                    reached[k] = true;
                }
            }
            let n_reached = reached.iter().filter(|&&x| x).count();
            let target = outer.len() as f64 / n_reached as f64;
            let mut ok = false;
            for _ in 0..20_000 {
                let mut col = vec![0.0; inner.len()];
                for r in &rows {
                    for &(k, w) in r {
                        col[k] += w;
                    }
                }
                let err = col
                    .iter()
                    .zip(&reached)
                    .filter(|(_, &r)| r)
                    .map(|(c, _)| (c - target).abs())
                    .fold(0.0, f64::max);
                if err < 1e-12 {
                    ok = true;
                    break;
                }
                for r in &mut rows {
                    let mut s = 0.0;
                    for x in r.iter_mut() {
                        x.1 *= target / col[x.0];
                        s += x.1;
                    }
                    for x in r.iter_mut() {
                        x.1 /= s;
                    }
                }
            }
            if !ok {
                return Err(SolveError::Numerical(format!(
                    "no balanced split from ring {ring} to ring {}",
                    ring - 1
                )));
            }
        }
        for (r, &m) in rows.into_iter().zip(&outer) {
            out[m] = r.into_iter().map(|(k, w)| (inner[k], w)).collect();
        }
    }
    Ok(out)
}

/// The simulated network.
pub struct AccessLayout {
    pub scenario: qnet::Scenario,
    pub routing: Markov,
}

pub const G_STATION: usize = 0;
pub const G_AP: usize = 1;
/// Group of ring i is G_AP + i.
pub fn ring_group(i: usize) -> usize {
    G_AP + i
}

pub fn access_layout(a: &Access, routing: TreeRouting) -> Result<AccessLayout, SolveError> {
    let cells = a.n * a.n;
    let weights = tree_weights(a, routing)?;
    let mrs: Vec<usize> = (0..cells).filter(|&i| a.ring(i) > 0).collect();
    let w = mrs.len();
    let n_st = w * a.stations;
    let (ap0, mr0) = (n_st, n_st + w);
    let mut mr_index = vec![usize::MAX; cells];
    for (k, &i) in mrs.iter().enumerate() {
        mr_index[i] = k;
    }
    let (lam, phi) = match a.source {
        SourceKind::Mmpp => ([a.mmpp.lambda1, a.mmpp.lambda2], [a.mmpp.phi1, a.mmpp.phi2]),
        SourceKind::Poisson => ([a.mmpp.mean_rate(); 2], [0.0, 0.0]),
    };
    let ent = |slot: f64, p: f64, k: usize, g: usize| Entity {
        slot,
        p,
        mu: access_rate(p, slot),
        capacity: k as u32,
        group: g as u16,
    };
    let mut entities = Vec::with_capacity(n_st + 2 * w);
    let mut table = Vec::with_capacity(n_st + 2 * w);
    let mut sources = Vec::with_capacity(n_st);
    for (k, &i) in mrs.iter().enumerate() {
        for _ in 0..a.stations {
            sources.push(Source {
                entity: EntityId(entities.len() as u32),
                lambda: lam,
                phi,
                class: (a.ring(i) - 1) as u16,
            });
            entities.push(ent(a.t_wlan, a.p_station, a.k_s, G_STATION));
            table.push(vec![(Hop::To(EntityId((ap0 + k) as u32)), 1.0)]);
        }
    }
    for k in 0..w {
        entities.push(ent(a.t_wlan, a.p_ap, a.k_a, G_AP));
        table.push(vec![(Hop::To(EntityId((mr0 + k) as u32)), 1.0)]);
    }
    for &i in &mrs {
        let r = a.ring(i);
        entities.push(ent(a.t_mesh, a.p_mr[r - 1], a.k_r, ring_group(r)));
        if r == 1 {
            table.push(vec![(Hop::Exit, 1.0)]);
        } else {
            table.push(
                weights[i]
                    .iter()
                    .map(|&(j, p)| (Hop::To(EntityId((mr0 + mr_index[j]) as u32)), p))
                    .collect(),
            );
        }
    }
    Ok(AccessLayout {
        scenario: qnet::Scenario {
            entities,
            sources,
            groups: 2 + a.rings,
            classes: a.rings,
            split: None,
        },
        routing: Markov::new(&table),
    })
}

pub struct AccessSimSolver;

impl Solver for AccessSimSolver {
    fn name(&self) -> &'static str {
        "wlan_access.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_loss_<where>")]
    }
    fn version(&self) -> u32 {
        // 2: qnet timer heaps and one-log service draws (new random streams);
        // warm-up from the buffers' drain time.
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
        params.extend(sim_length_docs().into_iter().map(|mut d| {
            if d.name == "warmup" {
                d.doc = "simulated seconds discarded at the start of each replication (default, both fidelities: twice the full-buffer drain time K_s/mu_s + K_a/mu_a + sum_i K_r/mu_r,i, at least 10)";
            }
            d
        }));
        params.push(ParamDoc {
            name: "routing",
            doc: "`balanced` (default: split weights loading every ring-i MR equally, W-59) or `uniform` (uniform among ring-(i-1) neighbours)",
        });
        SolverDoc {
            summary: "Wu ch.7 WLANs + Internet-access WMN, packet-level simulation on the qnet engine (SIM-6): drop-tail buffers, tree routing to the central gateway",
            params,
            metrics: ring_metrics(10),
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SimParams = parse(params)?;
        let a = p.access()?;
        let service = service_kind(p.service.as_deref())?;
        let routing = match p.routing.as_deref().unwrap_or("balanced") {
            "balanced" => TreeRouting::Balanced,
            "uniform" => TreeRouting::Uniform,
            other => {
                return Err(SolveError::param(
                    "routing",
                    format!("must be `balanced` or `uniform`, got `{other}`"),
                ))
            }
        };
        let warmup = a.default_warmup();
        let len = SimLength::resolve(
            p.replications,
            p.warmup,
            p.horizon,
            ctx.fidelity,
            SimLength {
                replications: 5,
                warmup,
                horizon: 200.0,
            },
            SimLength {
                replications: 3,
                warmup,
                horizon: 40.0,
            },
        )?;
        let offered = ((a.n * a.n - 1) * a.stations) as f64 * a.mmpp.mean_rate();
        if p.warmup.is_none() {
            a.check_default_warmup(&len, offered)?;
        }
        len.check_work(offered)?;
        len.check_not_empty(offered)?;
        let layout = access_layout(&a, routing)?;
        simulate(&a, &layout, service, len, ctx)
    }
}

fn simulate(
    a: &Access,
    layout: &AccessLayout,
    service: ServiceKind,
    len: SimLength,
    ctx: &TaskContext,
) -> Result<Outcome, SolveError> {
    let names = ring_metrics(a.rings);
    let mut reps = Replications::new(&names);
    let run_len = qnet::RunLength {
        warmup: len.warmup,
        horizon: len.horizon,
        max_packets: u32::MAX,
    };
    let sizes = a.ring_sizes();
    for rep in 0..len.replications {
        ctx.check_cancel()?;
        let c = service.run(&layout.scenario, &layout.routing, run_len, ctx, rep)?;
        let delivered: u64 = c.classes.iter().map(|k| k.delivered).sum();
        let delay_sum: f64 = c.classes.iter().map(|k| k.delay_sum).sum();
        let mut v = vec![
            ratio(delay_sum, delivered),
            delivered as f64 / c.window,
            group_sojourn(&c, G_STATION),
            group_sojourn(&c, G_AP),
            group_loss(&c, G_STATION),
            group_loss(&c, G_AP),
        ];
        for k in &c.classes {
            v.push(ratio(k.delay_sum, k.delivered));
        }
        for i in 1..=a.rings {
            v.push(group_loss(&c, ring_group(i)));
        }
        for (i, size) in sizes.iter().enumerate().skip(1) {
            v.push(c.groups[ring_group(i)].arrivals as f64 / c.window / *size as f64);
        }
        reps.push(&v);
    }
    reps.into_outcome(&len, "wlan_access.sim")
}
