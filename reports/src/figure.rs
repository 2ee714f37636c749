//! Figures: one drawing routine, generic over the plotters backend, renders
//! both the PNG and the SVG of a [`Figure`].

use crate::axis::Axis;
use crate::fonts::{ensure_fonts, FAMILY};
use crate::format::format_tick;
use crate::{Figure, ReportError, Result, SeriesStyle};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// Pixel size of both renderings.
pub const FIGURE_SIZE: (u32, u32) = (960, 640);

const MARGIN: u32 = 16;
const CAPTION_PX: u32 = 24;
const TICK_PX: u32 = 16;
const AXIS_DESC_PX: u32 = 19;
const LEGEND_PX: u32 = 16;
const X_LABEL_AREA: u32 = 54;
const LEGEND_MARGIN: u32 = 10;
const LEGEND_ICON: u32 = 34;

/// Tableau-10: distinct, colour-blind-friendlier than the plotters defaults.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

#[derive(Debug, Clone, Copy)]
enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
}

const SHAPES: [Shape; 4] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
];

impl Shape {
    /// Outline in pixel offsets around the marker centre (closed: last = first).
    fn outline(self, r: i32) -> Vec<(i32, i32)> {
        let mut v: Vec<(i32, i32)> = match self {
            Shape::Circle => (0..16)
                .map(|i| {
                    let a = f64::from(i) * std::f64::consts::PI / 8.0;
                    let r = f64::from(r) + 0.5;
                    ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
                })
                .collect(),
            Shape::Square => vec![(-r, -r), (r, -r), (r, r), (-r, r)],
            Shape::Triangle => {
                let r = r + 1;
                vec![(0, -r), (r, r * 3 / 4), (-r, r * 3 / 4)]
            }
            Shape::Diamond => {
                let r = r + 1;
                vec![(0, -r), (r, 0), (0, r), (-r, 0)]
            }
        };
        v.push(v[0]);
        v
    }
}

/// A drawable point: x, y and the CI bar `(low, high, low_cap, high_cap)`;
/// a cap is omitted where the bar was clipped at the axis floor.
#[derive(Debug, Clone, Copy)]
struct Pt {
    x: f64,
    y: f64,
    bar: Option<(f64, f64, bool, bool)>,
}

struct Prepared<'a> {
    label: &'a str,
    style: SeriesStyle,
    color: RGBColor,
    shape: Shape,
    /// Maximal runs of consecutive drawable points (lines break between runs).
    runs: Vec<Vec<Pt>>,
}

struct Plan<'a> {
    series: Vec<Prepared<'a>>,
    x: Axis,
    y: Axis,
    integer_x: bool,
    has_data: bool,
    note: Option<&'static str>,
    legend: SeriesLabelPosition,
    y_label_area: u32,
}

