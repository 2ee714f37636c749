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
                    }),
                )
            })
            .collect(),
    };
    let sim = FigureSeries {
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
                    }),
                )
            })
            .collect(),
    };
    let paper = FigureSeries {
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
                                }),
                            )
                        })
                        .collect(),
                },
                FigureSeries {
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
        series: vec![FigureSeries {
            label: "model".into(),
            style: SeriesStyle::Line,
            points: vec![(1.0, None), (2.0, None)],
        }],
    };
    out.extend(render_figure(&empty, &dir).expect("render"));
    for p in out {
        println!("{}", p.display());
    }
}
