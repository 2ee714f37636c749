//! The predicate language of claims (`holds:` and `points:`): parsing into an
//! AST, and the checks made at load time (names, types, where aggregates may
//! stand). Evaluation over confidence intervals is in [`interval`].
//!
//! ```text
//! expr  := or
//! or    := and ("or" and)*
//! and   := not ("and" not)*
//! not   := "not" not | cmp
//! cmp   := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
//! sum   := prod (("+" | "-") prod)*
//! prod  := unary (("*" | "/") unary)*
//! unary := "-" unary | atom
//! atom  := number | name | name "." name | name "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//!
//! Functions: `abs(x)`, `min(a, b)`, `max(a, b)`; aggregates over the claim's
//! points `all(p)`, `any(p)`, `mean(x)`, `maxof(x)`, `minof(x)`,
//! `increasing(x[, axis])`, `decreasing(x[, axis])` (every pair of
//! neighbouring points along the axis, the other axes fixed); and
//! `saturated(series)`, true at a point where that series' task reported
//! saturation.
//!
//! Why a hand-written parser: the grammar above is a dozen productions and
//! its errors must name the column and the rule. The expression crates
//! considered do not fit: evalexpr spells the logic `&&`/`||`/`!`, evaluates
//! into its own dynamic values with no interval semantics and no
//! aggregates, and reports errors without positions; a parser-combinator
//! crate (winnow's Pratt `expression`) would replace about a hundred lines
//! of precedence climbing below with the same amount of combinator setup.

mod check;
pub mod interval;
mod parse;

pub use check::{check, MetricKnown, Place, Scope, Type};
pub use parse::{did_you_mean, parse, MAX_CHARS, MAX_DEPTH};

use std::fmt;

/// A parsed expression. `span` is the byte range in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: (usize, usize),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Num(f64),
    /// A bare name: a sweep axis or a manifest parameter.
    Name(String),
    /// `series.metric` (a series or a `reference_data` id).
    Metric {
        series: String,
        metric: String,
    },
    Neg(Box<Expr>),
    Arith(Arith, Box<Expr>, Box<Expr>),
    Cmp(Cmp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Call(Func, Vec<Expr>),
    Agg(Agg, Box<Expr>),
    /// `increasing(x, axis)` (`up`) or `decreasing(x, axis)`; the axis is
    /// filled in at check time when the sweep has one axis.
    Trend {
        up: bool,
        arg: Box<Expr>,
        axis: Option<String>,
    },
    Saturated(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Abs,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    All,
    Any,
    Mean,
    MaxOf,
    MinOf,
}

impl Cmp {
    pub fn as_str(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        }
    }
}

/// A parse or check error: what is wrong and where (byte offset into the text).
#[derive(Debug, Clone, PartialEq)]
pub struct PredicateError {
    pub at: usize,
    pub message: String,
}

impl PredicateError {
    fn new(at: usize, message: impl Into<String>) -> Self {
        PredicateError {
            at,
            message: message.into(),
        }
    }

    /// The message with the 1-based column and the text marked at it.
    pub fn describe(&self, text: &str) -> String {
        let col = text[..self.at.min(text.len())].chars().count() + 1;
        format!("column {col} of \"{text}\": {}", self.message)
    }
}

impl fmt::Display for PredicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.message)
    }
}

/// Every `series.metric` an expression reads (outside `saturated`), in order, once each.
pub fn metrics(e: &Expr) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(e, &mut |x| {
        if let ExprKind::Metric { series, metric } = &x.kind {
            let k = (series.clone(), metric.clone());
            if !out.contains(&k) {
                out.push(k);
            }
        }
    });
    out
}

/// Every series named in `saturated(..)`.
pub fn saturation_series(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    walk(e, &mut |x| {
        if let ExprKind::Saturated(s) = &x.kind {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
    });
    out
}

/// Visits every node, parents first.
pub fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Num(_) | ExprKind::Name(_) | ExprKind::Metric { .. } | ExprKind::Saturated(_) => {
        }
        ExprKind::Neg(a) | ExprKind::Not(a) | ExprKind::Agg(_, a) => walk(a, f),
        ExprKind::Trend { arg, .. } => walk(arg, f),
        ExprKind::Arith(_, a, b)
        | ExprKind::Cmp(_, a, b)
        | ExprKind::And(a, b)
        | ExprKind::Or(a, b) => {
            walk(a, f);
            walk(b, f);
        }
        ExprKind::Call(_, args) => args.iter().for_each(|a| walk(a, f)),
    }
}

#[cfg(test)]
mod tests;
