//! What was drawn into a results folder: per figure and table, a hash of
//! what it shows and the code version that drew it. The store keeps this
//! record (the command reads it before rendering and writes what render
//! returns), so whether an output must be drawn again is decided from what it
//! would show, not from which files happen to be on disk.

use crate::shared::CODE_VERSION;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One output (figure or table) as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnOutput {
    pub experiment: String,
    pub version: i64,
    /// The figure's or table's id.
    pub output: String,
    /// [`content_hash`] of what it shows.
    pub hash: String,
}

/// The record of a results folder: (experiment, output) -> (hash, code version).
#[derive(Debug, Clone, Default)]
pub struct Drawn(BTreeMap<(String, String), (String, String)>);

impl Drawn {
    /// From the store's rows: (experiment, output, hash, code version).
    pub fn new(rows: impl IntoIterator<Item = (String, String, String, String)>) -> Drawn {
        Drawn(
            rows.into_iter()
                .map(|(e, o, h, c)| ((e, o), (h, c)))
                .collect(),
        )
    }

    /// Whether `output` of `experiment`, showing what `hash` stands for, was
    /// drawn into this folder by this code version.
    pub fn holds(&self, experiment: &str, output: &str, hash: &str) -> bool {
        self.0
            .get(&(experiment.to_string(), output.to_string()))
            .is_some_and(|(h, c)| h == hash && c == CODE_VERSION)
    }
}

/// How render decides whether to write an experiment's figures and tables.
#[derive(Debug, Clone, Copy)]
pub enum Draw<'a> {
    /// Write them all (`repro report` re-renders everything).
    Always,
    /// Write those whose content the record does not hold (`repro run` and
    /// `repro check`: the experiments they measured and the other
    /// experiments of the index).
    IfChanged(&'a Drawn),
}

impl Draw<'_> {
    /// Whether `output` of `experiment`, showing what `hash` stands for, must
    /// be written: always, or when the record does not hold it as drawn by
    /// this code version, or when one of its `files` is gone (a results
    /// folder cleaned by hand: the record says what is current, not what is
    /// still there).
    pub fn needed(&self, experiment: &str, output: &str, hash: &str, files: &[PathBuf]) -> bool {
        match self {
            Draw::Always => true,
            Draw::IfChanged(drawn) => {
                !drawn.holds(experiment, output, hash) || files.iter().any(|f| !f.is_file())
            }
        }
    }
}

/// SHA-256 of the JSON of what a figure or table shows (its data, labels and
/// title), hex.
pub fn content_hash(value: &impl Serialize) -> anyhow::Result<String> {
    let json = serde_json::to_vec(value)?;
    Ok(hex::encode(Sha256::digest(&json)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_is_drawn_again_when_its_content_or_the_code_changed() {
        let h = content_hash(&("fig", [1.0, 2.0])).unwrap();
        let other = content_hash(&("fig", [1.0, 2.5])).unwrap();
        assert_ne!(h, other);
        let row = |hash: &str, code: &str| ("x".into(), "x-a".into(), hash.into(), code.into());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x-a.png");
        std::fs::write(&file, b"png").unwrap();
        let files = [file.clone()];
        let drawn = Drawn::new([row(&h, CODE_VERSION)]);
        assert!(!Draw::IfChanged(&drawn).needed("x", "x-a", &h, &files));
        assert!(Draw::IfChanged(&drawn).needed("x", "x-a", &other, &files));
        assert!(Draw::IfChanged(&drawn).needed("x", "x-b", &h, &files));
        assert!(Draw::IfChanged(&drawn).needed("y", "x-a", &h, &files));
        assert!(Draw::Always.needed("x", "x-a", &h, &files));
        let old = Drawn::new([row(&h, "0.0.1+older")]);
        assert!(Draw::IfChanged(&old).needed("x", "x-a", &h, &files));
        std::fs::remove_file(&file).unwrap();
        assert!(Draw::IfChanged(&drawn).needed("x", "x-a", &h, &files));
    }
}
