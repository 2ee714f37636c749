//! Gran's two-switch test bed as `repro solve ibcc.sim` runs it (issue 21:
//! scenario 2 with CC off must take 2-3 s). One run per case, no harness: it
//! prints wall time, events, events/s and the last interval's mean
//! throughput per flow, so a change to the engine or the calendar can be
//! timed and its results compared at once.
//!
//! Run: `cargo bench -p solvers --bench ibcc_testbed` (scenario 2 CC off,
//! scenario 2 CC on, scenario 1 CC on, each at the solver's defaults), or
//! give one parameter object: `IBCC_TESTBED_PARAMS='{"scenario":2,"cc":false}'`.

use solvers::systems::ibcc::solve_counting;
use solvers::{Fidelity, TaskContext};
use std::time::Instant;

fn main() {
    let cases: Vec<serde_json::Value> = match std::env::var("IBCC_TESTBED_PARAMS") {
        Ok(s) => vec![serde_json::from_str(&s).expect("IBCC_TESTBED_PARAMS is JSON")],
        Err(_) => vec![
            serde_json::json!({"scenario": 2, "cc": false}),
            serde_json::json!({"scenario": 2, "cc": true}),
            serde_json::json!({"scenario": 1, "cc": true}),
        ],
    };
    for p in cases {
        let ctx = TaskContext::new(1, Fidelity::Full);
        let t0 = Instant::now();
        let (o, c) = solve_counting(&p, &ctx).expect("test-bed run");
        let wall = t0.elapsed().as_secs_f64();
        let last = (0..)
            .take_while(|j| o.metrics.contains_key(&format!("thr_mean_{j}")))
            .last()
            .expect("at least one interval");
        println!(
            "ibcc testbed {p}: {} events in {wall:.2} s wall ({:.2e} events/s); thr_mean_{last} = {:.6} Gbit/s, {} marks",
            c.events,
            c.events as f64 / wall,
            o.metrics[&format!("thr_mean_{last}")].value,
            c.marks
        );
    }
}
