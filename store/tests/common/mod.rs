//! Helpers shared by the store's integration tests.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;

use store::*;

pub fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

pub async fn open_in(dir: &tempfile::TempDir) -> Store {
    Store::open(&path_str(&dir.path().join("results/repro.sqlite")))
        .await
        .unwrap()
}

pub fn task(key: &str, status: &str) -> TaskRecord {
    TaskRecord {
        key: key.to_string(),
        solver: "mm1k.exact".into(),
        solver_version: 3,
        params: r#"{"K":16,"lambda":1.5,"mu":2.0}"#.into(),
        seed: 7,
        fidelity: "any".into(),
        status: status.parse().expect("a task status"),
        wall_ms: 1.25,
        error: None,
        metrics: vec![
            MetricRow {
                name: "L".into(),
                value: 2.5,
                half_width: None,
                n: None,
            },
            MetricRow {
                name: "P_block".into(),
                value: 1e-15,
                half_width: Some(3e-16),
                n: Some(10),
            },
        ],
        series: vec![],
    }
}
