//! The fuzzing harness of issue 11: property-based tests that generate and
//! mutate manifests and solver parameters, in process, and assert for every
//! input: no panic, no abort, no NaN or infinity in an outcome, bounded time
//! and memory, and an error that names the file and the key (or line).
//!
//! The normal test run tries a few hundred inputs (seconds). The long run for
//! release checks is the same harness with more cases:
//!
//! ```sh
//! REPRO_FUZZ_CASES=1000000 cargo test --release -p tests --test fuzz -- --nocapture
//! ```
//!
//! Memory is measured by a counting global allocator (this test binary's
//! own); time by a watchdog per input. Simulations get a cancel flag after a
//! short deadline, so a valid but long simulation ends early; a solver that
//! ignores it for longer than the watchdog is reported as a hang.

use pipeline::manifest::{self, limits};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use solvers::{Fidelity, Registry, TaskContext};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > MEMORY_PER_INPUT {
            huge_request(l.size());
            // Refused past the hard cap: the process aborts with the input
            // printed, instead of a solver's doubling vector taking the
            // machine's memory (torus.sim with lambda2 = 1e308 asked for
            // 1.6, 3.2, 6.4, 12.9 GB in turn).
            if CURRENT.load(Ordering::Relaxed).saturating_add(l.size()) > HARD_CAP {
                return std::ptr::null_mut();
            }
        }
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The input being handled, for [`huge_request`]: an allocation that fails
/// aborts the process, so the input is printed before it is attempted.
static INPUT: Mutex<String> = Mutex::new(String::new());

/// Prints the current input when one allocation asks for more than an input
/// may use. Called from the allocator: it must not allocate, so it writes
/// the text already held in [`INPUT`] through the unbuffered stderr.
#[cold]
fn huge_request(size: usize) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"HUGE allocation request (");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let _ = err.write_all(&digits[i..]);
    let _ = err.write_all(b" bytes) on input:\n");
    if let Ok(input) = INPUT.try_lock() {
        let _ = err.write_all(input.as_bytes());
    }
    let _ = err.write_all(b"\n");
}

/// Records the input about to be handled (see [`huge_request`]).
fn set_input(text: std::fmt::Arguments) {
    let mut input = INPUT.lock().unwrap_or_else(|e| e.into_inner());
    input.clear();
    std::fmt::Write::write_fmt(&mut *input, text).ok();
}

/// Most memory one input may take beyond what was allocated before it.
const MEMORY_PER_INPUT: usize = 1 << 30;
/// Most memory the harness lets the process hold at all: an allocation past
/// it fails (the process aborts after [`huge_request`] printed the input).
const HARD_CAP: usize = 4 << 30;
/// A hang detector, far above the second an analytic solver may take. It
/// limits the CPU time of the thread that handles the input (wall time when
/// the platform does not report it): a long run at low priority on a loaded
/// machine gets a few percent of a core, and wall time would then report
/// ordinary inputs as hangs.
const WATCHDOG: Duration = Duration::from_secs(60);

/// CPU time of the calling thread (Linux: `/proc/thread-self/schedstat`, in ns).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Wall and CPU time of one input.
struct Clock {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    fn start() -> Self {
        Clock {
            wall: Instant::now(),
            cpu: thread_cpu(),
        }
    }
    fn wall(&self) -> Duration {
        self.wall.elapsed()
    }
    /// CPU time since the start, or wall time where CPU time is unknown.
    fn cpu(&self) -> Duration {
        match (self.cpu, thread_cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.wall(),
        }
    }
}
/// Simulations are cancelled after this long: the harness checks that they
/// start, stay finite and stop, not their statistics.
const SIM_DEADLINE: Duration = Duration::from_millis(150);

/// An input still running this long after its start is printed while it runs.
const STUCK: Duration = Duration::from_secs(20);

/// The two fuzz tests share the allocator counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
/// Inputs that a solver accepted (an outcome, not an error): the harness
/// reports them so that a run that only ever hits validation is visible.
static SOLVED: AtomicUsize = AtomicUsize::new(0);
static LOADED: AtomicUsize = AtomicUsize::new(0);
/// What each solver answered in `fuzz_solver_params`: ok, ok with a note
/// (such as metrics left out as undefined), saturated, undefined, refused (a
/// parameter error naming one of the solver's parameters), unstable (the
/// model has no steady state for these inputs: a refusal that says which
/// quantity of the inputs, such as rho, is out of range), internal (a
/// numerical failure, or a parameter error naming no parameter the user can
/// give: a check is missing), cancelled (at the deadline). Printed at the
/// end, for docs/limits.md.
static OUTCOMES: Mutex<std::collections::BTreeMap<String, [usize; 8]>> =
    Mutex::new(std::collections::BTreeMap::new());
