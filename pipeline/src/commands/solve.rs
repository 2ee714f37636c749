//! `repro solve SOLVER --params JSON`: one task, its outcome as JSON; and the solver listings of `--help`.

use super::fidelity_of;
use crate::SolveArgs;
use pipeline::shared::{exit, BadInput, InputError};
use solvers::{Kind, Registry, SolveError, TaskContext};
use std::process::ExitCode;

pub(crate) fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Analytic => "analytic",
        Kind::Simulation => "simulation",
    }
}

/// Every solver with its parameters and metrics (`repro list --solvers`, `repro solve --help`).
pub(crate) fn solver_listing(registry: &Registry) -> String {
    let mut s = String::from("Solvers:\n");
    for x in registry.iter() {
        let d = x.doc();
        s.push_str(&format!(
            "\n  {} (v{}, {}): {}\n",
            x.name(),
            x.version(),
            kind_name(x.kind()),
            d.summary
        ));
        for p in &d.params {
            s.push_str(&format!("      {:<12} {}\n", p.name, p.doc));
        }
        s.push_str(&format!("      metrics: {}\n", d.metrics.join(", ")));
    }
    s
}

/// One line per solver (`repro solve -h`); `--help` shows [`solver_listing`].
pub(crate) fn solver_names(registry: &Registry) -> String {
    let mut s = String::from(
        "Solvers (`repro solve --help` or `repro list --solvers` for their parameters):\n",
    );
    for x in registry.iter() {
        s.push_str(&format!("  {:<24} {}\n", x.name(), kind_name(x.kind())));
    }
    s
}
/// `repro solve SOLVER --params JSON`: one task, its outcome as JSON.
pub(crate) fn solve(args: SolveArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let SolveArgs {
        solver,
        params,
        seed,
        quick,
        experiments,
    } = args;
    // Not built in: a program declared by a manifest of --experiments.
    let declared;
    let registry = match registry.get(&solver) {
        Some(_) => registry,
        None => {
            declared = super::programs::registry_with_program(
                registry,
                &experiments.experiments,
                &solver,
            )?;
            &declared
        }
    };
    let s = registry.get(&solver).expect("found above");
    let value: serde_json::Value = serde_json::from_str(&params)
        .map_err(|e| BadInput::new("--params is not valid JSON", e))?;
    if !value.is_object() {
        return Err(InputError("--params must be a JSON object".into()).into());
    }
    let fidelity = fidelity_of(quick);
    let ctx = TaskContext::new(seed, fidelity);
    let outcome = if s.code_hash().is_some() {
        super::programs::solve_interruptibly(s.clone(), &value, ctx)?
    } else {
        s.solve(&value, &ctx)
    };
    let outcome = match outcome.and_then(|o| o.checked(&solver)) {
        Ok(o) => o,
        // A declared program that failed: a failed task, not bad input.
        Err(e @ SolveError::Program(_)) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::TASKS_FAILED));
        }
        Err(SolveError::Cancelled) => {
            eprintln!("interrupted: the program and everything it started were stopped");
            return Ok(ExitCode::from(exit::INTERRUPTED));
        }
        Err(e) => return Err(BadInput::new(solver, e).into()),
    };
    let metrics: serde_json::Map<String, serde_json::Value> = outcome
        .metrics
        .iter()
        .map(|(k, m)| {
            let v = match m.half_width {
                None => serde_json::json!(m.value),
                Some(h) => serde_json::json!({"value": m.value, "half_width": h, "n": m.n}),
            };
            (k.clone(), v)
        })
        .collect();
    let mut out = serde_json::json!({
        "solver": solver,
        "version": s.version(),
        "kind": s.kind(),
        "status": outcome.status,
        "metrics": metrics,
    });
    if s.kind() == Kind::Simulation {
        out["seed"] = serde_json::json!(seed);
        out["fidelity"] = serde_json::json!(fidelity.as_str());
    }
    if !outcome.series.is_empty() {
        out["series"] = serde_json::json!(outcome.series);
    }
    if let Some(note) = &outcome.note {
        out["note"] = serde_json::json!(note);
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::from(exit::OK))
}
