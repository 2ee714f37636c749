//! What a manifest declares about a program: its command, folder, files,
//! typed parameters, metrics and limits, resolved (the folder absolute, the
//! files listed). The same struct is the definition queued tasks carry to
//! workers, so it is plain serde data.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use solvers::{Kind, SolveError};
use std::path::{Path, PathBuf};

/// Default timeout of one run of the program, in seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;
/// Default limit of the program's address space (RLIMIT_AS), in MiB.
pub const DEFAULT_MEMORY_MB: u64 = 4096;
/// The smallest memory limit accepted: below it not even an interpreter starts.
pub const MIN_MEMORY_MB: u64 = 16;
/// Longest timeout accepted: a week.
pub const MAX_TIMEOUT_S: f64 = 7.0 * 86_400.0;

/// A declared program, resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// The solver's name in manifests (`series.*.solver`).
    pub name: String,
    pub kind: Kind,
    /// Bump to rerun every task of the program although no file changed.
    pub version: u32,
    /// argv. The first word is looked up on PATH unless it holds a `/`; a
    /// relative path with a `/` (in any word) is relative to `dir`.
    pub command: Vec<String>,
    /// Absolute folder the program runs in (the declaring manifest's folder).
    pub dir: PathBuf,
    /// Files (or folders) whose content enters every task key, relative to
    /// `dir` or absolute.
    pub files: Vec<String>,
    pub params: Vec<ParamSpec>,
    /// What a run with status `ok` must report, each a finite number.
    pub metrics: Vec<String>,
    pub timeout_s: f64,
    pub memory_mb: u64,
    /// One line for `repro list --solvers`.
    #[serde(default)]
    pub summary: String,
}

/// A parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    Float,
    Int,
    Bool,
    String,
}

impl ParamType {
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::Float => "float",
            ParamType::Int => "int",
            ParamType::Bool => "bool",
            ParamType::String => "string",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, ParamType::Float | ParamType::Int)
    }
}

/// One typed parameter. `min` and `max` are inclusive; `choices`, when
/// given, lists every value allowed; without `default` the value is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Json>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
}

/// Integers travel as JSON integers; a float must be exactly integral and
/// within ±2^53 to count as one (so `12.0` is `12`).
fn as_integer(v: &Json) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then_some(f as i64)
}

fn show(v: &Json) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

impl ParamSpec {
    /// `value` checked against the type, range and choices, normalised
    /// (integral numbers of an `int` become JSON integers). The error is the
    /// rule broken, without the parameter's name.
    pub fn check(&self, value: &Json) -> Result<Json, String> {
        let v = match self.ty {
            ParamType::Float => match value.as_f64() {
                Some(f) if f.is_finite() => value.clone(),
                _ => return Err(format!("must be a number (float), got {}", show(value))),
            },
            ParamType::Int => match as_integer(value) {
                Some(i) => Json::from(i),
                None => return Err(format!("must be a whole number (int), got {}", show(value))),
            },
            ParamType::Bool => match value {
                Json::Bool(_) => value.clone(),
                _ => return Err(format!("must be true or false (bool), got {}", show(value))),
            },
            ParamType::String => match value {
                Json::String(_) => value.clone(),
                _ => return Err(format!("must be a string, got {}", show(value))),
            },
        };
        if let Some(x) = v.as_f64().filter(|_| self.ty.numeric()) {
            if let Some(min) = self.min.filter(|m| x < *m) {
                return Err(format!("must be >= {min}, got {}", show(&v)));
            }
            if let Some(max) = self.max.filter(|m| x > *m) {
                return Err(format!("must be <= {max}, got {}", show(&v)));
            }
        }
        if !self.choices.is_empty() && !self.choices.iter().any(|c| same(c, &v)) {
            let list: Vec<String> = self.choices.iter().map(|c| c.to_string()).collect();
            return Err(format!(
                "must be one of {}, got {}",
                list.join(", "),
                show(&v)
            ));
        }
        Ok(v)
    }

    /// The declaration itself: bounds only on numbers, `min <= max`, choices
    /// and default of the parameter's type and within its rules. The error
    /// names the field (`min`, `choices`, `default`, ...) and the rule.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (field, b) in [("min", self.min), ("max", self.max)] {
            if let Some(b) = b {
                if !self.ty.numeric() {
                    return Err((
                        field,
                        format!("only a float or int parameter has a {field}"),
                    ));
                }
                if !b.is_finite() {
                    return Err((field, "must be a finite number".into()));
                }
            }
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            if lo > hi {
                return Err(("max", format!("{hi} is below min {lo}")));
            }
        }
        let plain = ParamSpec {
            choices: Vec::new(),
            ..self.clone()
        };
        for c in &self.choices {
            plain
                .check(c)
                .map_err(|e| ("choices", format!("{}: {e}", show(c))))?;
        }
        if let Some(d) = &self.default {
            self.check(d).map_err(|e| ("default", e))?;
        }
        Ok(())
    }

    /// What `repro list --solvers` says about the parameter.
    pub fn describe(&self) -> String {
        let mut s = self.ty.as_str().to_string();
        match (self.min, self.max) {
            (Some(lo), Some(hi)) => s.push_str(&format!(", {lo} to {hi}")),
            (Some(lo), None) => s.push_str(&format!(", >= {lo}")),
            (None, Some(hi)) => s.push_str(&format!(", <= {hi}")),
            (None, None) => {}
        }
        if !self.choices.is_empty() {
            let list: Vec<String> = self.choices.iter().map(|c| c.to_string()).collect();
            s.push_str(&format!(", one of {}", list.join(", ")));
        }
        match &self.default {
            Some(d) => s.push_str(&format!(", default {d}")),
            None => s.push_str(", required"),
        }
        if !self.doc.is_empty() {
            s.push_str(": ");
            s.push_str(&self.doc);
        }
        s
    }
}

