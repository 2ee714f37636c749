//! Load-time checks of a parsed predicate: names resolved, types, where
//! aggregates may stand.

use super::parse::did_you_mean;
use super::{Agg, Expr, ExprKind, PredicateError};
use std::collections::BTreeMap;

/// Values of the two types of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Number,
    Bool,
}

/// Whether `series.metric` names a metric the series or reference produces:
/// `None` when there is no such series, `Err` with the names it does produce.
pub type MetricKnown<'a> = &'a dyn Fn(&str, &str) -> Option<Result<(), Vec<String>>>;

/// What names a predicate may use.
pub struct Scope<'a> {
    /// Sweep axes (numbers at every point).
    pub axes: &'a [String],
    /// The axes as they vary: zipped axes in one group.
    pub groups: &'a [Vec<String>],
    /// Manifest parameters with a numeric value.
    pub params: &'a BTreeMap<String, f64>,
    /// Series and reference ids -> whether `metric` is one they produce
    /// (`Err` carries the names they do produce, for the message).
    pub metric_known: MetricKnown<'a>,
    /// Every series and reference id (for messages).
    pub series: Vec<&'a str>,
    /// Series whose solver can report saturation (simulation or model series).
    pub is_series: &'a dyn Fn(&str) -> bool,
}

/// Where in a claim an expression stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `holds:`: every name, aggregates allowed.
    Holds,
    /// `points:`: axes, parameters and numbers only, per point.
    Points,
}

/// Checks names and types; returns the resolved expression (the axis of a
/// trend filled in) and its type, which must be Bool.
pub fn check(e: &Expr, scope: &Scope, place: Place) -> Result<Expr, PredicateError> {
    let mut e = e.clone();
    let t = check_node(&mut e, scope, place, false)?;
    if t != Type::Bool {
        return Err(PredicateError::new(
            e.span.0,
            "is a number, not a predicate: compare it (`<=`, `>`, ...)",
        ));
    }
    Ok(e)
}

