//! Results as data frames (issue 18): `repro export --format parquet|arrow`
//! read back by polars (and by pyarrow when it is installed), and `repro
//! compare` of two versions of a manifest: overlay figures, the difference
//! table, and numbers that match each version's own export.

mod common;
use common::*;
use polars::prelude::*;
use polars_io::prelude::{IpcReader, ParquetReader, SerReader};
use std::path::Path;
use std::process::Command;

/// The standard output of a command that must succeed (`ok` gives its stderr).
fn ok_out(o: &std::process::Output) -> String {
    ok(o);
    stdout(o)
}

fn read_parquet(path: &Path) -> DataFrame {
    let f = std::fs::File::open(path).unwrap();
    ParquetReader::new(f).finish().unwrap()
}

fn strs(df: &DataFrame, name: &str) -> Vec<Option<String>> {
    let s = df.column(name).unwrap().str().unwrap().clone();
    (0..s.len()).map(|i| s.get(i).map(str::to_string)).collect()
}

fn dtype(df: &DataFrame, name: &str) -> DataType {
    df.column(name)
        .unwrap_or_else(|e| panic!("no column {name}: {e}; columns {:?}", df.get_column_names()))
        .dtype()
        .clone()
}

/// One quick run of the zipped-sweep manifest (axes n and m, a model and a simulation).
fn run_credit() -> tempfile::TempDir {
    let p = project(&["yan-credit-both"]);
    ok(&repro(p.path(), &["run", "--quick"]));
    p
}

#[test]
fn parquet_and_arrow_exports_have_typed_columns_and_one_row_per_task_metric() {
    let p = run_credit();
    let csv = ok_out(&repro(p.path(), &["export", "--quick", "--format", "csv"]));
    let csv_rows = csv.lines().count() - 1;
    assert!(csv_rows > 50, "{csv}");
    let file = p.path().join("out.parquet");
    let f = file.to_str().unwrap();
    ok(&repro(
        p.path(),
        &["export", "--quick", "--format", "parquet", "--out", f],
    ));
    let df = read_parquet(&file);
    assert_eq!(
        df.height(),
        csv_rows,
        "one row per (point, series, metric), as the CSV"
    );
    for (name, t) in [
        ("experiment", DataType::String),
        ("version", DataType::Int64),
        ("series", DataType::String),
        ("solver", DataType::String),
        ("n", DataType::Int64),
        ("m", DataType::Int64),
        ("metric", DataType::String),
        ("value", DataType::Float64),
        ("half_width", DataType::Float64),
        ("ci_n", DataType::Int64),
        ("status", DataType::String),
        ("fidelity", DataType::String),
        ("code_version", DataType::String),
    ] {
        assert_eq!(dtype(&df, name), t, "column {name}");
    }
    // Models have no CI: nulls, not NaN or 0.
    let model_hw = df
        .clone()
        .lazy()
        .filter(col("series").eq(lit("model")))
        .select([col("half_width").null_count()])
        .collect()
        .unwrap();
    let models = strs(&df, "series")
        .iter()
        .filter(|s| s.as_deref() == Some("model"))
        .count();
    let nulls = model_hw.column("half_width").unwrap().get(0).unwrap();
    assert_eq!(nulls.try_extract::<u64>().unwrap(), models as u64);
    let fid = strs(&df, "fidelity");
    assert!(
        fid.contains(&Some("quick".to_string())) && fid.contains(&Some("any".to_string())),
        "{fid:?}"
    );

    let arrow = p.path().join("out.arrow");
    ok(&repro(
        p.path(),
        &[
            "export",
            "--quick",
            "--format",
            "arrow",
            "--out",
            arrow.to_str().unwrap(),
        ],
    ));
    let back = IpcReader::new(std::fs::File::open(&arrow).unwrap())
        .finish()
        .unwrap();
    assert_eq!(back.height(), csv_rows);
    assert_eq!(back.schema(), df.schema());

    let no_out = repro(p.path(), &["export", "--quick", "--format", "parquet"]);
    assert_eq!(no_out.status.code(), Some(2));
    assert!(
        stderr(&no_out).contains("--out FILE"),
        "{}",
        stderr(&no_out)
    );
}

#[test]
fn parquet_export_reads_in_pyarrow() {
    let has = Command::new("python3")
        .args(["-c", "import pyarrow"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has {
        // Straight to stderr (not `eprintln!`, which the test harness
        // captures), so that the skip shows in CI's log.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED parquet_export_reads_in_pyarrow: `python3 -c \"import pyarrow\"` fails \
             (`python3 -m pip install pyarrow` to run it; .ci/run does)"
        );
        return;
    }
    let p = run_credit();
    let file = p.path().join("out.parquet");
    ok(&repro(
        p.path(),
        &[
            "export",
            "--quick",
            "--format",
            "parquet",
            "--out",
            file.to_str().unwrap(),
        ],
    ));
    let script = "import sys, pyarrow.parquet as pq\n\
                  t = pq.read_table(sys.argv[1])\n\
                  print(t.num_rows)\n\
                  for f in t.schema: print(f.name, f.type)\n";
    let o = Command::new("python3")
        .args(["-c", script, file.to_str().unwrap()])
        .output()
        .unwrap();
    let out = ok_out(&o);
    let csv = ok_out(&repro(p.path(), &["export", "--quick", "--format", "csv"]));
    assert_eq!(
        out.lines().next(),
        Some((csv.lines().count() - 1).to_string().as_str())
    );
    for line in [
        "version int64",
        "n int64",
        "value double",
        "half_width double",
        "ci_n int64",
    ] {
        assert!(out.lines().any(|l| l == line), "no `{line}` in:\n{out}");
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("experiment ") && l.contains("string")),
        "{out}"
    );
}