/// Renders `<out_dir>/<id>.png` and `<out_dir>/<id>.svg`; returns both paths.
pub fn render_figure(fig: &Figure, out_dir: &Path) -> Result<Vec<PathBuf>> {
    crate::check_id(&fig.id).map_err(|reason| ReportError::Draw {
        id: fig.id.clone(),
        reason,
    })?;
    ensure_fonts();
    std::fs::create_dir_all(out_dir).map_err(|e| ReportError::Write {
        path: out_dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let plan = plan(fig);
    let draw_err = |e: String| ReportError::Draw {
        id: fig.id.clone(),
        reason: e,
    };

    let png = out_dir.join(format!("{}.png", fig.id));
    {
        let root = BitMapBackend::new(&png, FIGURE_SIZE).into_drawing_area();
        draw(&root, fig, &plan).map_err(|e| draw_err(e.to_string()))?;
        root.present().map_err(|e| ReportError::Write {
            path: png.display().to_string(),
            reason: e.to_string(),
        })?;
    }

    let svg = out_dir.join(format!("{}.svg", fig.id));
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, FIGURE_SIZE).into_drawing_area();
        draw(&root, fig, &plan).map_err(|e| draw_err(e.to_string()))?;
        root.present().map_err(|e| draw_err(e.to_string()))?;
    }
    std::fs::write(&svg, text).map_err(|e| ReportError::Write {
        path: svg.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(vec![png, svg])
}

fn plan(fig: &Figure) -> Plan<'_> {
    let finite =
        |x: f64, v: &Option<crate::Value>| x.is_finite() && v.is_some_and(|v| v.value.is_finite());
    let any_finite = fig
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|(x, v)| finite(*x, v));
    let any_positive = fig
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|(x, v)| finite(*x, v) && v.is_some_and(|v| v.value > 0.0));
    let log_y = fig.log_y && any_positive;
    let note = (fig.log_y && any_finite && !any_positive)
        .then_some("no positive values: linear scale instead of log");

    let mut series = Vec::with_capacity(fig.series.len());
    let mut n_marker_series = 0;
    for (i, s) in fig.series.iter().enumerate() {
        let shape = if matches!(s.style, SeriesStyle::Line | SeriesStyle::Trace) {
            Shape::Circle
        } else {
            n_marker_series += 1;
            SHAPES[(n_marker_series - 1) % SHAPES.len()]
        };
        let mut pts: Vec<_> = s.points.iter().collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut runs = Vec::new();
        let mut cur: Vec<Pt> = Vec::new();
        for (x, v) in pts {
            let v = v.filter(|v| finite(*x, &Some(*v)) && (!log_y || v.value > 0.0));
            let Some(v) = v else {
                if !cur.is_empty() {
                    runs.push(std::mem::take(&mut cur));
                }
                continue;
            };
            let bar = v
                .half_width
                .filter(|h| h.is_finite() && *h > 0.0)
                .map(|h| (v.value - h, v.value + h, true, true));
            cur.push(Pt {
                x: *x,
                y: v.value,
                bar,
            });
        }
        if !cur.is_empty() {
            runs.push(cur);
        }
        series.push(Prepared {
            label: &s.label,
            style: s.style,
            color: PALETTE[i % PALETTE.len()],
            shape,
            runs,
        });
    }

    let pts = || series.iter().flat_map(|s| s.runs.iter().flatten());
    let has_data = pts().next().is_some();
    let integer_x = has_data && pts().all(|p| p.x.fract() == 0.0 && p.x.abs() < 1e15);

    // X: data range plus a small margin so edge markers are not cut.
    let (x_lo, x_hi) = min_max(pts().map(|p| p.x)).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = pad(x_lo, x_hi, 0.03, integer_x);

    // Y: data and CI bar ends (positive ones only on a log axis), 5% padding.
    let y_values = pts().flat_map(|p| {
        let (lo, hi) = p.bar.map_or((p.y, p.y), |b| (b.0, b.1));
        [p.y, lo, hi]
    });
    let y_axis = |lo: f64, hi: f64| {
        if log_y {
            Axis::log(lo, hi)
        } else {
            Axis::linear(lo, hi, 8, false)
        }
    };
    let (y_lo, mut y_hi) = if log_y {
        let (lo, hi) = min_max(y_values.filter(|v| *v > 0.0).map(f64::log10)).unwrap_or((0.0, 1.0));
        let (lo, hi) = if hi > lo {
            let p = 0.05 * (hi - lo);
            (lo - p, hi + p)
        } else {
            (lo - 0.3, hi + 0.3)
        };
        (10f64.powf(lo), 10f64.powf(hi))
    } else {
        let (lo, hi) = min_max(y_values).unwrap_or((0.0, 1.0));
        pad(lo, hi, 0.05, false)
    };
    let x = Axis::linear(x_lo, x_hi, 10, integer_x);
    let mut y = y_axis(y_lo, y_hi);

    // Legend: the first corner that covers no data; otherwise make headroom
    // above the data and put it top right.
    let mut y_label_area = y_label_area_size(&y);
    let (legend_w, legend_h) = legend_size(&series);
    let (plot_w, plot_h) = plot_size(y_label_area);
    let fw = f64::from(legend_w + LEGEND_MARGIN) / f64::from(plot_w);
    let fh = f64::from(legend_h + LEGEND_MARGIN) / f64::from(plot_h);
    let samples = samples(&series, &x, &y);
    let corners = [
        (
            SeriesLabelPosition::UpperRight,
            (1.0 - fw, 1.0),
            (1.0 - fh, 1.0),
        ),
        (SeriesLabelPosition::UpperLeft, (0.0, fw), (1.0 - fh, 1.0)),
        (SeriesLabelPosition::LowerRight, (1.0 - fw, 1.0), (0.0, fh)),
        (SeriesLabelPosition::LowerLeft, (0.0, fw), (0.0, fh)),
    ];
    let hits = |(x0, x1): (f64, f64), (y0, y1): (f64, f64)| {
        samples
            .iter()
            .filter(|(sx, sy)| *sx >= x0 && *sx <= x1 && *sy >= y0 && *sy <= y1)
            .count()
    };
    let mut legend = SeriesLabelPosition::UpperRight;
    let free = corners.iter().find(|(_, xs, ys)| hits(*xs, *ys) == 0);
    if let Some((pos, _, _)) = free {
        legend = pos.clone();
    } else if fh < 0.45 && has_data {
        let keep = 1.0 / (1.0 - fh - 0.02);
        if y.is_log() {
            let (l, h) = (y_lo.log10(), y_hi.log10());
            y_hi = 10f64.powf(l + (h - l) * keep);
        } else {
            y_hi = y_lo + (y_hi - y_lo) * keep;
        }
        y = y_axis(y_lo, y_hi);
        y_label_area = y_label_area_size(&y);
    } else {
        let best = corners
            .iter()
            .min_by_key(|(_, xs, ys)| hits(*xs, *ys))
            .map(|c| c.0.clone());
        legend = best.unwrap_or(SeriesLabelPosition::UpperRight);
    }

    Plan {
        series,
        x,
        y,
        integer_x,
        has_data,
        note,
        legend,
        y_label_area,
    }
}

