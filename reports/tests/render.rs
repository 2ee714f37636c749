//! Output tests: files exist, have the right format and show the given text.

use reports::*;
use std::path::Path;

fn v(value: f64, hw: Option<f64>) -> Option<Value> {
    Some(Value {
        value,
        half_width: hw,
        n: None,
    })
}

fn sample_figure(id: &str) -> Figure {
    let xs: Vec<f64> = (1..=12).map(f64::from).collect();
    Figure {
        id: id.to_string(),
        title: "Queue length <L> & friends".to_string(),
        xlabel: "buffer size K (packets)".to_string(),
        ylabel: "mean delay W (ms)".to_string(),
        log_y: false,
        log_x: false,
        series: vec![
            FigureSeries {
                name: String::new(),
                metric: String::new(),
                point_metrics: Vec::new(),
                colour: None,
                variant: 0,
                label: "model (mm1k.exact)".to_string(),
                style: SeriesStyle::Line,
                points: xs.iter().map(|&x| (x, v(x.sqrt(), None))).collect(),
            },
            FigureSeries {
                name: String::new(),
                metric: String::new(),
                point_metrics: Vec::new(),
                colour: None,
                variant: 0,
                label: "simulation (mm1k.sim)".to_string(),
                style: SeriesStyle::Markers,
                points: xs
                    .iter()
                    .map(|&x| {
                        (
                            x,
                            if x == 6.0 {
                                None
                            } else {
                                v(x.sqrt() * 1.01, Some(0.1))
                            },
                        )
                    })
                    .collect(),
            },
            FigureSeries {
                name: String::new(),
                metric: String::new(),
                point_metrics: Vec::new(),
                colour: None,
                variant: 0,
                label: "paper's table".to_string(),
                style: SeriesStyle::Reference,
                points: vec![(2.0, v(1.5, None)), (8.0, v(2.9, None))],
            },
        ],
    }
}

/// plotters escapes SVG text like this (quotes included).
fn svg_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

fn svg_has(svg: &str, text: &str) -> bool {
    svg.contains(text) || svg.contains(&svg_escape(text)) || svg.contains(&html_escape(text))
}

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        &PNG_SIGNATURE,
        "{} is not a PNG",
        path.display()
    );
    assert!(
        bytes.len() > 10_000,
        "PNG suspiciously small: {} bytes",
        bytes.len()
    );
}

#[test]
fn figure_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/figures");
    let fig = sample_figure("fig-1");
    let paths = render_figure(&fig, &out).unwrap();
    assert_eq!(
        paths,
        ["png", "svg", "pdf", "csv"].map(|e| out.join(format!("fig-1.{e}")))
    );
    check_png(&paths[0]);
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    // Values on hover: one <title> per drawn point (12 + 11 + 2).
    assert_eq!(svg.matches("<title>").count(), 25, "hover titles");
    assert!(svg.contains("<title>simulation (mm1k.sim): x = 2, y = 1.42836 ± 0.1 (95% CI)</title>"));
    // The PDF: one page of the default 16 cm width, DejaVu embedded as a subset.
    let pdf = std::fs::read(&paths[2]).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let text = String::from_utf8_lossy(&pdf);
    assert!(text.contains("/FontFile2"), "fonts not embedded");
    assert!(text.contains("DejaVuSans"), "not the bundled font");
    // The numeric data beside it.
    let csv = std::fs::read_to_string(&paths[3]).unwrap();
    let mut rows = csv.lines();
    assert_eq!(
        rows.next(),
        Some("x,series,label,metric,value,half_width,n")
    );
    assert_eq!(csv.lines().count(), 1 + 12 + 12 + 2);
    assert!(
        csv.contains("\n2,,simulation (mm1k.sim),,1.4283556979968262,0.1,\n"),
        "{csv}"
    );
    assert!(svg.contains("<svg"));
    assert!(!svg.contains("<L>"), "unescaped title in SVG");
    for text in [
        fig.title.as_str(),
        &fig.xlabel,
        &fig.ylabel,
        "model (mm1k.exact)",
        "simulation (mm1k.sim)",
        "paper's table",
    ] {
        assert!(svg_has(&svg, text), "SVG lacks {text:?}");
    }
    assert!(svg.contains("DejaVu Sans"));
}

