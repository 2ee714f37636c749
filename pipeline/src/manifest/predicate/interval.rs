//! Evaluating a predicate over confidence intervals: every value read is an
//! interval (a simulation's value ± its 95% half-width; a model's value, a
//! printed number, an axis or a parameter exactly), arithmetic is interval
//! arithmetic, and a comparison is **true** when it holds for every value in
//! the box, **false** when it holds for none, **unknown** otherwise; `and`,
//! `or`, `not` and `all`/`any` follow Kleene's three-valued logic.
//!
//! The result is sound: true and false are certain over the box. It can be
//! conservative: a name written twice (`abs(sim.L - m.L) / sim.L`) is two
//! independent intervals, so a predicate true over the whole box may come
//! out unknown. Trends are best written with `increasing`/`decreasing`
//! (neighbouring points compared directly) rather than as a covariance.
//!
//! Aggregates run over the claim's points: `mean` of intervals is the
//! interval of the mean ([Σ lo / n, Σ hi / n]), `maxof`/`minof` the interval
//! of the max/min, `all`/`any` the Kleene and/or of the points' truths.
//! Without an aggregate a predicate is evaluated at every point and holds when
//! it holds at all of them.

use super::{Agg, Arith, Cmp, Expr, ExprKind, Func};
use serde::Serialize;
use std::collections::BTreeMap;

/// A closed interval `[lo, hi]`; infinite bounds allowed (an undefined value,
/// such as x / 0, is the whole line).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub const ENTIRE: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    pub fn exact(v: f64) -> Self {
        Interval { lo: v, hi: v }
    }

    /// `value ± half_width` (no half-width: exact).
    pub fn around(value: f64, half_width: Option<f64>) -> Self {
        match half_width {
            Some(h) if h.is_finite() => Interval {
                lo: value - h.abs(),
                hi: value + h.abs(),
            },
            Some(_) => Interval::ENTIRE,
            None => Interval::exact(value),
        }
    }

    pub fn is_exact(self) -> bool {
        self.lo == self.hi
    }

    /// Midpoint and half-width, for display.
    pub fn mid_half(self) -> (f64, f64) {
        ((self.lo + self.hi) / 2.0, (self.hi - self.lo) / 2.0)
    }

    fn new(lo: f64, hi: f64) -> Self {
        if lo.is_nan() || hi.is_nan() {
            Interval::ENTIRE
        } else {
            Interval { lo, hi }
        }
    }

    fn add(self, o: Self) -> Self {
        Interval::new(self.lo + o.lo, self.hi + o.hi)
    }
    fn sub(self, o: Self) -> Self {
        Interval::new(self.lo - o.hi, self.hi - o.lo)
    }
    fn neg(self) -> Self {
        Interval::new(-self.hi, -self.lo)
    }
    fn mul(self, o: Self) -> Self {
        // 0 × ∞ is 0 here: an exact zero times anything is zero.
        let m = |a: f64, b: f64| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
        let c = [
            m(self.lo, o.lo),
            m(self.lo, o.hi),
            m(self.hi, o.lo),
            m(self.hi, o.hi),
        ];
        Interval::new(
            c.iter().copied().fold(f64::INFINITY, f64::min),
            c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    fn div(self, o: Self) -> Self {
        if o.lo <= 0.0 && o.hi >= 0.0 {
            // The divisor may be zero: nothing is known of the quotient.
            return Interval::ENTIRE;
        }
        self.mul(Interval::new(1.0 / o.hi, 1.0 / o.lo))
    }
    fn abs(self) -> Self {
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            Interval::new(0.0, self.hi.max(-self.lo))
        }
    }
    fn min(self, o: Self) -> Self {
        Interval::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }
    fn max(self, o: Self) -> Self {
        Interval::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }
}

/// Kleene's three truth values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    True,
    False,
    Unknown,
}

/// A claim's verdict is the truth of its predicate over the CIs.
impl From<Truth> for verdicts::Verdict {
    fn from(t: Truth) -> Self {
        match t {
            Truth::True => verdicts::Verdict::Holds,
            Truth::False => verdicts::Verdict::Fails,
            Truth::Unknown => verdicts::Verdict::Inconclusive,
        }
    }
}

