//! The README's two commands share one build (issue 12, item 3): every crate
//! that `cargo run -p pipeline` compiles gets the same features under
//! `cargo test --workspace`, so neither command recompiles what the other
//! built. Dev-dependencies turn on extra features; `pipeline/Cargo.toml`
//! asks for them too. This test fails when a dependency change breaks that.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `name version` -> the feature lists it is built with, from `cargo tree`.
fn features(args: &[&str]) -> Option<BTreeMap<String, BTreeSet<String>>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--prefix", "none", "-f", "{p}|{f}"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if !out.status.success() {
        println!(
            "SKIPPED: cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((pkg, feats)) = line.split_once('|') else {
            continue;
        };
        // `name vX.Y.Z (path)` -> `name vX.Y.Z`; proc-macros are marked.
        let pkg: Vec<&str> = pkg.split_whitespace().take(2).collect();
        m.entry(pkg.join(" "))
            .or_default()
            .insert(feats.trim_end_matches(" (*)").to_string());
    }
    Some(m)
}

#[test]
fn run_and_test_builds_use_the_same_features() {
    let Some(run) = features(&["-p", "pipeline", "-e", "normal,build"]) else {
        return;
    };
    let Some(test) = features(&["--workspace", "-e", "normal,build,dev"]) else {
        return;
    };
    let differ: Vec<String> = run
        .iter()
        .filter_map(|(pkg, f)| {
            let t = test.get(pkg)?;
            (t != f).then(|| format!("{pkg}: run {f:?}, test {t:?}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "these crates would be compiled twice (add the test build's features to pipeline/Cargo.toml):\n{}",
        differ.join("\n")
    );
}
