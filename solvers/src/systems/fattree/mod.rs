//! Wu ch.4–5: multi-cluster systems whose ACN, ECN and ICN are m-port
//! n-trees (catalogue §3.2, §3.3; issue 22).
//!
//! - [`params`]: the shared parameters of `multicluster.model` and
//!   `multicluster.sim` (issue 22's table of names), validated into a typed
//!   [`System`]: cluster trees with N_i (4.2/5.1) and switch counts (4.3),
//!   the ICN tree (4.1/5.2), per-network link times t_cn (4.15) and t_cs
//!   (4.17), the source MMPP and every model variant.
//!
//! - [`model`]: `multicluster.model`, the ch.4 and ch.5 latency models with
//!   every variant of issue 22.
//!
//! docs/models/multicluster.md records the equations and choices.

use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};

pub mod model;
pub mod params;
mod sim;

pub use sim::bench_run;

pub use params::{
    parse_system, parse_with_extras, Cluster, LinkTimes, Locality, Network, Params, System, Tree,
    Variants,
};

/// Registers this system's solvers.
pub fn register(r: &mut Registry) {
    r.add(MulticlusterModel);
    r.add(MulticlusterConfig);
    r.add(sim::MulticlusterSim);
}

/// The parameter documentation shared by `multicluster.model` and
/// `multicluster.sim` (issue 22's table).
pub fn param_docs() -> Vec<ParamDoc> {
    vec![
        ParamDoc { name: "m", doc: "ch.4: switch ports of every ACN/ECN tree and of the ICN (even, >= 4; default 4)" },
        ParamDoc { name: "n", doc: "ch.4: levels of every cluster's m-port n-tree (default 3)" },
        ParamDoc { name: "C", doc: "ch.4: number of clusters, an m-port n_c-tree size 2(m/2)^n_c (default 16)" },
        ParamDoc { name: "clusters", doc: "ch.5 instead of m, n, C: list of {m, n, user_level, acn} (user_level = ϕ_i in [0, 1))" },
        ParamDoc { name: "m_c", doc: "ch.5: ICN switch ports (default: the clusters' common m); C must be 2(m_c/2)^n_c" },
        ParamDoc { name: "acn", doc: "{bandwidth, network_latency, switch_latency}; ch.4 default Net.1 of Table 4.2 (ch.5: per cluster, required)" },
        ParamDoc { name: "ecn", doc: "ECN timings; default Net.2 of Table 4.2 (ch.4) or of Table 5.2 (ch.5)" },
        ParamDoc { name: "icn", doc: "ICN timings; default Net.2 of Table 4.2 (ch.4) or Net.1 of Table 5.2 (ch.5)" },
        ParamDoc { name: "omega", doc: "message length in flits (default 64)" },
        ParamDoc { name: "Lf", doc: "flit length in bytes (default 512)" },
        ParamDoc { name: "lambda1", doc: "source MMPP rate in phase 1 (messages/node/time unit; the model: 0..=1e12; required)" },
        ParamDoc { name: "lambda2", doc: "source MMPP rate in phase 2 (the model: 0..=1e12; default 0, Wu's convention)" },
        ParamDoc { name: "phi1", doc: "rate of leaving phase 1 (the model: 1e-12..=1e12 per time unit; default 0.07)" },
        ParamDoc { name: "phi2", doc: "rate of leaving phase 2 (the model: 1e-12..=1e12 per time unit; default 0.07)" },
        ParamDoc { name: "source", doc: "mmpp (default) or poisson (the same mean rate)" },
        ParamDoc { name: "xi", doc: "ch.4: inter-cluster probability ξ = η_out in [0, 1] (default 0.5)" },
        ParamDoc { name: "eta_in", doc: "ch.4: intra-cluster locality η_in in (0, 1] of (4.7) (default 0.6)" },
        ParamDoc { name: "channels", doc: "printed (4n channels per node, default) or derived (2n) in the load denominators (W-23)" },
        ParamDoc { name: "cd", doc: "derived (default: the cluster's outbound traffic) or printed (MMPP_cI) C/D arrivals (W-29, W-38)" },
        ParamDoc { name: "ecn_num", doc: "printed (default: out + in traffic) or single (half of it) in the ECN load numerator" },
        ParamDoc { name: "stage_map", doc: "w27 (default: ICN stages a ≤ k < a+2r, W-27/W-36) or physical (one stage earlier)" },
        ParamDoc { name: "inflow", doc: "ch.5: derived (default, W-34) or printed inflow term of (5.8)" },
        ParamDoc { name: "weights", doc: "ch.5: derived (default, N_v/(N−N_i), W-37) or printed (1/(C−1)) destination weights" },
        ParamDoc { name: "dispatcher", doc: "ch.5: inflow (default: traffic entering the cluster), same (the concentrator's), dest (the destination clusters' dispatchers)" },
        ParamDoc { name: "ecn_leg2", doc: "ch.5: path (default: the i→v ECN process on both legs) or own (the v→i process on the destination leg)" },
    ]
}