/// Text nodes of a plotters SVG (each sits on its own line between tags).
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
        .filter_map(|rest| {
            rest.split_once("</text>")
                .map(|(body, _)| body.trim().to_string())
        })
        .collect()
}

#[test]
fn integer_x_axis_gets_integer_ticks() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("ints");
    // x in 1..4: plotters' own f64 ticks would fall on halves here.
    fig.series = vec![FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: "model".to_string(),
        style: SeriesStyle::Line,
        points: (1..=4)
            .map(|k| (f64::from(k), v(100.0 * f64::from(k), None)))
            .collect(),
    }];
    let paths = render_figure(&fig, dir.path()).unwrap();
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    let texts = svg_texts(&svg);
    let numbers: Vec<f64> = texts.iter().filter_map(|t| t.parse::<f64>().ok()).collect();
    for k in ["1", "2", "3", "4"] {
        assert!(texts.iter().any(|t| t == k), "no tick {k}: {texts:?}");
    }
    assert!(numbers.len() >= 6, "{numbers:?}");
    assert!(numbers.iter().all(|x| x.fract() == 0.0), "{numbers:?}");
}

#[test]
fn rendering_is_deterministic() {
    // Every rendering builds fresh hash maps (new random seeds), so a file
    // that depended on their order would differ between some of these.
    let fig = sample_figure("same");
    let first = tempfile::tempdir().unwrap();
    render_figure(&fig, first.path()).unwrap();
    for _ in 0..6 {
        let again = tempfile::tempdir().unwrap();
        render_figure(&fig, again.path()).unwrap();
        for f in ["same.png", "same.svg", "same.pdf", "same.csv"] {
            assert!(
                std::fs::read(first.path().join(f)).unwrap()
                    == std::fs::read(again.path().join(f)).unwrap(),
                "{f} differs between two renderings of one figure"
            );
        }
    }
}

#[test]
fn log_y_with_zero_and_negative_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("log");
    fig.log_y = true;
    fig.series[0].points = vec![
        (1.0, v(0.0, None)),
        (2.0, v(1e-9, None)),
        (3.0, v(-1.0, None)),
        (4.0, v(1e-3, None)),
    ];
    // CI bars reaching below zero are clipped, not dropped.
    fig.series[1].points = vec![(1.0, v(1e-4, Some(5e-4))), (2.0, v(0.0, Some(1e-5)))];
    let paths = render_figure(&fig, dir.path()).unwrap();
    check_png(&paths[0]);

    // No positive value at all: linear fallback, still a plot.
    fig.id = "log-zero".to_string();
    for s in &mut fig.series {
        for p in &mut s.points {
            p.1 = v(0.0, Some(0.1));
        }
    }
    let paths = render_figure(&fig, dir.path()).unwrap();
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(svg.contains("linear y scale"), "fallback note missing");
}

#[test]
fn figures_without_data_render() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("empty");
    fig.log_y = true;
    for s in &mut fig.series {
        for p in &mut s.points {
            p.1 = None;
        }
    }
    let paths = render_figure(&fig, dir.path()).unwrap();
    check_png(&paths[0]);
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(svg.contains("no data"));

    // Non-finite numbers everywhere, and a figure without series.
    fig.id = "nan".to_string();
    fig.series[0].points = vec![
        (f64::NAN, v(1.0, None)),
        (1.0, v(f64::INFINITY, Some(f64::NAN))),
    ];
    render_figure(&fig, dir.path()).unwrap();
    // Extreme magnitudes: the range overflows to infinity.
    fig.id = "huge".to_string();
    fig.log_y = false;
    fig.series[0].points = vec![(-1e308, v(-1e308, Some(1e308))), (1e308, v(1e308, None))];
    render_figure(&fig, dir.path()).unwrap();
    fig.id = "no-series".to_string();
    fig.title.clear();
    fig.xlabel.clear();
    fig.ylabel.clear();
    fig.series.clear();
    render_figure(&fig, dir.path()).unwrap();
}

