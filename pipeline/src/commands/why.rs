//! `repro why EXPERIMENT [SERIES [POINT]]`.

use super::{fidelity_of, runtime};
use crate::{OutputFormat, WhyArgs};
use pipeline::exit;
use pipeline::plan::explain::{PlanScope, WhyState};
use solvers::Registry;
use std::process::ExitCode;

/// `repro why EXPERIMENT [SERIES [POINT]]`.
pub(crate) fn why(args: WhyArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let fidelity = fidelity_of(args.quick);
    let opts = PlanScope {
        targets: vec![args.experiment.clone()],
        experiments_dir: args.experiments.experiments.clone(),
        store: args.store.store.clone(),
        fidelity,
        force: false,
    };
    let (m, entries) = runtime()?.block_on(pipeline::plan::explain::why(
        &opts,
        args.series.as_deref(),
        args.point.as_deref(),
        registry,
    ))?;
    if args.format == OutputFormat::Json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(ExitCode::from(exit::OK));
    }
    let cached = entries
        .iter()
        .filter(|e| e.state == WhyState::Cached)
        .count();
    println!(
        "{} v{} at {} fidelity: {cached} of {} tasks cached",
        m.id,
        m.version,
        fidelity.as_str(),
        entries.len()
    );
    for e in entries.iter().filter(|e| e.state != WhyState::Cached) {
        let point = e.point.trim_start_matches('{').trim_end_matches('}');
        println!(
            "\n{} at {point} (replication {}), task {}: {}",
            e.series, e.replication, e.key, e.state
        );
        if let Some(err) = &e.error {
            println!("  it failed when it last ran: {err}");
        }
        match &e.nearest {
            None if e.state == WhyState::NotStored => {
                println!("  no stored task of this solver to compare with: it has never run here")
            }
            None => {}
            Some(k) => {
                println!("  nearest stored task {k} differs in:");
                for d in &e.diffs {
                    println!("    {:<18} stored {}, now {}", d.field, d.stored, d.planned);
                }
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}
