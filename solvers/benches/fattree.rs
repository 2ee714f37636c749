//! Speed of the flit engine on Wu's 256-node ch.4 multi-cluster system
//! (issue 22 "Speed"): `multicluster.sim` at its Fig. 4.5(a) defaults, m = 4,
//! n = 3, C = 16 (16 clusters of 16 nodes: ACN and ECN 4-port 3-trees, an ICN
//! 4-port 3-tree over the clusters), ω = 64 flits, L_f = 512, ξ = 0.5,
//! η_in = 0.6, 8 engine cycles per fastest flit time, Poisson sources at a
//! low (λ = 0.0005) and a moderate (λ = 0.0015, about 0.7 × the rate at which
//! the simulated concentrators saturate) load in messages per node per time
//! unit.
//!
//! Prints per load: engine cycles and stepped cycles, flits delivered,
//! flit-hops, CPU seconds (this thread), flit-hops and flits per
//! CPU-second, and the BookSim2 injection rate of the same offered load.
//!
//! Definitions. A flit-hop is one flit sent over one engine channel: node →
//! leaf switch, switch → switch, switch → node, and for inter-cluster
//! messages the ECN → concentrator and dispatcher → ECN attach channels and
//! the ICN channels (the `hops` metric counts the same channels per
//! message). Flit-hops = flits delivered × mean hops per message (equal
//! batches: the mean of the batch means). Flits = flits delivered to their
//! final nodes. BookSim's "Hops average" counts the routers a flit leaves
//! (ejection channel included, injection channel not), so its flit-hops on
//! the same channel count are flits × (hops average + 1); on its 4-ary
//! 4-tree with uniform traffic (the source included) the mean is
//! 2·E[h] − 1 = 6.34 routers (E[h] = 940/256, h the NCA height), 7.34
//! channels.
//!
//! The BookSim rate of the same offered load: λ messages per node per time
//! unit × the fastest per-flit link time (BookSim's cycle = one flit time,
//! `packet_size=64`, so flits per node per flit time agree). Run:
//!   cargo bench -p solvers --bench fattree
//! Side by side: BookSim2 (a driver outside this repository) with its options
//!   topology=fattree k=4 n=4 routing_function=nca packet_size=64 injection_rate=<printed rate>

use solvers::{Fidelity, Registry, TaskContext};
use std::time::Instant;

/// CPU time of this thread in seconds (Linux schedstat, nanoseconds).
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

fn main() {
    // `cargo bench` passes --bench; a name filter may follow.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let reg = Registry::with_all();
    let sim = reg.get("multicluster.sim").expect("multicluster.sim");
    for (label, lambda) in [("low", 0.0005), ("moderate", 0.0015)] {
        let name = format!("fattree m=4 n=3 C=16 omega=64 poisson lambda={lambda} ({label})");
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let params = serde_json::json!({
            "m": 4, "n": 3, "C": 16, "omega": 64, "Lf": 512,
            "lambda1": lambda, "source": "poisson", "xi": 0.5, "eta_in": 0.6,
            "warmup": 2_000, "batches": 10, "batch_len": 4_000,
        });
        let ctx = TaskContext::new(1, Fidelity::Full);
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let o = sim.solve(&params, &ctx).expect("run");
        let wall = w0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        let get = |k: &str| o.get(k).unwrap_or_else(|| panic!("{k} missing: {o:?}"));
        let (flits, hops) = (get("flits"), get("hops"));
        let flit_hops = flits * hops;
        // The fastest per-flit link time is 8 cycles (cycles_per_flit).
        let t_flit = 8.0 * get("cycle_length");
        println!(
            "{name}: cycles {:.0}  stepped {:.0}  flits {flits:.0}  hops {hops:.3}  flit_hops {flit_hops:.0}  \
             cpu_s {cpu:.3}  wall_s {wall:.3}  flit_hops_per_cpu_s {:.0}  flits_per_cpu_s {:.0}  \
             latency {:.2}  booksim_injection_rate {:.5}",
            get("cycles"),
            get("stepped_cycles"),
            flit_hops / cpu,
            flits / cpu,
            get("latency"),
            lambda * t_flit,
        );
    }
}
