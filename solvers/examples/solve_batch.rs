//! Many tasks in one process, one per input line, for profiles and paired
//! timings of a store's worth of small tasks without the pipeline:
//! each line of stdin is `solver<TAB>params as JSON<TAB>seed<TAB>fidelity`
//! (`quick`, `full`, or `any` for an analytical model: run as full), e.g. the output of
//! `sqlite3 -separator $'\t' store.sqlite "select solver, params, seed,
//! fidelity from tasks where solver = 'multicluster.sim'"`.
//! Each outcome is printed as one line of JSON on stdout (so two builds can
//! be compared with `cmp`); the CPU time of the whole batch and the count of
//! tasks go to stderr, then the tasks and CPU seconds per solver.
//!
//! Options:
//! - `--hash`: print, per task, the FNV-1a hash of its outcome's JSON, the
//!   solver and the input line number instead of the JSON (two builds are
//!   compared task by task with `diff`);
//! - `--pipeline-replications`: number replications as the pipeline does
//!   (the first task of each solver and parameters is replication 0, the
//!   others replication 1; without it every task is replication 0). This
//!   matters for `ibecn.sim`, whose replication 0 carries the rate series
//!   (1.6 MB of JSON) and the others do not;
//! - `--solver PREFIX`: run only the lines whose solver starts with PREFIX.
//!
//! `cargo run --release -p solvers --example solve_batch -- [options] < tasks.tsv`

#[path = "common/cpu.rs"]
mod cpu;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};

use solvers::{Fidelity, Registry, TaskContext};

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn usage() -> ! {
    eprintln!(
        "usage: solve_batch [--hash] [--pipeline-replications] [--solver PREFIX] < tasks.tsv"
    );
    std::process::exit(2);
}

fn main() {
    let (mut hash, mut pipeline_reps, mut prefix) = (false, false, String::new());
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--hash" => hash = true,
            "--pipeline-replications" => pipeline_reps = true,
            "--solver" => prefix = args.next().unwrap_or_else(|| usage()),
            _ => usage(),
        }
    }
    let reg = Registry::with_all();
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let t0 = std::time::Instant::now();
    let cpu0 = cpu::seconds().unwrap_or(0.0);
    let mut n = 0usize;
    let mut seen = HashSet::new();
    let mut per_solver: BTreeMap<String, (usize, f64)> = BTreeMap::new();
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
        if !name.starts_with(&prefix) {
            continue;
        }
        let Some(solver) = reg.get(name) else {
            eprintln!("line {}: no solver {name}", i + 1);
            std::process::exit(2);
        };
        let params: serde_json::Value = serde_json::from_str(params).unwrap_or_else(|e| {
            eprintln!("line {}: params: {e}", i + 1);
            std::process::exit(2);
        });
        // Stores keep seeds as signed 64-bit integers.
        let seed: u64 = seed
            .parse::<i64>()
            .map(|s| s as u64)
            .or_else(|_| seed.parse::<u64>())
            .unwrap_or_else(|e| {
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
        let rep = pipeline_reps && !seen.insert((name.to_string(), params.to_string()));
        let ctx = TaskContext::new(seed, fidelity).with_replication(u32::from(rep));
        let c0 = cpu::seconds().unwrap_or(0.0);
        let text = match solver.solve(&params, &ctx) {
            Ok(o) => serde_json::to_string(&o).expect("outcome as JSON"),
            Err(e) => format!("error: {e}"),
        };
        let c1 = cpu::seconds().unwrap_or(0.0);
        if hash {
            writeln!(out, "{:016x} {name} {}", fnv1a(text.as_bytes()), i + 1)
        } else {
            writeln!(out, "{text}")
        }
        .expect("stdout");
        let e = per_solver.entry(name.to_string()).or_default();
        e.0 += 1;
        e.1 += c1 - c0;
        n += 1;
    }
    out.flush().expect("stdout");
    eprintln!(
        "{n} tasks, {:.3} CPU-s, {:.3} s wall",
        cpu::seconds().unwrap_or(0.0) - cpu0,
        t0.elapsed().as_secs_f64()
    );
    for (name, (k, cpu)) in per_solver {
        eprintln!("{name}: {k} tasks, {cpu:.2} CPU s");
    }
}