/// (point, series, metric) -> value, from `repro export --format json`.
fn exported(dir: &Path) -> std::collections::BTreeMap<(String, String, String), f64> {
    let o = ok_out(&repro(dir, &["export", "--quick", "--format", "json"]));
    let rows: serde_json::Value = serde_json::from_str(&o).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (
                    r["point"].to_string(),
                    r["series"].as_str().unwrap().to_string(),
                    r["metric"].as_str().unwrap().to_string(),
                ),
                r["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn compare_of_two_versions_draws_overlays_and_the_right_differences() {
    let p = run_credit();
    let v1 = exported(p.path());
    let path = p.path().join("experiments/yan-credit-both.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let v2_text = text
        .replace("version: 1", "version: 2")
        .replace("mu2: 8.0", "mu2: 16.0");
    assert_ne!(text, v2_text);
    std::fs::write(&path, v2_text).unwrap();
    ok(&repro(p.path(), &["run", "--quick"]));
    let v2 = exported(p.path());

    let o = repro(
        p.path(),
        &[
            "compare",
            "--quick",
            "--figure",
            "--format",
            "json",
            "yan-credit-both@1",
            "yan-credit-both@2",
        ],
    );
    let c: serde_json::Value = serde_json::from_str(&ok_out(&o)).unwrap();
    let differences = c["differences"].to_string();
    assert!(
        differences.contains("Parameters differ") && differences.contains("mu2: 8 → 16"),
        "{differences}"
    );
    assert!(
        differences.contains("Solver versions: the same"),
        "{differences}"
    );
    assert!(
        differences.contains("Code version: the same"),
        "{differences}"
    );
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), v1.len().max(v2.len()));
    let mut changed = 0;
    for r in rows {
        let key = (
            r["point"].to_string(),
            r["series"].as_str().unwrap().to_string(),
            r["metric"].as_str().unwrap().to_string(),
        );
        let (a, b) = (v1[&key], v2[&key]);
        assert_eq!(r["a"]["value"].as_f64(), Some(a), "{key:?}");
        assert_eq!(r["b"]["value"].as_f64(), Some(b), "{key:?}");
        // serde_json (without `float_roundtrip`) may read a number an ulp
        // off, so B − A of the parsed values can differ from the written one
        // in its last bits.
        let diff = r["diff"].as_f64().unwrap();
        assert!(
            (diff - (b - a)).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0),
            "{key:?}: {diff} vs {}",
            b - a
        );
        if a != 0.0 {
            let em = r["em"].as_f64().unwrap();
            assert!(
                (em - (b - a).abs() / a.abs()).abs() <= 1e-12 * em.max(1.0),
                "{key:?}"
            );
        }
        changed += usize::from(a != b);
    }
    assert!(
        changed > rows.len() / 2,
        "a faster Node 2 changes most values"
    );

    let dir = p
        .path()
        .join("results/quick/compare/yan-credit-both-v1-vs-yan-credit-both-v2");
    for f in ["yan-4.9", "yan-4.10", "yan-4.11", "yan-4.12"] {
        for ext in ["png", "svg"] {
            let file = dir.join(format!("figures/{f}.{ext}"));
            assert!(file.is_file(), "{} missing", file.display());
        }
    }
    let svg = std::fs::read_to_string(dir.join("figures/yan-4.10.svg")).unwrap();
    assert!(
        svg.contains("[yan-credit-both@1]") && svg.contains("[yan-credit-both@2]"),
        "legend names both versions"
    );
    let table =
        std::fs::read_to_string(dir.join("tables/yan-credit-both-v1-vs-yan-credit-both-v2.md"))
            .unwrap();
    assert!(
        table.contains("mu2: 8 → 16") && table.contains(r"EM \|B − A\| / \|A\|"),
        "{table}"
    );

    // The same numbers as Parquet.
    let pq = p.path().join("cmp.parquet");
    ok(&repro(
        p.path(),
        &[
            "compare",
            "--quick",
            "--format",
            "parquet",
            "--out",
            pq.to_str().unwrap(),
            "yan-credit-both@1",
            "yan-credit-both@2",
        ],
    ));
    let df = read_parquet(&pq);
    assert_eq!(df.height(), rows.len());
    assert_eq!(dtype(&df, "em"), DataType::Float64);

    // index.html shows the previous version against the latest.
    let index = std::fs::read_to_string(p.path().join("results/quick/index.html")).unwrap();
    assert!(
        index.contains("Versions: yan-credit-both@1 vs yan-credit-both@2"),
        "index lacks the comparison"
    );
    assert!(p
        .path()
        .join("results/quick/compare/yan-credit-both/figures/yan-4.10.png")
        .is_file());
}
