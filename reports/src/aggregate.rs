//! Aggregations and pivots as polars lazy expressions: the error-measure
//! summaries of a figure, table or experiment, and the pivot of a value table
//! (one row per point, one column per series and metric).

use crate::frame::{floats, frame_err, ints, strings};
use crate::{EmSummaryLine, OutputEm, Result};
use polars::prelude::*;
use verdicts::PointVerdict as Verdict;

/// One compared point as the error-measure aggregations take it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmPoint<'a> {
    pub metric: &'a str,
    pub reference: &'a str,
    pub candidate: &'a str,
    pub em: Option<f64>,
    pub tolerance: Option<f64>,
    pub verdict: Verdict,
}

fn em_frame(points: &[EmPoint]) -> Result<LazyFrame> {
    let text = |name: &str, f: &dyn for<'p> Fn(&'p EmPoint<'p>) -> &'p str| {
        Column::new(name.into(), points.iter().map(f).collect::<Vec<&str>>())
    };
    let cols = vec![
        text("metric", &|p| p.metric),
        text("reference", &|p| p.reference),
        text("candidate", &|p| p.candidate),
        Column::new("em".into(), points.iter().map(|p| p.em).collect::<Vec<_>>()),
        Column::new(
            "tolerance".into(),
            points.iter().map(|p| p.tolerance).collect::<Vec<_>>(),
        ),
        text("verdict", &|p| p.verdict.as_str()),
    ];
    DataFrame::new(points.len(), cols)
        .map(IntoLazy::lazy)
        .map_err(|e| frame_err("error measures", e))
}

/// Mean and max EM (nulls, i.e. undefined EMs, left out) and the count of
/// each verdict.
fn em_aggregates() -> Vec<Expr> {
    let count = |v: Verdict| {
        col("verdict")
            .eq(lit(v.as_str()))
            .cast(DataType::Int64)
            .sum()
            .alias(v.as_str())
    };
    vec![
        col("em").mean().alias("mean_em"),
        col("em").max().alias("max_em"),
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Inconclusive),
    ]
}

fn counts(df: &DataFrame) -> Result<[Vec<usize>; 3]> {
    let get = |v: Verdict| -> Result<Vec<usize>> {
        Ok(ints(df, v.as_str())?
            .into_iter()
            .map(|n| n.unwrap_or(0).max(0) as usize)
            .collect())
    };
    Ok([
        get(Verdict::Pass)?,
        get(Verdict::Fail)?,
        get(Verdict::Inconclusive)?,
    ])
}

/// One summary line per (metric, reference, candidate), in order of first
/// appearance; the tolerance is that of the first point.
pub fn em_summary_lines(points: &[EmPoint]) -> Result<Vec<EmSummaryLine>> {
    if points.is_empty() {
        return Ok(Vec::new());
    }
    let mut aggs = em_aggregates();
    aggs.push(col("tolerance").first().alias("tolerance"));
    let df = em_frame(points)?
        .group_by_stable([col("metric"), col("reference"), col("candidate")])
        .agg(aggs)
        .collect()
        .map_err(|e| frame_err("error-measure summary", e))?;
    let (metric, reference, candidate) = (
        strings(&df, "metric")?,
        strings(&df, "reference")?,
        strings(&df, "candidate")?,
    );
    let (mean, max, tol) = (
        floats(&df, "mean_em")?,
        floats(&df, "max_em")?,
        floats(&df, "tolerance")?,
    );
    let [pass, fail, inc] = counts(&df)?;
    Ok((0..df.height())
        .map(|i| EmSummaryLine {
            metric: metric[i].clone().unwrap_or_default(),
            reference: reference[i].clone().unwrap_or_default(),
            candidate: candidate[i].clone().unwrap_or_default(),
            mean_em: mean[i],
            max_em: max[i],
            tolerance: tol[i],
            passed: pass[i],
            failed: fail[i],
            inconclusive: inc[i],
        })
        .collect())
}

