//! Figures: one drawing routine (plotters, SVG) per [`Figure`], laid out from
//! [`FigureOptions`]; the PNG and the PDF are made from that SVG
//! ([`crate::vector`]), and a numeric CSV of the drawn values sits beside them.
//!
//! Style: models are lines, simulations open markers with their 95% CI bar
//! drawn over the marker (visible even when shorter than it), numbers
//! printed in a paper filled markers with a dark edge, dense simulated time
//! series thin lines. A configuration keeps one colour; configurations differ
//! in colour and in dash or marker shape ([`crate::style`]). The legend never
//! covers data: inside a free corner when it is short, otherwise below the
//! plot (or where the options put it).

use crate::axis::Axis;
use crate::fonts::{ensure_fonts, FAMILY};
use crate::format::TickFormat;
use crate::legend::{self, Glyph, LegendLayout};
use crate::options::FigureOptions;
use crate::style::{self, Shape};
use crate::{write_err, Figure, FigureSeries, ReportError, Result, SeriesStyle};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// SVG user units per CSS pixel: plotters draws in integer units, so a
/// finer grid keeps lines and markers smooth in the PDF.
pub(crate) const K: f64 = 4.0;

/// Size in CSS pixels of a figure drawn with the default options.
pub fn figure_size_px(opts: &FigureOptions) -> (f64, f64) {
    (
        opts.width.px(),
        opts.height.map_or(opts.width.px() * ASPECT, |h| h.px()),
    )
}

/// Height / width of a figure whose height is not given (before the room a
/// legend below the plot takes).
const ASPECT: f64 = 0.62;

/// A drawable point: x, y and the CI bar `(low, high, low_cap, high_cap)`;
/// a cap is omitted where the bar was clipped at a log axis' floor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pt {
    pub x: f64,
    pub y: f64,
    pub bar: Option<(f64, f64, bool, bool)>,
    /// The half-width and replications behind it, for the hover text.
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}

pub(crate) struct Prepared {
    pub label: String,
    pub style: SeriesStyle,
    pub color: RGBColor,
    pub dash: &'static [f64],
    pub shape: Shape,
    /// Maximal runs of consecutive drawable points (lines break between runs).
    pub runs: Vec<Vec<Pt>>,
}

impl Prepared {
    pub(crate) fn glyph(&self) -> Glyph {
        match self.style {
            SeriesStyle::Line => Glyph::Line {
                color: self.color,
                dash: self.dash,
            },
            SeriesStyle::Trace => Glyph::Trace { color: self.color },
            SeriesStyle::Markers => Glyph::Marker {
                color: self.color,
                shape: self.shape,
                bar: self.runs.iter().flatten().any(|p| p.bar.is_some()),
            },
            SeriesStyle::Reference => Glyph::Reference {
                color: self.color,
                shape: self.shape,
            },
        }
    }
}

/// Sizes in SVG units, all derived from the font size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metrics {
    pub font: f64,
    pub title_font: f64,
    pub legend_font: f64,
    pub margin: f64,
    pub line: f64,
    pub trace: f64,
    pub bar: f64,
    pub marker: f64,
}

impl Metrics {
    fn new(opts: &FigureOptions) -> Metrics {
        let font = opts.font_px() * K;
        // One "unit" is a 1 px line at the default 10 pt (13.3 px) font.
        let u = font / 13.333;
        Metrics {
            font,
            title_font: font * 1.1,
            legend_font: font * 0.9,
            margin: font * 0.6,
            line: (2.0 * u).max(K * 0.75),
            trace: (1.0 * u).max(K * 0.5),
            bar: (1.6 * u).max(K * 0.5),
            marker: 4.6 * u,
        }
    }
}

/// A plotters font of `px` SVG units (plotters writes `size / 1.24` into
/// the SVG's `font-size`).
pub(crate) fn font(px: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), px * 1.24, FontStyle::Normal)
}

pub(crate) fn text_width(text: &str, px: f64) -> f64 {
    font(px)
        .box_size(text)
        .map(|(w, _)| f64::from(w))
        // Fonts always load (bundled); fall back to a DejaVu-ish average.
        .unwrap_or(text.chars().count() as f64 * px * 0.6)
}

