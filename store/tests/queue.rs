//! The task queue's leases on a real SQLite file: claim order, renewal,
//! reclaim after expiry, a lost lease stores nothing, the attempt limit,
//! and re-enqueueing rules. (The same code runs on PostgreSQL; the
//! end-to-end tests in tests/tests/services.rs cover that backend.)

use std::time::Duration;
use store::*;

fn item(key: &str, priority: f64) -> Enqueue {
    Enqueue {
        task_key: key.into(),
        spec: format!("{{\"k\":\"{key}\"}}"),
        priority,
    }
}

fn record(key: &str, status: &str) -> TaskRecord {
    TaskRecord {
        key: key.into(),
        solver: "mm1k.exact".into(),
        solver_version: 1,
        params: "{}".into(),
        seed: 0,
        fidelity: "any".into(),
        status: status.parse().expect("a task status"),
        wall_ms: 1.0,
        error: None,
        metrics: vec![MetricRow {
            name: "L".into(),
            value: 1.5,
            half_width: None,
            n: None,
        }],
        series: vec![],
    }
}

async fn open(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().join("q.sqlite").to_str().unwrap())
        .await
        .unwrap()
}

const LONG: Duration = Duration::from_secs(60);

/// The claimants of the key-claim tests: two local runs.
fn two_runs() -> (WorkerId, WorkerId) {
    (
        WorkerId("host:1 run 1".into()),
        WorkerId("host:2 run 2".into()),
    )
}

/// A key claim that must insert the key's row.
async fn claim_new(s: &Store, run: i64, key: &str, w: &WorkerId, lease: Duration) -> Claimed {
    match s
        .claim_key(run, &item(key, 1.0), w, lease, false, None)
        .await
        .unwrap()
    {
        KeyClaim::Claimed(c, true) => c,
        other => panic!("claim {key}: {other:?}"),
    }
}

#[tokio::test]
async fn claims_go_most_expensive_first_and_each_task_to_one_worker() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let n = s
        .enqueue(
            run,
            &[item("a", 1.0), item("b", 5.0), item("c", 3.0)],
            false,
        )
        .await
        .unwrap();
    assert_eq!(n, 3);
    let (w1, w2) = (WorkerId("w1".into()), WorkerId("w2".into()));
    let c1 = s.claim(&w1, LONG).await.unwrap().unwrap();
    let c2 = s.claim(&w2, LONG).await.unwrap().unwrap();
    let c3 = s.claim(&w2, LONG).await.unwrap().unwrap();
    assert_eq!(
        (
            c1.task_key.as_str(),
            c2.task_key.as_str(),
            c3.task_key.as_str()
        ),
        ("b", "c", "a")
    );
    assert_eq!((c1.attempt, c1.run_id), (1, run));
    assert!(s.claim(&w1, LONG).await.unwrap().is_none());
    assert!(s.renew("b", &w1, LONG).await.unwrap());
    // Only the holder renews or completes.
    assert!(!s.renew("b", &w2, LONG).await.unwrap());
    assert!(!s.complete(&c1, &w2, &record("b", "done")).await.unwrap());
    assert!(s.complete(&c1, &w1, &record("b", "done")).await.unwrap());
    assert!(s.complete(&c3, &w2, &record("a", "failed")).await.unwrap());
    let counts = s.queue_counts(None).await.unwrap();
    assert_eq!(
        counts,
        QueueCounts {
            pending: 0,
            running: 1,
            done: 1,
            failed: 1
        }
    );
    assert_eq!(s.run_task_keys(run).await.unwrap(), vec!["a", "b"]);
    // Re-enqueueing: a failed task is retried, a done one only when forced,
    // a running one never.
    let again = [item("a", 1.0), item("b", 5.0), item("c", 3.0)];
    assert_eq!(s.enqueue(run, &again, false).await.unwrap(), 1);
    assert_eq!(s.enqueue(run, &again, true).await.unwrap(), 1);
    let c = s
        .queue_counts(Some(&["a".into(), "b".into()]))
        .await
        .unwrap();
    assert_eq!((c.pending, c.done), (2, 0));
}