/// The error measures over all of `points` (`None` when there are none): what
/// index.html shows beside a figure or table.
pub fn output_em(points: &[EmPoint]) -> Result<Option<OutputEm>> {
    if points.is_empty() {
        return Ok(None);
    }
    let df = em_frame(points)?
        .select(em_aggregates())
        .collect()
        .map_err(|e| frame_err("error-measure summary", e))?;
    let [pass, fail, inc] = counts(&df)?;
    Ok(Some(OutputEm {
        mean_em: floats(&df, "mean_em")?[0],
        max_em: floats(&df, "max_em")?[0],
        passed: pass[0],
        failed: fail[0],
        inconclusive: inc[0],
    }))
}

/// One cell of a long (tidy) table on its way to a wide one.
#[derive(Debug, Clone, PartialEq)]
pub struct LongCell {
    /// The row of the wide table (a point's index in sweep order).
    pub row: u64,
    /// The index into the `columns` of [`pivot_cells`].
    pub column: u64,
    pub cell: String,
}

/// Pivots long cells into rows: one row per distinct `row` (ascending), one
/// cell per column `0..columns` (empty where the long table has none; the
/// first where it has several).
pub fn pivot_cells(cells: &[LongCell], columns: usize) -> Result<Vec<Vec<String>>> {
    if cells.is_empty() {
        return Ok(Vec::new());
    }
    let df = DataFrame::new(
        cells.len(),
        vec![
            Column::new(
                "row".into(),
                cells.iter().map(|c| c.row).collect::<Vec<_>>(),
            ),
            Column::new(
                "column".into(),
                cells.iter().map(|c| c.column).collect::<Vec<_>>(),
            ),
            Column::new(
                "cell".into(),
                cells.iter().map(|c| c.cell.as_str()).collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(|e| frame_err("value table", e))?;
    let wide: Vec<Expr> = (0..columns)
        .map(|j| {
            col("cell")
                .filter(col("column").eq(lit(j as u64)))
                .first()
                .alias(format!("c{j}"))
        })
        .collect();
    let df = df
        .lazy()
        .group_by_stable([col("row")])
        .agg(wide)
        .sort(["row"], SortMultipleOptions::default())
        .collect()
        .map_err(|e| frame_err("value table pivot", e))?;
    let cols: Vec<Vec<Option<String>>> = (0..columns)
        .map(|j| strings(&df, &format!("c{j}")))
        .collect::<Result<_>>()?;
    Ok((0..df.height())
        .map(|i| {
            cols.iter()
                .map(|c| c[i].clone().unwrap_or_default())
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(metric: &'static str, em: Option<f64>, verdict: Verdict) -> EmPoint<'static> {
        EmPoint {
            metric,
            reference: "sim",
            candidate: "model",
            em,
            tolerance: Some(0.05),
            verdict,
        }
    }

    #[test]
    fn summaries_group_in_order_of_appearance_and_skip_undefined_ems() {
        let pts = [
            p("L", Some(0.01), Verdict::Pass),
            p("T", Some(0.2), Verdict::Fail),
            p("L", Some(0.03), Verdict::Pass),
            p("L", None, Verdict::Inconclusive),
        ];
        let lines = em_summary_lines(&pts).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].metric, "L");
        assert!((lines[0].mean_em.unwrap() - 0.02).abs() < 1e-15);
        assert_eq!(lines[0].max_em, Some(0.03));
        assert_eq!(
            (lines[0].passed, lines[0].failed, lines[0].inconclusive),
            (2, 0, 1)
        );
        assert_eq!(lines[1].metric, "T");
        assert_eq!((lines[1].passed, lines[1].failed), (0, 1));
        let all = output_em(&pts).unwrap().unwrap();
        assert_eq!((all.passed, all.failed, all.inconclusive), (2, 1, 1));
        assert_eq!(all.max_em, Some(0.2));
        assert_eq!(output_em(&[]).unwrap(), None);
        let none = output_em(&[p("L", None, Verdict::Inconclusive)])
            .unwrap()
            .unwrap();
        assert_eq!((none.mean_em, none.max_em), (None, None));
    }

    #[test]
    fn pivot_puts_each_cell_in_its_row_and_column() {
        let c = |row, column, cell: &str| LongCell {
            row,
            column,
            cell: cell.to_string(),
        };
        let rows =
            pivot_cells(&[c(1, 1, "d"), c(0, 0, "a"), c(1, 0, "c"), c(0, 1, "b")], 3).unwrap();
        assert_eq!(rows, vec![vec!["a", "b", ""], vec!["c", "d", ""]]);
    }
}