struct Plan {
    series: Vec<Prepared>,
    x: Axis,
    y: Axis,
    fx: TickFormat,
    fy: TickFormat,
    /// Axis descriptions and their scale notes.
    xlabel: (String, Option<String>),
    ylabel: (String, Option<String>),
    title: Option<String>,
    has_data: bool,
    note: Option<&'static str>,
    legend: LegendLayout,
    m: Metrics,
    /// Canvas in SVG units.
    w: f64,
    h: f64,
    y_label_area: f64,
    x_label_area: f64,
    right_margin: f64,
}

/// Renders `<id>.png`, `<id>.svg`, `<id>.pdf` and `<id>.csv` (the drawn
/// values) into `out_dir` with the default options; returns the paths.
pub fn render_figure(fig: &Figure, out_dir: &Path) -> Result<Vec<PathBuf>> {
    render_figure_with(fig, &FigureOptions::default(), out_dir)
}

/// [`render_figure`] with the given size, fonts, title, axes and legend.
pub fn render_figure_with(
    fig: &Figure,
    opts: &FigureOptions,
    out_dir: &Path,
) -> Result<Vec<PathBuf>> {
    let draw_err = |reason: String| ReportError::Draw {
        id: fig.id.clone(),
        cause: reason.into(),
    };
    let vector_err = |e: crate::vector::VectorError| ReportError::Draw {
        id: fig.id.clone(),
        cause: e.into(),
    };
    crate::check_id(&fig.id).map_err(draw_err)?;
    opts.validate().map_err(draw_err)?;
    ensure_fonts();
    std::fs::create_dir_all(out_dir).map_err(|e| write_err(out_dir, e))?;
    let (svg, hover) = figure_svg(fig, opts).map_err(draw_err)?;
    let tree = crate::vector::tree(&svg).map_err(vector_err)?;

    let path = |ext: &str| out_dir.join(format!("{}.{ext}", fig.id));
    let png = path("png");
    let bytes = crate::vector::png(&tree).map_err(vector_err)?;
    crate::write_atomic(&png, bytes).map_err(|e| write_err(&png, e))?;
    let svg_path = path("svg");
    let with_hover = match svg.rfind("</svg>") {
        Some(i) => format!("{}{hover}{}", &svg[..i], &svg[i..]),
        None => svg.clone(),
    };
    crate::write_atomic(&svg_path, with_hover).map_err(|e| write_err(&svg_path, e))?;
    let pdf = path("pdf");
    let bytes = crate::vector::pdf(&tree).map_err(vector_err)?;
    crate::write_atomic(&pdf, bytes).map_err(|e| write_err(&pdf, e))?;
    let csv = path("csv");
    crate::write_atomic(&csv, figure_csv(fig)?).map_err(|e| write_err(&csv, e))?;
    Ok(vec![png, svg_path, pdf, csv])
}

/// The figure's SVG (no hover layer) and its hover layer (one invisible
/// circle with a `<title>` per point, to put before `</svg>`).
fn figure_svg(fig: &Figure, opts: &FigureOptions) -> std::result::Result<(String, String), String> {
    let plan = plan(fig, opts);
    let size = (plan.w.round() as u32, plan.h.round() as u32);
    let mut text = String::new();
    let hover;
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        hover = draw(&root, &plan).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    // Physical size: width and height in CSS pixels over the finer viewBox.
    let head = format!(
        "<svg width=\"{:.2}\" height=\"{:.2}\" viewBox=\"0 0 {} {}\"",
        plan.w / K,
        plan.h / K,
        size.0,
        size.1
    );
    let old = format!(
        "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\"",
        size.0, size.1, size.0, size.1
    );
    Ok((text.replacen(&old, &head, 1), hover))
}

fn finite(x: f64, v: &Option<crate::Value>) -> bool {
    x.is_finite() && v.is_some_and(|v| v.value.is_finite())
}