#[test]
fn single_point_and_constant_series_render() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("single");
    fig.series = vec![FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: "one".to_string(),
        style: SeriesStyle::Markers,
        points: vec![(3.0, v(0.0, Some(0.0)))],
    }];
    render_figure(&fig, dir.path()).unwrap();
    fig.log_y = true;
    fig.id = "single-log".to_string();
    fig.series[0].points = vec![(3.0, v(2.0, None)), (4.0, v(2.0, None))];
    render_figure(&fig, dir.path()).unwrap();
}

#[test]
fn figure_id_must_be_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let fig = sample_figure("../escape");
    assert!(matches!(
        render_figure(&fig, dir.path()),
        Err(ReportError::Draw { .. })
    ));
}

fn sample_table() -> Table {
    Table {
        id: "tab-em".to_string(),
        title: "EM of L | per point".to_string(),
        header: vec!["lambda".into(), "model".into(), "sim".into(), "EM".into()],
        rows: vec![
            vec![
                "0.5".into(),
                "0.143".into(),
                "0.141 ± 0.002".into(),
                "1.42%".into(),
            ],
            vec![
                "1.0".into(),
                "0.333".into(),
                "a, \"quoted\"".into(),
                "—".into(),
            ],
        ],
        notes: vec!["mean EM 1.42%, max EM 1.42%".into()],
    }
}

#[test]
fn table_markdown_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_table(&sample_table(), &dir.path().join("tables")).unwrap();
    let md = std::fs::read_to_string(&paths[0]).unwrap();
    let csv = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(paths[0].ends_with("tab-em.md") && paths[1].ends_with("tab-em.csv"));

    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "# EM of L \\| per point");
    assert_eq!(lines[1], "");
    assert!(lines[2].starts_with("| lambda |"), "{}", lines[2]);
    // Separator row; numeric columns right-aligned.
    assert!(lines[3].starts_with("| -----: |"), "{}", lines[3]);
    // Shown in one format per column.
    assert!(lines[4].contains("0.1410 ± 0.002000"), "{}", lines[4]);
    assert_eq!(lines[2].matches('|').count(), 5);
    assert_eq!(lines[4].matches('|').count(), 5);
    assert!(md.contains("\nmean EM 1.42%, max EM 1.42%\n"));

    // Numbers as numbers: the percentage as a fraction, blanks empty; the
    // column holding a text cell stays text.
    assert_eq!(
        csv,
        "lambda,model,sim,EM (fraction)\n0.5,0.143,0.141 ± 0.002,0.0142\n1,0.333,\"a, \"\"quoted\"\"\",\n"
    );
    assert!(!csv.contains("mean EM"), "notes must not be in the CSV");
}

#[test]
fn table_csv_splits_half_widths_and_statuses_and_keeps_full_precision() {
    let t = Table {
        id: "vals".into(),
        title: String::new(),
        header: vec!["n".into(), "sim: L (±95% CI)".into(), "EM".into()],
        rows: vec![
            vec![
                "4".into(),
                "7.394123456789 ± 0.0615123".into(),
                "0.38612345%".into(),
            ],
            vec!["8".into(), "saturated".into(), "—".into()],
            vec!["12".into(), "—".into(), "12.5%".into()],
        ],
        notes: vec![],
    };
    let csv = table_csv(&t).unwrap();
    assert_eq!(
        csv,
        "n,sim: L,sim: L half_width,sim: L status,EM (fraction)\n\
         4,7.394123456789,0.0615123,,0.0038612345\n\
         8,,,saturated,\n\
         12,,,,0.125\n"
    );
    // The Markdown shows them rounded, one format per column.
    let md = table_markdown(&t);
    assert!(md.contains("7.394 ± 0.06151"), "{md}");
    assert!(md.contains("0.386%") && md.contains("12.5%"), "{md}");
}

