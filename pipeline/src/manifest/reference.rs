//! `reference_data` in manifests (docs/design.md, "Manifests"): numbers printed in
//! a paper, with their source, usable wherever a series name is: as the
//! `reference` or `candidate` of a `compare` entry (error measures), in
//! `values` tables, and in figures, where they are drawn as reference marks.
//!
//! ```yaml
//! reference_data:
//!   hw_off:
//!     label: "hardware (Gran & Reinemo 2011, Fig 8a)"
//!     source: "§6.2: 'the three flows all experience the same drop ... to approximately 11.4 Gbps'"
//!     values: { thr_F1_2: 11.4, thr_F2_2: 11.4 }
//! ```
//!
//! The values hold at every point of the sweep (the manifests that use them
//! have one point, or numbers that do not depend on the swept parameter).
//! Nothing here is ever computed: the numbers enter the results as they are.

use super::locate;
use super::ManifestError;
use serde::Deserialize;
use serde_yaml::{Mapping, Value as Yaml};
use std::collections::BTreeMap;
use std::path::Path;

/// One set of paper numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub name: String,
    pub label: String,
    pub source: String,
    /// Metric -> value.
    pub values: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReference {
    label: Option<String>,
    source: String,
    values: BTreeMap<String, f64>,
}

fn err(file: &Path, text: &str, key: &str, message: impl Into<String>) -> ManifestError {
    ManifestError {
        file: file.to_path_buf(),
        line: locate(text, key),
        key: key.to_string(),
        message: message.into(),
    }
}

/// Parses the `reference_data` mapping; `series` are the solver series names
/// (a reference may not reuse one).
pub fn parse(
    file: &Path,
    text: &str,
    raw: &Mapping,
    series: &[String],
) -> Result<Vec<Reference>, ManifestError> {
    let mut out = Vec::new();
    for (k, v) in raw {
        let name = k
            .as_str()
            .ok_or_else(|| err(file, text, "reference_data", "names must be strings"))?
            .to_string();
        let key = format!("reference_data.{name}");
        if series.contains(&name) {
            return Err(err(
                file,
                text,
                &key,
                "is also the name of a series; choose another name",
            ));
        }
        let r: RawReference = serde_yaml::from_value(v.clone()).map_err(|e| {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            err(file, text, &key, msg)
        })?;
        if r.source.trim().is_empty() {
            return Err(err(
                file,
                text,
                &format!("{key}.source"),
                "must cite where the numbers are printed",
            ));
        }
        if r.values.is_empty() {
            return Err(err(
                file,
                text,
                &format!("{key}.values"),
                "needs at least one metric",
            ));
        }
        if let Some((m, _)) = r.values.iter().find(|(_, x)| !x.is_finite()) {
            return Err(err(
                file,
                text,
                &format!("{key}.values.{m}"),
                "must be a finite number",
            ));
        }
        out.push(Reference {
            label: r.label.unwrap_or_else(|| name.clone()),
            name,
            source: r.source,
            values: r.values,
        });
    }
    Ok(out)
}

/// Reads the optional top-level `reference_data` mapping out of the manifest text.
pub fn raw_mapping(v: &Yaml) -> Mapping {
    match v.get("reference_data") {
        Some(Yaml::Mapping(m)) => m.clone(),
        _ => Mapping::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Vec<Reference>, ManifestError> {
        let v: Yaml = serde_yaml::from_str(text).unwrap();
        parse(Path::new("m.yaml"), text, &raw_mapping(&v), &["sim".into()])
    }

    #[test]
    fn parses_values_with_their_source() {
        let r =
            run("reference_data:\n  hw:\n    source: \"§6\"\n    values: { a: 1.5 }\n").unwrap();
        assert_eq!(r[0].values["a"], 1.5);
        assert_eq!(r[0].label, "hw");
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = run("reference_data:\n  hw:\n    source: x\n    values: { a: 1 }\n    bogus: 2\n")
            .unwrap_err();
        assert_eq!(e.key, "reference_data.hw");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("bogus"), "{e}");
        let e = run("reference_data:\n  sim:\n    source: x\n    values: { a: 1 }\n").unwrap_err();
        assert!(e.message.contains("series"), "{e}");
        let e =
            run("reference_data:\n  hw:\n    source: \"\"\n    values: { a: 1 }\n").unwrap_err();
        assert_eq!(e.key, "reference_data.hw.source");
        assert_eq!(e.line, Some(3));
    }
}