fn min_max(it: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    it.filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
    })
}

fn pad(lo: f64, hi: f64, frac: f64, integer: bool) -> (f64, f64) {
    if hi > lo {
        let p = (hi - lo) * frac;
        (lo - p, hi + p)
    } else if integer {
        (lo - 1.0, hi + 1.0)
    } else {
        let p = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - p, hi + p)
    }
}

fn text_width(text: &str, size: u32) -> u32 {
    (FAMILY, size)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w)
        // Fonts always load (bundled); fall back to a DejaVu-ish average.
        .unwrap_or((text.chars().count() as u32 * size * 3) / 5)
}

fn y_label_area_size(y: &Axis) -> u32 {
    let widest = y
        .ticks()
        .iter()
        .map(|t| text_width(&format_tick(*t), TICK_PX))
        .max()
        .unwrap_or(0);
    widest + AXIS_DESC_PX + 30
}

/// Approximate plotting-area size (the chart builder's layout, recomputed).
fn plot_size(y_label_area: u32) -> (u32, u32) {
    let (w, h) = FIGURE_SIZE;
    let caption = CAPTION_PX + 12;
    (
        w.saturating_sub(2 * MARGIN + y_label_area).max(1),
        h.saturating_sub(2 * MARGIN + caption + X_LABEL_AREA).max(1),
    )
}

fn legend_size(series: &[Prepared<'_>]) -> (u32, u32) {
    let widest = series
        .iter()
        .map(|s| text_width(s.label, LEGEND_PX))
        .max()
        .unwrap_or(0);
    let lines = series.len() as u32;
    (
        widest + LEGEND_ICON + 2 * LEGEND_MARGIN,
        lines * (LEGEND_PX * 5 / 4 + 1) + 2 * LEGEND_MARGIN,
    )
}

/// Data positions as axis fractions (0..1, y up): points, bar ends and points
/// along each line, to test where the legend may go.
fn samples(series: &[Prepared<'_>], x: &Axis, y: &Axis) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for s in series {
        for run in &s.runs {
            for p in run {
                let fx = x.fraction(p.x);
                out.push((fx, y.fraction(p.y)));
                if let Some((lo, hi, _, _)) = p.bar {
                    out.push((fx, y.fraction(lo)));
                    out.push((fx, y.fraction(hi)));
                    out.push((fx, y.fraction((lo + hi) / 2.0)));
                }
            }
            if matches!(s.style, SeriesStyle::Line | SeriesStyle::Trace) {
                for w in run.windows(2) {
                    let (a, b) = (
                        (x.fraction(w[0].x), y.fraction(w[0].y)),
                        (x.fraction(w[1].x), y.fraction(w[1].y)),
                    );
                    for k in 1..24 {
                        let t = f64::from(k) / 24.0;
                        out.push((a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)));
                    }
                }
            }
        }
    }
    out
}

