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

use super::place::Ctx;
use super::programs::Ordered;
use super::ManifestError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One set of paper numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub name: String,
    pub label: String,
    pub source: String,
    /// Metric -> value.
    pub values: BTreeMap<String, f64>,
}

/// One entry of `reference_data` as written (read with the manifest, so a
/// wrong key or type is reported where it is).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReference {
    #[serde(default)]
    label: Option<String>,
    source: String,
    values: BTreeMap<String, f64>,
}

/// Checks the `reference_data` entries as read; `series` are the solver
/// series names (a reference may not reuse one).
pub(super) fn parse(
    ctx: &Ctx,
    raw: &Ordered<RawReference>,
    series: &[String],
) -> Result<Vec<Reference>, ManifestError> {
    let mut out = Vec::new();
    for (name, r) in &raw.0 {
        let key = format!("reference_data.{name}");
        if series.contains(name) {
            return Err(ctx.err(&key, "is also the name of a series; choose another name"));
        }
        if r.source.trim().is_empty() {
            return Err(ctx.err(
                &format!("{key}.source"),
                "must cite where the numbers are printed",
            ));
        }
        if r.values.is_empty() {
            return Err(ctx.err(&format!("{key}.values"), "needs at least one metric"));
        }
        if let Some((m, _)) = r.values.iter().find(|(_, x)| !x.is_finite()) {
            return Err(ctx.err(&format!("{key}.values.{m}"), "must be a finite number"));
        }
        out.push(Reference {
            label: r.label.clone().unwrap_or_else(|| name.clone()),
            name: name.clone(),
            source: r.source.clone(),
            values: r.values.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Doc {
        reference_data: Ordered<RawReference>,
    }

    fn run(text: &str) -> Result<Vec<Reference>, ManifestError> {
        let file = std::path::Path::new("m.yaml");
        let (doc, places): (Doc, _) = super::super::place::read(file, text, "a mapping")?;
        let ctx = Ctx {
            file,
            places: &places,
        };
        parse(&ctx, &doc.reference_data, &["sim".into()])
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
        assert_eq!(e.key, "reference_data.hw.bogus");
        assert_eq!((e.line, e.column), (Some(5), Some(5)));
        assert!(e.message.contains("bogus"), "{e}");
        let e = run("reference_data:\n  sim:\n    source: x\n    values: { a: 1 }\n").unwrap_err();
        assert!(e.message.contains("series"), "{e}");
        let e =
            run("reference_data:\n  hw:\n    source: \"\"\n    values: { a: 1 }\n").unwrap_err();
        assert_eq!(e.key, "reference_data.hw.source");
        assert_eq!((e.line, e.column), (Some(3), Some(5)));
    }
}
