//! One 20 s run of the 9x9 ch.6 bench network (as `benches/wireless.rs`),
//! for instruction counts: `valgrind --tool=callgrind
//! target/release/examples/qnet_profile`. Prints the events and a checksum of
//! the counters (changes when the random stream or the tie order changes).

use solvers::engines::qnet::{self, Slotted};
use solvers::systems::wireless::mesh::{mesh_layout, Mesh};
use solvers::systems::wireless::ServiceKind;
use solvers::{Fidelity, TaskContext};

fn main() {
    let mesh = Mesh::bench_case1(4.8).unwrap();
    let ctx = TaskContext::new(1, Fidelity::Full);
    let layout = mesh_layout(&mesh, ServiceKind::Slotted).unwrap();
    let len = qnet::RunLength {
        warmup: 0.0,
        horizon: 20.0,
        max_packets: 10_000_000,
    };
    let reps: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    for _ in 0..reps {
        let c = qnet::run(&layout.scenario, &layout.routing, &Slotted, len, 1, 0, &ctx).unwrap();
        let delay: f64 = c.classes.iter().map(|x| x.delay_sum).sum();
        println!(
            "events {} delivered {} dropped {} delay_sum {:.9}",
            c.events, c.delivered, c.dropped, delay
        );
    }
}