const OUTCOME_NAMES: [&str; 8] = [
    "ok",
    "ok with a note",
    "saturated",
    "undefined",
    "refused",
    "unstable",
    "internal",
    "cancelled",
];
/// The index of "internal" in [`OUTCOME_NAMES`].
const INTERNAL: usize = 6;

/// Sorts an answer into [`OUTCOME_NAMES`]. `params` are the solver's
/// documented parameters: a parameter error must name one of them (or an
/// element or field of one, `flows[1].src`), or it blames a name the user
/// never wrote. Errors of a program outside repro count as internal here
/// (the harness fuzzes compiled-in solvers only).
fn classify(r: &Result<solvers::Outcome, solvers::SolveError>, params: &[&str]) -> usize {
    use solvers::{SolveError, Status};
    match r {
        Ok(o) => match o.status {
            Status::Ok if o.note.is_some() => 1,
            Status::Ok => 0,
            Status::Saturated => 2,
            Status::Undefined => 3,
        },
        Err(SolveError::InvalidParam { param, .. }) => {
            if param
                .split([',', '/', ' '])
                .map(|p| p.split(['[', '.']).next().unwrap_or("").trim())
                .filter(|p| !p.is_empty())
                .all(|p| params.contains(&p))
            {
                4
            } else {
                INTERNAL
            }
        }
        Err(SolveError::BadParams(_)) => 4,
        Err(SolveError::Unstable(_)) => 5,
        Err(SolveError::Cancelled) => 7,
        Err(SolveError::Numerical(_) | SolveError::Program(_)) => INTERNAL,
    }
}

fn count_outcome(solver: &str, i: usize) {
    if let Ok(mut m) = OUTCOMES.lock() {
        m.entry(solver.to_string()).or_default()[i] += 1;
    }
}

/// Inputs generated so far by the running fuzz test (printed as it goes, so
/// a long run that is stopped still records how far it got).
static GENERATED: AtomicUsize = AtomicUsize::new(0);
/// An input slower than this is printed in full when it finishes, before
/// proptest starts shrinking (a slow input makes shrinking slow too).
const SLOW: Duration = Duration::from_secs(5);

/// Counts one generated input and prints progress every `every` inputs.
fn progress(test: &str, every: usize, started: Instant) {
    let n = GENERATED.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(every) {
        eprintln!(
            "{test}: {n} inputs generated in {:.0?} ({} loaded, {} solved)",
            started.elapsed(),
            LOADED.load(Ordering::Relaxed),
            SOLVED.load(Ordering::Relaxed)
        );
        print_outcomes();
    }
}

/// Prints [`OUTCOMES`] (nothing before a solver was called): at the end of
/// `fuzz_solver_params` and with each progress line, so a long campaign that
/// is stopped still records its counts per outcome.
fn print_outcomes() {
    let outcomes = OUTCOMES.lock().unwrap_or_else(|e| e.into_inner());
    if outcomes.is_empty() {
        return;
    }
    eprintln!("outcomes per solver ({}):", OUTCOME_NAMES.join(" / "));
    for (name, c) in outcomes.iter() {
        let c: Vec<String> = c.iter().map(usize::to_string).collect();
        eprintln!("  {name}: {}", c.join(" / "));
    }
}

/// How often to print progress: every 2,000 inputs (at most ten times) in a
/// long run, never in a short one.
fn every(n: u32) -> usize {
    if n > 10_000 {
        (n / 10).min(2_000) as usize
    } else {
        usize::MAX
    }
}

fn cases(normal: u32) -> u32 {
    std::env::var("REPRO_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(normal)
}

/// The runner's configuration: `n` cases from a seed that is printed, so a
/// failure (or an abort, which proptest cannot report) can be replayed with
/// `REPRO_FUZZ_SEED=<seed>`.
fn config(n: u32) -> Config {
    // The normal run (the README's test command) tries the same inputs
    // every time, so it cannot fail by chance; a long run (REPRO_FUZZ_CASES
    // set) draws new ones from the clock. Either way the seed is printed.
    let seed = std::env::var("REPRO_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            if long_run() {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            } else {
                NORMAL_SEED
            }
        });
    eprintln!("fuzz: REPRO_FUZZ_SEED={seed} REPRO_FUZZ_CASES={n}");
    Config {
        cases: n,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        // A failing input is printed before shrinking starts (see `SLOW`);
        // a slow one makes every shrink step slow, so shrinking is bounded.
        max_shrink_time: 120_000,
        ..Config::default()
    }
}

