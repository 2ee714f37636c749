//! threshold.me / threshold.ctmc solve times and simulator throughput (events/s).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use solvers::des::RunLength;
use solvers::queueing::gege1n::{ctmc, me, sim, GeQueue};
use solvers::{Fidelity, TaskContext};
use std::hint::black_box;

fn ajt(k: f64) -> GeQueue {
    let t1 = (k / 3.0).floor();
    GeQueue::new(5.0, 5.0, 7.0, &[8.0, 16.0, 12.0], &[t1, 2.0 * t1], k).unwrap()
}

fn benches(c: &mut Criterion) {
    let q = ajt(24.0);
    c.bench_function("threshold.me AJT K=24", |b| {
        b.iter(|| me::solve(black_box(&q)))
    });
    c.bench_function("threshold.ctmc AJT K=24", |b| {
        b.iter(|| ctmc::solve(black_box(&q)).unwrap())
    });
    let big = ajt(300.0);
    c.bench_function("threshold.me AJT K=300", |b| {
        b.iter(|| me::solve(black_box(&big)))
    });
    c.bench_function("threshold.ctmc AJT K=300", |b| {
        b.iter(|| ctmc::solve(black_box(&big)).unwrap())
    });

    // Events per run measured once, so criterion's rate is events/second.
    let run = RunLength::new(0, 2, 100_000);
    let ctx = TaskContext::new(1, Fidelity::Full);
    let events = sim::simulate(&q, run, &ctx).unwrap().totals.events;
    let mut g = c.benchmark_group("threshold.sim");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("AJT K=24 lambda=5, 2e5 customers", |b| {
        b.iter(|| sim::simulate(black_box(&q), run, &ctx).unwrap())
    });
    g.finish();
}

criterion_group!(threshold_benches, benches);
criterion_main!(threshold_benches);