fn plan(fig: &Figure, opts: &FigureOptions) -> Plan {
    let m = Metrics::new(opts);
    let all = || fig.series.iter().flat_map(|s| &s.points);
    let any_finite = all().any(|(x, v)| finite(*x, v));
    let any_positive_y = all().any(|(x, v)| finite(*x, v) && v.is_some_and(|v| v.value > 0.0));
    let any_positive_x = all().any(|(x, v)| finite(*x, v) && *x > 0.0);
    let want_log_y = opts.log_y.unwrap_or(fig.log_y);
    let want_log_x = opts.log_x.unwrap_or(fig.log_x);
    let log_y = want_log_y && any_positive_y;
    let log_x = want_log_x && any_positive_x;
    let note = if want_log_y && any_finite && !any_positive_y {
        Some("no positive values: linear y scale instead of log")
    } else if want_log_x && any_finite && !any_positive_x {
        Some("no positive x values: linear x scale instead of log")
    } else {
        None
    };

    let mut series: Vec<Prepared> = fig
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| prepare(i, s, log_x, log_y))
        .collect();

    let pts = || series.iter().flat_map(|s| s.runs.iter().flatten());
    let has_data = pts().next().is_some();
    let integer_x = !log_x && has_data && pts().all(|p| p.x.fract() == 0.0 && p.x.abs() < 1e15);

    let x = {
        let xs = pts().map(|p| p.x);
        if log_x {
            log_range(xs.filter(|v| *v > 0.0), 0.03)
        } else {
            let (lo, hi) = min_max(xs).unwrap_or((0.0, 1.0));
            let (lo, hi) = pad(lo, hi, 0.03, integer_x);
            Axis::linear(lo, hi, 8, integer_x)
        }
    };
    // Y: data and CI bar ends (positive ones only on a log axis), 5% padding.
    let y_values = pts().flat_map(|p| {
        let (lo, hi) = p.bar.map_or((p.y, p.y), |b| (b.0, b.1));
        [p.y, lo, hi]
    });
    let y = if log_y {
        log_range(y_values.filter(|v| *v > 0.0), 0.05)
    } else {
        let (lo, hi) = min_max(y_values).unwrap_or((0.0, 1.0));
        let (lo, hi) = pad(lo, hi, 0.05, false);
        Axis::linear(lo, hi, 7, false)
    };
    let fx = TickFormat::for_ticks(x.ticks(), x.is_log());
    let fy = TickFormat::for_ticks(y.ticks(), y.is_log());
    let xlabel = (fig.xlabel.clone(), fx.axis_note());
    let ylabel = (fig.ylabel.clone(), fy.axis_note());

    // Layout: label areas from the tick labels' sizes.
    let widest_y = y
        .ticks()
        .iter()
        .map(|t| text_width(&fy.label(*t), m.font))
        .fold(0.0, f64::max);
    let desc = if fig.ylabel.is_empty() && fy.axis_note().is_none() {
        0.0
    } else {
        m.font * 1.4
    };
    let y_label_area = widest_y + desc + m.font * 0.9;
    let x_label_area = m.font * 1.6
        + if xlabel.0.is_empty() && xlabel.1.is_none() {
            0.0
        } else {
            m.font * 1.5
        };
    // The last x tick label is centred on the plot's right edge: room for its half.
    let right_margin = x
        .ticks()
        .last()
        .map_or(0.0, |t| {
            text_width(&fx.label(*t), m.font) / 2.0 + m.font * 0.2
        })
        .max(m.margin);
    let title = (opts.title && !fig.title.trim().is_empty()).then(|| fig.title.clone());
    let caption = m.font * 0.6
        + if title.is_some() {
            m.title_font * 1.3
        } else {
            0.0
        };
    let w = opts.width.px() * K;
    let fixed_h = opts.height.map(|h| h.px() * K);
    let h0 = fixed_h.unwrap_or(w * ASPECT);

    let entries = legend::entries(&series);
    let plot_w = (w - m.margin - right_margin - y_label_area).max(1.0);
    let plot_h = (h0 - 2.0 * m.margin - caption - x_label_area).max(1.0);
    let samples = samples(&series, &x, &y);
    let legend = legend::layout(
        entries,
        opts.legend,
        &m,
        (plot_w, plot_h),
        w - 2.0 * m.margin,
        &samples,
    );
    let h = match (&legend, fixed_h) {
        (LegendLayout::Below { height, .. }, None) => h0 + height,
        _ => h0,
    };

    // Draw traces first, then lines (solid under dashed, so coinciding
    // curves stay visible), then markers, then reference marks on top.
    series.sort_by_key(|s| {
        (
            match s.style {
                SeriesStyle::Trace => 0,
                SeriesStyle::Line => 1,
                SeriesStyle::Markers => 2,
                SeriesStyle::Reference => 3,
            },
            !s.dash.is_empty(),
        )
    });

    Plan {
        series,
        x,
        y,
        fx,
        fy,
        xlabel,
        ylabel,
        title,
        has_data,
        note,
        legend,
        m,
        w,
        h,
        y_label_area,
        x_label_area,
        right_margin,
    }
}

