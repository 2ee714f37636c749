//! Programs that misbehave, run through the solver contract: each ends as a
//! `SolveError` that says what happened and shows the tail of stderr (or as
//! a result, where the misbehaviour is harmless). None may panic or hang, and
//! no process of theirs may outlive the task.

use external::{ExternalSolver, ParamSpec, ParamType, Program};
use serde_json::{json, Value as Json};
use solvers::{Fidelity, Kind, SolveError, Solver, Status, TaskContext};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn python() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIPPED: python3 is not installed");
    }
    ok
}

fn program(dir: &Path, command: &[&str]) -> Program {
    Program {
        name: "misbehaving".into(),
        kind: Kind::Simulation,
        version: 1,
        command: command.iter().map(|s| s.to_string()).collect(),
        dir: dir.to_path_buf(),
        files: Vec::new(),
        params: vec![ParamSpec {
            name: "x".into(),
            ty: ParamType::Float,
            min: Some(0.0),
            max: None,
            choices: Vec::new(),
            default: Some(json!(1.0)),
            doc: String::new(),
        }],
        metrics: vec!["L".into()],
        timeout_s: 30.0,
        memory_mb: 512,
        summary: String::new(),
    }
}

/// Writes `name` into `dir` and returns its name.
fn script<'a>(dir: &Path, name: &'a str, text: &str) -> &'a str {
    std::fs::write(dir.join(name), text).unwrap();
    name
}

fn solve(p: Program) -> Result<solvers::Outcome, SolveError> {
    ExternalSolver::new(p).solve(&json!({}), &TaskContext::new(7, Fidelity::Quick))
}

fn program_error(r: Result<solvers::Outcome, SolveError>) -> String {
    match r {
        Err(SolveError::Program(m)) => m,
        other => panic!("expected a program error, got {other:?}"),
    }
}

/// Whether process `pid` is gone (or a zombie nobody will reap: init's now).
fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return true;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.split_whitespace().nth(2) == Some("Z") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(dir: &Path, file: &str) -> i32 {
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_well_behaved_program_gets_the_request_and_answers() {
    if !python() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "echo.py",
        r#"import json, sys
req = json.load(sys.stdin)
assert req["solver"] == "misbehaving", req
print("some diagnostics", file=sys.stderr)
json.dump({"metrics": {"L": {"value": req["params"]["x"] * 2, "half_width": 0.5, "n": 3}},
           "note": "%s %d %d" % (req["fidelity"], req["seed"], req["replication"]),
           "series": {"path": [[0, 1], [2, 3]]}}, sys.stdout)
"#,
    );
    let p = program(d.path(), &["python3", s]);
    let ctx = TaskContext::new(7, Fidelity::Quick).with_replication(2);
    let o = ExternalSolver::new(p).solve(&json!({}), &ctx).unwrap();
    assert_eq!(o.status, Status::Ok);
    // The default x = 1 was filled in.
    assert_eq!(o.get("L"), Some(2.0));
    assert_eq!(o.metrics["L"].half_width, Some(0.5));
    assert_eq!(o.note.as_deref(), Some("quick 7 2"));
    assert_eq!(o.series["path"], vec![(0.0, 1.0), (2.0, 3.0)]);
}

#[test]
fn a_crash_shows_the_exit_code_and_the_traceback() {
    if !python() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "crash.py",
        "import sys\nsys.stdin.read()\n1 / 0\n",
    );
    let m = program_error(solve(program(d.path(), &["python3", s])));
    assert!(m.contains("exited with code 1"), "{m}");
    assert!(m.contains("ZeroDivisionError"), "{m}");
    assert!(m.contains("python3 crash.py"), "{m}");
}

#[test]
fn a_signal_is_named() {
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "segv.sh", "echo dying >&2\nkill -SEGV $$\n");
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("killed by signal 11"), "{m}");
    assert!(m.contains("| dying"), "{m}");
}

