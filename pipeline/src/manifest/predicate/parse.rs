//! Lexing and parsing (precedence climbing) of the predicate language.

use super::{Agg, Arith, Cmp, Expr, ExprKind, Func, PredicateError};

/// Longest predicate text accepted, and deepest nesting (a manifest is
/// untrusted input: no recursion without a bound).
pub const MAX_CHARS: usize = 4096;
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(&'static str),
    Dot,
    Comma,
    LParen,
    RParen,
    End,
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, PredicateError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let s = &text[start..i];
            let v: f64 = s
                .parse()
                .map_err(|_| PredicateError::new(start, format!("`{s}` is not a number")))?;
            if !v.is_finite() {
                return Err(PredicateError::new(start, format!("`{s}` is not finite")));
            }
            out.push((Tok::Num(v), start));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].to_string()), start));
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        let tok = match two {
            "<=" => Some(Tok::Op("<=")),
            ">=" => Some(Tok::Op(">=")),
            "==" => Some(Tok::Op("==")),
            "!=" => Some(Tok::Op("!=")),
            _ => None,
        };
        if let Some(t) = tok {
            out.push((t, start));
            i += 2;
            continue;
        }
        let t = match c {
            b'<' => Tok::Op("<"),
            b'>' => Tok::Op(">"),
            b'+' => Tok::Op("+"),
            b'-' => Tok::Op("-"),
            b'*' => Tok::Op("*"),
            b'/' => Tok::Op("/"),
            b'.' => Tok::Dot,
            b',' => Tok::Comma,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'=' => {
                return Err(PredicateError::new(
                    start,
                    "`=` is not an operator; compare with `==`",
                ))
            }
            b'&' | b'|' | b'!' => {
                return Err(PredicateError::new(
                    start,
                    "logic is written `and`, `or`, `not`",
                ))
            }
            _ => {
                let ch = text[start..].chars().next().unwrap_or('?');
                return Err(PredicateError::new(
                    start,
                    format!("unexpected character `{ch}`"),
                ));
            }
        };
        out.push((t, start));
        i += 1;
    }
    out.push((Tok::End, text.len()));
    Ok(out)
}

const KEYWORDS: [&str; 3] = ["and", "or", "not"];

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
    text: &'a str,
}

