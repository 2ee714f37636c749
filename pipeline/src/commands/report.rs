//! `repro report`: every experiment in the store rendered again at each
//! fidelity (full into `results/`, quick into `results/quick/`), solving
//! nothing.

use super::pages::{unmark, Pages};
use super::runtime;
use crate::ReportArgs;
use anyhow::bail;
use pipeline::measure::{compare::History, stored_manifests};
use pipeline::render::{fidelity_dir, Draw};
use pipeline::shared::{exit, open_existing_store, InputError};
use solvers::{Fidelity, Registry};
use std::path::Path;
use std::process::ExitCode;

/// `repro report`: re-render from the store.
pub(crate) fn report(args: ReportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let results = &args.results.results;
    let layout = args.figures.overrides();
    let n = runtime()?.block_on(render_all(&args.store.store, results, registry, &layout))?;
    if !crate::quiet() {
        eprintln!(
            "re-rendered {n} experiments into {}",
            results.join("index.html").display()
        );
    }
    Ok(ExitCode::from(exit::OK))
}

/// `repro report`: re-render everything in the store without solving anything.
async fn render_all(
    store_loc: &str,
    results_dir: &Path,
    registry: &Registry,
    layout: &reports::FigureOverrides,
) -> anyhow::Result<usize> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
    if manifests.is_empty() {
        bail!(InputError(format!(
            "the store {store_loc} holds no experiments yet; run `repro run` first"
        )));
    }
    // Each fidelity into its own folder (see `fidelity_dir`), everything
    // drawn: a read-only store keeps no record of what was drawn.
    let history = History::read(&store).await?;
    let mut indexes = Vec::new();
    for fidelity in [Fidelity::Full, Fidelity::Quick] {
        let out_dir = fidelity_dir(results_dir, fidelity);
        // Drawn without a record: the next run draws this folder whole.
        unmark(&out_dir)?;
        let mut pages = Pages {
            layout: *layout,
            ..Pages::default()
        };
        pages
            .add_stored(
                &store,
                &manifests,
                registry,
                &out_dir,
                fidelity,
                &history,
                Draw::Always,
            )
            .await?;
        if !pages.entries.is_empty() {
            indexes.push((fidelity, pages));
        }
    }
    let count = indexes.iter().map(|(_, p)| p.entries.len()).sum();
    let both = indexes.len() == 2;
    for (fidelity, pages) in indexes {
        pages.write_index(results_dir, fidelity, both)?;
    }
    store.close().await;
    Ok(count)
}
