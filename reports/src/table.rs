//! Tables: GitHub Markdown (title, table, notes) and CSV (header + rows).

use crate::format::{column_kind, is_blank, parse_cell, parse_percent, ColumnKind};
use crate::{check_id, write_err, ReportError, Result, Table};
use std::path::{Path, PathBuf};

/// Number of columns: the widest of header and rows (short rows are padded).
pub(crate) fn n_cols(t: &Table) -> usize {
    t.rows
        .iter()
        .map(Vec::len)
        .chain([t.header.len()])
        .max()
        .unwrap_or(0)
}

fn cell(row: &[String], i: usize) -> &str {
    row.get(i).map_or("", String::as_str)
}

/// A cell that reads as a number ("0.25", "1.2e-5", "3.1%", "—" or empty).
pub(crate) fn is_numeric_cell(s: &str) -> bool {
    let s = s.trim();
    let s = s.strip_suffix('%').unwrap_or(s).trim();
    s.parse::<f64>().is_ok()
}

/// Columns whose cells are all numeric (ignoring empty and "—" cells), to be
/// right-aligned.
pub(crate) fn numeric_columns(t: &Table) -> Vec<bool> {
    (0..n_cols(t))
        .map(|i| {
            let mut any = false;
            for r in &t.rows {
                let c = cell(r, i).trim();
                if c.is_empty() || c == "—" || c == "-" {
                    continue;
                }
                if !is_numeric_cell(c) {
                    return false;
                }
                any = true;
            }
            any
        })
        .collect()
}

fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '\r' => {}
            '\n' => out.push_str("<br>"),
            c => out.push(c),
        }
    }
    out
}

/// The table as people read it: numbers in one format per column
/// ([`crate::unify_number_columns`]).
pub(crate) fn display(t: &Table) -> Table {
    let mut d = t.clone();
    crate::unify_number_columns(&mut d);
    d
}

/// The Markdown rendering written to `<id>.md`: `# title`, a pipe table with
/// padded columns (numeric ones right-aligned, in one format per column),
/// then the notes as paragraphs.
pub fn table_markdown(t: &Table) -> String {
    let t = &display(t);
    let title = if t.title.trim().is_empty() {
        &t.id
    } else {
        &t.title
    };
    let mut out = format!("# {}\n\n", md_escape(title));
    let n = n_cols(t);
    if n > 0 {
        let numeric = numeric_columns(t);
        let header: Vec<String> = (0..n).map(|i| md_escape(cell(&t.header, i))).collect();
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| (0..n).map(|i| md_escape(cell(r, i))).collect())
            .collect();
        let width: Vec<usize> = (0..n)
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .chain([header[i].chars().count(), 3])
                    .max()
                    .unwrap_or(3)
            })
            .collect();
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for (i, c) in cells.iter().enumerate() {
                let padding = " ".repeat(width[i] - c.chars().count());
                if numeric[i] {
                    s.push_str(&format!(" {padding}{c} |"));
                } else {
                    s.push_str(&format!(" {c}{padding} |"));
                }
            }
            s.push('\n');
            s
        };
        out.push_str(&line(&header));
        out.push('|');
        for i in 0..n {
            let dashes = "-".repeat(width[i] - 1);
            if numeric[i] {
                out.push_str(&format!(" {dashes}: |"));
            } else {
                out.push_str(&format!(" {dashes}- |"));
            }
        }
        out.push('\n');
        for r in &rows {
            out.push_str(&line(r));
        }
    }
    for note in &t.notes {
        out.push('\n');
        out.push_str(&md_escape(note));
        out.push('\n');
    }
    out
}

/// The CSV written to `<id>.csv`: numbers as numbers, so that pandas or
/// polars read numeric columns. A column of `v ± h` cells becomes two, the
/// value (its header without " (±95% CI)") and `<header> half_width`; a
/// percentage column holds fractions (`0.00386` for 0.386%) under
/// `<header> (fraction)`; status words in a numeric column ("saturated")
/// move to a `<header> status` column, blanks ("—") are empty. Full
/// precision: the cells as the table was built, not as displayed. Notes are
/// not part of the CSV.
pub fn table_csv(t: &Table) -> Result<String> {
    let err = |e: csv::Error| ReportError::Write {
        path: format!("{}.csv", t.id),
        cause: e.into(),
    };
    let n = n_cols(t);
    let kinds: Vec<ColumnKind> = (0..n).map(|c| column_kind(t, c)).collect();
    // Whether a column holds status words, decided once per column (not per
    // row: the rows loop below would make it quadratic in the rows).
    let status: Vec<bool> = (0..n)
        .map(|c| {
            t.rows.iter().any(|r| {
                let s = cell(r, c);
                !is_blank(s) && parse_cell(s).is_none()
            })
        })
        .collect();
    let has_status = |c: usize| status[c];
    let mut header: Vec<String> = Vec::new();
    for (c, k) in kinds.iter().enumerate() {
        let h = cell(&t.header, c);
        match k {
            ColumnKind::Text => header.push(h.to_string()),
            ColumnKind::Percent => header.push(format!("{h} (fraction)")),
            ColumnKind::Number { half_widths } => {
                let base = h
                    .replace(" (±95% CI)", "")
                    .replace("(±95% CI)", "")
                    .trim()
                    .to_string();
                header.push(base.clone());
                if *half_widths {
                    header.push(format!("{base} half_width"));
                }
                if has_status(c) {
                    header.push(format!("{base} status"));
                }
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    if n > 0 {
        w.write_record(&header).map_err(err)?;
        for r in &t.rows {
            let mut out: Vec<String> = Vec::with_capacity(header.len());
            for (c, k) in kinds.iter().enumerate() {
                let s = cell(r, c);
                match k {
                    ColumnKind::Text => out.push(s.to_string()),
                    ColumnKind::Percent => {
                        out.push(parse_percent(s).map_or(String::new(), |f| f.to_string()))
                    }
                    ColumnKind::Number { half_widths } => {
                        let parsed = parse_cell(s);
                        out.push(parsed.map_or(String::new(), |p| p.0.to_string()));
                        if *half_widths {
                            out.push(
                                parsed
                                    .and_then(|p| p.1)
                                    .map_or(String::new(), |h| h.to_string()),
                            );
                        }
                        if has_status(c) {
                            let status = if is_blank(s) || parsed.is_some() {
                                ""
                            } else {
                                s.trim()
                            };
                            out.push(status.to_string());
                        }
                    }
                }
            }
            w.write_record(&out).map_err(err)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| ReportError::Write {
        path: format!("{}.csv", t.id),
        cause: e.into_error().into(),
    })?;
    // Only &str went in, so the output is UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Writes `<out_dir>/<id>.md` and `<out_dir>/<id>.csv`; returns both paths.
pub fn write_table(table: &Table, out_dir: &Path) -> Result<Vec<PathBuf>> {
    check_id(&table.id).map_err(|reason| ReportError::Write {
        path: out_dir.join(&table.id).display().to_string(),
        cause: reason.into(),
    })?;
    std::fs::create_dir_all(out_dir).map_err(|e| write_err(out_dir, e))?;
    let md = out_dir.join(format!("{}.md", table.id));
    crate::write_atomic(&md, table_markdown(table)).map_err(|e| write_err(&md, e))?;
    let csv = out_dir.join(format!("{}.csv", table.id));
    crate::write_atomic(&csv, table_csv(table)?).map_err(|e| write_err(&csv, e))?;
    Ok(vec![md, csv])
}