#[test]
fn a_hang_is_killed_at_the_timeout_with_everything_it_started() {
    let d = tempfile::tempdir().unwrap();
    // A child in the background holds stdout open: killing only the shell
    // would leave the pipe open and the reader waiting.
    let s = script(
        d.path(),
        "hang.sh",
        "sleep 1000 &\necho $! > child.pid\necho $$ > self.pid\necho waiting >&2\nwait\n",
    );
    let mut p = program(d.path(), &["sh", s]);
    p.timeout_s = 1.0;
    let m = program_error(solve(p));
    assert!(m.contains("timeout of 1 s"), "{m}");
    assert!(m.contains("| waiting"), "{m}");
    assert!(gone(read_pid(d.path(), "self.pid")));
    assert!(
        gone(read_pid(d.path(), "child.pid")),
        "the background child survived"
    );
}

#[test]
fn cancellation_kills_the_group() {
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "long.sh", "echo $$ > self.pid\nsleep 1000\n");
    let p = program(d.path(), &["sh", s]);
    let flag = Arc::new(AtomicBool::new(false));
    let ctx = TaskContext::new(1, Fidelity::Full).with_cancel_flag(flag.clone());
    let setter = {
        let (flag, pid) = (flag.clone(), d.path().join("self.pid"));
        std::thread::spawn(move || {
            while !pid.exists() {
                std::thread::sleep(Duration::from_millis(10));
            }
            flag.store(true, Ordering::Relaxed);
        })
    };
    let r = ExternalSolver::new(p).solve(&json!({}), &ctx);
    setter.join().unwrap();
    assert!(matches!(r, Err(SolveError::Cancelled)), "{r:?}");
    assert!(gone(read_pid(d.path(), "self.pid")));
}

#[test]
fn garbage_on_stdout_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "garbage.sh",
        "echo 'Loading model...'\necho '{}'\n",
    );
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("not one JSON object"), "{m}");
    assert!(m.contains("Loading model"), "{m}");
    assert!(m.contains("diagnostics to stderr"), "{m}");
}

#[test]
fn megabytes_on_stdout_are_cut_off() {
    let d = tempfile::tempdir().unwrap();
    // 64 MiB of zeros, more than the 16 MiB cap.
    let s = script(
        d.path(),
        "flood.sh",
        "head -c 67108864 /dev/zero | tr '\\0' 'x'\n",
    );
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("more than 16 MiB on stdout"), "{m}");
}

#[test]
fn megabytes_on_stderr_keep_only_the_tail_and_do_not_block() {
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "chatty.sh",
        "head -c 20000000 /dev/zero | tr '\\0' 'y' >&2\necho >&2\necho 'the last line' >&2\n\
         echo '{\"metrics\": {\"L\": 3}}'\n",
    );
    let o = solve(program(d.path(), &["sh", s])).unwrap();
    assert_eq!(o.get("L"), Some(3.0));
    // And when such a program fails, the message holds the tail only.
    let s = script(
        d.path(),
        "chatty-fail.sh",
        "head -c 20000000 /dev/zero | tr '\\0' 'y' >&2\necho >&2\necho 'the last line' >&2\nexit 4\n",
    );
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("exited with code 4"), "{m}");
    assert!(m.contains("| the last line"), "{m}");
    assert!(m.len() < 6000, "{} bytes of message", m.len());
}

#[test]
fn exit_zero_without_output_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "silent.sh", "exit 0\n");
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("printed nothing on stdout"), "{m}");
    assert!(m.contains("its stderr was empty"), "{m}");
}