/// The seed of the normal run.
const NORMAL_SEED: u64 = 20_261_122;

/// A long run for release checks (REPRO_FUZZ_CASES set): every finding is
/// printed with its input and the run goes on; the test fails at the end
/// with the number of findings.
fn long_run() -> bool {
    std::env::var_os("REPRO_FUZZ_CASES").is_some()
}

/// Findings of a long run (see [`long_run`]).
static FINDINGS: AtomicUsize = AtomicUsize::new(0);

/// In a long run, records a failed check and lets the run go on.
fn finding(r: Result<(), TestCaseError>) -> Result<(), TestCaseError> {
    match r {
        Err(e) if long_run() => {
            let n = FINDINGS.fetch_add(1, Ordering::Relaxed) + 1;
            let input = INPUT.lock().map(|i| i.clone()).unwrap_or_default();
            eprintln!("FINDING {n}: {e}\non input: {input}");
            Ok(())
        }
        r => r,
    }
}

/// Runs `f` measuring its peak memory above the current level.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

fn shipped() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    v.sort();
    v.iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.5",
    "2",
    "1e9",
    "-1e9",
    "1e308",
    "-1e308",
    "5e-324",
    "1e-308",
    ".nan",
    ".inf",
    "-.inf",
    "99999999999999999999",
    "1000000",
    "100000",
    "[]",
    "{}",
    "[1, 2, 3]",
    "\"x\"",
    "null",
    "true",
    "!custom 1",
    "{from: 0, to: 1e300}",
    "{from: 1, to: 1000}",
    "{from: 0, to: 1, step: 1e-9}",
    "{zip: {a: [1], b: [2]}}",
    "&a [1, 2]",
    "*a",
    "../../x",
    "\"\"",
];

/// One mutation of a manifest text.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the value after the n-th `: ` with an extreme value.
    Value(usize, usize),
    /// Replace one byte with a YAML-significant character.
    Byte(usize, u8),
    /// Delete a line.
    DeleteLine(usize),
    /// Duplicate a line.
    DuplicateLine(usize),
    /// Insert a flow nest of this depth.
    Nest(usize, usize),
    /// Rename the n-th key (a typo).
    Typo(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(a, b)| Mutation::Value(a, b)),
        2 => (any::<usize>(), prop::sample::select(b"[]{}:-,!&*#'\"\n |>?%@`0.e".to_vec()))
            .prop_map(|(a, b)| Mutation::Byte(a, b)),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), 1..200usize).prop_map(|(a, d)| Mutation::Nest(a, d)),
        1 => any::<usize>().prop_map(Mutation::Typo),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match *m {
        Mutation::Value(n, v) => {
            let spots: Vec<usize> = text.match_indices(": ").map(|(i, _)| i + 2).collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let at = spots[n % spots.len()];
            let end = text[at..]
                .find([',', '}', '\n'])
                .map_or(text.len(), |e| at + e);
            format!("{}{}{}", &text[..at], EXTREMES[v], &text[end..])
        }
        Mutation::Byte(n, b) => {
            let mut bytes = text.as_bytes().to_vec();
            if bytes.is_empty() {
                return text.to_string();
            }
            let i = n % bytes.len();
            bytes[i] = b;
            String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())
        }
        Mutation::DeleteLine(n) if !lines.is_empty() => {
            let i = n % lines.len();
            lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        Mutation::DuplicateLine(n) if !lines.is_empty() => {
            let i = n % lines.len();
            let mut v = lines.clone();
            v.insert(i, lines[i]);
            v.join("\n")
        }
        Mutation::Nest(n, d) => {
            let spots: Vec<usize> = text.match_indices(": ").map(|(i, _)| i + 2).collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let at = spots[n % spots.len()];
            format!(
                "{}{}1{}{}",
                &text[..at],
                "[".repeat(d),
                "]".repeat(d),
                &text[at..]
            )
        }
        Mutation::Typo(n) => {
            let spots: Vec<usize> = text.match_indices(": ").map(|(i, _)| i).collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let at = spots[n % spots.len()];
            format!("{}x{}", &text[..at], &text[at..])
        }
        _ => text.to_string(),
    }
}