#[test]
fn ragged_table_is_padded() {
    let mut t = sample_table();
    t.rows.push(vec!["2.0".into()]);
    let csv = table_csv(&t).unwrap();
    assert!(csv.ends_with("2,,,\n"), "{csv}");
    let md = table_markdown(&t);
    let last = md.lines().rfind(|l| l.starts_with('|')).unwrap();
    assert!(
        last.contains(" 2.0000 |") && last.matches('|').count() == 5,
        "{last}"
    );
}

fn sample_index() -> Index {
    Index {
        generated_by: "repro 0.1.0".into(),
        code_version: "abc123-dirty".into(),
        generated_at: "2026-01-01T00:00:00.000Z".into(),
        fidelity: "full".into(),
        other_fidelity: None,
        catalogue: vec![],
        statuses: vec![],
        experiments: vec![IndexExperiment {
            id: "lib-mm1k".into(),
            version: 3,
            title: "<script>alert(1)</script> M/M/1/K".into(),
            source: "Wu 2010 & co".into(),
            manifest_hash: "deadbeef".into(),
            figures: vec![IndexFigure {
                alt: String::new(),
                id: "lib-mm1k-L".into(),
                title: "L vs λ".into(),
                png: "figures/lib-mm1k-L.png".into(),
                svg: "figures/lib-mm1k-L.svg".into(),
                em: None,
            }],
            tables: vec![IndexTable {
                id: "tab-em".into(),
                title: "EM table".into(),
                markdown: "tables/tab-em.md".into(),
                csv: "tables/tab-em.csv".into(),
                table: sample_table(),
                em: None,
            }],
            provenance: vec![
                ("seeds".into(), "1..10".into()),
                ("wall time".into(), "2.5 s".into()),
            ],
            series: vec![reports::SeriesProvenance {
                series: "sim".into(),
                solver: "mm1k.sim".into(),
                solver_version: 2,
                tasks: 30,
                wall_s: 1.25,
                base_seed: Some(7),
                fidelity: Some("full".into()),
                points: 10,
                without_value: vec![("saturated".into(), 3)],
            }],
            docs: vec![],
            comparison: None,
            claims: vec![],
            removed_claims: vec![],
            calibrated_against: vec![],
            em_summary: vec![
                EmSummaryLine {
                    metric: "L".into(),
                    reference: "sim".into(),
                    candidate: "model".into(),
                    mean_em: Some(0.0123),
                    max_em: Some(0.0712),
                    tolerance: Some(0.05),
                    passed: 10,
                    failed: 2,
                    inconclusive: 1,
                },
                EmSummaryLine {
                    metric: "P_block".into(),
                    reference: "sim".into(),
                    candidate: "model".into(),
                    mean_em: None,
                    max_em: None,
                    tolerance: None,
                    passed: 0,
                    failed: 0,
                    inconclusive: 0,
                },
            ],
        }],
    }
}

