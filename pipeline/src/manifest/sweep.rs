//! The sweep of a manifest, kept as its axes: points are computed from an
//! index on demand instead of being materialised, so a sweep at the
//! 10^6-point limit costs the memory of its axes' values, not of its points.
//! The `sweep` mapping is read here too: lists, ranges and zip groups, each
//! size bounded before any value is made.

use super::place::Ctx;
use super::values::{canonical_number, check_name, yaml_to_json};
use super::yaml::{Mapping, Value as Yaml};
use super::{limits, ManifestError, Point};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// One entry of the `sweep` mapping: a single axis, or a zip group whose axes
/// vary together. `columns[a][i]` is the value of axis `names[a]` in row `i`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub names: Vec<String>,
    pub columns: Vec<Vec<Json>>,
}

impl Entry {
    fn len(&self) -> usize {
        self.columns.first().map_or(1, Vec::len)
    }
}

/// Every point of a sweep: the cartesian product of its entries, the first
/// entry varying slowest (the order in which the manifest lists them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Points {
    entries: Vec<Entry>,
    len: usize,
}

impl Points {
    /// `entries` must already be checked: their product within the point limit.
    pub(crate) fn new(entries: Vec<Entry>) -> Self {
        let len = entries.iter().map(Entry::len).product();
        Points { entries, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The axes grouped as they vary: one group per sweep entry (a zip group's
    /// axes move together).
    pub fn groups(&self) -> Vec<Vec<String>> {
        self.entries.iter().map(|e| e.names.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the axis values of point `index` to `out` (no other allocation
    /// than the values themselves: the planner calls this once per point).
    pub fn extend_with(&self, index: usize, out: &mut BTreeMap<String, Json>) {
        let mut rest = index;
        for e in self.entries.iter().rev() {
            let n = e.len();
            let row = rest % n;
            rest /= n;
            for (name, col) in e.names.iter().zip(&e.columns) {
                out.insert(name.clone(), col[row].clone());
            }
        }
    }

    /// Like [`Points::extend_with`], borrowing the names and values.
    pub fn borrow_into<'a>(&'a self, index: usize, out: &mut BTreeMap<&'a str, &'a Json>) {
        let mut rest = index;
        for e in self.entries.iter().rev() {
            let n = e.len();
            let row = rest % n;
            rest /= n;
            for (name, col) in e.names.iter().zip(&e.columns) {
                out.insert(name.as_str(), &col[row]);
            }
        }
    }

    pub fn get(&self, index: usize) -> Option<Point> {
        if index >= self.len {
            return None;
        }
        let mut values = BTreeMap::new();
        self.extend_with(index, &mut values);
        Some(Point { index, values })
    }

    /// Every value axis `name` takes (once per row of its entry, not per point).
    pub fn axis_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Json> + 'a {
        self.entries
            .iter()
            .flat_map(|e| e.names.iter().zip(&e.columns))
            .filter(move |(n, _)| *n == name)
            .flat_map(|(_, col)| col.iter())
    }

    pub fn iter(&self) -> impl Iterator<Item = Point> + '_ {
        (0..self.len).filter_map(|i| self.get(i))
    }
}

impl<'a> IntoIterator for &'a Points {
    type Item = Point;
    type IntoIter = Box<dyn Iterator<Item = Point> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// A validated sweep axis: its values are produced only after the whole
/// sweep's size is known to be within the limits.
enum AxisSpec<'a> {
    List(&'a [Yaml]),
    Range {
        from: f64,
        step: f64,
        count: u64,
        integral: bool,
    },
}

impl AxisSpec<'_> {
    fn len(&self) -> u64 {
        match self {
            AxisSpec::List(items) => items.len() as u64,
            AxisSpec::Range { count, .. } => *count,
        }
    }
}

/// Checks one sweep axis specification and counts its values without producing them.
fn axis_spec<'a>(ctx: &Ctx, key: &str, v: &'a Yaml) -> Result<AxisSpec<'a>, ManifestError> {
    match v {
        Yaml::Sequence(items) => {
            if items.is_empty() {
                return Err(ctx.err(key, "empty list: a sweep axis needs at least one value"));
            }
            Ok(AxisSpec::List(items))
        }
        Yaml::Mapping(m) => {
            let get = |name: &str| m.get(Yaml::from(name));
            for k in m.keys() {
                let k = k.as_str().unwrap_or("?");
                if !["from", "to", "step"].contains(&k) {
                    return Err(ctx.err(
                        &format!("{key}.{k}"),
                        "unknown key in a range (expected `from`, `to`, `step`, or a `zip` group)",
                    ));
                }
            }
            let num = |name: &str| -> Result<Option<f64>, ManifestError> {
                match get(name) {
                    None => Ok(None),
                    Some(x) => x
                        .as_f64()
                        .filter(|f| f.is_finite())
                        .map(Some)
                        .ok_or_else(|| {
                            ctx.err(&format!("{key}.{name}"), "must be a finite number")
                        }),
                }
            };
            let from = num("from")?.ok_or_else(|| ctx.err(key, "a range needs `from`"))?;
            let to = num("to")?.ok_or_else(|| ctx.err(key, "a range needs `to`"))?;
            let step = num("step")?.unwrap_or(1.0);
            range_spec(ctx, key, from, to, step)
        }
        _ => Err(ctx.err(
            key,
            "a sweep axis is a list of values, a range {from, to, step} or {zip: {...}}",
        )),
    }
}

/// A range's number of values must be a finite whole number within the
/// limits, and its step must be positive and representable at the
/// magnitude of its values (else consecutive values would coincide).
fn range_spec<'a>(
    ctx: &Ctx,
    key: &str,
    from: f64,
    to: f64,
    step: f64,
) -> Result<AxisSpec<'a>, ManifestError> {
    let step_key = format!("{key}.step");
    if step <= 0.0 {
        return Err(ctx.err(&step_key, format!("must be > 0, got {step}")));
    }
    if to < from {
        return Err(ctx.err(
            key,
            format!("empty range: `to` ({to}) is below `from` ({from})"),
        ));
    }
    let intervals = (to - from) / step;
    if !intervals.is_finite() {
        return Err(ctx.err(
            key,
            format!(
                "the number of values (to − from)/step + 1 = ({to} − {from})/{step} + 1 is not a finite number"
            ),
        ));
    }
    if intervals + 1.0 > limits::MAX_POINTS as f64 {
        return Err(ctx.err(
            key,
            format!(
                "the range has {:.4e} values; a sweep holds at most {} points",
                intervals + 1.0,
                limits::MAX_POINTS
            ),
        ));
    }
    let whole = intervals.round();
    if (intervals - whole).abs() > 1e-9 * whole.max(1.0) {
        return Err(ctx.err(
            key,
            format!(
                "`to` ({to}) is not reached from `from` ({from}) in steps of {step}: (to − from)/step = {intervals} is not a whole number"
            ),
        ));
    }
    let magnitude = from.abs().max(to.abs());
    let integral = [from, to, step].iter().all(|x| x.fract() == 0.0);
    if integral && magnitude > 9.0e15 {
        return Err(ctx.err(
            key,
            format!("values up to {magnitude:e} are beyond exact integers (|x| <= 9e15)"),
        ));
    }
    // Non-integral values are rounded to 12 significant digits (below).
    if !integral && step < magnitude * 1e-11 {
        return Err(ctx.err(
            &step_key,
            format!(
                "{step} is below the resolution of values around {magnitude:e} (12 significant digits)"
            ),
        ));
    }
    Ok(AxisSpec::Range {
        from,
        step,
        count: whole as u64 + 1,
        integral,
    })
}