/// Loads a manifest and plans it under both fidelities; checks the error's shape.
fn check_manifest(text: &str, registry: &Registry) -> Result<(), TestCaseError> {
    let path = Path::new("fuzz.yaml");
    let text = text
        .replacen("id: ", "id: fuzz #", 1)
        .replacen("id: fuzz #", "id: fuzz\n#", 1);
    set_input(format_args!("manifest:\n{text}"));
    let clock = Clock::start();
    let ((), peak) = measured(|| match manifest::parse(path, &text, registry) {
        Err(e) => {
            assert_eq!(e.file, path);
            assert!(!e.message.is_empty(), "empty message");
            assert!(
                e.line.is_some() || !e.key.is_empty(),
                "an error without line or key: {e}\n---\n{text}"
            );
        }
        Ok(m) => {
            LOADED.fetch_add(1, Ordering::Relaxed);
            for f in [Fidelity::Full, Fidelity::Quick] {
                let p = pipeline::plan::plan(std::slice::from_ref(&m), registry, f)
                    .expect("a loaded manifest is within the task limit");
                assert!(p.uses.len() as u64 <= limits::MAX_TASKS);
                // Every planned parameter set is valid JSON the solver is
                // given (a sample of a large plan: the parse costs more than
                // the planning, and every set is written by the same code).
                let step = (p.tasks.len() / 1000).max(1);
                for t in p.tasks.iter().step_by(step) {
                    let _ = t.params_value();
                }
            }
        }
    });
    let (wall, cpu) = (clock.wall(), clock.cpu());
    if wall > SLOW {
        eprintln!(
            "SLOW manifest input ({wall:?} wall, {cpu:?} CPU, {peak} bytes):\n---\n{text}\n---"
        );
    }
    prop_assert!(peak <= MEMORY_PER_INPUT, "{peak} bytes for one manifest");
    prop_assert!(
        cpu < WATCHDOG,
        "{cpu:?} of CPU ({wall:?} wall) for one manifest"
    );
    Ok(())
}

#[test]
fn fuzz_manifests() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    let texts = shipped();
    let n = cases(1000);
    let mut runner = TestRunner::new(config(n));
    let strategy = (0..texts.len(), prop::collection::vec(mutation(), 1..3));
    let started = Instant::now();
    GENERATED.store(0, Ordering::Relaxed);
    let result = runner.run(&strategy, |(i, muts)| {
        progress("fuzz_manifests", every(n), started);
        let mut t = texts[i].clone();
        for m in &muts {
            t = apply(&t, m);
        }
        finding(check_manifest(&t, &registry))
    });
    eprintln!(
        "fuzz_manifests: {} inputs generated of {n} ({} loaded and planned, the rest refused) in {:?}",
        GENERATED.load(Ordering::Relaxed),
        LOADED.load(Ordering::Relaxed),
        started.elapsed()
    );
    result.unwrap();
    assert_eq!(FINDINGS.swap(0, Ordering::Relaxed), 0, "findings (above)");
}

/// A JSON value for one parameter: mostly numbers (ordinary and extreme),
/// sometimes other types.
fn param_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        3 => prop::sample::select(vec![
            0.0, 1.0, 2.0, 3.0, 0.5, 0.9, 4.0, 10.0, 16.0, 64.0, 1e3, 1e6, 1e9, 1e12, 1e300, 1e-9,
            1e-300, 5e-324, -1.0, -1e308, 1e308, 0.999999, 1.0000001, 2.5, 7.0,
        ])
        .prop_map(|x| json!(x)),
        6 => (0.05f64..20.0).prop_map(|x| json!(x)),
        4 => (1u64..24).prop_map(|x| json!(x)),
        1 => prop::sample::select(vec![
            json!(null), json!("x"), json!(true), json!([]), json!([1.0, 2.0]), json!([2.0, 1.0, 3.0]),
            json!({}), json!({"rate": 2.0}), json!({"shift": 0.1, "rate": 5.0}),
            json!({"mixture": [{"weight": 0.5, "rate": 2.0}, {"weight": 0.5, "shift": 0.2}]}),
            json!([1, 1e300]), json!([0.5, 0.5]), json!("derived"), json!("printed"), json!("duato"),
        ]),
    ]
}

