//! Many tasks in one process, one per input line, for profiles and paired
//! timings of a store's worth of small tasks without the pipeline:
//! each line of stdin is `solver<TAB>params as JSON<TAB>seed<TAB>fidelity`
//! (`quick`, `full`, or `any` for an analytical model: run as full), e.g. the output of
//! `sqlite3 -separator $'\t' store.sqlite "select solver, params, seed,
//! fidelity from tasks where solver = 'multicluster.sim'"`.
//! Each outcome is printed as one line of JSON on stdout (so two builds can
//! be compared with `cmp`); the CPU time of the whole batch and the count of
//! tasks go to stderr.

use std::io::{BufRead, Write};

use solvers::{Fidelity, Registry, TaskContext};

fn cpu_seconds() -> f64 {
    // user + system of this process, from /proc (Linux); 0 elsewhere.
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may contain spaces) end at ')'.
    let rest = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = 100.0;
    let user: f64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    let sys: f64 = f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    (user + sys) / tick
}

fn main() {
    let reg = Registry::with_all();
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let t0 = std::time::Instant::now();
    let c0 = cpu_seconds();
    let mut n = 0usize;
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.expect("stdin");
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, params, seed, fidelity] = cols[..] else {
            eprintln!("line {}: expected 4 tab-separated columns", i + 1);
            std::process::exit(2);
        };
        let Some(solver) = reg.get(name) else {
            eprintln!("line {}: no solver {name}", i + 1);
            std::process::exit(2);
        };
        let params: serde_json::Value = serde_json::from_str(params).unwrap_or_else(|e| {
            eprintln!("line {}: params: {e}", i + 1);
            std::process::exit(2);
        });
        let seed: u64 = seed.parse().unwrap_or_else(|e| {
            eprintln!("line {}: seed: {e}", i + 1);
            std::process::exit(2);
        });
        let fidelity = match fidelity {
            "quick" => Fidelity::Quick,
            "full" | "any" => Fidelity::Full,
            f => {
                eprintln!("line {}: fidelity {f}: quick, full or any", i + 1);
                std::process::exit(2);
            }
        };
        let ctx = TaskContext::new(seed, fidelity);
        let text = match solver.solve(&params, &ctx) {
            Ok(o) => serde_json::to_string(&o).expect("outcome as JSON"),
            Err(e) => format!("error: {e}"),
        };
        writeln!(out, "{text}").expect("stdout");
        n += 1;
    }
    out.flush().expect("stdout");
    eprintln!(
        "{n} tasks, {:.3} CPU-s, {:.3} s wall",
        cpu_seconds() - c0,
        t0.elapsed().as_secs_f64()
    );
}
