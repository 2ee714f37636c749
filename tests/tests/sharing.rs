//! Two runs on one store share the work (issue 32 item 6): started together
//! on the same manifest, each task is executed by one of them only; the
//! other finds its result stored and counts it as cached.

mod common;
use common::*;
use std::process::{Command, Stdio};

/// 12 simulation tasks of a fraction of a second each, one at a time per run,
/// so two runs started together overlap for seconds.
const MANIFEST: &str = r#"
id: shared
title: shared
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 12 }
sweep: { m: { from: 2, to: 13 } }
series:
  sim: { solver: credit.sim, params: { batch_len: 200000 }, quick: { params: { batch_len: 200000 } } }
"#;

/// The stores to share: a SQLite file always, a PostgreSQL database when
/// `REPRO_TEST_POSTGRES` is set (the claims go through the same queue table
/// on both, with each backend's SQL).
fn stores(dir: &std::path::Path) -> Vec<String> {
    let mut v = vec![dir
        .join("results/shared.sqlite")
        .to_str()
        .unwrap()
        .to_string()];
    if let Some(base) = pg_base_or_skip("ran on SQLite only, the PostgreSQL half skipped") {
        v.push(fresh_pg_db(&base, "sharing"));
    }
    v
}

/// 400 model tasks of microseconds each, which a run claims in batches
/// (issue 35: one claim transaction per task cost more than the task).
const MODELS: &str = r#"
id: shared
title: shared
version: 1
params: { lambda: 0.5, mu: 1.0 }
sweep: { K: { from: 1, to: 400 } }
series:
  exact: { solver: mm1k.exact }
"#;

#[test]
fn two_simultaneous_runs_execute_each_task_once() {
    let p = project(&[]);
    write_manifest(p.path(), "shared", MANIFEST);
    for store in stores(p.path()) {
        two_runs_share(p.path(), &store, 12, true);
    }
}

/// The same with models claimed in batches: every task still runs once in
/// all and no claim is left behind. (Which run gets which batch depends on
/// timing, so the split is not asserted.)
#[test]
fn tasks_claimed_in_batches_are_executed_once() {
    let p = project(&[]);
    write_manifest(p.path(), "shared", MODELS);
    for store in stores(p.path()) {
        two_runs_share(p.path(), &store, 400, false);
    }
}

fn two_runs_share(dir: &std::path::Path, store: &str, n: usize, both: bool) {
    // The store does not exist yet (an empty database on PostgreSQL): both
    // runs make it together, as two users starting on a fresh store would.
    let start = || {
        Command::new(repro_bin())
            .args([
                "run",
                "--quick",
                "--jobs",
                "1",
                "--no-progress",
                "--store",
                store,
            ])
            .current_dir(dir)
            .env_remove("REPRO_STORE")
            .env_remove("RUST_LOG")
            .env("REPRO_SHARE_POLL_MS", "100")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (ta, ca, ra, fa) = summary(&ok(&a));
    let (tb, cb, rb, fb) = summary(&ok(&b));
    assert_eq!((ta, tb, fa, fb), (n, n, 0, 0), "{store}");
    // Every task accounted for in each run, and executed once in all.
    assert_eq!(ca + ra, n, "{store}: {}", stderr(&a));
    assert_eq!(cb + rb, n, "{store}: {}", stderr(&b));
    assert_eq!(
        ra + rb,
        n,
        "{store}: tasks executed twice:\n{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    // Both ran some: they overlapped and shared (one run after the other
    // would have left the second nothing to do).
    if both {
        assert!(ra >= 1 && rb >= 1, "{store}: run a {ra}, run b {rb}");
    }
    // A third run finds everything stored, and the claims left no row in
    // the queue.
    let third = repro(dir, &["run", "--quick", "--no-progress", "--store", store]);
    let (_, c, r, _) = summary(&ok(&third));
    assert_eq!((c, r), (n, 0), "{store}");
    let status = repro(dir, &["status", "--store", store]);
    ok(&status);
    let status = stdout(&status);
    assert!(
        status.contains("queue: 0 pending, 0 running, 0 done, 0 failed"),
        "{store}: {status}"
    );
}