/// Solves once at the quick fidelity, cancelled after [`SIM_DEADLINE`]
/// (returning as soon as the solver does); a solver that ignores its
/// cancel flag is named while it still runs (a hang never returns).
fn solve_by_deadline(
    s: &dyn solvers::Solver,
    params: &serde_json::Value,
    seed: u64,
) -> Result<solvers::Outcome, solvers::SolveError> {
    let cancel = Arc::new(AtomicBool::new(false));
    let ctx = TaskContext::new(seed, Fidelity::Quick).with_cancel_flag(cancel.clone());
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (cancel, done) = (cancel.clone(), done.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(Ordering::Relaxed) && start.elapsed() < SIM_DEADLINE {
                std::thread::sleep(Duration::from_millis(5));
            }
            cancel.store(true, Ordering::Relaxed);
            let mut told = false;
            while !done.load(Ordering::Relaxed) {
                if !told && start.elapsed() > STUCK {
                    told = true;
                    let input = INPUT.lock().map(|i| i.clone()).unwrap_or_default();
                    eprintln!("STUCK: still running {STUCK:?} after its start (cancelled at {SIM_DEADLINE:?}) on input: {input}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    // Set when the solver returns or panics, so the watcher ends.
    struct Done(Arc<AtomicBool>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let r = {
        let _done = Done(done);
        s.solve(params, &ctx)
    };
    watcher.join().ok();
    r
}

/// Solves once with a cancel deadline; checks panics, finiteness and time.
fn check_solve(
    registry: &Registry,
    solver: &str,
    params: serde_json::Value,
    seed: u64,
) -> Result<(), TestCaseError> {
    let s = registry.get(solver).unwrap();
    set_input(format_args!("{solver} {params} seed {seed}"));
    let clock = Clock::start();
    let (r, peak) = measured(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            solve_by_deadline(&*s, &params, seed)
        }))
    });
    let (wall, took) = (clock.wall(), clock.cpu());
    if wall > SLOW {
        eprintln!("SLOW solver input: {solver} took {wall:?} wall, {took:?} CPU on {params}");
    }
    let r = r.map_err(|_| TestCaseError::fail(format!("{solver} panicked on {params}")))?;
    let names: Vec<&str> = s.doc().params.iter().map(|p| p.name).collect();
    let outcome = classify(&r, &names);
    count_outcome(solver, outcome);
    prop_assert!(
        took < WATCHDOG,
        "{solver} took {took:?} of CPU ({wall:?} wall) on {params}"
    );
    prop_assert!(
        peak <= MEMORY_PER_INPUT,
        "{solver} took {peak} bytes on {params}"
    );
    match r {
        Ok(o) => {
            SOLVED.fetch_add(1, Ordering::Relaxed);
            for (k, m) in &o.metrics {
                prop_assert!(
                    m.value.is_finite() && m.half_width.is_none_or(f64::is_finite),
                    "{solver}: metric {k} = {m:?} on {params}"
                );
            }
        }
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            // Issue 32 item 5: an input the solver cannot answer is refused
            // naming the user's parameter, its value and the accepted range,
            // never left to fail inside the numerics.
            prop_assert!(
                outcome != INTERNAL,
                "{solver}: internal failure naming no parameter the user gave: {e} on {params}"
            );
        }
    }
    Ok(())
}

/// Valid parameter sets to mutate: the tasks of every shipped manifest,
/// a few per solver.
fn seeds(registry: &Registry) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    let mut out: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for (i, text) in shipped().iter().enumerate() {
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("id: "))
            .unwrap_or("x")
            .trim()
            .to_string();
        let Ok(m) = manifest::parse(Path::new(&format!("{id}.yaml")), text, registry) else {
            panic!("shipped manifest {i} does not load");
        };
        let plan =
            pipeline::plan::plan(std::slice::from_ref(&m), registry, Fidelity::Quick).unwrap();
        for t in plan.tasks {
            // Built-in solvers only: a program a manifest declares runs
            // outside repro (tests/tests/external.rs covers those).
            if registry.get(&t.solver).is_none() {
                continue;
            }
            if out.iter().filter(|(s, _)| **s == *t.solver).count() < 8 {
                if let serde_json::Value::Object(p) = t.params_value() {
                    out.push((t.solver.to_string(), p));
                }
            }
        }
    }
    out
}

