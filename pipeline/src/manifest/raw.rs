//! The manifest as serde reads it, before any check: every struct denies
//! unknown fields, so a misspelt key is an error with its line.

use super::yaml::Mapping;
use super::{limits, Compare, FigureKind, TableSpec};
use serde::Deserialize;
use std::fmt;

#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a manifest: a mapping with id, title, version, series and the optional keys"
)]
pub(super) struct RawManifest {
    pub(super) id: String,
    pub(super) title: String,
    #[serde(default)]
    pub(super) source: String,
    pub(super) version: i64,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) params: Mapping,
    #[serde(default)]
    pub(super) sweep: Mapping,
    pub(super) series: SeriesMap,
    #[serde(default)]
    pub(super) compare: Vec<Compare>,
    #[serde(default)]
    pub(super) figures: Vec<RawFigure>,
    #[serde(default)]
    pub(super) tables: Vec<TableSpec>,
    #[serde(default)]
    pub(super) reference_data: super::programs::Ordered<super::reference::RawReference>,
    /// Programs declared as solvers (`programs/`).
    #[serde(default)]
    pub(super) solvers: super::programs::Ordered<super::programs::RawSolver>,
    #[serde(default)]
    pub(super) claims: Vec<super::claims::RawClaim>,
    #[serde(default)]
    pub(super) calibrated: Option<super::claims::RawCalibrated>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a series: a mapping with solver and the optional params, replications, seed, label, quick, precision"
)]
pub(super) struct RawSeries {
    pub(super) solver: String,
    #[serde(default)]
    pub(super) params: Mapping,
    #[serde(default)]
    pub(super) replications: Option<u32>,
    #[serde(default)]
    pub(super) seed: Option<u64>,
    #[serde(default)]
    pub(super) label: Option<String>,
    #[serde(default)]
    pub(super) quick: Option<RawQuick>,
    #[serde(default)]
    pub(super) precision: Option<RawPrecision>,
}

/// `precision: { metric, rel_half_width | half_width, max_replications }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with metric, max_replications and rel_half_width or half_width"
)]
pub(super) struct RawPrecision {
    pub(super) metric: String,
    #[serde(default)]
    pub(super) rel_half_width: Option<f64>,
    #[serde(default)]
    pub(super) half_width: Option<f64>,
    pub(super) max_replications: u32,
}

/// The `series` mapping, in the manifest's order, each value deserialised in
/// place so that a type error inside a series carries its line.
#[derive(Debug, Clone, Default)]
pub(super) struct SeriesMap(pub(super) Vec<(String, RawSeries)>);

impl<'de> Deserialize<'de> for SeriesMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SeriesMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from series names to series")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<SeriesMap, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, RawSeries>()? {
                    if out.len() >= limits::MAX_SERIES {
                        return Err(serde::de::Error::custom(format!(
                            "more than {} series (the limit)",
                            limits::MAX_SERIES
                        )));
                    }
                    if out.iter().any(|(n, _)| n == &k) {
                        return Err(serde::de::Error::custom(format!(
                            "series `{k}` appears twice"
                        )));
                    }
                    out.push((k, v));
                }
                Ok(SeriesMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with the optional params and replications"
)]
pub(super) struct RawQuick {
    #[serde(default)]
    pub(super) params: Mapping,
    #[serde(default)]
    pub(super) replications: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "y must be a metric name or a list of metric names"
)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a figure: a mapping with id, x, y, series and the optional keys"
)]
pub(super) struct RawFigure {
    pub(super) id: String,
    #[serde(default)]
    pub(super) title: Option<String>,
    pub(super) x: String,
    pub(super) y: OneOrMany,
    pub(super) series: Vec<String>,
    #[serde(default)]
    pub(super) xlabel: Option<String>,
    #[serde(default)]
    pub(super) ylabel: Option<String>,
    #[serde(default)]
    pub(super) log_y: bool,
    #[serde(default)]
    pub(super) kind: FigureKind,
    #[serde(default)]
    pub(super) x_per: Option<String>,
    #[serde(default)]
    pub(super) x_values: Option<Vec<f64>>,
    /// Size, fonts, title, log axes and legend of the drawn figure.
    #[serde(default)]
    pub(super) layout: Option<reports::FigureOptions>,
}
