//! `examples/redraw_figure.py` (issue 34): Python reads the Parquet export
//! with polars and redraws Fig 4.5 with matplotlib. Without python3, polars
//! or matplotlib the test prints "SKIPPED ... why" (`.ci/run` installs them).

mod common;
use common::*;
use std::process::Command;

#[test]
fn the_python_example_redraws_a_figure_from_the_parquet_export() {
    let has = |module: &str| {
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    for module in ["polars", "matplotlib"] {
        if !has(module) {
            println!(
                "SKIPPED the_python_example_redraws_a_figure: python3 cannot import {module} \
                 (python3 -m pip install polars matplotlib)"
            );
            return;
        }
    }
    let p = project(&["yan-credit-downstream"]);
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    let parquet = p.path().join("out.parquet");
    ok(&repro(
        p.path(),
        &[
            "export",
            "--quick",
            "--format",
            "parquet",
            "--out",
            parquet.to_str().unwrap(),
        ],
    ));
    let script = shipped_experiments().join("../examples/redraw_figure.py");
    let png = p.path().join("fig-4.5.png");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&parquet)
        .arg(&png)
        .output()
        .expect("run python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Fig 4.5: m = 2..11 for the model and for the simulation.
    assert!(text.contains("model: 10 points"), "{text}");
    assert!(text.contains("sim: 10 points"), "{text}");
    let bytes = std::fs::read(&png).expect("no PNG written");
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
}
