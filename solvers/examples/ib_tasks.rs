//! Runs a list of tasks of any solvers, one per line as
//! `solver<TAB>params JSON<TAB>seed<TAB>fidelity` (what
//! `sqlite3 -separator $'\t' store.sqlite "select solver, params, seed,
//! fidelity from tasks ..."` prints), and prints one line per task: its
//! outcome's FNV-1a hash, the solver and the line number; then, on stderr,
//! the CPU seconds per solver (clock ticks of /proc/self/stat). The first task of each (solver, params) runs
//! as replication 0 (with its series), the others as replication 1, as the
//! pipeline does. Two builds are compared task by task (`diff` of the hash
//! columns: byte-identical outcomes) and by CPU (interleave the runs):
//!
//! `cargo run --release -p solvers --example ib_tasks -- tasks.tsv [solver-prefix]`
//!
//! Unlike `solve_batch` (every task as replication 0, each outcome printed
//! whole) it numbers replications as the pipeline does, which matters for
//! `ibecn.sim`: replication 0 carries the rate series (1.6 MB of JSON), the
//! others do not.

use solvers::{Fidelity, Registry, TaskContext};
use std::collections::{BTreeMap, HashSet};

/// User + system CPU seconds of this process, if /proc says.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: ib_tasks <tasks.tsv> [solver-prefix]");
        std::process::exit(2);
    };
    let prefix = args.get(1).map_or("", String::as_str);
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let reg = Registry::with_all();
    let mut seen = HashSet::new();
    let mut per_solver: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, params, seed, fidelity] = f[..] else {
            eprintln!("{path}:{}: want 4 tab-separated fields", n + 1);
            std::process::exit(2);
        };
        if !name.starts_with(prefix) {
            continue;
        }
        let solver = reg.get(name).expect("a registered solver");
        let params: serde_json::Value = serde_json::from_str(params).expect("params JSON");
        let seed: u64 = seed
            .parse::<i64>()
            .map(|s| s as u64)
            .or_else(|_| seed.parse::<u64>())
            .expect("seed");
        let fidelity = if fidelity == "quick" {
            Fidelity::Quick
        } else {
            Fidelity::Full
        };
        let rep = u32::from(!seen.insert((name.to_string(), params.to_string())));
        let ctx = TaskContext::new(seed, fidelity).with_replication(rep);
        let c0 = cpu_seconds().unwrap_or(0.0);
        let out = solver.solve(&params, &ctx);
        let c1 = cpu_seconds().unwrap_or(0.0);
        let json = match out {
            Ok(o) => serde_json::to_string(&o).expect("outcome JSON"),
            Err(e) => format!("error: {e}"),
        };
        println!("{:016x} {name} {}", fnv1a(json.as_bytes()), n + 1);
        let e = per_solver.entry(name.to_string()).or_default();
        e.0 += 1;
        e.1 += c1 - c0;
    }
    for (name, (n, cpu)) in per_solver {
        eprintln!("{name}: {n} tasks, {cpu:.2} CPU s");
    }
}
