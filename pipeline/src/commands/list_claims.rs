//! `repro list --claims`: every claim of the manifests, as written (kind,
//! entries, expectation, `quick:` mark, sanity or fit), with the last verdict
//! the store's ledger holds for its current definition at each fidelity.
//! Nothing is run or evaluated: a claim never checked shows `—`, and one
//! checked only under an earlier definition says so.

use crate::OutputFormat;
use pipeline::manifest::{discover, load_or_input_error, Manifest};
use pipeline::measure::claims::definition_of;
use pipeline::shared::{open_existing_store, sqlite_file};
use serde_json::{json, Value};
use solvers::Registry;
use std::path::Path;
use store::{ClaimLastVerdict, Store};

/// One claim and what the ledger says of it.
struct Listed {
    experiment: String,
    version: i64,
    row: Value,
    /// Last verdict of the current definition: (full, quick).
    last: [Option<ClaimLastVerdict>; 2],
    /// Whether an earlier definition of it was evaluated: (full, quick).
    changed: [bool; 2],
}

pub(crate) async fn list_claims(
    experiments_dir: &Path,
    targets: &[String],
    store_loc: &str,
    registry: &Registry,
    format: OutputFormat,
) -> anyhow::Result<()> {
    let paths = discover(targets, experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    // Listing never creates a store: with none yet, nothing was evaluated.
    let store = match sqlite_file(store_loc) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_existing_store(store_loc).await?),
    };
    let mut listed = Vec::new();
    for m in &manifests {
        listed.extend(of_manifest(store.as_ref(), m).await?);
    }
    if let Some(s) = store {
        s.close().await;
    }
    if format == OutputFormat::Json {
        let rows: Vec<Value> = listed.into_iter().map(|l| l.row).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    print_text(&listed);
    Ok(())
}

async fn of_manifest(store: Option<&Store>, m: &Manifest) -> anyhow::Result<Vec<Listed>> {
    let ledger = match store {
        Some(s) => s.claim_last_verdicts(&m.id).await?,
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for c in &m.claims {
        let (_, definition, hash) = definition_of(m, c);
        let last_at = |fidelity: &str| {
            ledger
                .iter()
                .find(|l| l.claim_id == c.id && l.hash == hash && l.fidelity == fidelity)
                .cloned()
        };
        let last = [last_at("full"), last_at("quick")];
        let earlier = |fidelity: &str| {
            ledger
                .iter()
                .any(|l| l.claim_id == c.id && l.hash != hash && l.fidelity == fidelity)
        };
        let changed = [earlier("full"), earlier("quick")];
        let verdict = |l: &Option<ClaimLastVerdict>| {
            l.as_ref()
                .map(|l| json!({"verdict": l.verdict, "evaluated": l.evaluated}))
        };
        // The definition's fields (kind, quote, where, entries, holds, points,
        // tolerance, expect, why, quick), then what is not part of it.
        let mut row = definition.clone();
        for (k, v) in [
            ("experiment", json!(m.id)),
            ("version", json!(m.version)),
            ("id", json!(c.id)),
            ("quick_expect", json!(c.quick.as_ref().map(|q| q.expect))),
            ("quick_why", json!(c.quick.as_ref().map(|q| &q.why))),
            ("sanity", json!(c.sanity)),
            ("fit", json!(c.fit)),
            ("definition", definition),
            ("definition_hash", json!(hash)),
            ("last_full", json!(verdict(&last[0]))),
            ("last_quick", json!(verdict(&last[1]))),
            (
                "earlier_definition_evaluated",
                json!(changed[0] || changed[1]),
            ),
        ] {
            row[k] = v;
        }
        out.push(Listed {
            experiment: m.id.clone(),
            version: m.version,
            row,
            last,
            changed,
        });
    }
    Ok(out)
}

fn print_text(listed: &[Listed]) {
    println!(
        "{:<24} {:<36} {:<9} {:<6} {:<12} {:<7} {:<12} {:<12}  entries",
        "experiment", "claim", "kind", "expect", "at --quick", "class", "last full", "last quick"
    );
    for l in listed {
        let text = |k: &str| l.row[k].as_str().unwrap_or("").to_string();
        let class = if !l.row["sanity"].is_null() {
            "sanity"
        } else if !l.row["fit"].is_null() {
            "fit"
        } else {
            ""
        };
        let last = |i: usize| match &l.last[i] {
            Some(v) => v.verdict.to_string(),
            None if l.changed[i] => "— (changed)".to_string(),
            None => "—".to_string(),
        };
        let entries: Vec<&str> = l.row["entries"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        println!(
            "{:<24} {:<36} {:<9} {:<6} {:<12} {:<7} {:<12} {:<12}  {}",
            format!("{} v{}", l.experiment, l.version),
            text("id"),
            text("kind"),
            text("expect"),
            text("quick_expect"),
            class,
            last(0),
            last(1),
            entries.join(", ")
        );
    }
    let n = |k: &str| listed.iter().filter(|l| !l.row[k].is_null()).count();
    println!(
        "{} claims in {} manifests: {} expected to fail, {} marked inconclusive at --quick, {} sanity checks, {} fits",
        listed.len(),
        {
            let mut ids: Vec<&str> = listed.iter().map(|l| l.experiment.as_str()).collect();
            ids.dedup();
            ids.len()
        },
        listed
            .iter()
            .filter(|l| l.row["expect"] == "fails")
            .count(),
        n("quick_expect"),
        n("sanity"),
        n("fit"),
    );
}
