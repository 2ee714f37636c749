//! End-to-end tests of programs declared as solvers (`solvers:`, README
//! "Bring your own solver"): they run, cache and rerun like the compiled-in
//! solvers, edits to their files rerun their tasks only, misbehaving programs
//! fail their tasks cleanly (exit 3, the tail of their stderr shown and
//! stored), bad declarations and parameters are refused at load (exit 2), and
//! workers on the queue run them.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIPPED: python3 is not installed");
    }
    ok
}

/// An analytic "model" in Python: L = rho / (1 - rho) of M/M/1, with the
/// request's seed and fidelity echoed into the note.
const MM1_PY: &str = r#"import json, sys
req = json.load(sys.stdin)
p = req["params"]
rho = p["lambda"] / p["mu"]
if rho >= 1:
    json.dump({"status": "saturated", "note": "rho >= 1"}, sys.stdout)
else:
    print("computing", file=sys.stderr)
    json.dump({"metrics": {"L": rho / (1 - rho) + p["shift"]},
               "note": "%s %s" % (req["fidelity"], req["seed"])}, sys.stdout)
"#;

const MANIFEST: &str = r#"
id: byo
title: a declared program beside a built-in model
version: 1
solvers:
  mm1py:
    command: [python3, solvers/mm1.py]
    kind: analytic
    params:
      lambda: { type: float, min: 0 }
      mu: { type: float, min: 0 }
      shift: { type: float, default: 0.0 }
    metrics: [L]
    timeout_s: 60
params: { mu: 1.0 }
sweep:
  lambda: [0.25, 0.5, 0.75]
series:
  ours: { solver: mm1k.exact, params: { K: 200 } }
  theirs: { solver: mm1py }
compare:
  - { metric: L, reference: ours, candidate: theirs, tolerance: 0.01 }
figures:
  - { id: byo-L, x: lambda, y: L, series: [ours, theirs] }
"#;

fn byo_project() -> tempfile::TempDir {
    let p = project(&[]);
    write_manifest(p.path(), "byo", MANIFEST);
    std::fs::create_dir_all(p.path().join("experiments/solvers")).unwrap();
    std::fs::write(p.path().join("experiments/solvers/mm1.py"), MM1_PY).unwrap();
    p
}