#[test]
fn index_links_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results/index.html");
    let mut index = sample_index();
    let t = &mut index.experiments[0].tables[0].table;
    t.rows
        .push(vec!["2.0".into(), "1".into(), "fail".into(), "9%".into()]);
    write_index(&index, &path).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("src=\"figures/lib-mm1k-L.png\""));
    assert!(html.contains("href=\"figures/lib-mm1k-L.svg\""));
    assert!(html.contains("href=\"tables/tab-em.md\""));
    assert!(html.contains("href=\"tables/tab-em.csv\""));
    assert!(!html.contains("<script"), "title not escaped");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; M/M/1/K"));
    assert!(html.contains("Wu 2010 &amp; co"));
    assert!(html.contains("abc123-dirty") && html.contains("deadbeef"));
    assert!(html.contains("1..10") && html.contains("wall time"));
    // Per-series provenance in a CSV beside the index; the points without a
    // value stay on the page.
    assert!(html.contains("<th>series sim</th><td>saturated at 3 of 10 points</td>"));
    assert!(html.contains("href=\"provenance/lib-mm1k.csv\""));
    let csv = std::fs::read_to_string(dir.path().join("results/provenance/lib-mm1k.csv")).unwrap();
    assert_eq!(
        csv,
        "series,solver,solver_version,tasks,wall_s,base_seed,fidelity,points,undefined,saturated,failed,missing\n\
         sim,mm1k.sim,2,30,1.250,7,full,10,0,3,0,0\n"
    );
    // EMs as percentages, failures highlighted.
    assert!(html.contains("1.23%") && html.contains("7.12%") && html.contains("5.00%"));
    assert!(html.contains("<tr class=\"fail\">"));
    assert!(html.contains("<td class=\"bad\">2<"));
    assert!(html.contains("<td class=\"warn\">1<"));
    assert!(
        !html.contains("class=\"num"),
        "numbers aligned per column, not per cell"
    );
    // The inlined table, escaped; verdict cells highlighted.
    assert!(html.contains("<td class=\"bad\">fail</td>"));
    assert!(html.contains("a, &quot;quoted&quot;"));
    assert!(html.contains("mean EM 1.42%, max EM 1.42%"));
    // Self-contained: no external resources.
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<link"));
}

#[test]
fn index_shows_short_tables_links_long_ones_and_has_contents() {
    let mut index = sample_index();
    index.experiments[0].figures[0].alt = "Plot of W against K, 2 series".into();
    index.experiments[0].tables[0].table.rows.push(vec![
        "2.0".into(),
        "1".into(),
        "fail".into(),
        "9%".into(),
    ]);
    let short = index_html(&index);
    assert!(
        short.contains("<td class=\"bad\">fail</td>"),
        "short table shown"
    );
    assert!(short.contains("alt=\"Plot of W against K, 2 series\""));
    assert!(short.contains("href=\"figures/lib-mm1k-L.pdf\""));
    assert!(short.contains("href=\"figures/lib-mm1k-L.csv\""));
    assert!(short.contains("<nav class=\"toc\""));
    assert!(short.contains(&format!("href=\"#exp-{}\"", index.experiments[0].id)));
    assert!(short.contains("id=\"top\"") && short.contains("href=\"#top\""));
    let t = &mut index.experiments[0].tables[0].table;
    let row = t.rows[0].clone();
    t.rows = vec![row; 200];
    t.rows[0][2] = "fail".into();
    t.notes = (0..50).map(|k| format!("note {k}")).collect();
    let long = index_html(&index);
    assert!(
        !long.contains("<td class=\"bad\">fail</td>"),
        "long table inlined"
    );
    assert!(long.contains("200 rows × 4 columns"));
    assert!(long.contains("note 5") && !long.contains("note 6<"));
    assert!(long.contains("44 more notes"));
    assert!(
        long.len() < short.len() + 2_000,
        "{} vs {}",
        long.len(),
        short.len()
    );
}

#[test]
fn index_percent_encodes_odd_paths() {
    let mut index = sample_index();
    index.experiments[0].figures[0].png = "figures/a b\"><x.png".into();
    let html = index_html(&index);
    assert!(html.contains("src=\"figures/a%20b%22%3E%3Cx.png\""));
}