#[tokio::test]
async fn an_expired_lease_is_reclaimed_and_the_old_holder_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    s.enqueue(run, &[item("k", 1.0)], false).await.unwrap();
    let (w1, w2) = (WorkerId("w1".into()), WorkerId("w2".into()));
    let c1 = s
        .claim(&w1, Duration::from_millis(1))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let c2 = s.claim(&w2, LONG).await.unwrap().unwrap();
    assert_eq!((c2.task_key.as_str(), c2.attempt), ("k", 2));
    assert!(!s.renew("k", &w1, LONG).await.unwrap());
    assert!(!s.complete(&c1, &w1, &record("k", "done")).await.unwrap());
    assert!(s.tasks(&["k".into()]).await.unwrap().is_empty());
    assert!(s.complete(&c2, &w2, &record("k", "done")).await.unwrap());
    assert_eq!(s.tasks(&["k".into()]).await.unwrap().len(), 1);
    assert_eq!(s.queue_counts(None).await.unwrap().done, 1);
}

#[tokio::test]
async fn a_task_that_loses_every_worker_is_failed_after_the_attempt_limit() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    s.enqueue(run, &[item("k", 1.0)], false).await.unwrap();
    let w = WorkerId("w".into());
    for attempt in 1..=MAX_ATTEMPTS {
        let c = s
            .claim(&w, Duration::from_millis(1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(c.attempt, attempt);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(s.claim(&w, LONG).await.unwrap().is_none());
    let failed = s.queue_rows(&[store::QueueState::Failed]).await.unwrap();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].error.as_deref().unwrap().contains("lost 3 times"),
        "{:?}",
        failed[0].error
    );
}

#[tokio::test]
async fn a_released_task_is_pending_again_without_spending_an_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    s.enqueue(run, &[item("k", 1.0)], false).await.unwrap();
    let w = WorkerId("w".into());
    s.claim(&w, LONG).await.unwrap().unwrap();
    s.release("k", &w).await.unwrap();
    let c = s.claim(&w, LONG).await.unwrap().unwrap();
    assert_eq!(c.attempt, 1);
}

/// Issue 32 item 6: a run that runs its tasks itself claims each key in the
/// queue table: a second claimant is told who holds it, takes it over once
/// the holder's lease expired or it is known dead, and the row an inserting
/// claim made is gone once the result is stored (or the claim released).
#[tokio::test]
async fn key_claims_share_a_task_between_two_local_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let (a, b) = two_runs();
    let ca = claim_new(&s, run, "k", &a, LONG).await;
    assert_eq!(ca.attempt, 1);
    let busy = s
        .claim_key(run, &item("k", 1.0), &b, LONG, false, None)
        .await
        .unwrap();
    assert_eq!(busy, KeyClaim::Busy("host:1 run 1".into()));
    assert_eq!(s.queue_counts(None).await.unwrap().running, 1);
    // Stored by its holder: the row is gone, the result there.
    assert!(!s
        .finish_key(&ca, true, &b, &record("k", "done"))
        .await
        .unwrap());
    assert!(s
        .finish_key(&ca, true, &a, &record("k", "done"))
        .await
        .unwrap());
    assert_eq!(s.queue_counts(None).await.unwrap().total(), 0);
    assert_eq!(s.tasks(&["k".into()]).await.unwrap().len(), 1);
    // A dead holder is taken over at once, an expired one after its lease.
    claim_new(&s, run, "d", &a, LONG).await;
    let KeyClaim::Claimed(cd, false) = s
        .claim_key(run, &item("d", 1.0), &b, LONG, false, Some("host:1 run 1"))
        .await
        .unwrap()
    else {
        panic!("take over d")
    };
    assert_eq!(cd.attempt, 2);
    let short = Duration::from_millis(1);
    claim_new(&s, run, "e", &a, short).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let KeyClaim::Claimed(_, false) = s
        .claim_key(run, &item("e", 1.0), &b, LONG, false, None)
        .await
        .unwrap()
    else {
        panic!("take over e")
    };
    // Released: an inserted row is removed; a queued one is pending again.
    claim_new(&s, run, "r", &a, LONG).await;
    s.release_key("r", true, &a).await.unwrap();
    s.enqueue(run, &[item("q", 1.0)], false).await.unwrap();
    let KeyClaim::Claimed(_, false) = s
        .claim_key(run, &item("q", 1.0), &a, LONG, false, None)
        .await
        .unwrap()
    else {
        panic!("claim q")
    };
    s.release_key("q", false, &a).await.unwrap();
    let c = s
        .queue_counts(Some(&["r".into(), "q".into()]))
        .await
        .unwrap();
    assert_eq!((c.total(), c.pending), (1, 1));
}