fn check_node(
    e: &mut Expr,
    scope: &Scope,
    place: Place,
    in_agg: bool,
) -> Result<Type, PredicateError> {
    let at = e.span.0;
    let want = |e: &mut Expr, t: Type, in_agg: bool, what: &str| -> Result<(), PredicateError> {
        let got = check_node(e, scope, place, in_agg)?;
        if got == t {
            Ok(())
        } else {
            Err(PredicateError::new(
                e.span.0,
                format!(
                    "{what} must be {}",
                    if t == Type::Bool {
                        "a predicate (true/false)"
                    } else {
                        "a number"
                    }
                ),
            ))
        }
    };
    let no_agg_here = |what: &str| {
        if place == Place::Points {
            Err(PredicateError::new(
                at,
                format!(
                    "`points:` selects points by axes and parameters; {what} is not allowed there"
                ),
            ))
        } else if in_agg {
            Err(PredicateError::new(
                at,
                format!("{what} inside an aggregate: aggregates do not nest"),
            ))
        } else {
            Ok(())
        }
    };
    match &mut e.kind {
        ExprKind::Num(_) => Ok(Type::Number),
        ExprKind::Name(n) => {
            if scope.axes.iter().any(|a| a == n) || scope.params.contains_key(n.as_str()) {
                return Ok(Type::Number);
            }
            let known: Vec<&str> = scope
                .axes
                .iter()
                .map(String::as_str)
                .chain(scope.params.keys().map(String::as_str))
                .collect();
            let hint = if scope.series.contains(&n.as_str()) {
                format!(" (`{n}` is a series: name one of its metrics, `{n}.METRIC`)")
            } else {
                did_you_mean(n, known.iter().copied())
            };
            Err(PredicateError::new(
                at,
                format!(
                    "`{n}` is neither a sweep axis nor a numeric manifest parameter{hint}; axes and parameters: {}",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ),
            ))
        }
        ExprKind::Metric { series, metric } => {
            if place == Place::Points {
                return Err(PredicateError::new(
                    at,
                    "`points:` selects points by axes and parameters, not by results",
                ));
            }
            match (scope.metric_known)(series, metric) {
                Some(Ok(())) => Ok(Type::Number),
                Some(Err(names)) => Err(PredicateError::new(
                    at,
                    format!(
                        "`{series}` produces no metric `{metric}`{}; its metrics: {}",
                        did_you_mean(metric, names.iter().map(String::as_str)),
                        names.join(", ")
                    ),
                )),
                None => Err(PredicateError::new(
                    at,
                    format!(
                        "no series or reference named `{series}`{}; series and references: {}",
                        did_you_mean(series, scope.series.iter().copied()),
                        scope.series.join(", ")
                    ),
                )),
            }
        }
        ExprKind::Neg(a) => {
            want(a, Type::Number, in_agg, "the operand of `-`")?;
            Ok(Type::Number)
        }
        ExprKind::Arith(_, a, b) => {
            want(a, Type::Number, in_agg, "an operand of arithmetic")?;
            want(b, Type::Number, in_agg, "an operand of arithmetic")?;
            Ok(Type::Number)
        }
        ExprKind::Cmp(_, a, b) => {
            want(a, Type::Number, in_agg, "each side of a comparison")?;
            want(b, Type::Number, in_agg, "each side of a comparison")?;
            Ok(Type::Bool)
        }
        ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            want(a, Type::Bool, in_agg, "each side of `and`/`or`")?;
            want(b, Type::Bool, in_agg, "each side of `and`/`or`")?;
            Ok(Type::Bool)
        }
        ExprKind::Not(a) => {
            want(a, Type::Bool, in_agg, "the operand of `not`")?;
            Ok(Type::Bool)
        }
        ExprKind::Call(_, args) => {
            for a in args {
                want(a, Type::Number, in_agg, "an argument of abs/min/max")?;
            }
            Ok(Type::Number)
        }
        ExprKind::Agg(a, arg) => {
            no_agg_here("an aggregate")?;
            let (t, what) = match a {
                Agg::All | Agg::Any => (Type::Bool, "the argument of all/any"),
                _ => (Type::Number, "the argument of mean/maxof/minof"),
            };
            want(arg, t, true, what)?;
            Ok(if t == Type::Bool {
                Type::Bool
            } else {
                Type::Number
            })
        }
        ExprKind::Trend { arg, axis, .. } => {
            no_agg_here("a trend")?;
            match axis {
                Some(a) if !scope.axes.contains(a) => {
                    return Err(PredicateError::new(
                        at,
                        format!(
                            "`{a}` is not a sweep axis{}; axes: {}",
                            did_you_mean(a, scope.axes.iter().map(String::as_str)),
                            scope.axes.join(", ")
                        ),
                    ))
                }
                Some(_) => {}
                None if scope.groups.len() == 1 && !scope.groups[0].is_empty() => {
                    *axis = Some(scope.groups[0][0].clone())
                }
                None => {
                    return Err(PredicateError::new(
                        at,
                        format!(
                            "name the axis the trend runs along (axes: {})",
                            if scope.axes.is_empty() {
                                "none".to_string()
                            } else {
                                scope.axes.join(", ")
                            }
                        ),
                    ))
                }
            }
            want(
                arg,
                Type::Number,
                true,
                "the argument of increasing/decreasing",
            )?;
            Ok(Type::Bool)
        }
        ExprKind::Saturated(s) => {
            if place == Place::Points {
                return Err(PredicateError::new(
                    at,
                    "`points:` selects points by axes and parameters, not by results",
                ));
            }
            if !(scope.is_series)(s) {
                return Err(PredicateError::new(
                    at,
                    format!(
                        "no series named `{s}`{}",
                        did_you_mean(s, scope.series.iter().copied())
                    ),
                ));
            }
            Ok(Type::Bool)
        }
    }
}
