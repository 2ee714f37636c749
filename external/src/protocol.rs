//! The protocol between repro and a program: one JSON object on stdin,
//!
//! ```json
//! {"solver": "mm1py", "params": {"lambda": 0.5, "mu": 1, "n": 10},
//!  "seed": 123, "fidelity": "full", "replication": 0}
//! ```
//!
//! and one JSON object on stdout,
//!
//! ```json
//! {"metrics": {"L": 1.23, "W": {"value": 0.5, "half_width": 0.01, "n": 10}},
//!  "status": "ok", "note": "...", "series": {"queue": [[0.0, 1.0], [1.0, 2.0]]}}
//! ```
//!
//! `status` (ok, saturated, undefined), `note` and `series` are optional. With
//! status ok every declared metric must be there; no other metric may be; every
//! number must be finite.

use serde_json::{json, Map, Value as Json};
use solvers::{Metric, Outcome, Status, TaskContext};

/// Longest note kept.
pub const MAX_NOTE_CHARS: usize = 4000;

/// The request written to the program's stdin (one line).
pub fn request(solver: &str, params: &Map<String, Json>, ctx: &TaskContext) -> Vec<u8> {
    let mut v = serde_json::to_vec(&json!({
        "solver": solver,
        "params": params,
        "seed": ctx.seed,
        "fidelity": ctx.fidelity.as_str(),
        "replication": ctx.replication,
    }))
    .expect("the request serialises");
    v.push(b'\n');
    v
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn preview(text: &str) -> String {
    let t = text.trim();
    let mut s: String = t.chars().take(120).collect();
    if t.chars().count() > 120 {
        s.push('…');
    }
    format!("{s:?}")
}

fn finite(what: &str, v: &Json) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!("{what} is {}, not a finite number", kind_of(v))),
    }
}

fn metric(name: &str, v: &Json) -> Result<Metric, String> {
    match v {
        Json::Number(_) => Ok(Metric::exact(finite(&format!("metric `{name}`"), v)?)),
        Json::Object(m) => {
            for k in m.keys() {
                if !matches!(k.as_str(), "value" | "half_width" | "n") {
                    return Err(format!(
                        "metric `{name}` has a key `{k}`; a metric is a number or {{\"value\", \"half_width\", \"n\"}}"
                    ));
                }
            }
            let value = finite(
                &format!("metric `{name}`.value"),
                m.get("value").unwrap_or(&Json::Null),
            )?;
            let half_width = match m.get("half_width") {
                None | Some(Json::Null) => None,
                Some(h) => {
                    let h = finite(&format!("metric `{name}`.half_width"), h)?;
                    if h < 0.0 {
                        return Err(format!("metric `{name}`.half_width is negative ({h})"));
                    }
                    Some(h)
                }
            };
            let n = match m.get("n") {
                None | Some(Json::Null) => None,
                Some(n) => Some(n.as_u64().ok_or_else(|| {
                    format!("metric `{name}`.n must be a whole number >= 0, got {n}")
                })?),
            };
            Ok(Metric {
                value,
                half_width,
                n,
            })
        }
        other => Err(format!(
            "metric `{name}` is {}; a metric is a number or {{\"value\", \"half_width\", \"n\"}}",
            kind_of(other)
        )),
    }
}