#[test]
fn tidy_csv() {
    let rows = vec![
        TidyRow {
            experiment: "lib-mm1k".into(),
            version: 2,
            series: "sim".into(),
            solver: "mm1k.sim".into(),
            point: r#"{"K":16,"lambda":0.5}"#.into(),
            metric: "L".into(),
            value: 0.1 + 0.2,
            half_width: Some(1e-7),
            n: Some(10),
            status: "done".into(),
            fidelity: "quick".into(),
            code_version: "v1".into(),
        },
        TidyRow {
            experiment: "lib-mm1k".into(),
            version: 2,
            series: "model".into(),
            solver: "mm1k.exact".into(),
            point: r#"{"K":16,"lambda":0.5}"#.into(),
            metric: "L".into(),
            value: 2.0,
            half_width: None,
            n: None,
            status: "done".into(),
            fidelity: "any".into(),
            code_version: "v1".into(),
        },
    ];
    let mut out = Vec::new();
    write_tidy_csv(&rows, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // One column per sweep axis.
    assert_eq!(
        lines[0],
        "experiment,version,series,solver,K,lambda,metric,value,half_width,ci_n"
    );
    assert_eq!(
        lines[1],
        "lib-mm1k,2,sim,mm1k.sim,16,0.5,L,0.30000000000000004,0.0000001,10"
    );
    assert_eq!(lines[2], "lib-mm1k,2,model,mm1k.exact,16,0.5,L,2,,");
    assert_eq!(lines.len(), 3);

    // Round trip through a CSV reader: the axes and the exact value come back.
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let rec = rd.records().next().unwrap().unwrap();
    assert_eq!((&rec[4], &rec[5]), ("16", "0.5"));
    assert_eq!(rec[7].parse::<f64>().unwrap(), 0.1 + 0.2);
    // JSON: the point as an object.
    let j = reports::tidy_json(&rows);
    assert_eq!(j[0]["point"]["lambda"], 0.5);
    assert_eq!(j[1]["half_width"], serde_json::Value::Null);
}

#[test]
fn a_ci_smaller_than_its_marker_is_drawn_over_it_without_a_legend_note() {
    let dir = tempfile::tempdir().unwrap();
    let xs = [1.0, 2.0, 3.0];
    let sim = |label: &str, hw: f64| FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: label.to_string(),
        style: SeriesStyle::Markers,
        points: xs.iter().map(|&x| (x, v(x, Some(hw)))).collect(),
    };
    let mut fig = sample_figure("ci-note");
    fig.log_y = false;
    fig.series = vec![sim("tight", 1e-3)];
    render_figure(&fig, dir.path()).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("ci-note.svg")).unwrap();
    assert!(
        !svg.contains("within marker"),
        "the bar shows: no note needed"
    );
    // The markers (white-filled polygons) come before the bars (polylines
    // of the series' colour), so the bars are drawn over them.
    let last_marker = svg.rfind("<polygon").unwrap();
    let colour = "#0072B2";
    let last_bar = svg
        .rfind(&format!(
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"{colour}\""
        ))
        .unwrap();
    assert!(
        last_bar > last_marker,
        "a CI bar is hidden under its marker"
    );
}

/// The index shows the statuses the pipeline derived (reports decides none):
/// each summary row its entry's status with the claim counts, "not yet" for
/// an entry without a status, the count per status opening the summary, and
/// the legend explaining them.
#[test]
fn index_marks_hardware_references() {
    let mut index = sample_index();
    let entry = |id: &str, what: &str| reports::CatalogueEntry {
        id: id.into(),
        paper: "Gran & Reinemo 2011".into(),
        what: what.into(),
        hardware: what.contains("hardware"),
    };
    index.catalogue = vec![
        entry(
            "gran-7a",
            "Fig. 7(a): scenario 1 throughput per flow, hardware, CC off",
        ),
        entry("gran-7c", "Fig. 7(c): scenario 1, simulation, CC off"),
        entry("gran-8a", "Fig. 8(a): scenario 2, hardware, CC off"),
    ];
    let fig = |id: &str| IndexFigure {
        alt: String::new(),
        id: id.into(),
        title: id.into(),
        png: format!("figures/{id}.png"),
        svg: format!("figures/{id}.svg"),
        em: None,
    };
    index.experiments[0].figures = vec![fig("gran-7a"), fig("gran-7c")];
    let status = |id: &str, status, holding, checkable| reports::IndexEntryStatus {
        id: id.into(),
        status,
        holding,
        checkable,
        sanity: 1,
        fits: 0,
    };
    index.statuses = vec![
        status("gran-7a", verdicts::EntryStatus::ReferenceHardware, 0, 0),
        status("gran-7c", verdicts::EntryStatus::PartlyReproduced, 1, 3),
    ];
    let html = reports::index_html(&index);
    let row = |id: &str| {
        html.lines()
            .find(|l| l.contains(&format!("<code>{id}</code>")) && l.starts_with("<tr>"))
            .unwrap_or_else(|| panic!("no row for {id}"))
            .to_string()
    };
    assert!(
        row("gran-7a").contains(">reference: hardware<"),
        "{}",
        row("gran-7a")
    );
    assert!(
        row("gran-7c").contains(">partly reproduced<")
            && row("gran-7c").contains("(1 of 3 claims hold); 1 sanity"),
        "{}",
        row("gran-7c")
    );
    assert!(
        html.contains("1 reference: hardware</span>")
            && html.contains("1 partly reproduced</span>"),
        "no count per status"
    );
    assert!(row("gran-8a").contains(">not yet<"), "{}", row("gran-8a"));
    assert!(
        html.contains("<strong>reference: hardware</strong>"),
        "legend"
    );
}