/// Parses a predicate or expression. Names are not resolved here ([`check`]).
pub fn parse(text: &str) -> Result<Expr, PredicateError> {
    if text.len() > MAX_CHARS {
        return Err(PredicateError::new(
            0,
            format!("{} characters; the limit is {MAX_CHARS}", text.len()),
        ));
    }
    if text.trim().is_empty() {
        return Err(PredicateError::new(0, "empty predicate"));
    }
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        depth: 0,
        text,
    };
    let e = p.or()?;
    match p.peek() {
        Tok::End => Ok(e),
        t => Err(PredicateError::new(
            p.at(),
            format!("unexpected {} after a complete expression", describe(t)),
        )),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(v) => format!("number {v}"),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Dot => "`.`".into(),
        Tok::Comma => "`,`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::End => "end of text".into(),
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn at(&self) -> usize {
        self.toks[self.pos].1
    }
    fn bump(&mut self) -> (Tok, usize) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }
    fn end_of_previous(&self) -> usize {
        // End of the last consumed token: the start of the next one, less spaces.
        let next = self.at();
        next - (self.text[..next].len() - self.text[..next].trim_end().len())
    }
    fn node(&self, kind: ExprKind, start: usize) -> Expr {
        Expr {
            kind,
            span: (start, self.end_of_previous()),
        }
    }
    fn enter(&mut self) -> Result<(), PredicateError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(PredicateError::new(
                self.at(),
                format!("nested deeper than {MAX_DEPTH}"),
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, PredicateError> {
        self.enter()?;
        let start = self.at();
        let mut l = self.and()?;
        while self.is_word("or") {
            self.bump();
            let r = self.and()?;
            l = self.node(ExprKind::Or(Box::new(l), Box::new(r)), start);
        }
        self.depth -= 1;
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        let mut l = self.not()?;
        while self.is_word("and") {
            self.bump();
            let r = self.not()?;
            l = self.node(ExprKind::And(Box::new(l), Box::new(r)), start);
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        if self.is_word("not") {
            self.bump();
            self.enter()?;
            let e = self.not()?;
            self.depth -= 1;
            return Ok(self.node(ExprKind::Not(Box::new(e)), start));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        let l = self.sum()?;
        let op = match self.peek() {
            Tok::Op("<") => Cmp::Lt,
            Tok::Op("<=") => Cmp::Le,
            Tok::Op(">") => Cmp::Gt,
            Tok::Op(">=") => Cmp::Ge,
            Tok::Op("==") => Cmp::Eq,
            Tok::Op("!=") => Cmp::Ne,
            _ => return Ok(l),
        };
        self.bump();
        let r = self.sum()?;
        if let Tok::Op(o @ ("<" | "<=" | ">" | ">=" | "==" | "!=")) = self.peek() {
            return Err(PredicateError::new(
                self.at(),
                format!("comparisons do not chain: write `a < b and b {o} c`"),
            ));
        }
        Ok(self.node(ExprKind::Cmp(op, Box::new(l), Box::new(r)), start))
    }
    fn sum(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        let mut l = self.prod()?;
        loop {
            let op = match self.peek() {
                Tok::Op("+") => Arith::Add,
                Tok::Op("-") => Arith::Sub,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.prod()?;
            l = self.node(ExprKind::Arith(op, Box::new(l), Box::new(r)), start);
        }
    }
    fn prod(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Op("*") => Arith::Mul,
                Tok::Op("/") => Arith::Div,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.unary()?;
            l = self.node(ExprKind::Arith(op, Box::new(l), Box::new(r)), start);
        }
    }
    fn unary(&mut self) -> Result<Expr, PredicateError> {
        let start = self.at();
        if matches!(self.peek(), Tok::Op("-")) {
            self.bump();
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(self.node(ExprKind::Neg(Box::new(e)), start));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Expr, PredicateError> {
        let (t, start) = self.bump();
        match t {
            Tok::Num(v) => Ok(self.node(ExprKind::Num(v), start)),
            Tok::LParen => {
                let e = self.or()?;
                self.expect_rparen(start)?;
                Ok(Expr {
                    kind: e.kind,
                    span: (start, self.end_of_previous()),
                })
            }
            Tok::Ident(name) if KEYWORDS.contains(&name.as_str()) => Err(PredicateError::new(
                start,
                format!("`{name}` needs an operand before it"),
            )),
            Tok::Ident(name) => match self.peek() {
                Tok::LParen => {
                    self.bump();
                    self.call(name, start)
                }
                Tok::Dot => {
                    self.bump();
                    match self.bump() {
                        (Tok::Ident(metric), _) => Ok(self.node(
                            ExprKind::Metric {
                                series: name,
                                metric,
                            },
                            start,
                        )),
                        (t, at) => Err(PredicateError::new(
                            at,
                            format!(
                                "expected a metric name after `{name}.`, found {}",
                                describe(&t)
                            ),
                        )),
                    }
                }
                _ => Ok(self.node(ExprKind::Name(name), start)),
            },
            t => Err(PredicateError::new(
                start,
                format!("expected a number, a name or `(`, found {}", describe(&t)),
            )),
        }
    }
    fn expect_rparen(&mut self, open: usize) -> Result<(), PredicateError> {
        match self.bump() {
            (Tok::RParen, _) => Ok(()),
            (t, at) => Err(PredicateError::new(
                at,
                format!(
                    "expected `)` to close the `(` at column {}, found {}",
                    self.text[..open].chars().count() + 1,
                    describe(&t)
                ),
            )),
        }
    }
    fn call(&mut self, name: String, start: usize) -> Result<Expr, PredicateError> {
        let open = self.at();
        let mut args = Vec::new();
        if !matches!(self.peek(), Tok::RParen) {
            loop {
                args.push(self.or()?);
                if matches!(self.peek(), Tok::Comma) {
                    self.bump();
                    continue;
                }
                break;
            }
        }
        self.expect_rparen(open)?;
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(PredicateError::new(
                    start,
                    format!("`{name}` takes {n} argument(s), given {}", args.len()),
                ))
            }
        };
        let bare = |e: &Expr, what: &str| match &e.kind {
            ExprKind::Name(n) => Ok(n.clone()),
            _ => Err(PredicateError::new(
                e.span.0,
                format!("the argument of `{name}` is {what}"),
            )),
        };
        let kind = match name.as_str() {
            "abs" => {
                arity(1)?;
                ExprKind::Call(Func::Abs, args)
            }
            "min" | "max" => {
                arity(2)?;
                let f = if name == "min" { Func::Min } else { Func::Max };
                ExprKind::Call(f, args)
            }
            "all" | "any" | "mean" | "maxof" | "minof" => {
                arity(1)?;
                let a = match name.as_str() {
                    "all" => Agg::All,
                    "any" => Agg::Any,
                    "mean" => Agg::Mean,
                    "maxof" => Agg::MaxOf,
                    _ => Agg::MinOf,
                };
                ExprKind::Agg(a, Box::new(args.remove(0)))
            }
            "increasing" | "decreasing" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(PredicateError::new(
                        start,
                        format!("`{name}` takes an expression and optionally a sweep axis"),
                    ));
                }
                let axis = match args.get(1) {
                    Some(a) => Some(bare(a, "a sweep axis name")?),
                    None => None,
                };
                ExprKind::Trend {
                    up: name == "increasing",
                    arg: Box::new(args.remove(0)),
                    axis,
                }
            }
            "saturated" => {
                arity(1)?;
                ExprKind::Saturated(bare(&args[0], "a series name")?)
            }
            _ => {
                return Err(PredicateError::new(
                    start,
                    format!(
                        "unknown function `{name}`{}; functions: abs, min, max, all, any, mean, maxof, minof, increasing, decreasing, saturated",
                        did_you_mean(&name, FUNCTIONS.iter().copied())
                    ),
                ))
            }
        };
        Ok(self.node(kind, start))
    }
}

const FUNCTIONS: [&str; 11] = [
    "abs",
    "min",
    "max",
    "all",
    "any",
    "mean",
    "maxof",
    "minof",
    "increasing",
    "decreasing",
    "saturated",
];

/// " (did you mean `x`?)" for the known name closest to `name`
/// ([`external::spec::nearest`]), or nothing.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    external::spec::nearest(name, known)
        .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"))
}