#[test]
fn output_only_on_stderr_is_shown() {
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "stderr.sh",
        "echo '{\"metrics\": {\"L\": 1}}' >&2\n",
    );
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("printed nothing on stdout"), "{m}");
    assert!(m.contains(r#"| {"metrics": {"L": 1}}"#), "{m}");
}

#[test]
fn unbounded_allocation_meets_the_memory_limit() {
    if !python() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = script(
        d.path(),
        "hog.py",
        "blocks = []\nwhile True:\n    blocks.append(bytearray(10 ** 7))\n",
    );
    let mut p = program(d.path(), &["python3", s]);
    p.memory_mb = 200;
    let m = program_error(solve(p));
    assert!(m.contains("MemoryError"), "{m}");
    assert!(m.contains("raise memory_mb"), "{m}");
}

#[test]
fn a_program_that_ignores_stdin_still_works() {
    // repro ends on SIGPIPE like other Unix filters (main.rs); a program that
    // leaves without reading a large request must not take repro with it.
    // SAFETY: sets the disposition repro itself runs with.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "deaf.sh", "echo '{\"metrics\": {\"L\": 5}}'\n");
    let mut p = program(d.path(), &["sh", s]);
    p.params.push(ParamSpec {
        name: "blob".into(),
        ty: ParamType::String,
        min: None,
        max: None,
        choices: Vec::new(),
        default: None,
        doc: String::new(),
    });
    let big = "z".repeat(4 << 20);
    let o = ExternalSolver::new(p)
        .solve(
            &json!({ "blob": big }),
            &TaskContext::new(1, Fidelity::Full),
        )
        .unwrap();
    assert_eq!(o.get("L"), Some(5.0));
}

#[test]
fn missing_metrics_and_non_finite_values_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "none.sh", "echo '{\"metrics\": {}}'\n");
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("metric `L` is missing"), "{m}");
    let s = script(d.path(), "nan.sh", "echo '{\"metrics\": {\"L\": NaN}}'\n");
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(m.contains("NaN and Infinity are not JSON"), "{m}");
    let s = script(d.path(), "big.sh", "echo '{\"metrics\": {\"L\": 1e999}}'\n");
    let m = program_error(solve(program(d.path(), &["sh", s])));
    assert!(
        m.contains("not one JSON object") || m.contains("finite"),
        "{m}"
    );
}

#[test]
fn a_missing_program_and_bad_parameters() {
    let d = tempfile::tempdir().unwrap();
    let m = program_error(solve(program(d.path(), &["no-such-program-here"])));
    assert!(m.contains("could not start `no-such-program-here`"), "{m}");
    assert!(m.contains("on PATH"), "{m}");
    let p = program(d.path(), &["sh", "-c", "exit 0"]);
    let e = ExternalSolver::new(p.clone())
        .solve(&json!({"x": -1}), &TaskContext::new(1, Fidelity::Full))
        .unwrap_err();
    assert!(matches!(e, SolveError::InvalidParam { .. }), "{e:?}");
    let e = ExternalSolver::new(p)
        .solve(&json!({"y": 1}), &TaskContext::new(1, Fidelity::Full))
        .unwrap_err();
    assert!(e.to_string().contains("unknown parameter `y`"), "{e}");
}

#[test]
fn a_relative_program_path_is_relative_to_the_manifest_folder() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("bin")).unwrap();
    let path = d.path().join("bin/answer");
    std::fs::write(&path, "#!/bin/sh\necho '{\"metrics\": {\"L\": 9}}'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = solve(program(d.path(), &["bin/answer"])).unwrap();
    assert_eq!(o.get("L"), Some(9.0));
}

#[test]
fn a_worker_with_other_files_refuses_to_run() {
    let d = tempfile::tempdir().unwrap();
    let s = script(d.path(), "a.sh", "echo '{\"metrics\": {\"L\": 1}}'\n");
    let mut p = program(d.path(), &["sh", s]);
    p.files = vec![s.to_string()];
    let planned = ExternalSolver::new(p);
    let def: Json = planned.definition().unwrap();
    // Same files: the rebuilt solver runs, under the planned hash.
    let same = ExternalSolver::from_definition(&def).unwrap();
    assert_eq!(same.code_hash(), planned.code_hash());
    assert!(same
        .solve(&json!({}), &TaskContext::new(1, Fidelity::Full))
        .is_ok());
    // The script changed on this "worker": it says which file and stops.
    script(d.path(), "a.sh", "echo '{\"metrics\": {\"L\": 2}}'\n");
    let other = ExternalSolver::from_definition(&def).unwrap();
    assert_eq!(other.code_hash(), planned.code_hash());
    let m = program_error(other.solve(&json!({}), &TaskContext::new(1, Fidelity::Full)));
    assert!(m.contains("file a.sh: planned sha256"), "{m}");
    assert!(m.contains("same files at the same path"), "{m}");
}
