//! credit.ctmc solve time and credit.sim event rate.
//! Run: cargo bench -p solvers --bench credit

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use solvers::systems::credit::{credit_sim_bench_events, solve_credit_ctmc, Credit};
use solvers::{Fidelity, TaskContext};
use std::hint::black_box;

fn ctmc(c: &mut Criterion) {
    for nm in [4usize, 12] {
        let p = Credit {
            lambda: 5.0,
            mu1: 6.0,
            mu2: 8.0,
            n: nm,
            m: nm,
        };
        c.bench_function(&format!("credit.ctmc n=m={nm}"), |b| {
            b.iter(|| solve_credit_ctmc(black_box(&p)).unwrap())
        });
    }
}

fn sim(c: &mut Criterion) {
    let params = json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 12, "m": 4,
                        "warmup": 0, "batches": 2, "batch_len": 50000});
    let ctx = TaskContext::new(1, Fidelity::Full);
    let events = credit_sim_bench_events(&params, &ctx).unwrap();
    let mut g = c.benchmark_group("credit.sim");
    g.throughput(Throughput::Elements(events));
    g.sample_size(20);
    g.bench_function("n=12 m=4, 10^5 departures (elements = events)", |b| {
        b.iter(|| credit_sim_bench_events(black_box(&params), &ctx).unwrap())
    });
    g.finish();
}

criterion_group!(benches, ctmc, sim);
criterion_main!(benches);
