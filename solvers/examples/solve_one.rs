//! One task of one solver, outcome as JSON on stdout (what `repro solve`
//! prints, without the binary's start-up): for profiles and instruction
//! counts of a single simulation, e.g.
//! `valgrind --tool=callgrind target/release/examples/solve_one
//! multicluster.sim '{"Lf": 512, "lambda1": 0.0015}' [quick]`.

use solvers::{Fidelity, Registry, TaskContext};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(params)) = (args.first(), args.get(1)) else {
        eprintln!("usage: solve_one <solver> '<params as JSON>' [quick] [seed]");
        std::process::exit(2);
    };
    let fidelity = if args.iter().any(|a| a == "quick") {
        Fidelity::Quick
    } else {
        Fidelity::Full
    };
    let seed = args
        .iter()
        .skip(2)
        .find_map(|a| a.parse::<u64>().ok())
        .unwrap_or(1);
    let reg = Registry::with_all();
    let Some(solver) = reg.get(name) else {
        eprintln!("no solver {name}");
        std::process::exit(2);
    };
    let params: serde_json::Value = match serde_json::from_str(params) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("params: {e}");
            std::process::exit(2);
        }
    };
    let ctx = TaskContext::new(seed, fidelity);
    match solver.solve(&params, &ctx) {
        Ok(o) => println!(
            "{}",
            serde_json::to_string_pretty(&o).expect("outcome as JSON")
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