fn prepare(i: usize, s: &FigureSeries, log_x: bool, log_y: bool) -> Prepared {
    // Without an explicit colour a series takes its position's colour and
    // dash or shape; with one (the pipeline pairs a model with the
    // simulation it is compared with) `variant` picks the dash or shape.
    let (c, v) = match s.colour {
        Some(c) => (c, s.variant),
        None => (i, i),
    };
    let mut pts: Vec<_> = s.points.iter().collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut runs = Vec::new();
    let mut cur: Vec<Pt> = Vec::new();
    for (x, v) in pts {
        let v = v
            .filter(|v| finite(*x, &Some(*v)) && (!log_y || v.value > 0.0) && (!log_x || *x > 0.0));
        let Some(v) = v else {
            if !cur.is_empty() {
                runs.push(std::mem::take(&mut cur));
            }
            continue;
        };
        let hw = v.half_width.filter(|h| h.is_finite() && *h > 0.0);
        cur.push(Pt {
            x: *x,
            y: v.value,
            bar: hw.map(|h| (v.value - h, v.value + h, true, true)),
            half_width: hw,
            n: v.n,
        });
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    Prepared {
        label: s.label.clone(),
        style: s.style,
        color: style::colour(c),
        dash: if s.style == SeriesStyle::Line {
            style::dash(v)
        } else {
            &[]
        },
        shape: style::shape(v),
        runs,
    }
}

fn log_range(values: impl Iterator<Item = f64>, frac: f64) -> Axis {
    let (lo, hi) = min_max(values.map(f64::log10)).unwrap_or((0.0, 1.0));
    let (lo, hi) = if hi > lo {
        let p = frac * (hi - lo);
        (lo - p, hi + p)
    } else {
        (lo - 0.3, hi + 0.3)
    };
    Axis::log(10f64.powf(lo), 10f64.powf(hi))
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

/// Data positions as axis fractions (0..1, y up): points, bar ends and points
/// along each line, to test where an inside legend may go.
fn samples(series: &[Prepared], x: &Axis, y: &Axis) -> Vec<(f64, f64)> {
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

type DrawResult<T, DB> =
    std::result::Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

pub(crate) fn px(v: f64) -> u32 {
    v.round().max(1.0) as u32
}

/// Draws the figure; returns its hover layer.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, plan: &Plan) -> DrawResult<String, DB> {
    let m = &plan.m;
    root.fill(&WHITE)?;
    let (chart_area, legend_area) = match &plan.legend {
        LegendLayout::Below { height, .. } => {
            let (a, b) = root.split_vertically((plan.h - height).round() as i32);
            (a, Some(b))
        }
        LegendLayout::Right { width, .. } => {
            let (a, b) = root.split_horizontally((plan.w - width).round() as i32);
            (a, Some(b))
        }
        _ => (root.clone(), None),
    };
    let mut top = m.margin + m.font * 0.6;
    if let Some(title) = &plan.title {
        let avail = plan.w - 2.0 * m.margin;
        // Bold runs about 10% wider than the regular face measured here.
        let wt = text_width(title, m.title_font) * 1.1;
        let size = if wt > avail {
            (m.title_font * avail / wt).max(m.font * 0.75)
        } else {
            m.title_font
        };
        let style = TextStyle::from(FontDesc::new(
            FontFamily::Name(FAMILY),
            size * 1.24,
            FontStyle::Bold,
        ))
        .pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(
            title.clone(),
            ((plan.w / 2.0).round() as i32, m.margin.round() as i32),
            style,
        ))?;
        top += m.title_font * 1.3;
    }
    let mut builder = ChartBuilder::on(&chart_area);
    let mut chart = builder
        .margin(px(m.margin))
        .margin_right(px(plan.right_margin))
        // Room for the title and for the half of the top y tick label that
        // rises above the plot.
        .margin_top(px(top))
        .x_label_area_size(px(plan.x_label_area))
        .y_label_area_size(px(plan.y_label_area))
        .build_cartesian_2d(plan.x.clone(), plan.y.clone())?;

    let fx = |v: &f64| plan.fx.label(*v);
    let fy = |v: &f64| plan.fy.label(*v);
    chart
        .configure_mesh()
        .label_style(font(m.font))
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .set_all_tick_mark_size(px(m.font * 0.3))
        .bold_line_style(RGBColor(220, 220, 220).stroke_width(px(K * 0.75)))
        .light_line_style(RGBColor(243, 243, 243).stroke_width(px(K * 0.5)))
        .axis_style(RGBColor(60, 60, 60).stroke_width(px(K)))
        .draw()?;

    // On a log axis a CI bar reaching zero or below is clipped at the floor.
    let log_floor = plan.y.is_log().then(|| plan.y.bounds().0);
    let mut hover = String::from("<g class=\"hover\" fill=\"#000\" fill-opacity=\"0\">\n");
    for s in &plan.series {
        draw_series(root, &chart, s, m, log_floor, &mut hover)?;
    }
    hover.push_str("</g>\n");

    let area = chart.plotting_area().strip_coord_spec();
    let (w, h) = area.dim_in_pixel();
    if !plan.has_data {
        let style = TextStyle::from(font(m.font * 1.5))
            .color(&RGBColor(110, 110, 110))
            .pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))?;
    }
    if let Some(note) = plan.note {
        let style = TextStyle::from(font(m.font * 0.85))
            .color(&RGBColor(110, 110, 110))
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        let inset = (m.font * 0.5) as i32;
        area.draw(&Text::new(note, (inset, h as i32 - inset), style))?;
    }
    let plot_origin = chart.plotting_area().get_base_pixel();
    axis_labels(root, &chart_area, plan, (plot_origin, (w, h)))?;
    legend::draw(
        root,
        &plan.legend,
        m,
        (plot_origin, (w, h)),
        legend_area.as_ref().map(DrawingArea::get_base_pixel),
    )?;
    Ok(hover)
}

