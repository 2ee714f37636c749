//! Tests of the predicate language: parsing, load-time checks, and evaluation
//! over intervals against hand-computed cases and properties.

use super::interval::{compare, evaluate, Env, Interval, Truth};
use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn p(s: &str) -> Expr {
    parse(s).unwrap_or_else(|e| panic!("{}", e.describe(s)))
}

/// Prints an expression fully parenthesised, to test precedence.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Num(v) => format!("{v}"),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Metric { series, metric } => format!("{series}.{metric}"),
        ExprKind::Neg(a) => format!("(-{})", show(a)),
        ExprKind::Arith(op, a, b) => {
            let o = match op {
                Arith::Add => "+",
                Arith::Sub => "-",
                Arith::Mul => "*",
                Arith::Div => "/",
            };
            format!("({} {o} {})", show(a), show(b))
        }
        ExprKind::Cmp(op, a, b) => format!("({} {} {})", show(a), op.as_str(), show(b)),
        ExprKind::And(a, b) => format!("({} and {})", show(a), show(b)),
        ExprKind::Or(a, b) => format!("({} or {})", show(a), show(b)),
        ExprKind::Not(a) => format!("(not {})", show(a)),
        ExprKind::Call(f, args) => format!(
            "{f:?}({})",
            args.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Agg(a, x) => format!("{a:?}({})", show(x)),
        ExprKind::Trend { up, arg, axis } => format!("trend{up}({}, {axis:?})", show(arg)),
        ExprKind::Saturated(s) => format!("saturated({s})"),
    }
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(show(&p("1 + 2 * 3 - 4 / 2")), "((1 + (2 * 3)) - (4 / 2))");
    assert_eq!(show(&p("-a.x * 2")), "((-a.x) * 2)");
    assert_eq!(
        show(&p("a.x < 1 or b.y > 2 and not c.z == 3")),
        "((a.x < 1) or ((b.y > 2) and (not (c.z == 3))))"
    );
    assert_eq!(show(&p("(1 + 2) * 3 <= 9")), "(((1 + 2) * 3) <= 9)");
    assert_eq!(
        show(&p("mean(abs(s.L - m.L) / s.L) <= 0.1")),
        "(Mean((Abs((s.L - m.L)) / s.L)) <= 0.1)"
    );
    assert_eq!(show(&p("1e5 + .5 + 2.5E-3")), "((100000 + 0.5) + 0.0025)");
    assert_eq!(
        show(&p("increasing(s.L, lam)")),
        "trendtrue(s.L, Some(\"lam\"))"
    );
    assert_eq!(show(&p("not saturated(m)")), "(not saturated(m))");
}

#[test]
fn spans_cover_the_text_of_a_node() {
    let t = "pipd.r1_B > pipd.r1_A ";
    let e = p(t);
    assert_eq!(&t[e.span.0..e.span.1], "pipd.r1_B > pipd.r1_A");
    let t = "(a.x) <= 2";
    let ExprKind::Cmp(_, l, _) = p(t).kind else {
        panic!()
    };
    assert_eq!(&t[l.span.0..l.span.1], "(a.x)");
}

#[test]
fn parse_errors_name_the_column_and_the_rule() {
    let cases = [
        ("", "empty predicate"),
        ("a.x <", "column 6"),
        ("a.x = 1", "compare with `==`"),
        ("a.x && b.y", "`and`, `or`, `not`"),
        ("1 < 2 < 3", "do not chain"),
        ("(1 + 2", "expected `)` to close the `(` at column 1"),
        ("a.x > 1 b", "after a complete expression"),
        ("a.", "expected a metric name after `a.`"),
        ("maen(a.x) < 1", "did you mean `mean`?"),
        ("abs(1, 2) < 1", "takes 1 argument(s), given 2"),
        ("saturated(1)", "argument of `saturated` is a series name"),
        ("a.x # 2", "unexpected character `#`"),
        ("and", "needs an operand"),
    ];
    for (text, want) in cases {
        let e = parse(text).expect_err(text);
        let msg = e.describe(text);
        assert!(msg.contains(want), "{text}: {msg}");
    }
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
    assert!(parse(&"1+".repeat(3000))
        .unwrap_err()
        .message
        .contains("limit"));
}