/// Issue 35: several keys claimed in one transaction are answered as a
/// claim of each alone would be, in the order asked, whatever the order of
/// the keys.
#[tokio::test]
async fn a_batch_of_key_claims_answers_as_one_claim_each() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let (a, b) = two_runs();
    // `busy` held by b, `done` finished through the queue, `pending` queued.
    claim_new(&s, run, "busy", &b, LONG).await;
    s.enqueue(run, &[item("done", 9.0), item("pending", 0.0)], false)
        .await
        .unwrap();
    let c = s.claim(&b, LONG).await.unwrap().unwrap();
    assert_eq!(c.task_key, "done");
    assert!(s.complete(&c, &b, &record("done", "done")).await.unwrap());
    let batch = [
        item("new", 1.0),
        item("busy", 1.0),
        item("done", 1.0),
        item("pending", 1.0),
    ];
    let found = s
        .claim_keys(run, &batch, &a, LONG, false, None)
        .await
        .unwrap();
    let shape: Vec<(&str, Option<(i64, bool)>)> = found
        .iter()
        .map(|f| match f {
            KeyClaim::Claimed(c, inserted) => (c.task_key.as_str(), Some((c.attempt, *inserted))),
            KeyClaim::Busy(w) => (w.as_str(), None),
            KeyClaim::Done => ("done", None),
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("new", Some((1, true))),
            ("host:2 run 2", None),
            ("done", None),
            ("pending", Some((1, false))),
        ]
    );
    // A dead holder's key, and with `force` a done one, are taken over.
    let again = s
        .claim_keys(run, &batch[1..3], &a, LONG, true, Some("host:2 run 2"))
        .await
        .unwrap();
    assert!(
        matches!(
            again.as_slice(),
            [KeyClaim::Claimed(x, false), KeyClaim::Claimed(y, false)]
                if (x.task_key.as_str(), x.attempt, y.task_key.as_str(), y.attempt)
                    == ("busy", 2, "done", 2)
        ),
        "{again:?}"
    );
    let c = s.queue_counts(None).await.unwrap();
    assert_eq!((c.running, c.pending, c.done), (4, 0, 0));
    assert!(s
        .claim_keys(run, &[], &a, LONG, false, None)
        .await
        .unwrap()
        .is_empty());
}

/// Issue 35: results stored together in one transaction, each only if its
/// claim still holds; an inserted row is removed, a taken-over one marked.
#[tokio::test]
async fn a_batch_of_results_stores_those_whose_claim_holds() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let (a, b) = two_runs();
    let x = claim_new(&s, run, "x", &a, LONG).await;
    let y = claim_new(&s, run, "y", &a, Duration::from_millis(1)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let KeyClaim::Claimed(_, false) = s
        .claim_key(run, &item("y", 1.0), &b, LONG, false, None)
        .await
        .unwrap()
    else {
        panic!("take over y")
    };
    s.enqueue(run, &[item("z", 1.0)], false).await.unwrap();
    let KeyClaim::Claimed(z, false) = s
        .claim_key(run, &item("z", 1.0), &a, LONG, false, None)
        .await
        .unwrap()
    else {
        panic!("claim z")
    };
    let (rx, ry, rz) = (
        record("x", "done"),
        record("y", "done"),
        record("z", "failed"),
    );
    let stored = s
        .finish_keys(&[(&x, true, &rx), (&y, true, &ry), (&z, false, &rz)], &a)
        .await
        .unwrap();
    assert_eq!(stored, vec![true, false, true]);
    let keys = ["x".to_string(), "y".into(), "z".into()];
    assert_eq!(s.tasks(&keys).await.unwrap().len(), 2);
    let c = s.queue_counts(None).await.unwrap();
    assert_eq!((c.total(), c.running, c.failed), (2, 1, 1));
}

