//! The record of what was drawn into each results folder (`drawn` table).

mod common;

use common::open_in;
use store::DrawnRow;

fn row(results: &str, experiment: &str, output: &str, hash: &str) -> DrawnRow {
    DrawnRow {
        results: results.into(),
        experiment: experiment.into(),
        output: output.into(),
        version: 1,
        hash: hash.into(),
        code_version: "0.1.0+test".into(),
    }
}

/// Rows come back per folder, sorted by experiment and output; recording an
/// output again replaces what was recorded of it, and other folders keep
/// their own record.
#[tokio::test]
async fn what_was_drawn_is_recorded_per_folder_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    assert!(s.drawn("/r/quick").await.unwrap().is_empty());
    s.record_drawn(&[]).await.unwrap();
    s.record_drawn(&[
        row("/r/quick", "y", "y-a", "h1"),
        row("/r/quick", "x", "x-b", "h2"),
        row("/r/quick", "x", "x-a", "h3"),
        row("/r", "x", "x-a", "full"),
    ])
    .await
    .unwrap();
    let got = s.drawn("/r/quick").await.unwrap();
    let ids: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|r| (r.experiment.as_str(), r.output.as_str(), r.hash.as_str()))
        .collect();
    assert_eq!(
        ids,
        [("x", "x-a", "h3"), ("x", "x-b", "h2"), ("y", "y-a", "h1")]
    );
    let mut again = row("/r/quick", "x", "x-a", "h4");
    again.version = 2;
    again.code_version = "0.1.0+newer".into();
    s.record_drawn(&[again.clone()]).await.unwrap();
    let got = s.drawn("/r/quick").await.unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], again);
    assert_eq!(
        s.drawn("/r").await.unwrap(),
        [row("/r", "x", "x-a", "full")]
    );
}

/// More rows than one statement binds are recorded in chunks.
#[tokio::test]
async fn many_outputs_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let rows: Vec<DrawnRow> = (0..5000)
        .map(|i| row("/r", &format!("e{:04}", i / 10), &format!("o{i:05}"), "h"))
        .collect();
    s.record_drawn(&rows).await.unwrap();
    assert_eq!(s.drawn("/r").await.unwrap(), rows);
}
