//! Speed of the flit engine on the configuration a BookSim2 user would run for
//! comparison (issue 7): k×k torus, dimension-order routing, 4 VCs, 32-flit
//! packets, uniform destinations, Bernoulli injection (0.01 packets/node/cycle
//! on 8×8, 0.005 on 16×16), VC buffers of 8 and 2 flits. Prints cycles
//! simulated, flits delivered, CPU seconds (this thread) and flits per
//! CPU-second. Run: cargo bench -p solvers --bench torus
//! One case: a filter that only its name contains, e.g. `-- "0.01 buffer=8"`.
//! Side by side: BookSim2 (a driver outside this repository) with its options
//! k=8 injection_rate=0.01

use solvers::systems::torus::{bench_run, bench_run_timed};
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
    for (k, rate, msgs) in [(8u32, 0.01, 100_000u64), (16, 0.005, 100_000)] {
        for buffer in [8usize, 2] {
            let name = format!("torus k={k} dor V=4 omega=32 bernoulli={rate} buffer={buffer}");
            if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
                continue;
            }
            let (c0, w0) = (cpu_seconds(), Instant::now());
            let (cycles, flits) = bench_run(k, 4, buffer, 32, rate, 5_000, msgs).expect("run");
            let wall = w0.elapsed().as_secs_f64();
            let cpu = match (c0, cpu_seconds()) {
                (Some(a), Some(b)) => b - a,
                _ => wall,
            };
            println!(
                "{name}: cycles {cycles}  flits {flits}  cpu_s {cpu:.3}  wall_s {wall:.3}  flits_per_cpu_s {:.0}",
                flits as f64 / cpu
            );
        }
    }
    // The costliest task of `repro check --quick` (wu-3.4-3.5-omega64's top
    // point of panel 3.5d: 16×16, Duato, V = 7, ω = 64, MMPP, 10% hot spot,
    // three replications near saturation), through the solver.
    let name = "torus.sim quick k=16 duato V=7 omega=64 mmpp lambda1=0.00814 delta=0.1";
    if filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str())) {
        let reg = solvers::Registry::with_all();
        let sim = reg.get("torus.sim").expect("torus.sim");
        let params = serde_json::json!({
            "V": 7, "delta": 0.1, "k": 16, "lambda1": 0.00814, "lambda2": 0, "omega": 64,
            "phi1": 0.9, "phi2": 0.3, "replicate_above": 2.5, "replications": 3,
        });
        let ctx = solvers::TaskContext::new(1, solvers::Fidelity::Quick);
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let o = sim.solve(&params, &ctx).expect("run");
        let wall = w0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        let get = |k: &str| o.get(k).unwrap_or_else(|| panic!("{k} missing: {o:?}"));
        let flits = get("flits");
        println!(
            "{name}: cycles {:.0}  flits {flits:.0}  replications {:.0}  cpu_s {cpu:.3}  wall_s {wall:.3}  flits_per_cpu_s {:.0}",
            get("cycles"),
            get("replications"),
            flits / cpu
        );
    }
    // The real-valued link-timing path (SIM-5): latency 2.5, period 1.5
    // cycles on every channel; 8-flit buffers cover the credit round trip.
    let name = "torus k=8 dor V=4 omega=32 bernoulli=0.01 latency=2.5 period=1.5 buffer=8";
    if filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str())) {
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let (cycles, flits) =
            bench_run_timed(8, 4, 8, 32, 0.01, 5_000, 100_000, Some((2.5, 1.5))).expect("run");
        let wall = w0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        println!(
            "{name}: cycles {cycles}  flits {flits}  cpu_s {cpu:.3}  wall_s {wall:.3}  flits_per_cpu_s {:.0}",
            flits as f64 / cpu
        );
    }
}
