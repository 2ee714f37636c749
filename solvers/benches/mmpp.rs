//! Timing of the MMPP blocks that fixed-point iterations call millions of times.

use criterion::{criterion_group, criterion_main, Criterion};
use solvers::queueing::mmpp::{departure_mmpp2, mmpp_g1, mmpp_m1, mmpp_m1k, Service, ShiftExp};
use solvers::traffic::mmpp::{superpose_fit, Mmpp2};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let p = Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap();
    c.bench_function("mmpp_m1k K=64", |b| {
        b.iter(|| mmpp_m1k(black_box(&p), black_box(1.8), 64).unwrap().p_block)
    });
    let s = Mmpp2::new(0.09, 0.06, 4.0, 0.5).unwrap();
    let comps = [(s, 5.0), (s.split(0.37), 1.0)];
    c.bench_function("superposition fit (Z_r = 5 + split)", |b| {
        b.iter(|| superpose_fit(black_box(&comps), None).unwrap().mmpp)
    });
    let service = Service::new(vec![ShiftExp {
        weight: 1.0,
        shift: 0.2,
        rate: Some(4.0),
    }])
    .unwrap();
    c.bench_function("mmpp_g1 mean wait (shift + exp)", |b| {
        b.iter(|| mmpp_g1(black_box(&p), black_box(&service)).unwrap().w)
    });
    let mix = Service::new(vec![
        ShiftExp {
            weight: 0.6,
            shift: 0.2,
            rate: Some(4.0),
        },
        ShiftExp {
            weight: 0.4,
            shift: 0.5,
            rate: None,
        },
    ])
    .unwrap();
    c.bench_function("mmpp_g1 mean wait (2-part mixture)", |b| {
        b.iter(|| mmpp_g1(black_box(&p), black_box(&mix)).unwrap().w)
    });
    c.bench_function("mmpp_m1 (log reduction, 2x2)", |b| {
        b.iter(|| mmpp_m1(black_box(&p), black_box(2.5)).unwrap().l)
    });
    let mut group = c.benchmark_group("departure");
    group.sample_size(10);
    group.bench_function("departure fit, rho = 0.6", |b| {
        b.iter(|| {
            departure_mmpp2(black_box(&p), black_box(2.5), None)
                .unwrap()
                .fit
                .mmpp
        })
    });
    group.finish();
}

criterion_group!(mmpp_benches, benches);
criterion_main!(mmpp_benches);
