//! Behaviour of the result store against real SQLite files: tasks, plans,
//! error measures, experiments and runs (opening a store: `open.rs`).

mod common;

use std::collections::HashSet;
use std::time::Instant;

use common::{open_in, path_str, task};
use store::*;

/// A metric row of the tests below.
fn metric(name: &str, value: f64, half_width: Option<f64>, n: Option<i64>) -> MetricRow {
    MetricRow {
        name: name.into(),
        value,
        half_width,
        n,
    }
}

/// A series point of the tests below.
fn point(name: &str, x: f64, y: f64) -> SeriesPointRow {
    SeriesPointRow {
        name: name.into(),
        x,
        y,
    }
}

#[tokio::test]
async fn task_roundtrip_keeps_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("abc123", "host1", "run --quick").await.unwrap();
    let mut t = task("k1", "done");
    // Given out of name order: the store returns metrics sorted by name.
    t.metrics.insert(0, metric("W", -0.0, Some(0.01), Some(0)));
    t.metrics
        .push(metric("X_inf", f64::INFINITY, None, Some(i64::MAX)));
    // Series in an order that is neither by name nor by x.
    t.series = vec![
        point("pdf", 2.0, 0.25),
        point("cdf", 0.0, 0.1),
        point("pdf", 1.0, 0.5),
    ];
    t.seed = i64::MIN;
    s.record_task(run, &t).await.unwrap();

    let got = s.tasks(&["k1".to_string()]).await.unwrap();
    let mut expected = t.clone();
    expected.metrics.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(got, vec![expected.clone()]);
    assert_eq!(s.run_task_keys(run).await.unwrap(), vec!["k1".to_string()]);
    // Read without its series: everything else the same.
    let bare = s
        .tasks_without_series(&["k1".to_string(), "none".to_string()])
        .await
        .unwrap();
    expected.series.clear();
    assert_eq!(bare, vec![expected]);
}

/// What a command keeps of the records it wrote (`as_read_back`) is what
/// reading them back gives, to the bit: compared through `Debug`, which
/// tells -0.0 from 0.0 and NaN from `None` where `==` does not.
#[tokio::test]
async fn a_record_as_read_back_is_what_the_store_returns() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("abc123", "host1", "run --quick").await.unwrap();
    let mut t = task("k1", "done");
    t.metrics
        .insert(0, metric("W", -0.0, Some(f64::NAN), Some(3)));
    t.metrics[1].half_width = Some(-0.0);
    t.series = vec![point("pdf", -0.0, 0.25), point("cdf", 3.0, -0.0)];
    t.error = Some("a note".into());
    s.record_task(run, &t).await.unwrap();

    let got = s.tasks(&["k1".to_string()]).await.unwrap();
    assert_eq!(got.len(), 1);
    let kept = s.as_read_back(t.clone());
    assert_eq!(format!("{:?}", got[0]), format!("{kept:?}"));
    // The written record itself differs (order, NaN, signs of zero).
    assert_ne!(format!("{:?}", got[0]), format!("{t:?}"));
}

#[tokio::test]
async fn failed_tasks_are_not_cached_and_unknown_keys_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    s.record_task(run, &task("done", "done")).await.unwrap();
    s.record_task(run, &task("sat", "saturated")).await.unwrap();
    let mut f = task("failed", "failed");
    f.metrics.clear();
    f.error = Some("unstable: rho >= 1".into());
    f.wall_ms = 0.5;
    s.record_task(run, &f).await.unwrap();

    let keys: Vec<String> = ["done", "sat", "failed", "missing"]
        .iter()
        .map(|k| k.to_string())
        .collect();
    let cached = s.cached_keys(&keys).await.unwrap();
    assert_eq!(
        cached,
        HashSet::from(["done".to_string(), "sat".to_string()])
    );
    let walls = s.wall_times(&keys).await.unwrap();
    assert_eq!(walls.len(), 3);
    assert_eq!(walls["failed"], 0.5);
    assert_eq!(walls["done"], 1.25);

    // Order of the request, duplicates and unknown keys dropped.
    let req: Vec<String> = ["failed", "missing", "done", "failed"]
        .iter()
        .map(|k| k.to_string())
        .collect();
    let got = s.tasks(&req).await.unwrap();
    assert_eq!(
        got.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        ["failed", "done"]
    );
    assert_eq!(got[0].error.as_deref(), Some("unstable: rho >= 1"));
    assert!(got[0].metrics.is_empty());
}