#[test]
fn fuzz_solver_params() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    // REPRO_FUZZ_SKIP=a,b leaves solvers out of a long run (a known finding
    // that would stop the run at each hit; say so in the run's report).
    let skip: Vec<String> = std::env::var("REPRO_FUZZ_SKIP")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    // REPRO_FUZZ_ONLY=a,b fuzzes only these solvers (a campaign per solver).
    let only: Vec<String> = std::env::var("REPRO_FUZZ_ONLY")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let wanted = |name: &str| {
        !skip.iter().any(|k| k == name) && (only.is_empty() || only.iter().any(|k| k == name))
    };
    let solvers: Vec<(String, Vec<&'static str>)> = registry
        .iter()
        .filter(|s| wanted(s.name()))
        .map(|s| {
            (
                s.name().to_string(),
                s.doc().params.iter().map(|p| p.name).collect(),
            )
        })
        .collect();
    let mut seeds = seeds(&registry);
    seeds.retain(|(name, _)| wanted(name));
    assert!(
        !solvers.is_empty(),
        "no solver left to fuzz (REPRO_FUZZ_ONLY, REPRO_FUZZ_SKIP)"
    );
    OUTCOMES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let n = cases(1000);
    let mut runner = TestRunner::new(config(n));
    // Either a shipped parameter set with a few keys changed, removed or
    // added, or a set generated from a solver's documented keys.
    let strategy = (
        prop::bool::weighted(0.7),
        any::<usize>(),
        prop::collection::vec((any::<usize>(), param_value(), 0..8u8), 1..4),
        prop::collection::vec((prop::bool::weighted(0.9), param_value()), 16),
        any::<u64>(),
    );
    let started = Instant::now();
    GENERATED.store(0, Ordering::Relaxed);
    let result = runner.run(&strategy, |(mutate, pick, edits, values, seed)| {
        progress("fuzz_solver_params", every(n), started);
        let (name, params) = if mutate && !seeds.is_empty() {
            let (name, base) = &seeds[pick % seeds.len()];
            let keys: Vec<&'static str> = solvers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, k)| k.clone())
                .unwrap_or_default();
            let mut p = base.clone();
            for (k, v, how) in edits {
                if keys.is_empty() {
                    break;
                }
                let key = keys[k % keys.len()].to_string();
                match how {
                    0 => {
                        p.remove(&key);
                    }
                    1 => {
                        p.insert("batch_lenn".into(), v);
                    }
                    _ => {
                        p.insert(key, v);
                    }
                }
            }
            (name.clone(), p)
        } else {
            let (name, keys) = &solvers[pick % solvers.len()];
            let mut p = serde_json::Map::new();
            for (k, (present, v)) in keys.iter().zip(values) {
                if present {
                    p.insert(k.to_string(), v);
                }
            }
            (name.clone(), p)
        };
        finding(check_solve(
            &registry,
            &name,
            serde_json::Value::Object(params),
            seed,
        ))
    });
    eprintln!(
        "fuzz_solver_params: {} inputs generated of {n} ({} solved, the rest refused) in {:?}",
        GENERATED.load(Ordering::Relaxed),
        SOLVED.load(Ordering::Relaxed),
        started.elapsed()
    );
    print_outcomes();
    result.unwrap();
    assert_eq!(FINDINGS.swap(0, Ordering::Relaxed), 0, "findings (above)");
}

/// Every shipped manifest with every single value replaced by every extreme
/// value, each loaded and planned and timed: a deterministic sweep of the
/// mutation the long run found slow. Ignored in the normal run (about 1.4·10⁵
/// inputs); run with
/// `cargo test --release -p tests --test fuzz -- --ignored exhaustive --nocapture`.
#[test]
#[ignore]
fn exhaustive_single_values() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    let texts = shipped();
    let started = Instant::now();
    let (mut count, mut slowest) = (0usize, (Duration::ZERO, String::new()));
    for text in &texts {
        let spots = text.match_indices(": ").count();
        for n in 0..spots {
            for v in 0..EXTREMES.len() {
                let t = apply(text, &Mutation::Value(n, v));
                let clock = Clock::start();
                check_manifest(&t, &registry).unwrap();
                count += 1;
                if clock.cpu() > slowest.0 {
                    slowest = (clock.cpu(), t);
                }
            }
        }
    }
    eprintln!(
        "exhaustive_single_values: {count} inputs in {:?}; slowest {:?} of CPU:\n{}",
        started.elapsed(),
        slowest.0,
        slowest.1
    );
}