/// The axis descriptions, each shrunk (to 80%) and then cut with "…" to
/// fit along its axis, keeping its scale note (`×10⁻³`).
fn axis_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart_area: &DrawingArea<DB, Shift>,
    plan: &Plan,
    ((px0, py0), (pw, ph)): ((i32, i32), (u32, u32)),
) -> DrawResult<(), DB> {
    let m = &plan.m;
    let (cx0, cy0) = chart_area.get_base_pixel();
    let (_, ch) = chart_area.dim_in_pixel();
    let color = RGBColor(20, 20, 20);
    if !plan.xlabel.0.is_empty() || plan.xlabel.1.is_some() {
        let (text, size) = fit_label(
            &plan.xlabel.0,
            plan.xlabel.1.as_deref(),
            m.font,
            f64::from(pw),
        );
        let style = TextStyle::from(font(size))
            .color(&color)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        let y = cy0 + ch as i32 - (m.margin * 0.6) as i32;
        root.draw(&Text::new(text, (px0 + pw as i32 / 2, y), style))?;
    }
    if !plan.ylabel.0.is_empty() || plan.ylabel.1.is_some() {
        let (text, size) = fit_label(
            &plan.ylabel.0,
            plan.ylabel.1.as_deref(),
            m.font,
            f64::from(ph),
        );
        let style = TextStyle::from(font(size).transform(FontTransform::Rotate270))
            .color(&color)
            .pos(Pos::new(HPos::Center, VPos::Top));
        let x = cx0 + (m.margin * 0.6) as i32;
        root.draw(&Text::new(text, (x, py0 + ph as i32 / 2), style))?;
    }
    Ok(())
}

