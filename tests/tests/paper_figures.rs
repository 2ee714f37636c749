//! Figure options for papers: a manifest's `layout:` and the overrides of
//! `repro run`, `repro check` and `repro report` reach the drawn figures.

mod common;
use common::*;

const MANIFEST: &str = "lib-mmpp-m1";

/// The SVG's width in CSS pixels and whether the figure's title is drawn.
fn svg(dir: &std::path::Path, id: &str, title: &str) -> (f64, bool) {
    let path = dir.join(format!("results/quick/figures/{id}.svg"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let width = text
        .split("width=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no width in {path:?}"));
    // Hover titles (<title>) hold point values, never the figure's title.
    (width, text.contains(&format!("{title} [quick]")))
}

fn px(cm: f64) -> f64 {
    cm / 2.54 * 96.0
}

#[test]
fn manifest_layout_and_report_flags_size_the_figures() {
    let p = project(&[MANIFEST]);
    let path = p.path().join(format!("experiments/{MANIFEST}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let line = "ylabel: \"mean number in system L\", log_y: true }";
    assert!(
        text.contains(line),
        "the manifest changed: update this test"
    );
    let with_layout = text.replacen(
        line,
        "ylabel: \"mean number in system L\", log_y: true, layout: { width: 10cm, font_size: 8, title: false, legend: below } }",
        1,
    );
    std::fs::write(&path, with_layout).unwrap();
    ok(&repro(p.path(), &["run", "--quick", MANIFEST]));

    let l = ("lib-mmpp-m1-L", "MMPP/M/1 mean number in system");
    let w = ("lib-mmpp-m1-W", "MMPP/M/1 mean sojourn time");
    let (width, titled) = svg(p.path(), l.0, l.1);
    assert!((width - px(10.0)).abs() < 0.02, "{width}");
    assert!(!titled);
    // The other figures keep the defaults (16 cm, titled).
    let (width, titled) = svg(p.path(), w.0, w.1);
    assert!((width - px(16.0)).abs() < 0.02, "{width}");
    assert!(titled);

    // The command line wins over the manifest, for every figure.
    ok(&repro(
        p.path(),
        &[
            "report",
            "--figure-width",
            "8.5cm",
            "--font-size",
            "8",
            "--no-title",
        ],
    ));
    for (id, title) in [l, w] {
        let (width, titled) = svg(p.path(), id, title);
        assert!((width - px(8.5)).abs() < 0.02, "{id}: {width}");
        assert!(!titled, "{id}");
        assert!(p
            .path()
            .join(format!("results/quick/figures/{id}.pdf"))
            .is_file());
    }

    // Bad values: exit 2 with the flag or the manifest field named.
    let o = repro(p.path(), &["report", "--figure-width", "8.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unit"), "{}", stderr(&o));
    let o = repro(p.path(), &["report", "--font-size", "80"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--font-size"), "{}", stderr(&o));
    let bad = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("width: 10cm", "width: 10", 1);
    std::fs::write(&path, bad).unwrap();
    let o = repro(p.path(), &["run", "--quick", MANIFEST]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(MANIFEST) && err.contains("unit"), "{err}");
}

#[test]
fn run_and_check_take_the_figure_flags() {
    let p = project(&[MANIFEST]);
    let l = ("lib-mmpp-m1-L", "MMPP/M/1 mean number in system");
    let w = ("lib-mmpp-m1-W", "MMPP/M/1 mean sojourn time");
    ok(&repro(
        p.path(),
        &[
            "run",
            "--quick",
            "--figure-width",
            "9cm",
            "--no-title",
            MANIFEST,
        ],
    ));
    for (id, title) in [l, w] {
        let (width, titled) = svg(p.path(), id, title);
        assert!((width - px(9.0)).abs() < 0.02, "{id}: {width}");
        assert!(!titled, "{id}");
    }
    // Cached tasks, other flags: the figures are drawn again with them.
    let o = repro(
        p.path(),
        &["check", "--quick", "--figure-width", "7cm", MANIFEST],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (id, title) in [l, w] {
        let (width, titled) = svg(p.path(), id, title);
        assert!((width - px(7.0)).abs() < 0.02, "{id}: {width}");
        assert!(titled, "{id}");
    }
    // Without flags, the defaults come back.
    ok(&repro(p.path(), &["run", "--quick", MANIFEST]));
    let (width, titled) = svg(p.path(), l.0, l.1);
    assert!((width - px(16.0)).abs() < 0.02, "{width}");
    assert!(titled);
    // A bad value is refused before anything runs.
    let o = repro(
        p.path(),
        &["check", "--quick", "--legend", "middle", MANIFEST],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--legend"), "{}", stderr(&o));
}