/// Produces the values of a checked axis.
fn axis_values(ctx: &Ctx, key: &str, spec: &AxisSpec) -> Result<Vec<Json>, ManifestError> {
    match *spec {
        AxisSpec::List(items) => items
            .iter()
            .map(|x| yaml_to_json(x).map_err(|e| ctx.err(key, e)))
            .collect(),
        AxisSpec::Range {
            from,
            step,
            count,
            integral,
        } => {
            let mut out = Vec::with_capacity(count as usize);
            let mut prev = f64::NEG_INFINITY;
            for i in 0..count {
                let x = from + step * i as f64;
                // Round away accumulated binary noise (0.1 + 0.2 ...) to 12 significant digits.
                let x = if integral {
                    x
                } else {
                    format!("{x:.12e}").parse().unwrap_or(x)
                };
                if x <= prev {
                    return Err(ctx.err(
                        &format!("{key}.step"),
                        format!("values {prev} and {x} coincide: the step is too small for their magnitude"),
                    ));
                }
                prev = x;
                out.push(canonical_number(x).map_err(|e| ctx.err(key, e))?);
            }
            Ok(out)
        }
    }
}

/// Checks the `sweep` mapping, computes its number of points as a product
/// (nothing is expanded), and keeps it as axes from which points are computed.
pub(super) fn build_sweep(
    ctx: &Ctx,
    sweep: &Mapping,
) -> Result<(Vec<String>, Points), ManifestError> {
    if sweep.len() > limits::MAX_AXES {
        return Err(ctx.err(
            "sweep",
            format!(
                "{} sweep entries; the limit is {}",
                sweep.len(),
                limits::MAX_AXES
            ),
        ));
    }
    // First pass: names, specs and lengths only.
    // Per sweep entry: its key and its members (name, key, spec).
    type Members<'a> = Vec<(String, String, AxisSpec<'a>)>;
    let mut specs: Vec<(String, Members)> = Vec::new();
    for (k, v) in sweep {
        let name = k
            .as_str()
            .ok_or_else(|| ctx.err("sweep", "axis names must be strings"))?
            .to_string();
        let key = format!("sweep.{name}");
        check_name(ctx, &key, &name)?;
        let zip = match v {
            Yaml::Mapping(m) if m.contains_key(Yaml::from("zip")) => {
                if m.len() != 1 {
                    return Err(ctx.err(&key, "a zip group holds only `zip: {axis: values, ...}`"));
                }
                m.get(Yaml::from("zip"))
            }
            _ => None,
        };
        let mut members = Vec::new();
        if let Some(z) = zip {
            let Yaml::Mapping(zm) = z else {
                return Err(ctx.err(&format!("{key}.zip"), "must map axis names to values"));
            };
            if zm.is_empty() {
                return Err(ctx.err(&format!("{key}.zip"), "empty zip group"));
            }
            if zm.len() > limits::MAX_AXES {
                return Err(ctx.err(
                    &format!("{key}.zip"),
                    format!(
                        "{} zipped axes; the limit is {}",
                        zm.len(),
                        limits::MAX_AXES
                    ),
                ));
            }
            for (mk, mv) in zm {
                let mname = mk
                    .as_str()
                    .ok_or_else(|| ctx.err(&key, "axis names must be strings"))?
                    .to_string();
                let mkey = format!("{key}.zip.{mname}");
                check_name(ctx, &mkey, &mname)?;
                let spec = axis_spec(ctx, &mkey, mv)?;
                members.push((mname, mkey, spec));
            }
            let len = members[0].2.len();
            if let Some((bad, bkey, s)) = members.iter().find(|(_, _, s)| s.len() != len) {
                return Err(ctx.err(
                    bkey,
                    format!(
                        "zipped axes must have the same length: `{}` has {len} values, `{bad}` has {}",
                        members[0].0,
                        s.len()
                    ),
                ));
            }
        } else {
            let spec = axis_spec(ctx, &key, v)?;
            members.push((name.clone(), key.clone(), spec));
        }
        specs.push((key, members));
    }
    let mut seen = BTreeSet::new();
    for (_, members) in &specs {
        for (a, akey, _) in members {
            if !seen.insert(a.clone()) {
                return Err(ctx.err(akey, format!("axis `{a}` appears twice in the sweep")));
            }
        }
    }
    // The number of points, as a product, before any value is produced.
    let mut total: u64 = 1;
    for (key, members) in &specs {
        total = total.saturating_mul(members[0].2.len());
        if total > limits::MAX_POINTS {
            let factors: Vec<String> = specs
                .iter()
                .map(|(_, m)| m[0].2.len().to_string())
                .collect();
            return Err(ctx.err(
                key,
                format!(
                    "the sweep has {} = {:.4e} points; the limit is {} points per manifest",
                    factors.join(" × "),
                    specs
                        .iter()
                        .map(|(_, m)| m[0].2.len() as f64)
                        .product::<f64>(),
                    limits::MAX_POINTS
                ),
            ));
        }
    }
    let mut axes = Vec::new();
    let mut entries = Vec::new();
    for (_, members) in &specs {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for (name, key, spec) in members {
            columns.push(axis_values(ctx, key, spec)?);
            names.push(name.clone());
        }
        axes.extend(names.iter().cloned());
        entries.push(Entry { names, columns });
    }
    Ok((axes, Points::new(entries)))
}
