//! A plain table of named, typed columns, written as CSV, JSON (an array of
//! objects), Parquet or Arrow IPC: `repro export --statuses` and `--claims`.

use crate::frame::frame_err;
use crate::{ReportError, Result};
use polars::prelude::{Column, DataFrame};
use serde_json::{Map, Value as Json};
use std::io::Write;

/// One column's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Text(Vec<Option<String>>),
    Int(Vec<i64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Int(v) => v.len(),
        }
    }

    fn json(&self, row: usize) -> Json {
        match self {
            Values::Text(v) => v[row].clone().map_or(Json::Null, Json::String),
            Values::Int(v) => v[row].into(),
        }
    }

    fn text(&self, row: usize) -> String {
        match self {
            Values::Text(v) => v[row].clone().unwrap_or_default(),
            Values::Int(v) => v[row].to_string(),
        }
    }
}

/// Named columns of equal length, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Records {
    pub columns: Vec<(String, Values)>,
}

impl Records {
    /// Adds a text column (`None` = empty in CSV, null elsewhere).
    pub fn text(mut self, name: &str, values: Vec<Option<String>>) -> Records {
        self.columns.push((name.to_string(), Values::Text(values)));
        self
    }

    /// Adds an integer column.
    pub fn int(mut self, name: &str, values: Vec<i64>) -> Records {
        self.columns.push((name.to_string(), Values::Int(values)));
        self
    }

    /// The number of rows (0 without columns).
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self) -> Result<()> {
        let n = self.len();
        match self.columns.iter().find(|(_, v)| v.len() != n) {
            Some((name, v)) => Err(frame_err(
                name,
                format!("{} values where the table has {n} rows", v.len()),
            )),
            None => Ok(()),
        }
    }

    /// An array with one object per row, keys in column order.
    pub fn json(&self) -> Result<Json> {
        self.check()?;
        Ok(Json::Array(
            (0..self.len())
                .map(|i| {
                    let m: Map<String, Json> = self
                        .columns
                        .iter()
                        .map(|(name, v)| (name.clone(), v.json(i)))
                        .collect();
                    Json::Object(m)
                })
                .collect(),
        ))
    }

    /// CSV with a header line.
    pub fn write_csv<W: Write>(&self, out: W) -> Result<()> {
        self.check()?;
        let err = |e: crate::Cause| ReportError::Write {
            path: "CSV".to_string(),
            cause: e,
        };
        let mut w = csv::Writer::from_writer(out);
        w.write_record(self.columns.iter().map(|(n, _)| n.as_str()))
            .map_err(|e| err(e.into()))?;
        for i in 0..self.len() {
            w.write_record(self.columns.iter().map(|(_, v)| v.text(i)))
                .map_err(|e| err(e.into()))?;
        }
        w.flush().map_err(|e| err(e.into()))
    }

    /// A polars frame (for Parquet and Arrow): text as `String`, integers as
    /// `Int64`.
    pub fn frame(&self) -> Result<DataFrame> {
        self.check()?;
        let cols: Vec<Column> = self
            .columns
            .iter()
            .map(|(name, v)| match v {
                Values::Text(t) => Column::new(name.as_str().into(), t.clone()),
                Values::Int(n) => Column::new(name.as_str().into(), n.clone()),
            })
            .collect();
        DataFrame::new(self.len(), cols).map_err(|e| frame_err("table", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Records {
        Records::default()
            .text("entry", vec![Some("a-1".into()), Some("b, \"2\"".into())])
            .text("paper", vec![Some("P".into()), None])
            .int("n", vec![3, 0])
    }

    #[test]
    fn csv_json_and_frame_keep_columns_rows_and_nulls() {
        let r = sample();
        let mut csv = Vec::new();
        r.write_csv(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "entry,paper,n\na-1,P,3\n\"b, \"\"2\"\"\",,0\n"
        );
        assert_eq!(
            r.json().unwrap(),
            serde_json::json!([
                {"entry": "a-1", "paper": "P", "n": 3},
                {"entry": "b, \"2\"", "paper": null, "n": 0}
            ])
        );
        let df = r.frame().unwrap();
        assert_eq!(df.shape(), (2, 3));
        assert_eq!(df.column("paper").unwrap().null_count(), 1);
        assert_eq!(
            df.column("n").unwrap().dtype(),
            &polars::prelude::DataType::Int64
        );
    }

    #[test]
    fn columns_of_different_lengths_are_refused() {
        let r = sample().int("m", vec![1]);
        assert!(r.json().is_err());
        assert!(r.write_csv(Vec::new()).is_err());
        assert!(r.frame().is_err());
    }
}
