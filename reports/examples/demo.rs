//! Renders sample figures, a table and an index into a directory (default
//! `target/reports-demo`), to eyeball the look: `cargo run --release -p reports --example demo [dir]`.

use reports::*;
use std::path::PathBuf;

fn mm1k_l(rho: f64, k: usize) -> f64 {
    let p: Vec<f64> = (0..=k).map(|n| rho.powi(n as i32)).collect();
    let z: f64 = p.iter().sum();
    p.iter().enumerate().map(|(n, q)| n as f64 * q / z).sum()
}

fn mm1k_block(rho: f64, k: usize) -> f64 {
    let z: f64 = (0..=k).map(|n| rho.powi(n as i32)).sum();
    rho.powi(k as i32) / z
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/reports-demo"));
    let lambdas: Vec<f64> = (1..=15).map(|i| 0.5 * f64::from(i)).collect();
    let mu = 4.0;
    let k = 16;
    // Deterministic pseudo-noise for the "simulation".
    let noise = |i: usize| ((i as f64 * 12.9898).sin() * 43758.5453).fract() - 0.5;
    let model = FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: "model (mm1k.exact)".into(),
        style: SeriesStyle::Line,
        points: lambdas
            .iter()
            .map(|&l| {
                let v = mm1k_l(l / mu, k);
                (
                    l,
                    (l != 5.0).then_some(Value {
                        value: v,
                        half_width: None,
                        n: None,
                    }),
                )
            })
            .collect(),
    };
    let sim = FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: "simulation (mm1k.sim), 95% CI".into(),
        style: SeriesStyle::Markers,
        points: lambdas
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let v = mm1k_l(l / mu, k);
                let hw = 0.03 * v + 0.05;
                (
                    l,
                    Some(Value {
                        value: v + hw * noise(i),
                        half_width: Some(hw),
                        n: None,
                    }),
                )
            })
            .collect(),
    };
    let paper = FigureSeries {
        name: String::new(),
        metric: String::new(),
        point_metrics: Vec::new(),
        colour: None,
        variant: 0,
        label: "paper (Table 3)".into(),
        style: SeriesStyle::Reference,
        points: lambdas
            .iter()
            .step_by(3)
            .map(|&l| {
                (
                    l,
                    Some(Value {
                        value: mm1k_l(l / mu, k) * 1.04,
                        half_width: None,
                        n: None,
                    }),
                )
            })
            .collect(),
    };
    let fig = Figure {
        id: "demo-L".into(),
        title: "M/M/1/K: mean number in system, model vs simulation (μ = 4, K = 16)".into(),
        xlabel: "arrival rate λ (1/s)".into(),
        ylabel: "mean number in system L".into(),
        log_y: false,
        log_x: false,
        series: vec![model, sim, paper],
    };
    let t = std::time::Instant::now();
    let mut out = render_figure(&fig, &dir).expect("render");
    eprintln!("linear figure: {:?}", t.elapsed());

    let ks: Vec<usize> = (1..=24).collect();
    let series = [2.0, 3.0, 3.8]
        .iter()
        .enumerate()
        .flat_map(|(j, &lam)| {
            let rho = lam / mu;
            [
                FigureSeries {
                    name: String::new(),
                    metric: String::new(),
                    point_metrics: Vec::new(),
                    colour: None,
                    variant: 0,
                    label: format!("model ρ = {rho}"),
                    style: SeriesStyle::Line,
                    points: ks
                        .iter()
                        .map(|&k| {
                            (
                                k as f64,
                                Some(Value {
                                    value: mm1k_block(rho, k),
                                    half_width: None,
                                    n: None,
                                }),
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
                    label: format!("simulation ρ = {rho}"),
                    style: SeriesStyle::Markers,
                    points: ks
                        .iter()
                        .step_by(2)
                        .enumerate()
                        .map(|(i, &k)| {
                            let v = mm1k_block(rho, k);
                            let hw = v * 0.15 * (1.0 + k as f64 / 10.0);
                            let val = if k > 16 && j == 0 {
                                0.0
                            } else {
                                v + hw * noise(i + 7 * j)
                            };
                            (
                                k as f64,
                                Some(Value {
                                    value: val,
                                    half_width: Some(hw),
                                    n: None,
                                }),
                            )
                        })
                        .collect(),
                },
            ]
        })
        .collect();
    let fig = Figure {
        id: "demo-block".into(),
        title: "M/M/1/K: blocking probability vs buffer size".into(),
        xlabel: "buffer size K (packets)".into(),
        ylabel: "blocking probability P_block".into(),
        log_y: true,
        log_x: false,
        series,
    };
    let t = std::time::Instant::now();
    out.extend(render_figure(&fig, &dir).expect("render"));
    eprintln!("log figure: {:?}", t.elapsed());

    let empty = Figure {
        id: "demo-empty".into(),
        title: "nothing converged".into(),
        xlabel: "x".into(),
        ylabel: "y".into(),
        log_y: true,
        log_x: false,
        series: vec![FigureSeries {
            name: String::new(),
            metric: String::new(),
            point_metrics: Vec::new(),
            colour: None,
            variant: 0,
            label: "model".into(),
            style: SeriesStyle::Line,
            points: vec![(1.0, None), (2.0, None)],
        }],
    };
    out.extend(render_figure(&empty, &dir).expect("render"));
    // Data in every corner: the legend needs headroom above the data.
    let xs: Vec<f64> = (0..=40).map(|i| f64::from(i) * 0.25).collect();
    let crowded = Figure {
        id: "demo-crowded".into(),
        title: "Crowded: utilisation of four stations".into(),
        xlabel: "time t (s)".into(),
        ylabel: "utilisation U".into(),
        log_y: false,
        log_x: false,
        series: (0..4)
            .map(|j| FigureSeries {
                name: String::new(),
                metric: String::new(),
                point_metrics: Vec::new(),
                colour: None,
                variant: 0,
                label: format!("station {j} (tandem.ctmc)"),
                style: if j % 2 == 0 {
                    SeriesStyle::Line
                } else {
                    SeriesStyle::Markers
                },
                points: xs
                    .iter()
                    .map(|&x| {
                        let y = 0.5 + 0.45 * (x + f64::from(j)).sin();
                        (
                            x,
                            Some(Value {
                                value: y,
                                half_width: (j % 2 == 1).then_some(0.03),
                                n: None,
                            }),
                        )
                    })
                    .collect(),
            })
            .collect(),
    };
    out.extend(render_figure(&crowded, &dir).expect("render"));
    // A narrow log range (less than a decade).
    let narrow = Figure {
        id: "demo-narrow-log".into(),
        title: "Narrow log range".into(),
        xlabel: "load ρ".into(),
        ylabel: "delay (ms)".into(),
        log_y: true,
        log_x: false,
        series: vec![FigureSeries {
            name: String::new(),
            metric: String::new(),
            point_metrics: Vec::new(),
            colour: None,
            variant: 0,
            label: "model".into(),
            style: SeriesStyle::Line,
            points: (0..10)
                .map(|i| {
                    let r = 0.1 + 0.05 * f64::from(i);
                    (
                        r,
                        Some(Value {
                            value: 2.0 / (1.0 - r),
                            half_width: None,
                            n: None,
                        }),
                    )
                })
                .collect(),
        }],
    };
    out.extend(render_figure(&narrow, &dir).expect("render"));
    let table = Table {
        id: "demo-em".into(),
        title: "EM of L: model vs simulation".into(),
        header: vec![
            "λ (1/s)".into(),
            "model".into(),
            "simulation".into(),
            "EM".into(),
            "verdict".into(),
        ],
        rows: lambdas
            .iter()
            .take(4)
            .map(|&l| {
                let m = mm1k_l(l / mu, k);
                let s = m * 1.01;
                vec![
                    format_tick(l),
                    format!("{m:.4}"),
                    format!("{s:.4} ± {:.4}", 0.002),
                    format_em(verdicts::em(s, m)),
                    if verdicts::em(s, m).is_some_and(|e| e + 0.002 / s <= 0.05) {
                        "pass".to_string()
                    } else {
                        "fail".to_string()
                    },
                ]
            })
            .collect(),
        notes: vec!["mean EM 0.99%, max EM 0.99% (tolerance 5.00%)".into()],
    };
    out.extend(write_table(&table, &dir).expect("table"));
    let figure = |id: &str, title: &str| IndexFigure {
        alt: String::new(),
        id: id.into(),
        title: title.into(),
        png: format!("{id}.png"),
        svg: format!("{id}.svg"),
        em: None,
    };
    let index = Index {
        generated_by: "reports demo".into(),
        code_version: "demo".into(),
        generated_at: "2026-01-01T00:00:00.000Z".into(),
        fidelity: "full".into(),
        other_fidelity: None,
        catalogue: vec![],
        statuses: vec![],
        experiments: vec![IndexExperiment {
            id: "demo".into(),
            version: 1,
            title: "M/M/1/K demo".into(),
            source: "synthetic data".into(),
            manifest_hash: "0123456789abcdef".into(),
            figures: vec![
                figure("demo-L", "L vs λ"),
                figure("demo-block", "P_block vs K"),
                figure("demo-crowded", "crowded"),
                figure("demo-empty", "no data"),
            ],
            tables: vec![IndexTable {
                id: table.id.clone(),
                title: table.title.clone(),
                markdown: "demo-em.md".into(),
                csv: "demo-em.csv".into(),
                table: table.clone(),
                em: None,
            }],
            provenance: vec![("seeds".into(), "1".into())],
            series: vec![],
            docs: vec![],
            comparison: None,
            claims: vec![],
            removed_claims: vec![],
            calibrated_against: vec![],
            em_summary: vec![EmSummaryLine {
                metric: "L".into(),
                reference: "sim".into(),
                candidate: "model".into(),
                mean_em: Some(0.0099),
                max_em: Some(0.0712),
                tolerance: Some(0.05),
                passed: 3,
                failed: 1,
                inconclusive: 0,
            }],
        }],
    };
    let index_path = dir.join("index.html");
    write_index(&index, &index_path).expect("index");
    out.push(index_path);
    for p in out {
        println!("{}", p.display());
    }
}