type DrawResult<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    plan: &Plan<'_>,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(
            &fig.title,
            // FontDesc::style keeps the already loaded regular face; build anew.
            FontDesc::new(
                FontFamily::Name(FAMILY),
                f64::from(CAPTION_PX),
                FontStyle::Bold,
            ),
        )
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(plan.y_label_area)
        .build_cartesian_2d(plan.x.clone(), plan.y.clone())?;

    let integer_x = plan.integer_x;
    let fmt_x = move |v: &f64| {
        if integer_x {
            format!("{}", v.round() as i64)
        } else {
            format_tick(*v)
        }
    };
    let fmt_y = |v: &f64| format_tick(*v);
    chart
        .configure_mesh()
        .x_desc(fig.xlabel.as_str())
        .y_desc(fig.ylabel.as_str())
        .axis_desc_style((FAMILY, AXIS_DESC_PX))
        .label_style((FAMILY, TICK_PX))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .axis_style(RGBColor(60, 60, 60))
        .draw()?;

    // On a log axis a CI bar reaching zero or below is clipped at the floor.
    let log_floor = plan.y.is_log().then(|| plan.y.bounds().0);
    for s in &plan.series {
        draw_series(&mut chart, s, log_floor)?;
    }

    let area = chart.plotting_area().strip_coord_spec();
    let (w, h) = area.dim_in_pixel();
    if !plan.has_data {
        let style = TextStyle::from((FAMILY, 22).into_font())
            .color(&RGBColor(110, 110, 110))
            .pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))?;
    }
    if let Some(note) = plan.note {
        let style = TextStyle::from((FAMILY, 13).into_font())
            .color(&RGBColor(110, 110, 110))
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        area.draw(&Text::new(note, (8, h as i32 - 8), style))?;
    }

    if !plan.series.is_empty() {
        chart
            .configure_series_labels()
            .position(plan.legend.clone())
            .margin(LEGEND_MARGIN)
            .legend_area_size(LEGEND_ICON)
            .label_font((FAMILY, LEGEND_PX))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(150, 150, 150))
            .draw()?;
    }
    Ok(())
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

fn draw_series<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    s: &Prepared<'_>,
    log_floor: Option<f64>,
) -> DrawResult<DB> {
    let color = s.color;
    let points = || s.runs.iter().flatten().copied();

    // CI bars first so that markers sit on top of them.
    let bar_style = color.stroke_width(2);
    let bars: Vec<(f64, f64, f64, bool, bool)> = points()
        .filter_map(|p| p.bar.map(|(lo, hi, cl, ch)| (p.x, lo, hi, cl, ch)))
        .map(|(x, lo, hi, cl, ch)| {
            if log_floor.is_some_and(|f| lo <= f) {
                (x, log_floor.unwrap_or(lo), hi, false, ch)
            } else {
                (x, lo, hi, cl, ch)
            }
        })
        .collect();
    chart.draw_series(
        bars.iter()
            .map(|&(x, lo, hi, _, _)| PathElement::new(vec![(x, lo), (x, hi)], bar_style)),
    )?;
    let caps = bars.iter().flat_map(|&(x, lo, hi, cl, ch)| {
        [(cl, lo), (ch, hi)]
            .into_iter()
            .filter(|c| c.0)
            .map(move |(_, y)| {
                EmptyElement::at((x, y)) + PathElement::new(vec![(-5, 0), (5, 0)], bar_style)
            })
    });
    chart.draw_series(caps)?;

    let shape = s.shape;
    match s.style {
        SeriesStyle::Line => {
            for run in &s.runs {
                chart.draw_series(LineSeries::new(
                    run.iter().map(|p| (p.x, p.y)),
                    color.stroke_width(2),
                ))?;
            }
            chart
                .draw_series(points().map(|p| Circle::new((p.x, p.y), 3, color.filled())))?
                .label(s.label)
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (26, 0)], color.stroke_width(2))
                        + Circle::new((13, 0), 3, color.filled())
                });
        }
        SeriesStyle::Trace => {
            for (i, run) in s.runs.iter().enumerate() {
                let line = chart.draw_series(LineSeries::new(
                    run.iter().map(|p| (p.x, p.y)),
                    color.stroke_width(1),
                ))?;
                if i == 0 {
                    line.label(s.label).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 26, y)], color.stroke_width(1))
                    });
                }
            }
        }
        SeriesStyle::Markers => {
            chart
                .draw_series(points().map(|p| {
                    EmptyElement::at((p.x, p.y)) + Polygon::new(shape.outline(5), color.filled())
                }))?
                .label(s.label)
                .legend(move |(x, y)| {
                    let bar = color.stroke_width(2);
                    EmptyElement::at((x + 13, y))
                        + PathElement::new(vec![(0, -8), (0, 8)], bar)
                        + PathElement::new(vec![(-5, -8), (5, -8)], bar)
                        + PathElement::new(vec![(-5, 8), (5, 8)], bar)
                        + Polygon::new(shape.outline(5), color.filled())
                });
        }
        SeriesStyle::Reference => {
            chart
                .draw_series(points().map(|p| {
                    EmptyElement::at((p.x, p.y))
                        + PathElement::new(shape.outline(6), color.stroke_width(2))
                }))?
                .label(s.label)
                .legend(move |(x, y)| {
                    EmptyElement::at((x + 13, y))
                        + PathElement::new(shape.outline(6), color.stroke_width(2))
                });
        }
    }
    Ok(())
}
