use criterion::{criterion_group, criterion_main, Criterion};

fn benches(_c: &mut Criterion) {}

criterion_group!(solver_benches, benches);
criterion_main!(solver_benches);