#[tokio::test]
async fn rerecording_a_key_replaces_metrics_and_series() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let r1 = s.begin_run("v", "h", "").await.unwrap();
    let mut first = task("k", "failed");
    first.series = vec![SeriesPointRow {
        name: "old".into(),
        x: 1.0,
        y: 1.0,
    }];
    first.metrics.push(MetricRow {
        name: "only_in_first".into(),
        value: 1.0,
        half_width: None,
        n: None,
    });
    s.record_task(r1, &first).await.unwrap();
    assert!(s.cached_keys(&["k".into()]).await.unwrap().is_empty());

    let r2 = s.begin_run("v", "h", "--force").await.unwrap();
    let mut second = task("k", "done");
    second.metrics = vec![MetricRow {
        name: "L".into(),
        value: 9.0,
        half_width: Some(0.5),
        n: Some(20),
    }];
    second.wall_ms = 42.0;
    s.record_task(r2, &second).await.unwrap();
    // Recording twice in the same run is harmless.
    s.record_task(r2, &second).await.unwrap();

    assert_eq!(s.tasks(&["k".into()]).await.unwrap(), vec![second]);
    assert_eq!(s.cached_keys(&["k".into()]).await.unwrap().len(), 1);
    assert_eq!(s.run_task_keys(r1).await.unwrap(), vec!["k".to_string()]);
    assert_eq!(s.run_task_keys(r2).await.unwrap(), vec!["k".to_string()]);
}

#[tokio::test]
async fn invalid_task_records_are_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();

    let mut nan = task("nan", "done");
    nan.metrics[0].value = f64::NAN;
    assert!(matches!(
        s.record_task(run, &nan).await,
        Err(StoreError::Invalid(_))
    ));

    let mut nan_wall = task("nan", "done");
    nan_wall.wall_ms = f64::NAN;
    assert!(matches!(
        s.record_task(run, &nan_wall).await,
        Err(StoreError::Invalid(_))
    ));

    // A status is typed: text that is none of them cannot become a record.
    assert!("ok".parse::<store::TaskStatus>().is_err());

    // A duplicate metric name fails inside the transaction: nothing of the task remains.
    let mut dup = task("dup", "done");
    dup.metrics.push(dup.metrics[0].clone());
    assert!(matches!(
        s.record_task(run, &dup).await,
        Err(StoreError::Db { .. })
    ));

    // An unknown run id violates the foreign key, again after the task row was written.
    assert!(matches!(
        s.record_task(run + 100, &task("norun", "done")).await,
        Err(StoreError::Db { .. })
    ));

    let keys: Vec<String> = ["nan", "bad", "dup", "norun"]
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert!(s.tasks(&keys).await.unwrap().is_empty());
}

#[tokio::test]
async fn large_key_lists_are_chunked() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let mut keys = Vec::new();
    for i in 0..1200 {
        let mut t = task(
            &format!("key{i:05}"),
            if i % 3 == 0 { "failed" } else { "done" },
        );
        t.wall_ms = i as f64;
        t.series = (0..3)
            .map(|j| SeriesPointRow {
                name: "s".into(),
                x: j as f64,
                y: i as f64,
            })
            .collect();
        s.record_task(run, &t).await.unwrap();
        keys.push(t.key);
    }
    // A few keys that were never recorded, interleaved.
    keys.extend((0..300).map(|i| format!("absent{i}")));

    let cached = s.cached_keys(&keys).await.unwrap();
    assert_eq!(cached.len(), 800);
    assert!(!cached.contains("key00000") && cached.contains("key00001"));
    let walls = s.wall_times(&keys).await.unwrap();
    assert_eq!(walls.len(), 1200);
    assert_eq!(walls["key01199"], 1199.0);
    let all = s.tasks(&keys).await.unwrap();
    assert_eq!(all.len(), 1200);
    assert_eq!(all[1199].key, "key01199");
    assert_eq!(all[1199].series.len(), 3);
    assert_eq!(all[1199].series[2].y, 1199.0);
    assert_eq!(s.run_task_keys(run).await.unwrap().len(), 1200);
}

