//! Declared programs in the solver commands: `repro solve NAME` finds a
//! program declared by a manifest of `--experiments`, and `repro list
//! --solvers` lists them after the compiled-in solvers.

use super::solve::kind_name;
use external::ExternalSolver;
use pipeline::manifest::{declared_in, registry_with, ManifestError};
use pipeline::shared::InputError;
use solvers::{Registry, Solver};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `registry` with the program `name` declared in the manifests of `dir`.
pub(crate) fn registry_with_program(
    registry: &Registry,
    dir: &Path,
    name: &str,
) -> anyhow::Result<Registry> {
    let (declared, errs) = declared_in(dir, registry);
    let found: Vec<&(PathBuf, Arc<ExternalSolver>)> =
        declared.iter().filter(|(_, s)| s.name() == name).collect();
    match found.as_slice() {
        [] => {
            let mut known: Vec<&str> = registry.names();
            known.extend(declared.iter().map(|(_, s)| s.name()));
            let mut msg = format!(
                "unknown solver `{name}`: neither built in nor declared by a manifest in {} \
                 (known: {}); see `repro list --solvers`",
                dir.display(),
                known.join(", ")
            );
            msg.push_str(&unloaded(&errs));
            Err(InputError(msg).into())
        }
        [(_, first), rest @ ..] => {
            if let Some((p, _)) = rest.iter().find(|(_, s)| s != first) {
                return Err(InputError(format!(
                    "`{name}` is declared differently by {} and {}; run one manifest's solver \
                     with --experiments pointing at a folder with only that manifest",
                    found[0].0.display(),
                    p.display()
                ))
                .into());
            }
            Ok(registry_with(registry, std::slice::from_ref(first)))
        }
    }
}

fn unloaded(errs: &[ManifestError]) -> String {
    if errs.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n{} manifest(s) declaring solvers did not load:",
        errs.len()
    );
    for e in errs {
        s.push_str(&format!("\n  {e}"));
    }
    s
}

/// The declared programs for `repro list --solvers` (text), after the
/// compiled-in ones.
pub(crate) fn listing(registry: &Registry, dir: &Path) -> String {
    let (declared, errs) = declared_in(dir, registry);
    let mut s = String::new();
    if !declared.is_empty() {
        s.push_str(&format!("\nDeclared by manifests in {}:\n", dir.display()));
    }
    for (path, x) in &declared {
        let d = x.doc();
        let p = x.program();
        s.push_str(&format!(
            "\n  {} (v{}, {}, {}): {}\n      command      {} (in {}; timeout {} s, memory {} MiB)\n",
            x.name(),
            x.version(),
            kind_name(x.kind()),
            path.display(),
            d.summary,
            p.command_line(),
            p.dir.display(),
            p.timeout_s,
            p.memory_mb
        ));
        for q in &d.params {
            s.push_str(&format!("      {:<12} {}\n", q.name, q.doc));
        }
        s.push_str(&format!("      metrics: {}\n", d.metrics.join(", ")));
    }
    s.push_str(&unloaded(&errs));
    s
}

/// The declared programs for `repro list --solvers --format json`: the
/// fields of the built-in entries, plus where each is declared and how it runs.
pub(crate) fn listing_json(registry: &Registry, dir: &Path) -> Vec<serde_json::Value> {
    let (declared, _) = declared_in(dir, registry);
    declared
        .iter()
        .map(|(path, x)| {
            let p = x.program();
            let params: Vec<serde_json::Value> = p
                .params
                .iter()
                .map(|q| {
                    let mut v = serde_json::to_value(q).expect("a parameter serialises");
                    v["doc"] = serde_json::json!(q.describe());
                    v
                })
                .collect();
            serde_json::json!({
                "name": x.name(), "version": x.version(), "kind": kind_name(x.kind()),
                "summary": x.doc().summary, "params": params, "metrics": p.metrics,
                "declared_in": path, "command": p.command, "dir": p.dir, "files": p.files,
                "code_hash": x.code_hash(), "timeout_s": p.timeout_s, "memory_mb": p.memory_mb,
            })
        })
        .collect()
}

/// Runs a declared program for `repro solve`, stopping it (its whole process
/// group) on Ctrl-C: the program is in its own group, so the terminal's
/// SIGINT reaches only repro, which must not leave it running.
pub(crate) fn solve_interruptibly(
    solver: Arc<dyn Solver>,
    params: &serde_json::Value,
    ctx: solvers::TaskContext,
) -> anyhow::Result<Result<solvers::Outcome, solvers::SolveError>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let cancel = Arc::new(AtomicBool::new(false));
    let ctx = ctx.with_cancel_flag(cancel.clone());
    let params = params.clone();
    super::runtime()?.block_on(async move {
        let watch = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.store(true, Ordering::Relaxed);
            }
        });
        let r = tokio::task::spawn_blocking(move || solver.solve(&params, &ctx)).await;
        watch.abort();
        Ok(r?)
    })
}
