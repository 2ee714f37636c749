//! Yan ch.4: credit-based flow control between two nodes (Node 1 upstream with
//! buffer n, Node 2 downstream with buffer m; credits = m − j).
//!
//! `credit.ctmc` solves the exact chain built from the transition rules of
//! catalogue §1.2 (the printed boundary equations 4.2 and entries 4.4 are
//! garbled: erratum Y-8). `credit.sim` is a discrete-event simulation of the
//! two nodes written independently of the generator.

use crate::params::count;
use crate::{ParamDoc, Registry, SolveError};
use serde::Deserialize;

mod ctmc;
mod sim;
pub use sim::bench_events as credit_sim_bench_events;

pub use ctmc::{solve_credit_ctmc, CreditMetrics};

pub fn register(r: &mut Registry) {
    r.add(ctmc::CreditCtmc);
    r.add(sim::CreditSim);
}

/// The model's parameters, validated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Credit {
    pub lambda: f64,
    pub mu1: f64,
    pub mu2: f64,
    /// Node 1 capacity (packets, including the one in service).
    pub n: usize,
    /// Node 2 capacity = number of credits.
    pub m: usize,
}

/// The shared model parameters as they arrive in JSON.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    lambda: f64,
    mu1: f64,
    mu2: f64,
    n: f64,
    m: f64,
}

impl RawModel {
    fn validate(&self) -> Result<Credit, SolveError> {
        let c = Credit {
            lambda: crate::params::model_value("lambda", self.lambda)?,
            mu1: crate::params::model_value("mu1", self.mu1)?,
            mu2: crate::params::model_value("mu2", self.mu2)?,
            n: count("n", self.n, 1)?,
            m: count("m", self.m, 1)?,
        };
        // Checked before anything is allocated: the chain is stored densely.
        crate::markov::ctmc::check_states("n, m", (c.n + 1).saturating_mul(c.m + 1))?;
        Ok(c)
    }
}

fn model_param_docs() -> Vec<ParamDoc> {
    vec![
        ParamDoc {
            name: "lambda",
            doc: "Poisson arrival rate at Node 1 (> 0)",
        },
        ParamDoc {
            name: "mu1",
            doc: "exponential service rate of Node 1 (> 0)",
        },
        ParamDoc {
            name: "mu2",
            doc: "exponential service rate of Node 2 (> 0)",
        },
        ParamDoc {
            name: "n",
            doc: "Node 1 capacity incl. the packet in service (integer >= 1)",
        },
        ParamDoc {
            name: "m",
            doc: "Node 2 capacity = credits (integer >= 1)",
        },
    ]
}

const METRICS: [&str; 6] = ["L1", "L2", "L", "T", "R", "P_block"];