fn with_scope<R>(f: impl FnOnce(&Scope) -> R) -> R {
    let axes = vec!["lam".to_string(), "n".to_string()];
    let params: BTreeMap<String, f64> = [("lambda_star".to_string(), 2.0)].into();
    let known = |s: &str, m: &str| -> Option<Result<(), Vec<String>>> {
        let metrics: &[&str] = match s {
            "sim" | "model" => &["L", "W", "P_block"],
            "paper" => &["L"],
            _ => return None,
        };
        Some(if metrics.contains(&m) {
            Ok(())
        } else {
            Err(metrics.iter().map(|x| x.to_string()).collect())
        })
    };
    let is_series = |s: &str| s == "sim" || s == "model";
    let groups = vec![vec!["lam".to_string()], vec!["n".to_string()]];
    f(&Scope {
        axes: &axes,
        groups: &groups,
        params: &params,
        metric_known: &known,
        series: vec!["sim", "model", "paper"],
        is_series: &is_series,
    })
}

#[test]
fn checks_resolve_names_and_types() {
    with_scope(|s| {
        for ok in [
            "sim.L > model.L",
            "mean(abs(sim.L - model.L) / sim.L) <= 0.1 and all(sim.W > 0)",
            "lam <= 0.9 * lambda_star or paper.L == 1",
            "increasing(sim.L, lam) and decreasing(model.W, n)",
            "not saturated(model) or saturated(sim)",
        ] {
            check(&p(ok), s, Place::Holds).unwrap_or_else(|e| panic!("{ok}: {}", e.describe(ok)));
        }
        check(&p("lam <= 0.9 * lambda_star"), s, Place::Points).unwrap();
        let bad = [
            (
                "sim.L2 > 0",
                Place::Holds,
                "`sim` produces no metric `L2` (did you mean `L`?); its metrics: L, W, P_block",
            ),
            (
                "smi.L > 0",
                Place::Holds,
                "no series or reference named `smi` (did you mean `sim`?)",
            ),
            ("lamb > 0", Place::Holds, "did you mean `lam`?"),
            ("sim > 0", Place::Holds, "`sim` is a series"),
            ("sim.L + 1", Place::Holds, "is a number, not a predicate"),
            (
                "sim.L and 1 < 2",
                Place::Holds,
                "each side of `and`/`or` must be a predicate",
            ),
            ("mean(sim.L > 1) < 2", Place::Holds, "must be a number"),
            (
                "all(mean(sim.L) > 1)",
                Place::Holds,
                "aggregates do not nest",
            ),
            ("increasing(sim.L)", Place::Holds, "name the axis"),
            (
                "increasing(sim.L, x)",
                Place::Holds,
                "`x` is not a sweep axis",
            ),
            ("saturated(paper)", Place::Holds, "no series named `paper`"),
            ("sim.L < 1", Place::Points, "not by results"),
            ("all(lam < 1)", Place::Points, "not allowed there"),
        ];
        for (text, place, want) in bad {
            let e = check(&p(text), s, place).expect_err(text);
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
    });
}

#[test]
fn a_one_axis_trend_gets_its_axis() {
    let axes = vec!["m".to_string()];
    let params = BTreeMap::new();
    let known = |_: &str, _: &str| Some(Ok(()));
    let yes = |_: &str| true;
    let groups = vec![axes.clone()];
    let scope = Scope {
        axes: &axes,
        groups: &groups,
        params: &params,
        metric_known: &known,
        series: vec!["s"],
        is_series: &yes,
    };
    let e = check(&p("decreasing(s.L1)"), &scope, Place::Holds).unwrap();
    assert_eq!(show(&e), "trendfalse(s.L1, Some(\"m\"))");
}

/// Values per (point, series, metric) as (value, half-width); axis `x` = point index.
struct Table {
    vals: BTreeMap<(usize, &'static str, &'static str), (f64, Option<f64>)>,
    saturated: Vec<(usize, &'static str)>,
}

impl Env for Table {
    fn metric(&self, point: usize, series: &str, metric: &str) -> Interval {
        let k = self
            .vals
            .keys()
            .find(|k| k.0 == point && k.1 == series && k.2 == metric)
            .expect("value present");
        let (v, h) = self.vals[k];
        Interval::around(v, h)
    }
    fn name(&self, point: usize, name: &str) -> f64 {
        match name {
            "x" => point as f64,
            "y" => (point % 2) as f64,
            "gx" => (point / 2) as f64,
            "two" => 2.0,
            _ => panic!("{name}"),
        }
    }
    fn saturated(&self, point: usize, series: &str) -> Truth {
        Truth::of(self.saturated.contains(&(point, series)))
    }
}

fn eval_on(text: &str, t: &Table, points: &[usize]) -> Truth {
    evaluate(&p(text), t, points, &["x".to_string()]).0
}

fn one(sim: (f64, Option<f64>), model: f64) -> Table {
    Table {
        vals: [((0, "sim", "L"), sim), ((0, "model", "L"), (model, None))].into(),
        saturated: vec![],
    }
}

#[test]
fn a_comparison_holds_fails_or_is_inconclusive_over_the_ci() {
    // sim = 1 ± 0.1 against model 1.2: the whole CI lies below.
    assert_eq!(
        eval_on("sim.L < model.L", &one((1.0, Some(0.1)), 1.2), &[0]),
        Truth::True
    );
    assert_eq!(
        eval_on("sim.L > model.L", &one((1.0, Some(0.1)), 1.2), &[0]),
        Truth::False
    );
    // The CI [0.9, 1.1] straddles 1.05: inconclusive both ways.
    assert_eq!(
        eval_on("sim.L < model.L", &one((1.0, Some(0.1)), 1.05), &[0]),
        Truth::Unknown
    );
    assert_eq!(
        eval_on("sim.L > model.L", &one((1.0, Some(0.1)), 1.05), &[0]),
        Truth::Unknown
    );
    // Touching the boundary: <= holds at equality, < does not.
    assert_eq!(
        eval_on("sim.L <= model.L", &one((1.0, Some(0.1)), 1.1), &[0]),
        Truth::True
    );
    assert_eq!(
        eval_on("sim.L < model.L", &one((1.0, Some(0.1)), 1.1), &[0]),
        Truth::Unknown
    );
    // Exact values decide exactly.
    assert_eq!(
        eval_on("sim.L == model.L", &one((1.0, None), 1.0), &[0]),
        Truth::True
    );
    assert_eq!(
        eval_on("sim.L != model.L", &one((1.0, None), 1.0), &[0]),
        Truth::False
    );
    assert_eq!(
        eval_on("sim.L == model.L", &one((1.0, Some(0.1)), 1.0), &[0]),
        Truth::Unknown
    );
}

#[test]
fn an_em_claim_by_hand() {
    // EM = |sim − model| / sim with sim = 2 ± 0.1, model = 2.3:
    // numerator [0.2, 0.4], denominator [1.9, 2.1] -> [0.0952, 0.2105].
    let t = one((2.0, Some(0.1)), 2.3);
    assert_eq!(
        eval_on("abs(sim.L - model.L) / sim.L <= 0.25", &t, &[0]),
        Truth::True
    );
    assert_eq!(
        eval_on("abs(sim.L - model.L) / sim.L <= 0.09", &t, &[0]),
        Truth::False
    );
    assert_eq!(
        eval_on("abs(sim.L - model.L) / sim.L <= 0.15", &t, &[0]),
        Truth::Unknown
    );
    let (_, steps) = evaluate(&p("abs(sim.L - model.L) / sim.L <= 0.25"), &t, &[0], &[]);
    assert_eq!(steps.len(), 1);
    assert!((steps[0].lhs.lo - 0.2 / 2.1).abs() < 1e-12);
    assert!((steps[0].lhs.hi - 0.4 / 1.9).abs() < 1e-12);
    assert_eq!(steps[0].point, Some(0));
}

fn three_points() -> Table {
    // sim.L at points 0..3 = 1 ± 0.1, 2 ± 0.1, 3 ± 0.3; model.L = 1, 2.5, 2.
    Table {
        vals: [
            ((0, "sim", "L"), (1.0, Some(0.1))),
            ((1, "sim", "L"), (2.0, Some(0.1))),
            ((2, "sim", "L"), (3.0, Some(0.3))),
            ((0, "model", "L"), (1.0, None)),
            ((1, "model", "L"), (2.5, None)),
            ((2, "model", "L"), (2.0, None)),
        ]
        .into(),
        saturated: vec![(2, "model")],
    }
}

#[test]
fn aggregates_over_points() {
    let t = three_points();
    let all = [0, 1, 2];
    // mean(sim.L) = [0.9+1.9+2.7, 1.1+2.1+3.3]/3 = [1.8333, 2.1667].
    assert_eq!(
        eval_on("mean(sim.L) > 1.8 and mean(sim.L) < 2.2", &t, &all),
        Truth::True
    );
    assert_eq!(eval_on("mean(sim.L) > 1.9", &t, &all), Truth::Unknown);
    let (_, steps) = evaluate(&p("mean(sim.L) > 1.8"), &t, &all, &[]);
    assert_eq!(steps.len(), 1, "an aggregate comparison is made once");
    assert_eq!(steps[0].point, None);
    assert!(
        (steps[0].lhs.lo - 5.5 / 3.0).abs() < 1e-12 && (steps[0].lhs.hi - 6.5 / 3.0).abs() < 1e-12
    );
    // maxof/minof.
    assert_eq!(
        eval_on("maxof(sim.L) >= 2.7 and maxof(sim.L) <= 3.3", &t, &all),
        Truth::True
    );
    assert_eq!(eval_on("minof(model.L) == 1", &t, &all), Truth::True);
    // all/any and the implicit all.
    assert_eq!(eval_on("all(sim.L > 0.5)", &t, &all), Truth::True);
    assert_eq!(eval_on("sim.L > 0.5", &t, &all), Truth::True);
    assert_eq!(
        eval_on("sim.L < model.L", &t, &all),
        Truth::False,
        "point 2 is surely above"
    );
    assert_eq!(
        eval_on("any(sim.L < model.L)", &t, &all),
        Truth::True,
        "point 1 is surely below"
    );
    assert_eq!(
        eval_on("sim.L < model.L", &t, &[0, 1]),
        Truth::Unknown,
        "point 0 straddles"
    );
    // Restricting the points changes the answer.
    assert_eq!(eval_on("sim.L < model.L", &t, &[1]), Truth::True);
    // No point: a claim about nothing is inconclusive.
    assert_eq!(eval_on("sim.L > 0", &t, &[]), Truth::Unknown);
    // Trends along the axis x.
    assert_eq!(eval_on("increasing(sim.L, x)", &t, &all), Truth::True);
    assert_eq!(eval_on("increasing(model.L, x)", &t, &all), Truth::False);
    assert_eq!(eval_on("decreasing(sim.L, x)", &t, &all), Truth::False);
    assert_eq!(
        eval_on("increasing(sim.L, x)", &t, &[0]),
        Truth::Unknown,
        "no pair"
    );
    // Saturation.
    assert_eq!(
        eval_on("any(saturated(model)) and not saturated(sim)", &t, &all),
        Truth::True
    );
    assert_eq!(eval_on("saturated(model)", &t, &all), Truth::False);
}

#[test]
fn a_trend_runs_along_its_axis_with_the_other_axes_fixed() {
    // A 2 x 2 grid: gx = index / 2, y = index % 2. Along gx with y fixed: pairs (0,2), (1,3).
    let vals = [(0, 1.0), (1, 10.0), (2, 2.0), (3, 11.0)]
        .into_iter()
        .map(|(p, v)| ((p, "s", "L"), (v, None)))
        .collect();
    let t = Table {
        vals,
        saturated: vec![],
    };
    let axes = ["gx".to_string(), "y".to_string()];
    let e = p("increasing(s.L, gx)");
    // Over the sweep order alone 10 -> 2 would fall; within each line it rises.
    assert_eq!(evaluate(&e, &t, &[0, 1, 2, 3], &axes).0, Truth::True);
    let (_, steps) = evaluate(&e, &t, &[0, 1, 2, 3], &axes);
    assert_eq!(steps.len(), 2);
}

#[test]
fn division_by_an_interval_holding_zero_is_inconclusive() {
    let t = one((0.0, Some(0.1)), 1.0);
    assert_eq!(eval_on("model.L / sim.L > 0", &t, &[0]), Truth::Unknown);
    let t = one((0.0, None), 0.0);
    assert_eq!(
        eval_on("abs(sim.L - model.L) / sim.L <= 0.1", &t, &[0]),
        Truth::Unknown
    );
}

#[test]
fn kleene_logic() {
    use Truth::*;
    for (a, b, and, or) in [
        (True, True, True, True),
        (True, False, False, True),
        (True, Unknown, Unknown, True),
        (False, Unknown, False, Unknown),
        (Unknown, Unknown, Unknown, Unknown),
        (False, False, False, False),
    ] {
        assert_eq!(a.and(b), and, "{a:?} and {b:?}");
        assert_eq!(b.and(a), and);
        assert_eq!(a.or(b), or, "{a:?} or {b:?}");
        assert_eq!(b.or(a), or);
    }
}

/// Exact evaluation of an arithmetic/comparison expression at chosen values.
struct Exact(BTreeMap<(usize, String, String), f64>);

impl Env for Exact {
    fn metric(&self, point: usize, series: &str, metric: &str) -> Interval {
        Interval::exact(self.0[&(point, series.to_string(), metric.to_string())])
    }
    fn name(&self, point: usize, _: &str) -> f64 {
        point as f64
    }
    fn saturated(&self, _: usize, _: &str) -> Truth {
        Truth::False
    }
}

const FORMS: [&str; 8] = [
    "a.v < b.v",
    "a.v - b.v >= 0.5",
    "abs(a.v - b.v) / a.v <= 0.2",
    "a.v * b.v > 1 or a.v < 0",
    "max(a.v, b.v) - min(a.v, b.v) < 1 and not a.v == b.v",
    "mean(a.v) <= mean(b.v)",
    "maxof(abs(a.v - b.v)) < 1.5",
    "increasing(a.v, x) or any(b.v > 2)",
];

proptest! {
    /// Soundness: when the interval evaluation says true (false), every choice
    /// of exact values inside the boxes makes it true (false).
    #[test]
    fn a_verdict_is_certain_over_the_whole_box(
        form in 0..FORMS.len(),
        a in proptest::collection::vec((-3.0f64..3.0, 0.0f64..0.5), 3),
        b in proptest::collection::vec((-3.0f64..3.0, 0.0f64..0.5), 3),
        picks in proptest::collection::vec(-1.0f64..=1.0, 6),
    ) {
        let e = p(FORMS[form]);
        let mut vals = BTreeMap::new();
        let mut exact = BTreeMap::new();
        for pt in 0..3 {
            vals.insert((pt, "a", "v"), (a[pt].0, Some(a[pt].1)));
            vals.insert((pt, "b", "v"), (b[pt].0, Some(b[pt].1)));
            exact.insert((pt, "a".into(), "v".into()), a[pt].0 + picks[pt] * a[pt].1);
            exact.insert((pt, "b".into(), "v".into()), b[pt].0 + picks[3 + pt] * b[pt].1);
        }
        let axes = ["x".to_string()];
        let boxed = evaluate(&e, &Table { vals, saturated: vec![] }, &[0, 1, 2], &axes).0;
        let point = evaluate(&e, &Exact(exact), &[0, 1, 2], &axes).0;
        if boxed != Truth::Unknown && point != Truth::Unknown {
            prop_assert_eq!(boxed, point);
        }
    }

    /// The mean of intervals is the interval of the mean: its bounds are the
    /// means of the bounds, and every mean of values picked inside lies within.
    #[test]
    fn the_mean_of_intervals_is_the_interval_of_the_mean(
        xs in proptest::collection::vec((-100.0f64..100.0, 0.0f64..5.0), 1..8),
        picks in proptest::collection::vec(-1.0f64..=1.0, 8),
    ) {
        let n = xs.len();
        let vals = xs.iter().enumerate().map(|(i, (v, h))| ((i, "a", "v"), (*v, Some(*h)))).collect();
        let points: Vec<usize> = (0..n).collect();
        let (_, steps) = evaluate(&p("mean(a.v) < 1000"), &Table { vals, saturated: vec![] }, &points, &[]);
        let m = steps[0].lhs;
        let lo = xs.iter().map(|(v, h)| v - h).sum::<f64>() / n as f64;
        let hi = xs.iter().map(|(v, h)| v + h).sum::<f64>() / n as f64;
        prop_assert!((m.lo - lo).abs() < 1e-9 && (m.hi - hi).abs() < 1e-9);
        let picked = xs.iter().zip(&picks).map(|((v, h), k)| v + k * h).sum::<f64>() / n as f64;
        prop_assert!(m.lo - 1e-9 <= picked && picked <= m.hi + 1e-9);
    }

    /// Comparisons of disjoint intervals are decided; overlapping ones are not
    /// (unless they meet at one point where `<=` holds).
    #[test]
    fn comparisons_decide_exactly_when_the_intervals_separate(
        a in -5.0f64..5.0, ha in 0.0f64..2.0, b in -5.0f64..5.0, hb in 0.0f64..2.0,
    ) {
        let (x, y) = (Interval::around(a, Some(ha)), Interval::around(b, Some(hb)));
        let t = compare(Cmp::Lt, x, y);
        prop_assert_eq!(t == Truth::True, x.hi < y.lo);
        prop_assert_eq!(t == Truth::False, x.lo >= y.hi);
    }
}