impl Truth {
    pub fn of(b: bool) -> Truth {
        if b {
            Truth::True
        } else {
            Truth::False
        }
    }
    pub fn and(self, o: Truth) -> Truth {
        match (self, o) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::True, Truth::True) => Truth::True,
            _ => Truth::Unknown,
        }
    }
    pub fn or(self, o: Truth) -> Truth {
        self.negate().and(o.negate()).negate()
    }
    pub fn negate(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

/// A comparison over two intervals.
pub fn compare(op: Cmp, a: Interval, b: Interval) -> Truth {
    match op {
        Cmp::Lt => decide(a.hi < b.lo, a.lo >= b.hi),
        Cmp::Le => decide(a.hi <= b.lo, a.lo > b.hi),
        Cmp::Gt => compare(Cmp::Lt, b, a),
        Cmp::Ge => compare(Cmp::Le, b, a),
        Cmp::Eq => decide(
            a.is_exact() && b.is_exact() && a.lo == b.lo,
            a.hi < b.lo || b.hi < a.lo,
        ),
        Cmp::Ne => compare(Cmp::Eq, a, b).negate(),
    }
}

fn decide(surely: bool, surely_not: bool) -> Truth {
    if surely {
        Truth::True
    } else if surely_not {
        Truth::False
    } else {
        Truth::Unknown
    }
}

/// Where the values come from.
pub trait Env {
    /// `series.metric` at a point, as an interval. The caller evaluates only
    /// at points where every metric the expression reads has a value.
    fn metric(&self, point: usize, series: &str, metric: &str) -> Interval;
    /// A sweep axis or a manifest parameter at a point.
    fn name(&self, point: usize, name: &str) -> f64;
    /// Whether the series' task reported saturation at the point (unknown
    /// where that is not known, as when classifying before any run).
    fn saturated(&self, point: usize, series: &str) -> Truth;
}

/// One comparison as evaluated: where in the text, at which point (`None`
/// when it reads aggregates only), both sides and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub span: (usize, usize),
    pub point: Option<usize>,
    pub lhs: Interval,
    pub op: &'static str,
    pub rhs: Interval,
    pub truth: Truth,
}

#[derive(Debug, Clone, Copy)]
enum Val {
    Num(Interval),
    Bool(Truth),
}

impl Val {
    fn num(self) -> Interval {
        match self {
            Val::Num(i) => i,
            Val::Bool(_) => Interval::ENTIRE,
        }
    }
    fn truth(self) -> Truth {
        match self {
            Val::Bool(t) => t,
            Val::Num(_) => Truth::Unknown,
        }
    }
}

/// Evaluates a checked predicate over `points` (indices into the sweep, in
/// sweep order). `axes` are the sweep's axes (for trends). Returns the truth
/// and every comparison made. No point: unknown (a claim about nothing
/// neither holds nor fails).
pub fn evaluate(e: &Expr, env: &dyn Env, points: &[usize], axes: &[String]) -> (Truth, Vec<Step>) {
    let mut ev = Evaluator {
        env,
        points,
        axes,
        cache: BTreeMap::new(),
        steps: Vec::new(),
    };
    if points.is_empty() {
        return (Truth::Unknown, Vec::new());
    }
    let truth = if depends_on_point(e) {
        points
            .iter()
            .fold(Truth::True, |acc, &p| acc.and(ev.eval(e, Some(p)).truth()))
    } else {
        ev.eval(e, None).truth()
    };
    (truth, ev.steps)
}

/// Whether an expression reads anything that varies over points outside an
/// aggregate (a metric, an axis, a saturation). Parameters are constant;
/// a bare name might be either, so it counts as varying.
pub fn depends_on_point(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Num(_) => false,
        ExprKind::Name(_) | ExprKind::Metric { .. } | ExprKind::Saturated(_) => true,
        ExprKind::Agg(..) | ExprKind::Trend { .. } => false,
        ExprKind::Neg(a) | ExprKind::Not(a) => depends_on_point(a),
        ExprKind::Arith(_, a, b)
        | ExprKind::Cmp(_, a, b)
        | ExprKind::And(a, b)
        | ExprKind::Or(a, b) => depends_on_point(a) || depends_on_point(b),
        ExprKind::Call(_, args) => args.iter().any(depends_on_point),
    }
}

struct Evaluator<'a> {
    env: &'a dyn Env,
    points: &'a [usize],
    axes: &'a [String],
    /// Aggregates by span: computed once, whatever point asks.
    cache: BTreeMap<(usize, usize), Val>,
    steps: Vec<Step>,
}