#[tokio::test]
async fn long_series_and_many_metrics_span_several_insert_statements() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let mut t = task("long", "done");
    t.metrics = (0..1000)
        .map(|i| MetricRow {
            name: format!("m{i:04}"),
            value: i as f64,
            half_width: (i % 2 == 0).then_some(0.1),
            n: None,
        })
        .collect();
    t.series = (0..5000)
        .map(|i| SeriesPointRow {
            name: if i % 2 == 0 { "a" } else { "b" }.into(),
            x: i as f64,
            y: (i as f64).sqrt(),
        })
        .collect();
    s.record_task(run, &t).await.unwrap();
    assert_eq!(s.tasks(&["long".into()]).await.unwrap(), vec![t]);
}

fn plan_rows(exp: &str, version: i64, n: i64) -> Vec<PlanRow> {
    let mut rows = Vec::new();
    // Inserted in reverse to check that reading orders them.
    for p in (0..n).rev() {
        for series in ["sim", "model"] {
            for rep in (0..2).rev() {
                rows.push(PlanRow {
                    experiment: exp.into(),
                    version,
                    point: format!(r#"{{"mu":{p}}}"#),
                    point_index: p,
                    series: series.into(),
                    replication: rep,
                    task_key: format!("{exp}-{version}-{p}-{series}-{rep}"),
                });
            }
        }
    }
    rows
}

#[tokio::test]
async fn plan_roundtrip_and_replace() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    assert!(s.plan("e", 1).await.unwrap().is_empty());

    let rows = plan_rows("e", 1, 200);
    s.replace_plan("e", 1, &rows).await.unwrap();
    s.replace_plan("e", 2, &plan_rows("e", 2, 3)).await.unwrap();
    let got = s.plan("e", 1).await.unwrap();
    let mut expected = rows.clone();
    expected.sort_by(|a, b| {
        (a.point_index, &a.series, a.replication).cmp(&(b.point_index, &b.series, b.replication))
    });
    assert_eq!(got, expected);
    assert_eq!(got[0].series, "model");
    assert_eq!(got[0].replication, 0);

    // Replacing drops rows that are no longer planned; other versions are untouched.
    let fewer = plan_rows("e", 1, 2);
    s.replace_plan("e", 1, &fewer).await.unwrap();
    assert_eq!(s.plan("e", 1).await.unwrap().len(), 8);
    assert_eq!(s.plan("e", 2).await.unwrap().len(), 12);

    // Rows of another experiment are refused, and the stored plan survives.
    assert!(matches!(
        s.replace_plan("e", 1, &plan_rows("other", 1, 1)).await,
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(s.plan("e", 1).await.unwrap().len(), 8);

    s.replace_plan("e", 1, &[]).await.unwrap();
    assert!(s.plan("e", 1).await.unwrap().is_empty());
}

fn em(exp: &str, point_index: i64, metric: &str) -> ErrorMeasureRow {
    ErrorMeasureRow {
        experiment: exp.into(),
        version: 1,
        metric: metric.into(),
        reference: "sim".into(),
        candidate: "model".into(),
        point: format!(r#"{{"lambda":{point_index}}}"#),
        point_index,
        reference_value: Some(1.0 + point_index as f64),
        reference_half_width: Some(0.01),
        candidate_value: Some(1.01 + point_index as f64),
        em: Some(0.01 / (1.0 + point_index as f64)),
        tolerance: Some(0.05),
        verdict: verdicts::PointVerdict::Pass,
    }
}

#[tokio::test]
async fn error_measures_roundtrip_in_given_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let mut rows: Vec<ErrorMeasureRow> = (0..150).rev().map(|i| em("e", i, "L")).collect();
    rows.push(ErrorMeasureRow {
        reference_value: None,
        reference_half_width: None,
        candidate_value: Some(3.0),
        em: None,
        tolerance: None,
        verdict: verdicts::PointVerdict::Unchecked,
        ..em("e", 0, "P_block")
    });
    s.replace_error_measures("e", 1, &rows).await.unwrap();
    assert_eq!(s.error_measures("e", 1).await.unwrap(), rows);
    assert!(s.error_measures("e", 2).await.unwrap().is_empty());

    let one = vec![em("e", 3, "W")];
    s.replace_error_measures("e", 1, &one).await.unwrap();
    assert_eq!(s.error_measures("e", 1).await.unwrap(), one);

    // NaN is not representable in every backend: it reads back as "no value".
    let nan = vec![ErrorMeasureRow {
        em: Some(f64::NAN),
        ..em("e", 0, "L")
    }];
    s.replace_error_measures("e", 1, &nan).await.unwrap();
    assert_eq!(s.error_measures("e", 1).await.unwrap()[0].em, None);
}

#[tokio::test]
async fn experiments_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let exp = |id: &str, version: i64, title: &str| ExperimentRow {
        id: id.into(),
        version,
        title: title.into(),
        manifest_hash: format!("{id}{version}hash"),
        manifest_text: format!("id: {id}\nversion: {version}\n"),
    };
    s.upsert_experiment(&exp("b", 1, "B")).await.unwrap();
    s.upsert_experiment(&exp("a", 2, "A2")).await.unwrap();
    s.upsert_experiment(&exp("a", 1, "A1")).await.unwrap();
    s.upsert_experiment(&exp("a", 2, "A2 retitled"))
        .await
        .unwrap();
    assert_eq!(
        s.experiments().await.unwrap(),
        vec![
            exp("a", 1, "A1"),
            exp("a", 2, "A2 retitled"),
            exp("b", 1, "B")
        ]
    );

    let r1 = s.begin_run("c1", "h", "run a").await.unwrap();
    let r2 = s.begin_run("c2", "h", "check").await.unwrap();
    s.finish_run(r1, store::RunStatus::Done).await.unwrap();
    assert!(matches!(
        s.finish_run(r2 + 10, store::RunStatus::Done).await,
        Err(StoreError::Invalid(_))
    ));
    let runs = s.runs().await.unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [r1, r2]);
    assert_eq!(runs[0].status, "done");
    assert_eq!(runs[1].status, "running");
    assert_eq!(runs[1].finished, None);
    assert_eq!(runs[1].args, "check");
    let fin = runs[0].finished.as_deref().unwrap();
    // RFC 3339 UTC, e.g. 2026-11-21T08:01:02.345Z, not before the start.
    assert_eq!(fin.len(), 24);
    assert!(fin.ends_with('Z') && &fin[10..11] == "T");
    assert!(runs[0].started.as_str() <= fin);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_one_store_do_not_lock_each_other_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_in(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let mut handles = Vec::new();
    for w in 0..8 {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            for i in 0..40 {
                let mut t = task(&format!("w{w}-{i}"), "done");
                t.series = (0..50)
                    .map(|j| SeriesPointRow {
                        name: "s".into(),
                        x: j as f64,
                        y: 1.0,
                    })
                    .collect();
                s.record_task(run, &t).await?;
                if i % 10 == 0 {
                    s.replace_plan(&format!("exp{w}"), 1, &plan_rows(&format!("exp{w}"), 1, 20))
                        .await?;
                    s.cached_keys(&[t.key.clone()]).await?;
                }
            }
            Ok::<_, StoreError>(())
        }));
    }
    for h in handles {
        h.await.unwrap().unwrap();
    }
    assert_eq!(s.run_task_keys(run).await.unwrap().len(), 320);
}

