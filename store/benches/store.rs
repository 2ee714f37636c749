//! Store costs that the pipeline pays per run: the cache lookup of a fully
//! cached rerun, and writing one finished task.

use criterion::{criterion_group, criterion_main, Criterion};
use store::{MetricRow, SeriesPointRow, Store, TaskRecord};

fn task(key: String) -> TaskRecord {
    TaskRecord {
        key,
        solver: "mmpp_m1k.sim".into(),
        solver_version: 1,
        params: r#"{"K":16,"lambda1":2.0,"lambda2":0.5,"mu":2.0}"#.into(),
        seed: 1,
        fidelity: "full".into(),
        status: store::TaskStatus::Done,
        wall_ms: 12.5,
        error: None,
        metrics: (0..8)
            .map(|i| MetricRow {
                name: format!("m{i}"),
                value: i as f64,
                half_width: Some(0.01),
                n: Some(10),
            })
            .collect(),
        series: (0..20)
            .map(|i| SeriesPointRow {
                name: "pdf".into(),
                x: i as f64,
                y: 0.05,
            })
            .collect(),
    }
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.sqlite");
    let s = rt.block_on(Store::open(path.to_str().unwrap())).unwrap();
    let run = rt.block_on(s.begin_run("bench", "host", "")).unwrap();
    let keys: Vec<String> = (0..200).map(|i| format!("key{i:04}")).collect();
    for k in &keys {
        rt.block_on(s.record_task(run, &task(k.clone()))).unwrap();
    }

    c.bench_function("cached_keys_200", |b| {
        b.iter(|| rt.block_on(s.cached_keys(&keys)).unwrap())
    });
    c.bench_function("tasks_200_full_records", |b| {
        b.iter(|| rt.block_on(s.tasks(&keys)).unwrap())
    });
    let mut i = 0u64;
    c.bench_function("record_task_8_metrics_20_points", |b| {
        b.iter(|| {
            i += 1;
            rt.block_on(s.record_task(run, &task(format!("new{i}"))))
                .unwrap()
        })
    });
    rt.block_on(s.close());
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
