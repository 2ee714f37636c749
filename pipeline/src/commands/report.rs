//! `repro report`: every experiment in the store rendered again at each
//! fidelity (full into `results/`, quick into `results/quick/`), solving
//! nothing.

use super::runtime;
use crate::ReportArgs;
use anyhow::bail;
use pipeline::measure::{self, collect_at, stored_manifests};
use pipeline::render::compare::attach_comparisons;
use pipeline::render::{fidelity_dir, render_experiment, write_index, Measured};
use pipeline::shared::{exit, open_existing_store, InputError};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// `repro report`: re-render from the store.
pub(crate) fn report(args: ReportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let results = &args.results.results;
    let n = runtime()?.block_on(render_all(&args.store.store, results, registry))?;
    eprintln!(
        "re-rendered {n} experiments into {}",
        results.join("index.html").display()
    );
    Ok(ExitCode::from(exit::OK))
}

/// `repro report`: re-render everything in the store without solving anything.
async fn render_all(
    store_loc: &str,
    results_dir: &Path,
    registry: &Registry,
) -> anyhow::Result<usize> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
    if manifests.is_empty() {
        bail!(InputError(format!(
            "the store {store_loc} holds no experiments yet; run `repro run` first"
        )));
    }
    // Each fidelity into its own folder (see `fidelity_dir`).
    let mut indexes = Vec::new();
    for fidelity in [Fidelity::Full, Fidelity::Quick] {
        let out_dir = fidelity_dir(results_dir, fidelity);
        let mut rendered = BTreeMap::new();
        for m in &manifests {
            let Some(r) = collect_at(&store, m, registry, fidelity).await? else {
                continue;
            };
            let ems = measure::error_measures(&r);
            let mut claims = measure::claims::evaluate_claims(&r, &ems);
            let removed =
                measure::claims::ledger(&store, None, fidelity.as_str(), &m.id, &mut claims)
                    .await?;
            let measured = Measured {
                ems: &ems,
                claims: &claims,
                removed: &removed,
            };
            rendered.insert(
                m.id.clone(),
                render_experiment(&r, &measured, registry, &out_dir, fidelity)?,
            );
        }
        attach_comparisons(&store, registry, &out_dir, fidelity, &mut rendered).await?;
        if !rendered.is_empty() {
            indexes.push((fidelity, rendered));
        }
    }
    let pages = indexes.iter().map(|(_, r)| r.len()).sum();
    let both = indexes.len() == 2;
    for (fidelity, rendered) in indexes {
        write_index(
            rendered.into_values().collect(),
            results_dir,
            fidelity,
            both,
        )?;
    }
    store.close().await;
    Ok(pages)
}