#[tokio::test]
async fn reopen_keeps_data_and_cached_rerun_is_cheap() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_str(&dir.path().join("nested/deeper/store.sqlite"));
    let keys: Vec<String> = (0..200).map(|i| format!("task{i}")).collect();
    {
        let s = Store::open(&path).await.unwrap();
        let run = s.begin_run("v", "h", "").await.unwrap();
        for k in &keys {
            s.record_task(run, &task(k, "done")).await.unwrap();
        }
        s.replace_plan("e", 1, &plan_rows("e", 1, 5)).await.unwrap();
        s.finish_run(run, store::RunStatus::Done).await.unwrap();
        s.close().await;
    }
    // The URL form opens the same file.
    let s = Store::open(&format!("sqlite://{path}")).await.unwrap();
    assert_eq!(s.location(), format!("sqlite://{path}"));
    let t0 = Instant::now();
    let cached = s.cached_keys(&keys).await.unwrap();
    let elapsed = t0.elapsed();
    assert_eq!(cached.len(), 200);
    // Not a timing assertion (see benches/notes): printed for the report.
    eprintln!("cached_keys for 200 keys after reopen: {elapsed:?}");
    assert_eq!(s.tasks(&keys[..1]).await.unwrap()[0], task("task0", "done"));
    assert_eq!(s.plan("e", 1).await.unwrap().len(), 20);
    assert_eq!(s.runs().await.unwrap().len(), 1);
    s.close().await;
}