/// Switch and node labels of the m-port n-tree of Lin, Chung & Huang (W-21,
/// M-6), counted from the label sets: nodes m·(m/2)^(n−1); switches
/// (m/2)^(n−1) roots plus m·(m/2)^(n−2) per lower level. Independent of the
/// closed forms (4.2)/(4.3), which the config solver checks against it.
pub fn enumerate_labels(t: Tree) -> (u64, u64) {
    let h = t.m as u64 / 2;
    let nodes = t.m as u64 * h.pow(t.n - 1);
    let roots = h.pow(t.n - 1);
    let lower = if t.n >= 2 {
        (t.n as u64 - 1) * t.m as u64 * h.pow(t.n - 2)
    } else {
        0
    };
    (nodes, roots + lower)
}

/// `multicluster.config`: the configuration tables (4.2, 5.2, 5.3) rendered
/// from the parameters with their consistency checks.
struct MulticlusterConfig;

impl Solver for MulticlusterConfig {
    fn name(&self) -> &'static str {
        "multicluster.config"
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut params = param_docs();
        params.push(ParamDoc {
            name: "expect_total",
            doc: "optional: the system size the paper states (376, 800, 256); a different Σ N_i is an error",
        });
        SolverDoc {
            summary: "Wu Tables 4.2/5.2/5.3: cluster sizes N_i (4.2/5.1), switch counts (4.3) checked against the labels of the m-port n-tree, n_c (4.1/5.2), ξ_i (5.6), link times t_cn (4.15) and t_cs (4.17) per network",
            params,
            metrics: vec![
                "clusters", "nodes_total", "n_c", "m_c", "icn_switches", "switches_total", "nodes_<i>",
                "switches_<i>", "xi_<i>", "user_level_<i>", "acn_bandwidth_<i>", "acn_t_cn_<i>",
                "acn_t_cs_<i>", "ecn_bandwidth", "ecn_t_cn", "ecn_t_cs", "icn_bandwidth", "icn_t_cs",
                "icn_network_latency", "icn_switch_latency", "ecn_network_latency", "ecn_switch_latency",
                "acn_network_latency_<i>", "acn_switch_latency_<i>",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, _: &TaskContext) -> Result<Outcome, SolveError> {
        let (sys, extra) = parse_with_extras(params, &["expect_total"])?;
        let mut o = Outcome::new();
        let mut sw_total = 0;
        let mut trees: Vec<Tree> = sys.clusters.iter().map(|c| c.tree).collect();
        trees.push(sys.icn_tree);
        for t in &trees {
            let (n, s) = enumerate_labels(*t);
            if n != t.nodes() || s != t.switches() {
                return Err(SolveError::Numerical(format!(
                    "{}-port {}-tree: labels give {n} nodes and {s} switches, (4.2)/(4.3) give {} and {}",
                    t.m, t.n, t.nodes(), t.switches()
                )));
            }
        }
        for (i, c) in sys.clusters.iter().enumerate() {
            // ACN and ECN are both m_i-port n_i-trees.
            sw_total += 2 * c.switches;
            o = o
                .with(&format!("nodes_{i}"), c.nodes as f64)
                .with(&format!("switches_{i}"), c.switches as f64)
                .with(&format!("xi_{i}"), sys.xi(i))
                .with(&format!("user_level_{i}"), c.user_level)
                .with(&format!("acn_bandwidth_{i}"), c.acn.bandwidth)
                .with(&format!("acn_network_latency_{i}"), c.acn.network_latency)
                .with(&format!("acn_switch_latency_{i}"), c.acn.switch_latency)
                .with(&format!("acn_t_cn_{i}"), c.acn.times.t_cn)
                .with(&format!("acn_t_cs_{i}"), c.acn.times.t_cs);
        }
        let total = sys.total_nodes();
        if let Some(e) = extra.get("expect_total") {
            let want = e
                .as_f64()
                .ok_or_else(|| SolveError::param("expect_total", "must be a number"))?;
            if want != total as f64 {
                return Err(SolveError::param(
                    "expect_total",
                    format!("the clusters add up to {total} nodes, not {want}"),
                ));
            }
        }
        sw_total += sys.icn_switches();
        o = o
            .with("clusters", sys.num_clusters() as f64)
            .with("nodes_total", total as f64)
            .with("n_c", sys.icn_tree.n as f64)
            .with("m_c", sys.icn_tree.m as f64)
            .with("icn_switches", sys.icn_switches() as f64)
            .with("switches_total", sw_total as f64);
        for (name, net) in [("ecn", sys.ecn), ("icn", sys.icn)] {
            o = o
                .with(&format!("{name}_bandwidth"), net.bandwidth)
                .with(&format!("{name}_network_latency"), net.network_latency)
                .with(&format!("{name}_switch_latency"), net.switch_latency)
                .with(&format!("{name}_t_cn"), net.times.t_cn)
                .with(&format!("{name}_t_cs"), net.times.t_cs);
        }
        o.checked("multicluster.config")
    }
}

struct MulticlusterModel;

impl Solver for MulticlusterModel {
    fn name(&self) -> &'static str {
        "multicluster.model"
    }
    fn version(&self) -> u32 {
        // 2: net_in, net_out (ch.5 also W_in, W_out); a point saturated in
        // its inter-cluster part keeps latency_in, T_in, W_in, tau_in, net_in.
        2
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Wu ch.4/ch.5 analytical latency model of multi-cluster systems on m-port n-trees (eqs 4.5–4.30, 5.4–5.22, errata W-21…W-40; docs/models/multicluster.md)",
            params: param_docs(),
            metrics: vec![
                "latency", "latency_in", "latency_out", "W_c", "W_d", "latency_<i> (ch.5)",
                "rho_max", "clamped", "stage_queues", "T_in", "W_in", "tau_in", "T_out", "W_out",
                "tau_out", "net_in", "net_out", "f_A", "f_E", "f_I",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, _: &TaskContext) -> Result<Outcome, SolveError> {
        let sys = parse_system(params)?;
        params::check_model_ranges(&sys)?;
        match model::solve(&sys)? {
            Err(s) => {
                // Saturated, with the intra-cluster metrics where they stay
                // finite (issue 31 item 4).
                let mut o = Outcome::saturated_because(s.why);
                for (k, v) in &s.defined {
                    o = o.with(k, *v);
                }
                o.checked("multicluster.model")
            }
            Ok(r) => {
                let mut o = Outcome::new()
                    .with("latency", r.latency)
                    .with("latency_in", r.latency_in)
                    .with("latency_out", r.latency_out)
                    .with("W_c", r.w_c)
                    .with("W_d", r.w_d)
                    .with("rho_max", r.rho_max)
                    .with("clamped", r.clamped as f64)
                    .with("stage_queues", r.stage_queues as f64);
                for (i, l) in r.per_cluster.iter().enumerate() {
                    o = o.with(&format!("latency_{i}"), *l);
                }
                for (k, v) in &r.parts {
                    o = o.with(k, *v);
                }
                if r.clamped > 0 {
                    o.note = Some(format!(
                        "{} blocking chains had mu_b <= 0 (clamped, W-25): overloaded stages",
                        r.clamped
                    ));
                }
                o.checked("multicluster.model")
            }
        }
    }
}

#[cfg(test)]
mod params_tests;

#[cfg(test)]
mod model_tests;