/// The program's stdout as an [`Outcome`], checked against the declared
/// metrics. The error says what is wrong, for the task's message.
pub fn outcome(stdout: &[u8], declared: &[String]) -> Result<Outcome, String> {
    let text = String::from_utf8_lossy(stdout);
    if text.trim().is_empty() {
        return Err(
            "it printed nothing on stdout; it must print one JSON object \
                    such as {\"metrics\": {...}}"
                .into(),
        );
    }
    let v: Json = serde_json::from_str(&text).map_err(|e| {
        let mut m = format!(
            "its stdout is not one JSON object ({e}); it begins {}",
            preview(&text)
        );
        if ["NaN", "Infinity"].iter().any(|t| text.contains(t)) {
            m.push_str(
                "; NaN and Infinity are not JSON: report a point where the model is not \
                 defined as {\"status\": \"undefined\", \"note\": \"why\"}",
            );
        } else {
            m.push_str("; print diagnostics to stderr, not stdout");
        }
        m
    })?;
    let Json::Object(obj) = v else {
        return Err(format!(
            "its stdout is {}, not a JSON object with \"metrics\"",
            kind_of(&v)
        ));
    };
    for k in obj.keys() {
        if !matches!(k.as_str(), "metrics" | "status" | "note" | "series") {
            return Err(format!(
                "its output has a key `{k}`; the keys are metrics, status, note and series"
            ));
        }
    }
    let status = match obj.get("status") {
        None | Some(Json::Null) => Status::Ok,
        Some(Json::String(s)) => match s.as_str() {
            "ok" => Status::Ok,
            "saturated" => Status::Saturated,
            "undefined" => Status::Undefined,
            other => {
                return Err(format!(
                    "status {other:?} is not one of \"ok\", \"saturated\", \"undefined\""
                ))
            }
        },
        Some(other) => return Err(format!("status is {}, not a string", kind_of(other))),
    };
    let note = match obj.get("note") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(if s.chars().count() > MAX_NOTE_CHARS {
            format!("{}…", s.chars().take(MAX_NOTE_CHARS).collect::<String>())
        } else {
            s.clone()
        }),
        Some(other) => return Err(format!("note is {}, not a string", kind_of(other))),
    };
    let mut out = Outcome {
        status,
        note,
        ..Outcome::default()
    };
    match obj.get("metrics") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => {
            for (k, v) in m {
                if !declared.iter().any(|d| d == k) {
                    return Err(format!(
                        "it reported metric `{k}`, which the declaration does not list (metrics: {})",
                        declared.join(", ")
                    ));
                }
                out.metrics.insert(k.clone(), metric(k, v)?);
            }
        }
        Some(other) => return Err(format!("metrics is {}, not an object", kind_of(other))),
    }
    if status == Status::Ok {
        let missing: Vec<&str> = declared
            .iter()
            .filter(|d| !out.metrics.contains_key(*d))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
            let (noun, verb) = if missing.len() > 1 {
                ("metrics", "are")
            } else {
                ("metric", "is")
            };
            return Err(format!(
                "{noun} {} {verb} missing from its output (status ok reports every declared \
                 metric; a point outside the model's domain is \
                 {{\"status\": \"undefined\", \"note\": \"why\"}})",
                list.join(", ")
            ));
        }
    }
    match obj.get("series") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => {
            for (k, v) in m {
                let Json::Array(points) = v else {
                    return Err(format!(
                        "series `{k}` is {}, not an array of [x, y] pairs",
                        kind_of(v)
                    ));
                };
                let mut pts = Vec::with_capacity(points.len());
                for (i, p) in points.iter().enumerate() {
                    let pair = p
                        .as_array()
                        .filter(|a| a.len() == 2)
                        .ok_or_else(|| format!("series `{k}` item {i} is not an [x, y] pair"))?;
                    pts.push((
                        finite(&format!("series `{k}` item {i} x"), &pair[0])?,
                        finite(&format!("series `{k}` item {i} y"), &pair[1])?,
                    ));
                }
                out.series.insert(k.clone(), pts);
            }
        }
        Some(other) => return Err(format!("series is {}, not an object", kind_of(other))),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d() -> Vec<String> {
        vec!["L".into(), "W".into()]
    }

    #[test]
    fn a_good_answer() {
        let o = outcome(
            br#" {"metrics": {"L": 1.5, "W": {"value": 2, "half_width": 0.1, "n": 10}},
                 "series": {"q": [[0, 1], [1, 2.5]]}, "note": "fine"}
"#,
            &d(),
        )
        .unwrap();
        assert_eq!(o.status, Status::Ok);
        assert_eq!(o.get("L"), Some(1.5));
        assert_eq!(o.metrics["W"].half_width, Some(0.1));
        assert_eq!(o.series["q"], vec![(0.0, 1.0), (1.0, 2.5)]);
    }

    #[test]
    fn undefined_needs_no_metrics() {
        let o = outcome(br#"{"status": "undefined", "note": "rho >= 1"}"#, &d()).unwrap();
        assert_eq!(o.status, Status::Undefined);
        assert!(o.metrics.is_empty());
    }

    #[test]
    fn bad_answers_say_what_is_wrong() {
        let cases: [(&[u8], &str); 10] = [
            (b"", "printed nothing"),
            (b"hello\n{}", "not one JSON object"),
            (br#"{"metrics": {"L": NaN, "W": 1}}"#, "NaN and Infinity"),
            (br#"{"metrics": {"L": 1}}"#, "`W` is missing"),
            (br#"{"metrics": {"L": 1, "W": 2, "X": 3}}"#, "metric `X`"),
            (br#"{"metrics": {"L": "1", "W": 2}}"#, "a string"),
            (
                br#"{"metrics": {"L": 1, "W": {"value": null}}}"#,
                "not a finite",
            ),
            (br#"{"metric": {}}"#, "a key `metric`"),
            (
                br#"{"metrics": {"L": 1, "W": 1}, "status": "fine"}"#,
                "status",
            ),
            (b"[1, 2]", "an array"),
        ];
        for (out, want) in cases {
            let e = outcome(out, &d()).unwrap_err();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }
}
