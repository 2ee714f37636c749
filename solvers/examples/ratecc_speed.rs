//! Speed of the Fig. 3.1 scenario (Yan ch.3) on the InfiniBand engine with the
//! Yan-ECN plug-in: one replication per response function, every other
//! parameter at its default. Prints events, events per second and CPU
//! seconds per simulated second (the process's CPU time, read from
//! /proc/self/stat where it exists, else wall time).
//!
//! Run: `RATECC_SPEED_MS=500 cargo run --release -p solvers --example ratecc_speed`
//! (default 200 ms simulated per function).

use solvers::engines::ibnet::run;
use solvers::systems::ratecc::bench_scenario;
use solvers::{Fidelity, TaskContext};
use std::time::Instant;

#[path = "common/cpu.rs"]
mod cpu;

fn main() {
    let ms: f64 = std::env::var("RATECC_SPEED_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200.0);
    for function in ["pipd", "pipd_printed", "fimd_low"] {
        let (sc, cc) = bench_scenario(function, ms).expect("valid defaults");
        let ctx = TaskContext::new(1, Fidelity::Full);
        let (c0, t0) = (cpu::seconds(), Instant::now());
        let c = run(&sc, &cc, &ctx).expect("run");
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu::seconds()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => wall,
        };
        let sim = ms * 1e-3;
        println!(
            "ratecc fig3.1 {function}: {ms} ms simulated, {} events, {} data packets, {} ACKs, {} marks; {wall:.3} s wall, {cpu:.2} CPU s ({:.2} CPU s per simulated s, {:.2e} events per CPU s)",
            c.events,
            c.generated,
            c.acks,
            c.marks,
            cpu / sim,
            c.events as f64 / cpu
        );
    }
}
