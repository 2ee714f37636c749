//! Events per second of the MMPP queue simulators (criterion's throughput
//! line reports events = arrivals + departures + MMPP phase changes).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use solvers::queueing::mmpp_sim::{count_events, MmppG1Sim, MmppM1Sim, MmppM1kSim};
use solvers::{Fidelity, Solver, TaskContext};

fn benches(c: &mut Criterion) {
    let run = json!({"warmup": 10_000, "batches": 10, "batch_len": 20_000});
    let mut cases: Vec<(&dyn Solver, serde_json::Value)> = Vec::new();
    let mut p = json!({"phi1": 0.1, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 2.0});
    for (k, v) in run.as_object().unwrap() {
        p[k] = v.clone();
    }
    cases.push((&MmppM1Sim, p.clone()));
    let mut pk = p.clone();
    pk["K"] = json!(16);
    cases.push((&MmppM1kSim, pk));
    let mut pg = p.clone();
    pg.as_object_mut().unwrap().remove("mu");
    pg["service"] = json!({"mixture": [
        {"weight": 0.5, "shift": 0.2, "rate": 4.0},
        {"weight": 0.5, "shift": 0.1, "rate": 2.0}
    ]});
    cases.push((&MmppG1Sim, pg));

    let ctx = TaskContext::new(1, Fidelity::Full);
    let mut group = c.benchmark_group("mmpp_sim");
    group.sample_size(10);
    for (solver, params) in cases {
        let events = count_events(solver.name(), &params, &ctx).expect("valid parameters");
        group.throughput(Throughput::Elements(events));
        group.bench_function(solver.name(), |b| {
            b.iter(|| solver.solve(&params, &ctx).expect("solves"))
        });
    }
    group.finish();
}

criterion_group!(mmpp_sim_benches, benches);
criterion_main!(mmpp_sim_benches);