/// Equal as values: numbers compare numerically (`2` is `2.0`).
fn same(a: &Json, b: &Json) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The words of `command` that name existing files relative to `dir` (the
/// default `files`). Absolute paths are left out: they are usually the
/// machine's own tools (`/usr/bin/env`), which differ between machines.
pub fn default_files(command: &[String], dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in command {
        let p = Path::new(w);
        if p.is_relative() && !w.is_empty() && dir.join(p).is_file() && !out.contains(w) {
            out.push(w.clone());
        }
    }
    out
}

/// The one "did you mean" helper of repro, defined beside the solvers'
/// parameter checks (the lowest crate that needs it).
pub use solvers::params::nearest;

impl Program {
    pub fn param(&self, name: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The parameters a run receives: each given one checked, unknown ones
    /// refused, defaults filled in, required ones present.
    pub fn check_params(&self, params: &Json) -> Result<Map<String, Json>, SolveError> {
        let given = params
            .as_object()
            .ok_or_else(|| SolveError::BadParams("the parameters must be a JSON object".into()))?;
        let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let mut out = Map::new();
        for (k, v) in given {
            let Some(spec) = self.param(k) else {
                let hint = nearest(k, known.iter().copied())
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                return Err(SolveError::BadParams(format!(
                    "unknown parameter `{k}` of `{}`; {hint}its parameters: {}",
                    self.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            };
            out.insert(
                k.clone(),
                spec.check(v).map_err(|e| SolveError::param(k, e))?,
            );
        }
        for p in &self.params {
            if out.contains_key(&p.name) {
                continue;
            }
            match &p.default {
                Some(d) => {
                    out.insert(p.name.clone(), d.clone());
                }
                None => {
                    return Err(SolveError::param(
                        &p.name,
                        "is required (the declaration gives no default)",
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The command as one line, for messages.
    pub fn command_line(&self) -> String {
        self.command
            .iter()
            .map(|w| {
                if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '\'') {
                    format!("'{}'", w.replace('\'', "'\\''"))
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(ty: ParamType) -> ParamSpec {
        ParamSpec {
            name: "x".into(),
            ty,
            min: None,
            max: None,
            choices: Vec::new(),
            default: None,
            doc: String::new(),
        }
    }

    #[test]
    fn types_ranges_and_choices() {
        let mut f = p(ParamType::Float);
        f.min = Some(0.0);
        assert_eq!(f.check(&json!(1.5)).unwrap(), json!(1.5));
        assert_eq!(f.check(&json!(2)).unwrap(), json!(2));
        assert!(f.check(&json!(-1)).unwrap_err().contains(">= 0"));
        assert!(f.check(&json!("1")).unwrap_err().contains("number"));
        let mut i = p(ParamType::Int);
        i.max = Some(10.0);
        assert_eq!(i.check(&json!(12.0 - 4.0)).unwrap(), json!(8));
        assert!(i.check(&json!(2.5)).unwrap_err().contains("whole"));
        assert!(i.check(&json!(11)).unwrap_err().contains("<= 10"));
        assert!(p(ParamType::Bool).check(&json!(1)).is_err());
        let mut s = p(ParamType::String);
        s.choices = vec![json!("fifo"), json!("lifo")];
        assert!(s.check(&json!("fifo")).is_ok());
        assert!(s.check(&json!("ps")).unwrap_err().contains("one of"));
    }

    #[test]
    fn declarations_are_checked() {
        let mut s = p(ParamType::String);
        s.min = Some(1.0);
        assert_eq!(s.validate().unwrap_err().0, "min");
        let mut f = p(ParamType::Float);
        f.min = Some(2.0);
        f.max = Some(1.0);
        assert_eq!(f.validate().unwrap_err().0, "max");
        f.max = Some(3.0);
        f.default = Some(json!(5));
        assert_eq!(f.validate().unwrap_err().0, "default");
        let mut i = p(ParamType::Int);
        i.choices = vec![json!(1), json!(1.5)];
        assert_eq!(i.validate().unwrap_err().0, "choices");
    }

    #[test]
    fn params_are_filled_and_refused() {
        let mut n = p(ParamType::Int);
        n.name = "n".into();
        n.default = Some(json!(10));
        let mut lambda = p(ParamType::Float);
        lambda.name = "lambda".into();
        let prog = Program {
            name: "q".into(),
            kind: Kind::Simulation,
            version: 1,
            command: vec!["python3".into(), "q.py".into()],
            dir: PathBuf::from("/"),
            files: vec![],
            params: vec![lambda, n],
            metrics: vec!["L".into()],
            timeout_s: 1.0,
            memory_mb: 64,
            summary: String::new(),
        };
        let ok = prog.check_params(&json!({"lambda": 0.5})).unwrap();
        assert_eq!(Json::Object(ok), json!({"lambda": 0.5, "n": 10}));
        let e = prog.check_params(&json!({"lamda": 0.5})).unwrap_err();
        assert!(e.to_string().contains("did you mean `lambda`"), "{e}");
        let e = prog.check_params(&json!({"n": 3})).unwrap_err();
        assert!(e.to_string().contains("`lambda`: is required"), "{e}");
    }
}