/// The slowest single-value mutation `exhaustive_single_values` found
/// (session 7): yan-5.9-5.11 with its λ range ending at 100000 instead of
/// 7.5 is 200,000 points × 5 series = 10⁶ tasks, exactly the task limit.
/// It loads and plans at both fidelities (about 1.5 s of CPU per plan), and
/// the plan holds what the manifest asks for. The long run's 166 s on a
/// mutation like this one was wall time at `nice 10` on a machine at load 17
/// (a few percent of a core); the watchdog now counts CPU time.
#[test]
fn a_manifest_at_the_task_limit_plans() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments");
    let text = std::fs::read_to_string(dir.join("yan-5.9-5.11.yaml")).unwrap();
    let grown = text.replace("to: 7.5, step: 0.5", "to: 100000, step: 0.5");
    assert_ne!(
        grown, text,
        "the shipped manifest changed: update this test"
    );
    check_manifest(&grown, &registry).unwrap();
    let m = manifest::parse(
        Path::new("fuzz.yaml"),
        &grown.replacen("id: ", "id: fuzz\n#", 1),
        &registry,
    )
    .unwrap();
    assert_eq!(m.points.len(), 200_000);
    let tasks = pipeline::plan::task_count(&m, &registry, Fidelity::Full);
    assert_eq!(tasks, limits::MAX_TASKS);
}

/// The issue's rule "no analytic solver takes more than a second on any
/// input it accepts", probed: every analytic solver, from each of its
/// shipped parameter sets, with each numeric parameter scaled up (×2, ×4, …)
/// and down (÷2, ÷4, …) until the solver refuses it (or 2⁴⁰), every accepted
/// input timed in CPU time. Prints the slowest accepted input per solver and
/// lists those over a second. Ignored in the normal run (minutes); run with
/// `cargo test --release -p tests --test fuzz -- --ignored analytic_time_probe --nocapture`
/// (`REPRO_PROBE_SOLVER=name` probes one solver, `REPRO_FUZZ_SKIP=a,b` leaves some out).
#[test]
#[ignore]
fn analytic_time_probe() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    let only = std::env::var("REPRO_PROBE_SOLVER").ok();
    let skip: Vec<String> = std::env::var("REPRO_FUZZ_SKIP")
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let mut seeds = seeds(&registry);
    seeds.retain(|(name, _)| {
        registry.get(name).unwrap().kind() == solvers::Kind::Analytic
            && only.as_deref().is_none_or(|o| o == name)
            && !skip.contains(name)
    });
    // Two parameter sets per solver keep the probe within minutes.
    let mut kept: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for s in seeds {
        if kept.iter().filter(|(n, _)| *n == s.0).count() < 2 {
            kept.push(s);
        }
    }
    let ctx = TaskContext::new(1, Fidelity::Full);
    let mut slowest: std::collections::BTreeMap<String, (Duration, String)> = Default::default();
    let mut over = Vec::new();
    let mut tried = 0usize;
    for (name, base) in &kept {
        let solver = registry.get(name).unwrap();
        for (key, value) in base {
            let Some(x) = value.as_f64().filter(|x| *x != 0.0) else {
                continue;
            };
            for factor in [2.0f64, 0.5] {
                let mut v = x;
                for _ in 0..40 {
                    v *= factor;
                    let mut p = base.clone();
                    let json = if value.is_u64() && v.fract() == 0.0 && v < 9e15 {
                        serde_json::json!(v as u64)
                    } else {
                        serde_json::json!(v)
                    };
                    p.insert(key.clone(), json);
                    let params = serde_json::Value::Object(p);
                    set_input(format_args!("{name} {params}"));
                    let clock = Clock::start();
                    let r = solver.solve(&params, &ctx);
                    let cpu = clock.cpu();
                    tried += 1;
                    if r.is_err() {
                        break;
                    }
                    let e = slowest.entry(name.clone()).or_default();
                    if cpu > e.0 {
                        *e = (cpu, params.to_string());
                    }
                    if cpu > Duration::from_secs(1) {
                        eprintln!("OVER 1 s: {name} took {cpu:?} of CPU on {params}");
                        over.push((name.clone(), cpu, params.to_string()));
                        // Larger still would only be slower.
                        break;
                    }
                }
            }
        }
    }
    eprintln!("analytic_time_probe: {tried} inputs; slowest accepted input per solver:");
    for (name, (cpu, params)) in &slowest {
        eprintln!("  {name:24} {cpu:>10.3?}  {params}");
    }
    eprintln!("{} accepted inputs over 1 s of CPU", over.len());
}