/// `label` and its note in at most `max` width: the font shrinks to 80%,
/// then the label (never the note) is cut with "…".
fn fit_label(label: &str, note: Option<&str>, size: f64, max: f64) -> (String, f64) {
    let join = |l: &str| match note {
        Some(n) if l.is_empty() => n.to_string(),
        Some(n) => format!("{l} ({n})"),
        None => l.to_string(),
    };
    let full = join(label);
    let w = text_width(&full, size);
    if w <= max {
        return (full, size);
    }
    let size = (size * max / w).max(size * 0.8);
    if text_width(&full, size) <= max {
        return (full, size);
    }
    let chars: Vec<char> = label.chars().collect();
    for n in (1..chars.len()).rev() {
        let cut = join(&(chars[..n].iter().collect::<String>() + "…"));
        if text_width(&cut, size) <= max {
            return (cut, size);
        }
    }
    (join("…"), size)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

fn draw_series<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    s: &Prepared,
    m: &Metrics,
    log_floor: Option<f64>,
    hover: &mut String,
) -> DrawResult<(), DB> {
    let color = s.color;
    let at = |x: f64, y: f64| chart.backend_coord(&(x, y));
    match s.style {
        SeriesStyle::Line | SeriesStyle::Trace => {
            let width = if s.style == SeriesStyle::Line {
                m.line
            } else {
                m.trace
            };
            let style = color.stroke_width(px(width));
            for run in &s.runs {
                let pts: Vec<(f64, f64)> = run
                    .iter()
                    .map(|p| {
                        let (a, b) = at(p.x, p.y);
                        (f64::from(a), f64::from(b))
                    })
                    .collect();
                if pts.len() == 1 {
                    // A single point cannot be a line: a dot shows it.
                    let c = (pts[0].0 as i32, pts[0].1 as i32);
                    root.draw(&Circle::new(c, px(width * 1.5), color.filled()))?;
                    continue;
                }
                let pattern: Vec<f64> = s.dash.iter().map(|d| d * width).collect();
                for seg in style::dash_segments(&pts, &pattern) {
                    let seg: Vec<(i32, i32)> = seg
                        .iter()
                        .map(|(a, b)| (a.round() as i32, b.round() as i32))
                        .collect();
                    path(root, seg, style)?;
                }
            }
        }
        SeriesStyle::Markers => {
            let points: Vec<Pt> = s.runs.iter().flatten().copied().collect();
            for p in &points {
                let c = at(p.x, p.y);
                marker(root, c, s.shape, m.marker, &WHITE, color, px(m.bar))?;
            }
            // CI bars over the markers, so that a bar shorter than its
            // marker still shows.
            let bar_style = color.stroke_width(px(m.bar));
            let cap = (m.marker * 0.75).round() as i32;
            for p in &points {
                let Some((lo, hi, cl, ch)) = p.bar else {
                    continue;
                };
                let (lo, cl) = match log_floor {
                    Some(f) if lo <= f => (f, false),
                    _ => (lo, cl),
                };
                let (a, b) = (at(p.x, lo), at(p.x, hi));
                path(root, vec![a, b], bar_style)?;
                for (on, y) in [(cl, a.1), (ch, b.1)] {
                    if on {
                        path(root, vec![(a.0 - cap, y), (a.0 + cap, y)], bar_style)?;
                    }
                }
            }
        }
        SeriesStyle::Reference => {
            for p in s.runs.iter().flatten() {
                let c = at(p.x, p.y);
                marker(
                    root,
                    c,
                    s.shape,
                    m.marker * 1.1,
                    &color,
                    RGBColor(30, 30, 30),
                    px(m.bar * 0.7),
                )?;
            }
        }
    }
    if s.style != SeriesStyle::Trace {
        for p in s.runs.iter().flatten() {
            let (cx, cy) = at(p.x, p.y);
            hover.push_str(&format!(
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"{}\"><title>{}</title></circle>\n",
                px(m.marker * 1.4),
                crate::html_escape(&hover_text(&s.label, p))
            ));
        }
    }
    Ok(())
}