#[test]
fn paper_options_set_the_physical_size_font_and_title() {
    let dir = tempfile::tempdir().unwrap();
    let fig = sample_figure("paper");
    let opts = FigureOptions {
        width: "8.5cm".parse().unwrap(),
        font_size: 8.0,
        title: false,
        ..FigureOptions::default()
    };
    let paths = render_figure_with(&fig, &opts, dir.path()).unwrap();
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    // 8.5 cm = 321.26 CSS px; the viewBox is 4 units per pixel.
    assert!(svg.starts_with("<svg width=\"321.26\""), "{}", &svg[..80]);
    assert!(
        !svg_has(&svg, &fig.title),
        "title drawn though title: false"
    );
    // 8 pt = 10.667 px = 42.67 units (plotters writes size / 1.24).
    assert!(svg.contains("font-size=\"42.66"), "tick font is not 8 pt");
    // 8.5 cm = 240.94 pt.
    let pdf = lopdf::Document::load(&paths[2]).unwrap();
    let page = *pdf.get_pages().values().next().unwrap();
    let media_box = pdf.get_dictionary(page).unwrap().get(b"MediaBox").unwrap();
    let width = media_box.as_array().unwrap()[2].as_float().unwrap();
    assert!((width - 240.94).abs() < 0.01, "PDF is {width} pt wide");
    // The same figure at the default size is wider.
    let wide = render_figure(&fig, dir.path()).unwrap();
    assert!(std::fs::read_to_string(&wide[1])
        .unwrap()
        .starts_with("<svg width=\"604.72\""));
}

#[test]
fn a_long_legend_goes_below_the_plot_and_the_figure_grows() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("crowded");
    fig.series = (0..16)
        .map(|k| FigureSeries {
            label: format!("configuration number {k} with a long label"),
            name: format!("s{k}"),
            metric: "L".into(),
            point_metrics: Vec::new(),
            style: SeriesStyle::Line,
            points: (1..=10)
                .map(|x| (f64::from(x), v(f64::from(x * (k + 1)), None)))
                .collect(),
            colour: None,
            variant: 0,
        })
        .collect();
    let paths = render_figure(&fig, dir.path()).unwrap();
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    let height: f64 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(height > 604.72 * 0.62 + 100.0, "legend not below: {height}");
    // Its rows sit below the x axis label, so none covers the plot.
    let label_y = |text: &str| -> f64 {
        let i = svg.find(text).unwrap();
        let tag = &svg[svg[..i].rfind("<text").unwrap()..i];
        tag.split("y=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let axis = label_y(&fig.xlabel);
    assert!(label_y("configuration number 0 with") > axis);
}

#[test]
fn an_axis_keeps_one_tick_format_with_its_power_of_ten_in_the_label() {
    let dir = tempfile::tempdir().unwrap();
    let mut fig = sample_figure("ticks");
    for s in &mut fig.series {
        for p in &mut s.points {
            p.0 *= 1e-4;
        }
    }
    let paths = render_figure(&fig, dir.path()).unwrap();
    let svg = std::fs::read_to_string(&paths[1]).unwrap();
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t.ends_with("(×10⁻³)")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("e-")), "{texts:?}");
    let x_ticks: Vec<&String> = texts
        .iter()
        .filter(|t| t.parse::<f64>().is_ok() && t.contains('.'))
        .collect();
    let decimals: std::collections::BTreeSet<usize> = x_ticks
        .iter()
        .map(|t| t.split('.').nth(1).map_or(0, str::len))
        .collect();
    assert!(!x_ticks.is_empty());
    assert!(decimals.len() <= 2, "x and y each one format: {x_ticks:?}");
}