/// Most memory (heap bytes, counted by this binary's allocator) any solver
/// may take on any input it accepts (issue 32 item 1): the bound each
/// solver checks before it allocates (dense chains, the flit engine's
/// state, queue capacities, truncation levels) keeps it far below this
/// (docs/limits.md lists the largest peak per solver).
const SOLVER_MEMORY_BOUND: usize = MEMORY_PER_INPUT;

/// Parameter sets of the solvers no shipped manifest uses.
fn unshipped_bases() -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    use serde_json::json;
    [
        (
            "mmpp.stats",
            json!({"phi1": 0.6, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "t": 1.0}),
        ),
        (
            "mmpp.superpose",
            json!({"phi1": 0.6, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "factor": 8}),
        ),
        (
            "mmpp_m1.departure",
            json!({"phi1": 0.6, "phi2": 0.2, "lambda1": 2.0, "lambda2": 0.5, "mu": 2.0}),
        ),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v.as_object().unwrap().clone()))
    .collect()
}

/// Issue 32 item 1: every solver's largest accepted inputs stay under
/// [`SOLVER_MEMORY_BOUND`]. From one parameter set per solver (a shipped
/// manifest's, or [`unshipped_bases`]), each numeric parameter is doubled
/// (whole numbers: sizes, counts, lengths) or doubled and halved (the
/// others: rates, times, loads) until the solver refuses it or 2⁴⁰; every
/// accepted input is solved at the quick fidelity (simulations cancelled
/// after [`SIM_DEADLINE`], by which their state is allocated: what grows
/// during a run, such as a backlog of messages, is bounded by each
/// simulator's own limits and by the long fuzz runs' per-input check) and
/// its peak heap measured. Prints each solver's largest peak and its input. Every
/// registered compiled-in solver must have a parameter set here.
#[test]
fn every_solvers_largest_accepted_inputs_stay_under_the_memory_bound() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::with_all();
    let only = std::env::var("REPRO_PROBE_SOLVER").ok();
    let mut bases: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for s in seeds(&registry).into_iter().chain(unshipped_bases()) {
        if !bases.iter().any(|(n, _)| *n == s.0) {
            bases.push(s);
        }
    }
    for s in registry.iter() {
        assert!(
            bases.iter().any(|(n, _)| n == s.name()),
            "solver {} has no parameter set: add one to unshipped_bases",
            s.name()
        );
    }
    bases.retain(|(n, _)| only.as_deref().is_none_or(|o| o == n));
    let started = Instant::now();
    let mut tried = 0usize;
    let mut report = Vec::new();
    for (name, base) in &bases {
        let solver = registry.get(name).unwrap();
        let mut largest = (0usize, String::new());
        for (key, value) in base {
            let Some(x) = value.as_f64().filter(|x| *x > 0.0) else {
                continue;
            };
            let whole = value.is_u64();
            let factors: &[f64] = if whole { &[2.0] } else { &[2.0, 0.5] };
            for &factor in factors {
                let mut v = x;
                for _ in 0..40 {
                    v *= factor;
                    let mut p = base.clone();
                    p.insert(
                        key.clone(),
                        if whole && v < 9e15 {
                            serde_json::json!(v as u64)
                        } else {
                            serde_json::json!(v)
                        },
                    );
                    let params = serde_json::Value::Object(p);
                    set_input(format_args!("{name} {params}"));
                    let (r, peak) = measured(|| solve_by_deadline(&*solver, &params, 1));
                    tried += 1;
                    let refused = matches!(
                        r,
                        Err(solvers::SolveError::InvalidParam { .. }
                            | solvers::SolveError::BadParams(_))
                    );
                    if refused {
                        break;
                    }
                    assert!(
                        peak <= SOLVER_MEMORY_BOUND,
                        "{name} took {peak} bytes on {params}"
                    );
                    if peak > largest.0 {
                        largest = (peak, params.to_string());
                    }
                }
            }
        }
        report.push((name.clone(), largest));
    }
    eprintln!(
        "every_solvers_largest_accepted_inputs_stay_under_the_memory_bound: {tried} inputs in {:.0?}; largest peak heap per solver:",
        started.elapsed()
    );
    for (name, (peak, params)) in &report {
        eprintln!(
            "  {name:22} {:>10.1} MiB  {params}",
            *peak as f64 / (1 << 20) as f64
        );
    }
}