/// Issue 35: without `force`, a claim of a key whose result is stored (a
/// run finished it since the claimant planned) is done and changes nothing;
/// a failed result is claimed (failures are retried); with `force` every
/// stored key is claimed.
#[tokio::test]
async fn a_key_whose_result_is_stored_is_done_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let (a, _) = two_runs();
    s.record_task(run, &record("stored", "done")).await.unwrap();
    s.record_task(run, &record("undef", "undefined"))
        .await
        .unwrap();
    s.record_task(run, &record("failed", "failed"))
        .await
        .unwrap();
    // A queued key whose result came from elsewhere: stays pending.
    s.enqueue(run, &[item("queued", 1.0)], false).await.unwrap();
    s.record_task(run, &record("queued", "saturated"))
        .await
        .unwrap();
    let batch = [
        item("undef", 1.0),
        item("new", 1.0),
        item("stored", 1.0),
        item("failed", 1.0),
        item("queued", 1.0),
    ];
    let found = s
        .claim_keys(run, &batch, &a, LONG, false, None)
        .await
        .unwrap();
    let shape: Vec<String> = found
        .iter()
        .map(|f| match f {
            KeyClaim::Claimed(c, inserted) => format!("{} {inserted}", c.task_key),
            KeyClaim::Busy(w) => format!("busy {w}"),
            KeyClaim::Done => "done".into(),
        })
        .collect();
    assert_eq!(shape, ["done", "new true", "done", "failed true", "done"]);
    let rows = s
        .queue_rows(&[QueueState::Pending, QueueState::Running])
        .await
        .unwrap();
    let rows: Vec<(&str, QueueState, i64)> = rows
        .iter()
        .map(|r| (r.task_key.as_str(), r.state, r.attempts))
        .collect();
    assert_eq!(
        rows,
        [
            ("failed", QueueState::Running, 1),
            ("new", QueueState::Running, 1),
            ("queued", QueueState::Pending, 0),
        ]
    );
    // With `force`, stored keys are claimed.
    let again = s
        .claim_keys(run, &batch[2..3], &a, LONG, true, None)
        .await
        .unwrap();
    assert!(
        matches!(again.as_slice(), [KeyClaim::Claimed(c, true)] if c.task_key == "stored"),
        "{again:?}"
    );
}

/// Issue 35: a batch of results written together (multi-row statements)
/// reads back as each written alone would: metrics, series in their order,
/// a key stored before replaced, every key linked to its run.
#[tokio::test]
async fn a_batch_of_results_reads_back_as_written_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir).await;
    let run = s.begin_run("v", "h", "").await.unwrap();
    let (a, _) = two_runs();
    let mut old = record("y", "failed");
    old.series = vec![SeriesPointRow {
        name: "old".into(),
        x: 0.0,
        y: 9.0,
    }];
    s.record_task(run, &old).await.unwrap();
    let run2 = s.begin_run("v", "h", "").await.unwrap();
    let recs: Vec<TaskRecord> = ["z", "x", "y"]
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut r = record(k, "done");
            r.metrics.push(MetricRow {
                name: format!("A{i}"),
                value: i as f64 - 0.5,
                half_width: Some(f64::NAN),
                n: Some(10 + i as i64),
            });
            r.series = (0..=i)
                .flat_map(|j| {
                    ["pdf", "cdf"].map(|name| SeriesPointRow {
                        name: name.into(),
                        x: j as f64,
                        y: (i * 10 + j) as f64,
                    })
                })
                .collect();
            r
        })
        .collect();
    let mut claims = Vec::new();
    for r in &recs {
        claims.push(claim_new(&s, run2, &r.key, &a, LONG).await);
    }
    let items: Vec<(&Claimed, bool, &TaskRecord)> = claims
        .iter()
        .zip(&recs)
        .map(|(c, r)| (c, true, r))
        .collect();
    assert_eq!(s.finish_keys(&items, &a).await.unwrap(), [true; 3]);
    let got = s
        .tasks(&["x".into(), "y".into(), "z".into()])
        .await
        .unwrap();
    let mut want: Vec<TaskRecord> = recs.iter().map(|r| s.as_read_back(r.clone())).collect();
    want.sort_by(|p, q| p.key.cmp(&q.key));
    let mut got = got;
    got.sort_by(|p, q| p.key.cmp(&q.key));
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    let mut linked = s.run_task_keys(run2).await.unwrap();
    linked.sort();
    assert_eq!(linked, ["x", "y", "z"]);
    assert_eq!(s.queue_counts(None).await.unwrap().total(), 0);
}