/// A claim judged at many points: the index counts its comparisons, shows
/// only those that do not hold, and links the experiment's claims CSV,
/// which holds every comparison with both sides' intervals.
#[test]
fn per_point_claim_comparisons_go_to_a_csv_beside_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results/index.html");
    let mut index = sample_index();
    let step = |k: usize, verdict| IndexClaimStep {
        text: "sim.L > model.L".into(),
        point: Some(format!("{{\"lambda\":{k}}}")),
        lhs: (1.0 + k as f64, 1.5 + k as f64),
        op: ">".into(),
        rhs: (0.5, 0.5),
        verdict,
    };
    let mut steps: Vec<IndexClaimStep> = (0..20)
        .map(|k| {
            let v = if k == 7 || k == 13 {
                verdicts::Verdict::Fails
            } else {
                verdicts::Verdict::Holds
            };
            step(k, v)
        })
        .collect();
    steps.push(IndexClaimStep {
        point: None,
        ..step(0, verdicts::Verdict::Holds)
    });
    index.experiments[0].claims = vec![IndexClaim {
        id: "sim-above".into(),
        kind: verdicts::ClaimKind::Predicate,
        quote: "the simulation lies above".into(),
        where_: "§1".into(),
        entries: vec!["lib-mm1k-L".into()],
        holds: "sim.L > model.L".into(),
        points: None,
        expect: verdicts::Expectation::Holds,
        why: None,
        quick_expect: None,
        quick_why: None,
        note: None,
        sanity: None,
        fit: None,
        verdict: verdicts::Verdict::Fails,
        status: verdicts::ClaimStatus::Fails,
        reason: None,
        evaluated: 20,
        skipped: vec![],
        steps,
        history: vec![],
        definition: String::new(),
        first_evaluated: None,
    }];
    write_index(&index, &path).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(
        html.contains("20 comparison(s) at 20 point(s): 18 hold, 2 fail, 0 inconclusive (<a href=\"claims/lib-mm1k.csv\">all as CSV</a>)"),
        "{html}"
    );
    // The two that fail are shown, none of those that hold.
    assert!(html.contains("<code>{&quot;lambda&quot;:7}</code>"));
    assert!(html.contains("<code>{&quot;lambda&quot;:13}</code>"));
    assert!(!html.contains("<code>{&quot;lambda&quot;:8}</code>"));
    let csv = std::fs::read_to_string(dir.path().join("results/claims/lib-mm1k.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "claim",
            "point",
            "comparison",
            "left_low",
            "left_high",
            "op",
            "right_low",
            "right_high",
            "verdict"
        ]
    );
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 20, "per-point comparisons only");
    assert_eq!(
        rows[7].iter().collect::<Vec<_>>(),
        [
            "sim-above",
            "{\"lambda\":7}",
            "sim.L > model.L",
            "8",
            "8.5",
            ">",
            "0.5",
            "0.5",
            "fails"
        ]
    );
    // An experiment without per-point comparisons writes no CSV.
    index.experiments[0].claims.clear();
    let other = tempfile::tempdir().unwrap();
    write_index(&index, &other.path().join("index.html")).unwrap();
    assert!(!other.path().join("claims").exists());
}