/// Draws a polyline unless all its points coincide (a zero-length stroke,
/// which the PNG and PDF renderers refuse).
pub(crate) fn path<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pts: Vec<(i32, i32)>,
    style: ShapeStyle,
) -> DrawResult<(), DB> {
    if pts.windows(2).any(|w| w[0] != w[1]) {
        root.draw(&PathElement::new(pts, style))?;
    }
    Ok(())
}

/// "label: x = 4, y = 7.394 ± 0.0615 (n = 10)".
fn hover_text(label: &str, p: &Pt) -> String {
    let num = crate::format::format_tick;
    let mut t = format!("{label}: x = {}, y = {}", num(p.x), num(p.y));
    if let Some(h) = p.half_width {
        t.push_str(&format!(" ± {} (95% CI)", num(h)));
    }
    if let Some(n) = p.n {
        t.push_str(&format!(", n = {n}"));
    }
    t
}

/// A marker of `shape` at backend position `c`: filled with `fill`,
/// outlined in `edge`.
pub(crate) fn marker<DB: DrawingBackend, F: Color>(
    root: &DrawingArea<DB, Shift>,
    c: (i32, i32),
    shape: Shape,
    r: f64,
    fill: &F,
    edge: RGBColor,
    edge_width: u32,
) -> DrawResult<(), DB> {
    let outline: Vec<(i32, i32)> = shape
        .outline(r)
        .into_iter()
        .map(|(x, y)| (c.0 + x, c.1 + y))
        .collect();
    root.draw(&Polygon::new(outline.clone(), fill.filled()))?;
    path(root, outline, edge.stroke_width(edge_width))?;
    Ok(())
}

/// The numeric CSV beside a figure: one row per drawn point (and per x at
/// which a series has no value, with `value` empty), columns `x, series,
/// label, metric, value, half_width, n`.
pub fn figure_csv(fig: &Figure) -> Result<String> {
    let num = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map_or(String::new(), |v| v.to_string())
    };
    let rows = fig.series.iter().flat_map(|s| {
        s.points.iter().enumerate().map(move |(i, (x, v))| {
            [
                num(Some(*x)),
                s.name.clone(),
                s.label.clone(),
                s.point_metrics.get(i).unwrap_or(&s.metric).clone(),
                num(v.map(|v| v.value)),
                num(v.and_then(|v| v.half_width)),
                v.and_then(|v| v.n).map_or(String::new(), |n| n.to_string()),
            ]
        })
    });
    let path = format!("{}.csv", fig.id);
    crate::csv_text(
        Path::new(&path),
        &["x", "series", "label", "metric", "value", "half_width", "n"],
        rows,
    )
}

/// Alt text for a figure: what it plots against what, and its series.
pub fn figure_alt(fig: &Figure) -> String {
    let kind = |s: SeriesStyle| match s {
        SeriesStyle::Line => "line",
        SeriesStyle::Markers => "markers with 95% CI bars",
        SeriesStyle::Reference => "filled markers (printed numbers)",
        SeriesStyle::Trace => "time trace",
    };
    let axis = |label: &str, fallback: &str| {
        if label.trim().is_empty() {
            fallback.to_string()
        } else {
            label.to_string()
        }
    };
    let mut t = format!(
        "Plot of {} against {}{}",
        axis(&fig.ylabel, "the value"),
        axis(&fig.xlabel, "x"),
        if fig.log_y { " (log y)" } else { "" }
    );
    if fig.series.is_empty() {
        t.push_str(", no series.");
        return t;
    }
    t.push_str(&format!(", {} series: ", fig.series.len()));
    let list: Vec<String> = fig
        .series
        .iter()
        .map(|s| format!("{} ({})", s.label, kind(s.style)))
        .collect();
    t.push_str(&list.join("; "));
    t.push('.');
    t
}