#[test]
fn a_declared_program_runs_caches_and_reruns_only_its_tasks_when_edited() {
    if !python() {
        return;
    }
    let p = byo_project();
    let first = ok(&repro(p.path(), &["check"]));
    assert_eq!(summary(&first), (6, 0, 6, 0), "{first}");
    assert!(p.path().join("results/figures/byo-L.png").is_file());
    let again = ok(&repro(p.path(), &["run"]));
    assert_eq!(summary(&again), (6, 6, 0, 0), "{again}");

    // Editing the script reruns its three tasks and nothing else...
    let script = p.path().join("experiments/solvers/mm1.py");
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str("# an edit\n");
    std::fs::write(&script, &text).unwrap();
    let o = repro(p.path(), &["why", "byo", "theirs", "0"]);
    ok(&o);
    let out = stdout(&o);
    assert!(out.contains("file solvers/mm1.py"), "{out}");
    assert!(out.contains("stored sha256"), "{out}");
    let edited = ok(&repro(p.path(), &["run"]));
    assert_eq!(summary(&edited), (6, 3, 3, 0), "{edited}");
    // ...and so does bumping the declared version; a label never does.
    let m = p.path().join("experiments/byo.yaml");
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(
        &m,
        text.replace("kind: analytic", "kind: analytic\n    version: 2"),
    )
    .unwrap();
    let bumped = ok(&repro(p.path(), &["run"]));
    assert_eq!(summary(&bumped), (6, 3, 3, 0), "{bumped}");

    // The stored results read back like any other: report and export.
    ok(&repro(p.path(), &["report"]));
    let csv = stdout(&repro(p.path(), &["export", "--format", "csv"]));
    assert!(csv.contains("byo,1,theirs,mm1py,0.5,L,1,"), "{csv}");

    // `repro solve` and `repro list --solvers` know it.
    let o = repro(
        p.path(),
        &["solve", "mm1py", "--params", r#"{"lambda": 0.5, "mu": 1}"#],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["metrics"]["L"], serde_json::json!(1.0));
    let o = repro(p.path(), &["list", "--solvers", "--format", "json"]);
    ok(&o);
    let all: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let mine = all
        .iter()
        .find(|s| s["name"] == "mm1py")
        .expect("mm1py listed");
    assert_eq!(mine["kind"], "analytic");
    assert_eq!(mine["params"][0]["name"], "lambda");
    assert_eq!(mine["params"][0]["type"], "float");
    assert_eq!(mine["params"][2]["default"], serde_json::json!(0));
    assert_eq!(mine["metrics"], serde_json::json!(["L"]));
    assert!(all.iter().any(|s| s["name"] == "mm1k.exact"));
    let text = stdout(&repro(p.path(), &["list", "--solvers"]));
    assert!(
        text.contains("mm1py (v2, analytic, experiments/byo.yaml)"),
        "{text}"
    );
}

/// Two programs in one manifest: editing one's script reruns that program's
/// tasks only; the other program's and the built-in's stay cached.
#[test]
fn editing_one_of_two_scripts_reruns_only_its_program() {
    if !python() {
        return;
    }
    let p = byo_project();
    let text = MANIFEST
        .replace(
            "params: { mu: 1.0 }",
            "  other:\n    command: [python3, solvers/other.py]\n    kind: analytic\n    \
             params: { lambda: { type: float }, mu: { type: float }, \
             shift: { type: float, default: 0.0 } }\n    metrics: [L]\n\
             params: { mu: 1.0 }",
        )
        .replace(
            "  theirs: { solver: mm1py }\n",
            "  theirs: { solver: mm1py }\n  also: { solver: other }\n",
        );
    assert_ne!(text, MANIFEST);
    write_manifest(p.path(), "byo", &text);
    let other = p.path().join("experiments/solvers/other.py");
    std::fs::write(&other, MM1_PY).unwrap();
    let first = ok(&repro(p.path(), &["run"]));
    assert_eq!(summary(&first), (9, 0, 9, 0), "{first}");

    std::fs::write(&other, format!("{MM1_PY}# an edit\n")).unwrap();
    let o = repro(p.path(), &["why", "byo", "also", "0"]);
    let why = stdout(&o);
    ok(&o);
    assert!(why.contains("file solvers/other.py"), "{why}");
    assert!(!why.contains("solvers/mm1.py"), "{why}");
    let o = repro(p.path(), &["why", "byo", "theirs", "0"]);
    let why = stdout(&o);
    ok(&o);
    assert!(
        why.contains("tasks cached") && !why.contains("not stored"),
        "{why}"
    );
    let edited = ok(&repro(p.path(), &["run"]));
    assert_eq!(summary(&edited), (9, 6, 3, 0), "{edited}");
}

/// The first fenced block of `lang` in the README's "Bring your own solver".
fn readme_block(lang: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Bring your own solver"))
        .expect("README has a section \"Bring your own solver\"");
    let open = format!("```{lang}\n");
    let start = section.find(&open).expect("a fenced block") + open.len();
    let len = section[start..].find("```").unwrap();
    section[start..start + len].to_string()
}

/// The README's walk-through, its script and manifest taken from the README
/// as they stand, does what the README says it does.
#[test]
fn the_readme_walk_through_works() {
    if !python() {
        return;
    }
    let p = project(&[]);
    let yaml = readme_block("yaml");
    assert!(yaml.starts_with("id: mine\n"), "{yaml}");
    write_manifest(p.path(), "mine", &yaml);
    let script = p.path().join("experiments/solvers/mm1.py");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    let py = readme_block("python");
    std::fs::write(&script, &py).unwrap();

    let first = ok(&repro(p.path(), &["check", "mine"]));
    assert_eq!(summary(&first), (6, 0, 6, 0), "{first}");
    assert!(p.path().join("results/figures/mine-L.png").is_file());
    assert_eq!(
        summary(&ok(&repro(p.path(), &["check", "mine"]))),
        (6, 6, 0, 0)
    );
    std::fs::write(&script, format!("{py}# an edit\n")).unwrap();
    let o = repro(p.path(), &["why", "mine", "theirs"]);
    let why = stdout(&o);
    ok(&o);
    assert!(why.contains("file solvers/mm1.py"), "{why}");
    let edited = ok(&repro(p.path(), &["check", "mine"]));
    assert_eq!(summary(&edited), (6, 3, 3, 0), "{edited}");
    let o = repro(
        p.path(),
        &["solve", "mm1py", "--params", r#"{"lambda": 0.5, "mu": 1}"#],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["metrics"]["L"], serde_json::json!(1.0));
    let list = stdout(&repro(p.path(), &["list", "--solvers"]));
    assert!(
        list.contains("mm1py") && list.contains("mm1k.exact"),
        "{list}"
    );
    // `check` exits 1 when an EM exceeds the tolerance.
    std::fs::write(
        &script,
        py.replace("rho / (1 - rho)", "1.05 * rho / (1 - rho)"),
    )
    .unwrap();
    let o = repro(p.path(), &["check", "mine"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// A "simulation" whose replications are known numbers: 3, 1, 2 (mean 2,
/// a wide CI), then 2 ± 0.05 alternately; `offset` is added to each.
const SPREAD_PY: &str = r#"import json, sys
req = json.load(sys.stdin)
r = req["replication"]
v = [3.0, 1.0, 2.0][r] if r < 3 else 2.0 + (0.05 if r % 2 else -0.05)
json.dump({"metrics": {"L": v + req["params"]["offset"]}}, sys.stdout)
"#;

const SPREAD: &str = r#"
id: spread
title: a declared simulation against M/M/1
version: 1
solvers:
  spread:
    command: [python3, spread.py]
    kind: simulation
    params:
      lambda: { type: float }
      mu: { type: float }
      offset: { type: float, default: 0.0 }
    metrics: [L]
params: { mu: 1.0 }
sweep:
  lambda: [0.5]
series:
  exact: { solver: mm1k.exact, params: { K: 60 } }
  sim: { solver: spread, replications: 3 }
compare:
  - { metric: L, reference: sim, candidate: exact, tolerance: 0.05 }
"#;

/// `check --resolve` adds replications of a declared simulation until the
/// inconclusive point is decided, and `compare` shows two versions of it.
#[test]
fn resolve_and_compare_work_with_a_declared_simulation() {
    if !python() {
        return;
    }
    let p = project(&[]);
    write_manifest(p.path(), "spread", SPREAD);
    std::fs::write(p.path().join("experiments/spread.py"), SPREAD_PY).unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--no-progress", "--format", "json"];
        args.extend_from_slice(extra);
        let o = repro(p.path(), &args);
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
        assert_eq!(o.status.code(), Some(1), "{v}");
        v
    };
    // Three replications, mean 2 and a 95% CI of 2 ± 2.5: inconclusive.
    let before = check(&[]);
    assert_eq!(
        before["failing_points"][0]["verdict"], "inconclusive",
        "{before}"
    );
    // Six: 2.008 ± 0.66, the EM is at least 26%: decided, fail.
    let after = check(&["--resolve"]);
    assert_eq!(after["failing_points"][0]["verdict"], "fail", "{after}");
    let n = after["replications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["series"] == "sim")
        .unwrap_or_else(|| panic!("no replication count: {after}"))["replications"]
        .as_u64();
    assert_eq!(n, Some(6), "{after}");

    // Version 2 moves the program's values down by 1: compare shows both.
    let v2 = SPREAD.replace("version: 1", "version: 2").replace(
        "solver: spread, replications",
        "solver: spread, params: { offset: -1.0 }, replications",
    );
    write_manifest(p.path(), "spread", &v2);
    ok(&repro(p.path(), &["run"]));
    let o = repro(
        p.path(),
        &["compare", "spread@1", "spread@2", "--metric", "L"],
    );
    let out = stdout(&o);
    ok(&o);
    assert!(out.contains("series `sim` (offset: 0 → -1)"), "{out}");
    assert!(out.contains("spread v1"), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains(" sim ") && l.contains(" L "))
        .unwrap_or_else(|| panic!("no sim row:\n{out}"));
    // Version 1 has the six replications --resolve added (mean 2.00833),
    // version 2 its three (mean 1).
    assert!(row.contains("2.00833") && row.contains("-1.00833"), "{row}");
}

/// Claims read a declared program's metrics like a built-in's: checked at
/// load against its declared metrics, evaluated after the run.
#[test]
fn claims_read_a_declared_programs_metrics() {
    if !python() {
        return;
    }
    let claim = |holds: &str| {
        MANIFEST.replace(
            "compare:\n",
            &format!(
                "claims:\n  - id: same-l\n    quote: \"the Python M/M/1 gives the closed form\"\n    \
                 where: \"test\"\n    entries: [byo-L]\n    holds: \"{holds}\"\ncompare:\n"
            ),
        )
    };
    let p = byo_project();
    let holds = "all(abs(theirs.L - ours.L) <= 0.001 * ours.L) and increasing(theirs.L)";
    write_manifest(p.path(), "byo", &claim(holds));
    let o = repro(p.path(), &["check", "--format", "json"]);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{v}");
    let c = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "same-l")
        .unwrap_or_else(|| panic!("no claim same-l: {v}"));
    assert_eq!(c["verdict"], "holds", "{c}");
    assert_eq!(c["evaluated_points"], 3, "{c}");
    // The same claim the other way round fails, and check says so.
    write_manifest(p.path(), "byo", &claim("decreasing(theirs.L)"));
    let o = repro(p.path(), &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A metric the program does not declare is refused at load.
    write_manifest(p.path(), "byo", &claim("all(theirs.W > 0)"));
    let o = repro(p.path(), &["check"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("experiments/byo.yaml:") && err.contains("claims.0.holds"),
        "{err}"
    );
}

/// Each program misbehaves in its own way; `expect` is what its task's
/// error must say. Each has a timeout of 20 s but `hang`, 1 s.
const MISBEHAVING: [(&str, &str, &str); 8] = [
    (
        "crash",
        "import sys\nsys.stdin.read()\nprint('about to fail', file=sys.stderr)\nraise RuntimeError('boom')\n",
        "exited with code 1",
    ),
    ("hang", "import time\ntime.sleep(1000)\n", "timeout of 1 s"),
    ("garbage", "print('hello, world')\n", "not one JSON object"),
    (
        "flood",
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(64):\n    sys.stdout.write(chunk)\n",
        "more than 16 MiB on stdout",
    ),
    ("silent", "pass\n", "printed nothing on stdout"),
    (
        "hog",
        "blocks = []\nwhile True:\n    blocks.append(bytearray(10 ** 7))\n",
        "MemoryError",
    ),
    (
        "stderr_only",
        "import sys\nprint('{\"metrics\": {\"L\": 1}}', file=sys.stderr)\n",
        "printed nothing on stdout",
    ),
    (
        "nan",
        "print('{\"metrics\": {\"L\": NaN}}')\n",
        "NaN and Infinity are not JSON",
    ),
];

#[test]
fn misbehaving_programs_fail_their_tasks_with_exit_3_and_their_stderr() {
    if !python() {
        return;
    }
    let p = project(&[]);
    let dir = p.path().join("experiments");
    let mut solvers = String::from("solvers:\n");
    let mut series = String::from("series:\n  ok: { solver: mm1k.exact, params: { K: 5 } }\n");
    for (name, code, _) in MISBEHAVING {
        std::fs::write(dir.join(format!("{name}.py")), code).unwrap();
        let timeout = if name == "hang" { 1 } else { 20 };
        solvers.push_str(&format!(
            "  {name}:\n    command: [python3, {name}.py]\n    kind: analytic\n    \
             params: {{ lambda: {{ type: float }}, mu: {{ type: float }} }}\n    \
             metrics: [L]\n    timeout_s: {timeout}\n    memory_mb: 256\n"
        ));
        series.push_str(&format!("  {name}: {{ solver: {name} }}\n"));
    }
    write_manifest(
        p.path(),
        "bad",
        &format!(
            "id: bad\ntitle: misbehaving programs\nversion: 1\n{solvers}\
             params: {{ lambda: 0.5, mu: 1.0 }}\n{series}"
        ),
    );
    let o = repro(p.path(), &["run"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(summary(&err), (9, 0, 9, 8), "{err}");
    for (name, _, expect) in MISBEHAVING {
        let line = err
            .lines()
            .position(|l| l.contains(&format!("external solver `{name}`")))
            .unwrap_or_else(|| panic!("no failure of {name} in:\n{err}"));
        let block: String = err
            .lines()
            .skip(line)
            .take(30)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(block.contains(expect), "{name}: {expect:?} not in\n{block}");
    }
    // The tail of stderr is shown, and kept in the store with the failure.
    assert!(err.contains("| RuntimeError: boom"), "{err}");
    assert!(err.contains("| about to fail"), "{err}");
    assert!(err.contains("raise memory_mb"), "{err}");
    assert!(err.contains("rerun it with: repro solve crash"), "{err}");
    let why = stdout(&repro(p.path(), &["why", "bad", "crash"]));
    assert!(why.contains("it failed when it last ran"), "{why}");
    assert!(why.contains("RuntimeError: boom"), "{why}");
    // A failed task reruns; the good series stays cached.
    let o = repro(p.path(), &["run"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(summary(&stderr(&o)), (9, 1, 8, 8));
}

/// Manifests that must be refused at load, with the key and words each error
/// must name.
#[test]
fn bad_declarations_and_parameters_are_refused_at_load() {
    if !python() {
        return;
    }
    let cases: [(&str, &str, &str, &str); 10] = [
        // A misspelt parameter of a series, with a suggestion.
        (
            "theirs: { solver: mm1py }",
            "theirs: { solver: mm1py, params: { shfit: 1 } }",
            "series.theirs.params.shfit",
            "did you mean `shift`",
        ),
        // A value of the wrong type, out of range, not among the choices.
        (
            "params: { mu: 1.0 }",
            "params: { mu: fast }",
            "params.mu",
            // The built-in series `ours` shares the manifest's `mu` and is
            // checked first ("expected a number"); the program's own check
            // says "must be a number".
            "a number",
        ),
        (
            "lambda: [0.25, 0.5, 0.75]",
            "lambda: [0.25, -0.5]",
            "sweep.lambda",
            "must be >= 0",
        ),
        // A required parameter given nowhere.
        (
            "shift: { type: float, default: 0.0 }",
            "shift: { type: float }",
            "series.theirs.solver",
            "needs parameter `shift`",
        ),
        // A metric the program does not declare, in a comparison (read of
        // each side) and a figure (no series of it makes the metric).
        (
            "metric: L, reference",
            "metric: W, reference",
            "compare.0.metric",
            "`theirs` produces no metric `W`; its metrics: L",
        ),
        (
            "y: L, series",
            "y: Lx, series",
            "figures.0.y",
            "no series of it produces the metric `Lx`",
        ),
        // The declaration itself: a clash with a built-in, a type, a missing file.
        (
            "  mm1py:\n",
            "  mm1k.exact:\n",
            "solvers.mm1k.exact",
            "built into repro",
        ),
        (
            "shift: { type: float, default: 0.0 }",
            "shift: { type: double }",
            "solvers.mm1py.params.shift.type",
            "unknown variant `double`",
        ),
        (
            "command: [python3, solvers/mm1.py]",
            "command: [python3, solvers/mm1.py]\n    files: [solvers/gone.py]",
            "solvers.mm1py.files.0",
            "does not exist",
        ),
        (
            "shift: { type: float, default: 0.0 }",
            "shift: { type: float, min: 1, default: 0.0 }",
            "solvers.mm1py.params.shift.default",
            "must be >= 1",
        ),
    ];
    for (from, to, key, words) in cases {
        let p = byo_project();
        let m = p.path().join("experiments/byo.yaml");
        let text = MANIFEST.replace(from, to);
        assert_ne!(text, MANIFEST, "{from:?} is not in the manifest");
        let text = if from == "  mm1py:\n" {
            text.replace("solver: mm1py", "solver: mm1k.exact")
        } else {
            text
        };
        std::fs::write(&m, &text).unwrap();
        let o = repro(p.path(), &["run"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{key}: {err}");
        assert!(
            err.contains("experiments/byo.yaml:"),
            "{key}: no file:line in {err}"
        );
        assert!(err.contains(&format!("key `{key}`")), "{key}: {err}");
        assert!(err.contains(words), "{key}: {words:?} not in {err}");
        assert!(
            !p.path().join("results/repro.sqlite").exists(),
            "{key}: something ran"
        );
    }
}

/// `repro worker` (another process, started from another folder) runs a
/// declared program's queued tasks with the program the task carries; a
/// worker that finds other files at that path refuses.
#[test]
fn a_worker_on_the_queue_runs_a_declared_program() {
    if !python() {
        return;
    }
    let p = byo_project();
    ok(&repro(p.path(), &["run", "--store", "local.sqlite"]));
    let store = p.path().join("q.sqlite");
    let store = store.to_str().unwrap();
    let out = ok(&repro(
        p.path(),
        &["run", "--executor", "queue", "--detach", "--store", store],
    ));
    assert!(out.contains("queued for workers"), "{out}");
    let elsewhere = tempfile::tempdir().unwrap();
    let w = ok(&repro(elsewhere.path(), &["worker", "--store", store]));
    assert!(w.contains("6 results stored (0 failed tasks)"), "{w}");
    let rerun = ok(&repro(p.path(), &["run", "--store", store]));
    assert_eq!(summary(&rerun), (6, 6, 0, 0), "{rerun}");
    let export = |s: &str| stdout(&repro(p.path(), &["export", "--store", s]));
    assert_eq!(export(store), export("local.sqlite"));

    // The script changes after the tasks were queued: the worker says so.
    let q2 = p.path().join("q2.sqlite");
    let q2 = q2.to_str().unwrap();
    ok(&repro(
        p.path(),
        &[
            "run",
            "--executor",
            "queue",
            "--detach",
            "--store",
            q2,
            "byo",
        ],
    ));
    let script = p.path().join("experiments/solvers/mm1.py");
    std::fs::write(&script, format!("{MM1_PY}# changed\n")).unwrap();
    let w = ok(&repro(elsewhere.path(), &["worker", "--store", q2]));
    assert!(w.contains("(3 failed tasks)"), "{w}");
    let errors = failures(q2);
    assert_eq!(errors.len(), 3, "{errors:?}");
    for e in errors {
        assert!(e.contains("file solvers/mm1.py: planned sha256"), "{e}");
        assert!(e.contains("same files at the same path"), "{e}");
    }
}

/// The errors of the failed tasks in a SQLite store.
fn failures(store: &str) -> Vec<String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{store}"))
                .await
                .unwrap();
            sqlx::query_scalar("SELECT error FROM tasks WHERE status = 'failed'")
                .fetch_all(&mut c)
                .await
                .unwrap()
        })
}

/// Ctrl-C during a run stops the program and everything it started.
#[test]
fn an_interrupted_run_kills_the_program_group() {
    let p = project(&[]);
    std::fs::write(
        p.path().join("experiments/wait.sh"),
        "sleep 1000 &\necho $! > child.pid\necho $$ > self.pid\nwait\n",
    )
    .unwrap();
    write_manifest(
        p.path(),
        "waits",
        "id: waits\ntitle: a program that waits\nversion: 1\nsolvers:\n  waiter:\n    \
         command: [sh, wait.sh]\n    kind: analytic\n    metrics: [x]\n    timeout_s: 600\n\
         series:\n  w: { solver: waiter }\n",
    );
    let mut run = Command::new(repro_bin())
        .args(["run"])
        .current_dir(p.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = p.path().join("experiments/child.pid");
    let t0 = Instant::now();
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the program never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let read = |f: &str| -> i32 {
        std::fs::read_to_string(p.path().join("experiments").join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (shell, child) = (read("self.pid"), read("child.pid"));
    // SAFETY: sends SIGINT to the repro we started.
    unsafe {
        libc_kill(run.id() as i32, 2);
    }
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(gone(shell), "the program survived");
    assert!(gone(child), "the program's child survived");
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

fn gone(pid: i32) -> bool {
    for _ in 0..250 {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc_kill(pid, 0) } != 0 {
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

/// The SimPy example (examples/byos/simpy): runs where SimPy is installed
/// (.ci/run installs examples/byos/simpy/requirements.txt).
#[test]
fn the_simpy_example_checks() {
    if !python() {
        return;
    }
    let has_simpy = Command::new("python3")
        .args(["-c", "import simpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_simpy {
        // CI (.ci/run, CI=true) installs SimPy: there the example must run.
        assert!(
            std::env::var_os("CI").is_none(),
            "SimPy is not installed under CI: .ci/run installs examples/byos/simpy/requirements.txt"
        );
        println!(
            "SKIPPED: SimPy is not installed (pip install -r examples/byos/simpy/requirements.txt)"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = root.join("examples/byos/simpy/mmpp-m1-simpy.yaml");
    let work = tempfile::tempdir().unwrap();
    let store = work.path().join("s.sqlite");
    let o = repro(
        work.path(),
        &[
            "check",
            "--quick",
            manifest.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ],
    );
    let err = ok(&o);
    let (total, _, _, failed) = summary(&err);
    assert!(total > 0 && failed == 0, "{err}");
}
