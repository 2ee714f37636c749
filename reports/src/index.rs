//! `index.html`: one self-contained page (inline CSS, no scripts, no external
//! assets) linking every figure and table with its provenance and EMs.
//!
//! It answers at a glance: a summary table at the top has one row per paper
//! figure and table (the catalogue of paper entries, in the papers' order)
//! with its status, mean and max EM and verdicts, then the project's own
//! studies; the run's date, code version and fidelity sit above it, and a
//! table of contents below them. Then one section per experiment, each with a
//! link back to the top; provenance is collapsed (`<details>`), short tables
//! are shown and long per-point tables only linked (CSV, Markdown), so the
//! page of a full run stays under a megabyte.

use crate::format::{format_em, format_percent};
use crate::table::{n_cols, numeric_columns};
use crate::{
    write_err, CatalogueEntry, EmSummaryLine, Index, IndexComparison, IndexEntryStatus,
    IndexExperiment, IndexFigure, IndexTable, OutputEm, Result,
};
use std::fmt::Write as _;
use std::path::Path;

/// Escapes text for HTML and XML element content and quoted attribute values
/// (index.html, JUnit XML). Control characters other than tab, newline and
/// carriage return become spaces: XML 1.0 cannot carry them at all, and in
/// HTML they are parse errors.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A relative file path as an attribute-safe URL: every byte outside
/// `A-Za-z0-9-._~/` is percent-encoded (so a path can neither end the
/// attribute nor become a `javascript:` URL).
fn url(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Fragment id for an experiment section.
fn anchor(id: &str) -> String {
    let slug: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("exp-{slug}")
}

const CSS: &str = r#"
:root { --fail: #b3261e; --fail-bg: #fbe3e1; --inc: #7a5600; --inc-bg: #fff1c7; --pass: #1e6b2a; --pass-bg: #e3f4e5; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f6f4; color: #1f1f1f; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { margin: 0 0 .25rem; font-size: 1.7rem; }
h2 { margin: 0 0 .2rem; font-size: 1.3rem; }
h3 { margin: 1.2rem 0 .4rem; font-size: 1.05rem; }
a { color: #0b57a4; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .88em; word-break: break-all; }
.meta { color: #555; margin: 0; }
nav { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6rem 1.2rem; margin: 1rem 0; }
nav ol { margin: .3rem 0; padding-left: 1.4rem; columns: 2 22rem; }
section.exp { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 1rem 1.4rem 1.2rem; margin: 1.2rem 0; }
.version { color: #666; font-weight: normal; font-size: .8em; }
.title { margin: 0 0 .6rem; font-size: 1.05rem; }
table { border-collapse: collapse; margin: .4rem 0; font-size: .9rem; }
th, td { border: 1px solid #d9d9d9; padding: .22rem .6rem; text-align: left; vertical-align: top; }
thead th { background: #efefec; }
td, th { font-variant-numeric: tabular-nums; }
table.em td:nth-child(n+4), table.em th:nth-child(n+4), table.summary td:nth-child(4), table.summary td:nth-child(5), table.summary thead th:nth-child(4), table.summary thead th:nth-child(5), table.cmp td:nth-child(3), table.cmp td:nth-child(5), table.cmp th:nth-child(3), table.cmp th:nth-child(5) { text-align: right; }
table.kv th { background: #f7f7f5; font-weight: 600; }
tr.fail td { background: var(--fail-bg); }
tr.inconclusive td { background: var(--inc-bg); }
td.bad { color: var(--fail); font-weight: 700; }
td.warn { color: var(--inc); font-weight: 700; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .7rem; font-size: .78rem; font-weight: 600; vertical-align: middle; }
.badge.fail { background: var(--fail-bg); color: var(--fail); }
.badge.inconclusive { background: var(--inc-bg); color: var(--inc); }
.badge.pass { background: var(--pass-bg); color: var(--pass); }
.badge.unchecked { background: #eee; color: #555; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr)); gap: 1rem; align-items: start; }
figure { margin: 0; }
figure img { width: 100%; max-width: 640px; height: auto; border: 1px solid #e4e4e4; background: #fff; }
nav.toc { font-size: .88rem; }
nav.toc ol { columns: 3 14rem; margin: .3rem 0; padding-left: 1.6rem; }
a.top { float: right; font-size: .8rem; font-weight: normal; }
a.totop { position: fixed; right: 1rem; bottom: 1rem; background: #fff; border: 1px solid #ccc; border-radius: 1rem; padding: .15rem .7rem; font-size: .85rem; text-decoration: none; }
figcaption { font-size: .88rem; color: #444; }
.scroll { overflow-x: auto; }
.notes { color: #444; font-size: .88rem; margin: .2rem 0; }
.links { font-size: .88rem; }
.banner { border-radius: 6px; padding: .6rem 1rem; margin: .8rem 0; font-weight: 600; }
.banner.quick { background: var(--inc-bg); color: var(--inc); border: 1px solid #e5c76b; }
.banner.full { background: var(--pass-bg); color: var(--pass); border: 1px solid #9fd3a7; }
table.summary { width: 100%; background: #fff; font-size: .85rem; }
table.summary td, table.summary th { padding: .1rem .5rem; }
table.summary code { white-space: nowrap; word-break: normal; }
table.summary td.what { color: #333; }
tr.paper th { background: #e7e7e2; text-align: left; }
.status.notyet { color: #888; }
.status.hardware { color: #6a4c93; font-weight: 600; }
details { margin: .4rem 0; }
details > summary { cursor: pointer; color: #0b57a4; }
"#;

/// Overall state of an experiment's checks, for the badge.
fn status(lines: &[EmSummaryLine]) -> &'static str {
    if lines.iter().any(|l| l.failed > 0) {
        "fail"
    } else if lines.iter().any(|l| l.inconclusive > 0) {
        "inconclusive"
    } else if lines.iter().any(|l| l.passed > 0) {
        "pass"
    } else {
        "unchecked"
    }
}

fn badge(status: &str) -> String {
    format!(r#"<span class="badge {status}">{status}</span>"#)
}

/// The complete `index.html` text.
pub fn index_html(index: &Index) -> String {
    let mut h = String::new();
    let e = html_escape;
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str("<title>repro: reproduction results</title>\n<style>");
    h.push_str(CSS);
    h.push_str(crate::claims::CSS);
    h.push_str(&align_css(&numeric_column_indices(index)));
    h.push_str(
        "</style>\n</head>\n<body>\n<main id=\"top\">\n<header>\n<h1>Reproduction results</h1>\n",
    );
    let _ = writeln!(
        h,
        "<p class=\"meta\">Generated {} by {} · code version <code>{}</code> · fidelity <strong>{}</strong></p>",
        e(&index.generated_at),
        e(&index.generated_by),
        e(&index.code_version),
        e(&index.fidelity)
    );
    fidelity_banner(&mut h, index);
    let (mut passed, mut failed, mut inconclusive) = (0, 0, 0);
    for l in index.experiments.iter().flat_map(|x| &x.em_summary) {
        passed += l.passed;
        failed += l.failed;
        inconclusive += l.inconclusive;
    }
    let _ = writeln!(
        h,
        "<p class=\"meta\">{} experiment(s); checked points: {passed} passed, {failed} failed, {inconclusive} inconclusive</p>",
        index.experiments.len()
    );
    h.push_str("</header>\n");

    contents(&mut h, index);
    summary_table(&mut h, index);
    for x in &index.experiments {
        experiment(&mut h, x);
    }
    h.push_str("<a class=\"totop\" href=\"#top\">↑ top</a>\n</main>\n</body>\n</html>\n");
    h
}

/// The table of contents: the summary, then every experiment section.
fn contents(h: &mut String, index: &Index) {
    let e = html_escape;
    h.push_str("<nav class=\"toc\" aria-label=\"Contents\"><strong>Contents</strong>: <a href=\"#summary\">Summary</a>\n<ol>\n");
    for x in &index.experiments {
        let _ = writeln!(
            h,
            "<li><a href=\"#{}\">{}</a> {}</li>",
            e(&anchor(&x.id)),
            e(&x.id),
            badge(status(&x.em_summary))
        );
    }
    h.push_str("</ol>\n</nav>\n");
}

fn experiment(h: &mut String, x: &IndexExperiment) {
    let e = html_escape;
    let _ = writeln!(h, "<section class=\"exp\" id=\"{}\">", e(&anchor(&x.id)));
    let _ = writeln!(
        h,
        "<h2>{} <span class=\"version\">v{}</span> {}<a class=\"top\" href=\"#top\">↑ top</a></h2>",
        e(&x.id),
        x.version,
        badge(status(&x.em_summary))
    );
    let _ = writeln!(h, "<p class=\"title\">{}</p>", e(&x.title));
    if !x.docs.is_empty() {
        let links: Vec<String> = x
            .docs
            .iter()
            .map(|(name, href)| format!("<a href=\"{}\">{}</a>", e(&url(href)), e(name)))
            .collect();
        let _ = writeln!(h, "<p class=\"links\">Models: {}</p>", links.join(" · "));
    }
    crate::claims::claims_block(h, x);
    h.push_str(
        "<details class=\"provenance\"><summary>Provenance</summary>\n<table class=\"kv\">\n",
    );
    let _ = writeln!(h, "<tr><th>source</th><td>{}</td></tr>", e(&x.source));
    // The provenance rows usually repeat the hash ("manifest sha256").
    if !x.provenance.iter().any(|(_, v)| *v == x.manifest_hash) {
        let _ = writeln!(
            h,
            "<tr><th>manifest hash</th><td><code>{}</code></td></tr>",
            e(&x.manifest_hash)
        );
    }
    for (k, v) in &x.provenance {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", e(k), e(v));
    }
    // Per series in a CSV beside the index; here only where a series has
    // points without a value.
    for s in &x.series {
        if !s.without_value.is_empty() {
            let counts: Vec<String> = s
                .without_value
                .iter()
                .map(|(status, n)| format!("{status} at {n} of {} points", s.points))
                .collect();
            let _ = writeln!(
                h,
                "<tr><th>series {}</th><td>{}</td></tr>",
                e(&s.series),
                e(&counts.join("; "))
            );
        }
    }
    if !x.series.is_empty() {
        let _ = writeln!(
            h,
            "<tr><th>per series</th><td>solver, version, tasks, wall time, base seed, fidelity: \
             <a href=\"{}\">{} series as CSV</a></td></tr>",
            e(&url(&series_csv_path(&x.id))),
            x.series.len()
        );
    }
    h.push_str("</table>\n</details>\n");

    if !x.em_summary.is_empty() {
        h.push_str(
            "<h3>Error measures</h3>\n<div class=\"scroll\"><table class=\"em\">\n<thead><tr>",
        );
        // Columns 4 on are numbers: right-aligned by `table.em` in the CSS.
        for name in [
            "metric",
            "reference",
            "candidate",
            "mean EM",
            "max EM",
            "tolerance",
            "pass",
            "fail",
            "inconclusive",
        ] {
            let _ = write!(h, "<th>{name}</th>");
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for l in &x.em_summary {
            em_row(h, l);
        }
        h.push_str("</tbody></table></div>\n");
    }

    if !x.figures.is_empty() {
        h.push_str("<h3>Figures</h3>\n");
        figures_block(h, &x.figures);
    }

    for t in &x.tables {
        inline_table(h, t);
    }
    if let Some(c) = &x.comparison {
        comparison(h, c);
    }
    h.push_str("</section>\n");
}

fn figures_block(h: &mut String, figures: &[IndexFigure]) {
    let e = html_escape;
    h.push_str("<div class=\"figs\">\n");
    for f in figures {
        let alt = if f.alt.is_empty() { &f.title } else { &f.alt };
        let sibling = |ext: &str| match f.png.strip_suffix(".png") {
            Some(stem) => format!("{stem}.{ext}"),
            None => format!("{}.{ext}", f.png),
        };
        let _ = writeln!(
            h,
            "<figure id=\"{anchor}\"><a href=\"{svg}\"><img src=\"{png}\" alt=\"{alt}\" loading=\"lazy\"></a>\
             <figcaption><strong>{id}</strong> — {title} (<a href=\"{png}\">PNG</a> · <a href=\"{svg}\">SVG</a>, values on hover · \
             <a href=\"{pdf}\">PDF</a> · <a href=\"{csv}\">data CSV</a>)</figcaption></figure>",
            svg = e(&url(&f.svg)),
            png = e(&url(&f.png)),
            pdf = e(&url(&sibling("pdf"))),
            csv = e(&url(&sibling("csv"))),
            alt = e(alt),
            title = e(&f.title),
            id = e(&f.id),
            anchor = e(&output_anchor(&f.id)),
        );
    }
    h.push_str("</div>\n");
}

/// The previous stored version against this one: what differs, the overlay
/// figures (collapsed) and the per-point differences.
fn comparison(h: &mut String, c: &IndexComparison) {
    let e = html_escape;
    let _ = writeln!(h, "<h3>Versions: {} vs {}</h3>", e(&c.a), e(&c.b));
    for d in &c.differences {
        let _ = writeln!(h, "<p class=\"notes\">{}</p>", e(d));
    }
    if !c.figures.is_empty() {
        let _ = writeln!(
            h,
            "<details class=\"points\"><summary>{} overlay figures ({} solid, {} dashed)</summary>",
            c.figures.len(),
            e(&c.a),
            e(&c.b)
        );
        figures_block(h, &c.figures);
        h.push_str("</details>\n");
    }
    inline_table(h, &c.table);
}

fn em_row(h: &mut String, l: &EmSummaryLine) {
    let e = html_escape;
    let row_class = if l.failed > 0 {
        " class=\"fail\""
    } else if l.inconclusive > 0 {
        " class=\"inconclusive\""
    } else {
        ""
    };
    let over = |v: Option<f64>| match (v, l.tolerance) {
        (Some(v), Some(t)) if v > t => " class=\"bad\"",
        _ => "",
    };
    let count = |n: usize, class: &str| {
        if n > 0 && !class.is_empty() {
            format!("<td class=\"{class}\">{n}</td>")
        } else {
            format!("<td>{n}</td>")
        }
    };
    let _ = writeln!(
        h,
        "<tr{row_class}><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td{}>{}</td><td>{}</td>{}{}{}</tr>",
        e(&l.metric),
        e(&l.reference),
        e(&l.candidate),
        over(l.mean_em),
        e(&format_em(l.mean_em)),
        over(l.max_em),
        e(&format_em(l.max_em)),
        e(&l.tolerance.map_or("—".to_string(), format_percent)),
        count(l.passed, ""),
        count(l.failed, "bad"),
        count(l.inconclusive, "warn"),
    );
}

fn inline_table(h: &mut String, t: &IndexTable) {
    let e = html_escape;
    let title = if t.title.is_empty() { &t.id } else { &t.title };
    let _ = writeln!(
        h,
        "<h3 id=\"{}\">{}</h3>",
        e(&output_anchor(&t.id)),
        e(title)
    );
    let shown = crate::table::display(&t.table);
    let tab = &shown;
    let n = n_cols(tab);
    let numeric = numeric_columns(tab);
    let cell = |row: &[String], i: usize| e(row.get(i).map_or("", String::as_str));
    // A short table (a paper's table, a few points) is shown; a long
    // per-point table is only linked, so the page stays light.
    let inline = n > 0 && tab.rows.len() <= INLINE_ROWS && tab.rows.len() * n <= INLINE_CELLS;
    if inline {
        let _ = write!(
            h,
            "<div class=\"scroll\"><table{}>\n<thead><tr>",
            align_classes(&numeric)
        );
        for i in 0..numeric.len() {
            let _ = write!(h, "<th>{}</th>", cell(&tab.header, i));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for r in &tab.rows {
            // Verdict cells (as written by the pipeline) colour their row.
            let verdict = |v: &str| r.iter().any(|c| c.trim() == v);
            if verdict("fail") {
                h.push_str("<tr class=\"fail\">");
            } else if verdict("inconclusive") {
                h.push_str("<tr class=\"inconclusive\">");
            } else {
                h.push_str("<tr>");
            }
            for (i, num) in numeric.iter().enumerate() {
                let class = match (*num, r.get(i).map(|c| c.trim())) {
                    (true, _) => "",
                    (false, Some("fail")) => " class=\"bad\"",
                    (false, Some("inconclusive")) => " class=\"warn\"",
                    _ => "",
                };
                let _ = write!(h, "<td{class}>{}</td>", cell(r, i));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table></div>\n");
    }
    for note in tab.notes.iter().take(INLINE_NOTES) {
        let _ = writeln!(h, "<p class=\"notes\">{}</p>", e(note));
    }
    if tab.notes.len() > INLINE_NOTES {
        let _ = writeln!(
            h,
            "<p class=\"notes\">… and {} more notes in the Markdown table.</p>",
            tab.notes.len() - INLINE_NOTES
        );
    }
    let size = if inline || n == 0 {
        String::new()
    } else {
        format!("{} rows × {n} columns, ", tab.rows.len())
    };
    let _ = writeln!(
        h,
        "<p class=\"links\"><strong>{}</strong>: {size}<a href=\"{}\">CSV</a> (numbers, with half-widths in their own columns) · <a href=\"{}\">Markdown</a></p>",
        e(&t.id),
        e(&url(&t.csv)),
        e(&url(&t.markdown))
    );
}

/// Tables up to this many rows and cells are shown in the page; longer ones
/// are linked (their CSV and Markdown files hold every row).
const INLINE_ROWS: usize = 16;
const INLINE_CELLS: usize = 160;
/// Notes shown under a table (the Markdown file has them all).
const INLINE_NOTES: usize = 6;

/// Fragment id of a figure or table.
/// The classes that right-align a shown table's numeric columns: `c4` for
/// column 4 (from 1), one rule per column index in the page's CSS
/// ([`align_css`]) instead of a class on every cell.
fn align_classes(numeric: &[bool]) -> String {
    let cols: Vec<String> = numeric
        .iter()
        .enumerate()
        .filter(|(_, n)| **n)
        .map(|(i, _)| format!("c{}", i + 1))
        .collect();
    if cols.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", cols.join(" "))
    }
}

/// The numeric column indices (from 1) of every table the page shows inline.
fn numeric_column_indices(index: &Index) -> std::collections::BTreeSet<usize> {
    let tables = index.experiments.iter().flat_map(|x| {
        x.tables
            .iter()
            .chain(x.comparison.as_ref().map(|c| &c.table))
    });
    let mut cols = std::collections::BTreeSet::new();
    for t in tables {
        let shown = crate::table::display(&t.table);
        for (i, num) in numeric_columns(&shown).iter().enumerate() {
            if *num {
                cols.insert(i + 1);
            }
        }
    }
    cols
}

/// One right-alignment rule for the columns [`align_classes`] names.
fn align_css(cols: &std::collections::BTreeSet<usize>) -> String {
    if cols.is_empty() {
        return String::new();
    }
    let selectors: Vec<String> = cols
        .iter()
        .map(|i| format!(".c{i} td:nth-child({i}), .c{i} th:nth-child({i})"))
        .collect();
    format!("{} {{ text-align: right; }}\n", selectors.join(", "))
}

fn output_anchor(id: &str) -> String {
    anchor(id).replacen("exp-", "out-", 1)
}

fn fidelity_banner(h: &mut String, index: &Index) {
    let e = html_escape;
    let other = index
        .other_fidelity
        .as_ref()
        .map(|(label, href)| format!(" <a href=\"{}\">{}</a>", e(&url(href)), e(label)))
        .unwrap_or_default();
    if index.fidelity == "quick" {
        let _ = writeln!(
            h,
            "<p class=\"banner quick\">Quick (CI) fidelity: shorter simulations with wider confidence intervals. \
             These are not the paper figures.{other}</p>"
        );
    } else {
        let _ = writeln!(
            h,
            "<p class=\"banner full\">Full fidelity: the paper figures.{other}</p>"
        );
    }
}

/// Every figure and table of the page: (output id, experiment id, its EMs).
fn outputs(index: &Index) -> Vec<(&str, &str, Option<&OutputEm>)> {
    let mut v = Vec::new();
    for x in &index.experiments {
        for f in &x.figures {
            v.push((f.id.as_str(), x.id.as_str(), f.em.as_ref()));
        }
        for t in &x.tables {
            v.push((t.id.as_str(), x.id.as_str(), t.em.as_ref()));
        }
    }
    v
}

/// Combines the EMs of several outputs: counts add up, the max is the max, the
/// mean is weighted by the number of compared points.
fn combine(ems: &[&OutputEm]) -> Option<OutputEm> {
    if ems.is_empty() {
        return None;
    }
    let mut out = OutputEm::default();
    let (mut sum, mut n) = (0.0, 0usize);
    for m in ems {
        out.passed += m.passed;
        out.failed += m.failed;
        out.inconclusive += m.inconclusive;
        if let Some(mean) = m.mean_em {
            let k = (m.passed + m.failed + m.inconclusive).max(1);
            sum += mean * k as f64;
            n += k;
        }
        out.max_em = match (out.max_em, m.max_em) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    out.mean_em = (n > 0).then(|| sum / n as f64);
    Some(out)
}

fn verdict(em: Option<&OutputEm>) -> &'static str {
    match em {
        Some(m) if m.failed > 0 => "fail",
        Some(m) if m.inconclusive > 0 => "inconclusive",
        Some(m) if m.passed > 0 => "pass",
        _ => "unchecked",
    }
}

/// The legend under the summary heading: what each status means.
const LEGEND: &str = "<p class=\"notes legend\">Status, from each entry's claims (the paper's own statements, \
quoted in each experiment's section): <strong>reproduced</strong> \u{2014} every checkable claim holds; \
<strong>partly reproduced</strong> \u{2014} some do; <strong>not reproduced</strong> \u{2014} none does; \
<strong>calibrated</strong> \u{2014} its agreement is with the numbers its parameters were fitted to; \
<strong>reference: hardware</strong> \u{2014} the paper's figure is a measurement on real hardware, which \
no run regenerates (our simulation is shown beside the printed numbers); <strong>drawn</strong> \u{2014} \
drawn, but the paper states nothing checkable about it (or only sanity checks read it); \
<strong>not yet</strong> \u{2014} no output of any experiment is this entry. Sanity checks (which \
cannot fail) and fits never count towards reproduced.</p>\n";

fn summary_row(
    h: &mut String,
    id: &str,
    what: &str,
    found: &[(&str, &str, Option<&OutputEm>)],
    status: Option<&IndexEntryStatus>,
) {
    let e = html_escape;
    let cell = crate::claims::status_cell(status);
    if found.is_empty() {
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td class=\"what\">{}</td>{cell}\
             <td>—</td><td>—</td><td>—</td><td>—</td></tr>",
            e(id),
            e(what),
        );
        return;
    }
    // The EM of the entry comes from the outputs that are it (same id or its
    // whole figure); variants and combined tables (`id-suffix`) only when
    // nothing is it exactly, so a table spanning several figures does not blur
    // each figure's numbers.
    let exact: Vec<&OutputEm> = found
        .iter()
        .filter(|f| !f.0.starts_with(&format!("{id}-")))
        .filter_map(|f| f.2)
        .collect();
    let ems: Vec<&OutputEm> = if exact.is_empty() {
        found.iter().filter_map(|f| f.2).collect()
    } else {
        exact
    };
    let em = combine(&ems);
    let counts = match &em {
        Some(m) => format!(
            "{} {}/{}/{}",
            badge(verdict(Some(m))),
            m.passed,
            m.failed,
            m.inconclusive
        ),
        None => badge("unchecked"),
    };
    let links: Vec<String> = found
        .iter()
        .map(|(out, _, _)| format!("<a href=\"#{}\">{}</a>", e(&output_anchor(out)), e(out)))
        .collect();
    let _ = writeln!(
        h,
        "<tr><td><a href=\"#{}\"><code>{}</code></a></td><td class=\"what\">{}</td>{cell}\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        e(&anchor(found[0].1)),
        e(id),
        e(what),
        e(&format_em(em.as_ref().and_then(|m| m.mean_em))),
        e(&format_em(em.as_ref().and_then(|m| m.max_em))),
        counts,
        links.join(", ")
    );
}

/// The table at the top: one row per catalogue entry in the papers' order, then
/// the project's own studies (outputs of experiments no catalogue entry claims).
fn summary_table(h: &mut String, index: &Index) {
    let all = outputs(index);
    h.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    crate::claims::status_counts(h, index);
    h.push_str(LEGEND);
    h.push_str(
        "<div class=\"scroll\"><table class=\"summary\">\n<thead><tr>\
         <th>id</th><th>what</th><th>status</th><th>mean EM</th><th>max EM</th>\
         <th>verdict (pass/fail/inconclusive points)</th><th>outputs</th></tr></thead>\n<tbody>\n",
    );
    let mut paper = "";
    let mut claimed = vec![false; all.len()];
    let catalogue: &[CatalogueEntry] = &index.catalogue;
    for c in catalogue {
        if c.paper != paper {
            paper = &c.paper;
            let _ = writeln!(
                h,
                "<tr class=\"paper\"><th colspan=\"7\">{}</th></tr>",
                html_escape(paper)
            );
        }
        let found: Vec<(&str, &str, Option<&OutputEm>)> = all
            .iter()
            .enumerate()
            .filter(|(_, o)| verdicts::covers(o.0, &c.id))
            .map(|(i, o)| {
                claimed[i] = true;
                *o
            })
            .collect();
        let st = index.statuses.iter().find(|s| s.id == c.id);
        summary_row(h, &c.id, &c.what, &found, st);
    }
    // An unclaimed output of an experiment that reproduces a paper entry (an EM
    // or values table named after the experiment, like `gran-s1-em`) supports
    // that entry; it stays in its experiment's section, not among the project's own.
    let reproducing: Vec<&str> = all
        .iter()
        .zip(&claimed)
        .filter(|(_, c)| **c)
        .map(|(o, _)| o.1)
        .collect();
    let rest: Vec<(&str, &str, Option<&OutputEm>)> = all
        .iter()
        .zip(&claimed)
        .filter(|(o, c)| !**c && !reproducing.contains(&o.1))
        .map(|(o, _)| *o)
        .collect();
    if !rest.is_empty() {
        h.push_str("<tr class=\"paper\"><th colspan=\"7\">The project's own validations and design studies</th></tr>\n");
        for o in &rest {
            let title = index
                .experiments
                .iter()
                .find(|x| x.id == o.1)
                .map_or("", |x| x.title.as_str());
            let st = index.statuses.iter().find(|s| s.id == o.0);
            summary_row(h, o.0, title, std::slice::from_ref(o), st);
        }
    }
    h.push_str("</tbody></table></div>\n</section>\n");
}

/// Writes `index.html` at `path` (self-contained, no external assets),
/// creating its directory if needed.
pub fn write_index(index: &Index, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    }
    // Each experiment's per-point claim comparisons, linked from the index.
    let dir = path.parent().unwrap_or(Path::new(""));
    for x in &index.experiments {
        if let Some(csv) = crate::claims::claims_csv(x)? {
            let file = dir.join(crate::claims::claims_csv_path(&x.id));
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(|e| write_err(parent, e))?;
            }
            crate::write_atomic(&file, csv).map_err(|e| write_err(&file, e))?;
        }
    }
    for x in index.experiments.iter().filter(|x| !x.series.is_empty()) {
        let file = dir.join(series_csv_path(&x.id));
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| write_err(parent, e))?;
        }
        crate::write_atomic(&file, series_csv(&x.series, &file)?)
            .map_err(|e| write_err(&file, e))?;
    }
    crate::write_atomic(path, index_html(index)).map_err(|e| write_err(path, e))
}

/// Where an experiment's per-series provenance is written, relative to the index.
fn series_csv_path(experiment: &str) -> String {
    format!("provenance/{experiment}.csv")
}

/// One row per series: solver and version, tasks, summed wall time, base seed
/// and fidelity (simulations), points and the counts without a value.
fn series_csv(series: &[crate::SeriesProvenance], file: &Path) -> Result<String> {
    let header = [
        "series",
        "solver",
        "solver_version",
        "tasks",
        "wall_s",
        "base_seed",
        "fidelity",
        "points",
        "undefined",
        "saturated",
        "failed",
        "missing",
    ];
    let rows = series.iter().map(|s| {
        let count = |status: &str| {
            s.without_value
                .iter()
                .find(|(st, _)| st == status)
                .map_or(0, |(_, n)| *n)
                .to_string()
        };
        [
            s.series.clone(),
            s.solver.clone(),
            s.solver_version.to_string(),
            s.tasks.to_string(),
            format!("{:.3}", s.wall_s),
            s.base_seed.map_or(String::new(), |b| b.to_string()),
            s.fidelity.clone().unwrap_or_default(),
            s.points.to_string(),
            count("undefined"),
            count("saturated"),
            count("failed"),
            count("missing"),
        ]
    });
    crate::csv_text(file, &header, rows)
}

#[cfg(test)]
mod tests {
    use super::html_escape;

    #[test]
    fn escapes_markup_and_control_characters_for_html_and_xml() {
        assert_eq!(
            html_escape("a<b & \"c\" 'd'\u{1}\t\n"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39; \t\n"
        );
    }
}