impl Evaluator<'_> {
    /// `point` is `None` only for point-independent expressions.
    fn eval(&mut self, e: &Expr, point: Option<usize>) -> Val {
        let p = point.unwrap_or(self.points[0]);
        match &e.kind {
            ExprKind::Num(v) => Val::Num(Interval::exact(*v)),
            ExprKind::Name(n) => Val::Num(Interval::exact(self.env.name(p, n))),
            ExprKind::Metric { series, metric } => Val::Num(self.env.metric(p, series, metric)),
            ExprKind::Saturated(s) => Val::Bool(self.env.saturated(p, s)),
            ExprKind::Neg(a) => Val::Num(self.eval(a, point).num().neg()),
            ExprKind::Arith(op, a, b) => {
                let (a, b) = (self.eval(a, point).num(), self.eval(b, point).num());
                Val::Num(match op {
                    Arith::Add => a.add(b),
                    Arith::Sub => a.sub(b),
                    Arith::Mul => a.mul(b),
                    Arith::Div => a.div(b),
                })
            }
            ExprKind::Call(f, args) => {
                let a = self.eval(&args[0], point).num();
                Val::Num(match f {
                    Func::Abs => a.abs(),
                    Func::Min => a.min(self.eval(&args[1], point).num()),
                    Func::Max => a.max(self.eval(&args[1], point).num()),
                })
            }
            ExprKind::Cmp(op, a, b) => {
                let (l, r) = (self.eval(a, point).num(), self.eval(b, point).num());
                let truth = compare(*op, l, r);
                self.steps.push(Step {
                    span: e.span,
                    point: depends_on_point(e).then_some(p),
                    lhs: l,
                    op: op.as_str(),
                    rhs: r,
                    truth,
                });
                Val::Bool(truth)
            }
            ExprKind::And(a, b) => {
                Val::Bool(self.eval(a, point).truth().and(self.eval(b, point).truth()))
            }
            ExprKind::Or(a, b) => {
                Val::Bool(self.eval(a, point).truth().or(self.eval(b, point).truth()))
            }
            ExprKind::Not(a) => Val::Bool(self.eval(a, point).truth().negate()),
            ExprKind::Agg(agg, arg) => {
                if let Some(v) = self.cache.get(&e.span) {
                    return *v;
                }
                let v = self.aggregate(*agg, arg);
                self.cache.insert(e.span, v);
                v
            }
            ExprKind::Trend { up, arg, axis } => {
                if let Some(v) = self.cache.get(&e.span) {
                    return *v;
                }
                let axis = axis.clone().unwrap_or_else(|| self.axes[0].clone());
                let v = Val::Bool(self.trend(*up, arg, &axis, e.span));
                self.cache.insert(e.span, v);
                v
            }
        }
    }

    fn aggregate(&mut self, agg: Agg, arg: &Expr) -> Val {
        let points = self.points;
        match agg {
            Agg::All | Agg::Any => {
                let mut t = if agg == Agg::All {
                    Truth::True
                } else {
                    Truth::False
                };
                for &p in points {
                    let v = self.eval(arg, Some(p)).truth();
                    t = if agg == Agg::All { t.and(v) } else { t.or(v) };
                }
                Val::Bool(t)
            }
            Agg::Mean | Agg::MaxOf | Agg::MinOf => {
                let vals: Vec<Interval> = points
                    .iter()
                    .map(|&p| self.eval(arg, Some(p)).num())
                    .collect();
                let n = vals.len() as f64;
                Val::Num(match agg {
                    Agg::Mean => Interval::new(
                        vals.iter().map(|v| v.lo).sum::<f64>() / n,
                        vals.iter().map(|v| v.hi).sum::<f64>() / n,
                    ),
                    Agg::MaxOf => vals
                        .iter()
                        .copied()
                        .reduce(Interval::max)
                        .unwrap_or(Interval::ENTIRE),
                    _ => vals
                        .iter()
                        .copied()
                        .reduce(Interval::min)
                        .unwrap_or(Interval::ENTIRE),
                })
            }
        }
    }

    /// Every neighbouring pair along `axis`, the other axes fixed, rises
    /// (`up`) or falls strictly. Fewer than two points on every line: unknown.
    fn trend(&mut self, up: bool, arg: &Expr, axis: &str, span: (usize, usize)) -> Truth {
        // The other axes fix a line, except those that move with `axis` (a
        // zip group): one value of theirs for each value of `axis`.
        let moves_with = |other: &str| {
            let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
            self.points.iter().all(|&p| {
                let (x, y) = (
                    self.env.name(p, axis).to_bits(),
                    self.env.name(p, other).to_bits(),
                );
                *seen.entry(x).or_insert(y) == y
            })
        };
        let others: Vec<String> = self
            .axes
            .iter()
            .filter(|a| *a != axis && !moves_with(a))
            .cloned()
            .collect();
        let mut lines: BTreeMap<Vec<u64>, Vec<(f64, usize)>> = BTreeMap::new();
        for &p in self.points {
            let key: Vec<u64> = others
                .iter()
                .map(|a| self.env.name(p, a).to_bits())
                .collect();
            lines
                .entry(key)
                .or_default()
                .push((self.env.name(p, axis), p));
        }
        let mut t = Truth::True;
        let mut pairs = 0;
        for line in lines.values_mut() {
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in line.windows(2) {
                let (a, b) = (
                    self.eval(arg, Some(w[0].1)).num(),
                    self.eval(arg, Some(w[1].1)).num(),
                );
                let op = if up { Cmp::Lt } else { Cmp::Gt };
                let truth = compare(op, a, b);
                self.steps.push(Step {
                    span,
                    point: Some(w[1].1),
                    lhs: a,
                    op: op.as_str(),
                    rhs: b,
                    truth,
                });
                t = t.and(truth);
                pairs += 1;
            }
        }
        if pairs == 0 {
            Truth::Unknown
        } else {
            t
        }
    }
}
