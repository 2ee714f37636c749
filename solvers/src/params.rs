//! Parameter parsing and validation helpers shared by every solver.

use crate::SolveError;
use serde::de::DeserializeOwned;

/// Deserialises a solver's typed parameter struct (which should use
/// `#[serde(deny_unknown_fields)]`), turning serde's message into a `SolveError`.
/// An error inside a parameter names it (`parameter `K`: invalid type:
/// string "NaN", expected a number`; issue 32: serde's own message named
/// none); unknown and missing keys keep serde's message, which names them.
///
/// An unknown key says which known one it is closest to, and one nested in
/// an object parameter says where (`parameter `flows[0]`: unknown field
/// `srcx` (did you mean `src`?), expected one of ...`; issue 32).
pub fn parse<T: DeserializeOwned>(params: &serde_json::Value) -> Result<T, SolveError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let mut path = e.path().to_string();
        let msg = with_suggestion(&plain_serde_message(&e.inner().to_string()));
        if let Some(name) = unknown_name(&msg) {
            // The path may end at the unknown key itself.
            if let Some(parent) = path.strip_suffix(&format!(".{name}")) {
                path = parent.to_string();
            } else if path == name {
                path.clear();
            }
        } else if msg.starts_with("missing field") {
            path.clear();
        }
        if path.is_empty() || path == "." {
            SolveError::BadParams(msg)
        } else {
            SolveError::BadParams(format!("parameter `{path}`: {msg}"))
        }
    })
}

/// The key of serde's "unknown field `x`, expected ..." message.
fn unknown_name(msg: &str) -> Option<&str> {
    let rest = msg.strip_prefix("unknown field `")?;
    Some(&rest[..rest.find('`')?])
}

/// serde's "unknown field `srcx`, expected one of `src`, `dst`" with the
/// nearest expected name added: "unknown field `srcx` (did you mean
/// `src`?), expected one of ...".
fn with_suggestion(msg: &str) -> String {
    let Some(name) = unknown_name(msg) else {
        return msg.to_string();
    };
    let head = format!("unknown field `{name}`");
    let expected = &msg[head.len()..];
    let known = expected.split('`').skip(1).step_by(2);
    match nearest(name, known) {
        Some(k) => format!("{head} (did you mean `{k}`?){expected}"),
        None => msg.to_string(),
    }
}

/// The known name closest to a misspelt one, for every "did you mean" of
/// repro (parameters, experiment ids, metrics, series, functions): the one
/// at the smallest case-insensitive Damerau-Levenshtein distance (a swap of
/// two letters is one edit), if that is at most 2 or a third of the name's
/// length and less than the longer name's length (so a one-letter name is
/// not "corrected" into another), or else the first known name containing
/// it (`yan-4` finds `yan-4.9`); ties go to the name first in sort order.
pub fn nearest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let n = name.chars().count();
    if n == 0 || n > 64 {
        return None; // longer than any name: no suggestion, and no quadratic cost
    }
    let lower = name.to_lowercase();
    known
        .into_iter()
        .filter_map(|k| {
            let d = strsim::damerau_levenshtein(&lower, &k.to_lowercase());
            let close = d <= 2.max(n / 3) && d < n.max(k.chars().count());
            (close || k.contains(name)).then_some((d, k))
        })
        .min()
        .map(|(_, k)| k)
}

/// serde's message in the user's words: the names of the types it was
/// reading (`expected struct RawFlow`, `untagged enum OneOrMany`, `f64`)
/// become what the user writes (a mapping, a number). Used for solver
/// parameters and for manifests (issue 32: `RawManifest` and `RawPrecision`
/// reached users).
pub fn plain_serde_message(msg: &str) -> String {
    const WORDS: [(&str, &str); 13] = [
        ("f64", "a number"),
        ("f32", "a number"),
        ("u8", "a whole number"),
        ("u16", "a whole number"),
        ("u32", "a whole number"),
        ("u64", "a whole number"),
        ("usize", "a whole number"),
        ("i8", "a whole number"),
        ("i16", "a whole number"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("isize", "a whole number"),
        ("char", "a single character"),
    ];
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while !rest.is_empty() {
        // A whole word starting here (the previous character is no identifier's).
        let at_word = !out.chars().next_back().is_some_and(ident);
        let word: &str = &rest[..rest.find(|c: char| !ident(c)).unwrap_or(rest.len())];
        if at_word && !word.is_empty() {
            let after = &rest[word.len()..];
            let named = |kw: &str| -> Option<usize> {
                if word != kw || !after.starts_with(' ') {
                    return None;
                }
                let name = &after[1..];
                let n = name.find(|c: char| !ident(c)).unwrap_or(name.len());
                (n > 0).then_some(word.len() + 1 + n)
            };
            const UNTAGGED: &str = "any variant of untagged ";
            if out.ends_with(UNTAGGED) {
                if let Some(n) = named("enum") {
                    out.truncate(out.len() - UNTAGGED.len());
                    out.push_str("any accepted form");
                    rest = &rest[n..];
                    continue;
                }
            }
            if let Some(n) = named("struct") {
                out.push_str("a mapping");
                rest = &rest[n..];
                continue;
            }
            if let Some(n) = named("enum") {
                out.push_str("one of the accepted names");
                rest = &rest[n..];
                continue;
            }
            if out.ends_with("expected ") {
                if let Some((_, plain)) = WORDS.iter().find(|(w, _)| *w == word) {
                    out.push_str(plain);
                    rest = &rest[word.len()..];
                    continue;
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A number as a message shows it: plain in [1e-4, 1e9), else in
/// scientific notation (Rust prints 1e308 with 309 digits).
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` must be finite and > 0.
pub fn positive(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() {
        return Err(SolveError::param(
            name,
            format!("must be a finite number, got {}", show(x)),
        ));
    }
    if x <= 0.0 {
        return Err(SolveError::param(
            name,
            format!("must be > 0, got {}", show(x)),
        ));
    }
    Ok(x)
}

/// `x` must lie in the closed interval [lo, hi] (`unit` completes the message).
pub fn within(name: &str, x: f64, (lo, hi): (f64, f64), unit: &str) -> Result<f64, SolveError> {
    if (lo..=hi).contains(&x) {
        return Ok(x);
    }
    Err(SolveError::param(
        name,
        format!(
            "must lie in [{}, {}]{unit}, got {}",
            show(lo),
            show(hi),
            show(x)
        ),
    ))
}

/// Rates and times the analytic queue models accept, in whatever time unit
/// the manifest uses (issue 32 item 5). Outside it their numerics leave
/// f64's range (a ρ^K, a uniformisation rate, an exponential of a rate ×
/// time) and used to end in "not finite" or "GTH normalisation failed"
/// naming no parameter; 24 decades between the slowest and fastest value are
/// far more than any model of the papers needs (their rates span 6).
pub const MODEL_RANGE: (f64, f64) = (1e-12, 1e12);

/// A rate or time of an analytic model: finite, > 0 and within
/// [`MODEL_RANGE`]; the error names the parameter, its value and the range.
pub fn model_value(name: &str, x: f64) -> Result<f64, SolveError> {
    positive(name, x)?;
    within(
        name,
        x,
        MODEL_RANGE,
        " for the model (rates and times in one time unit: rescale the unit if the values are far from 1)",
    )
}

/// As [`model_value`], but 0 (an absent process) is also accepted.
pub fn model_value_or_zero(name: &str, x: f64) -> Result<f64, SolveError> {
    if x == 0.0 {
        return Ok(0.0);
    }
    non_negative(name, x)?;
    model_value(name, x)
}

/// `x` must be finite and >= 0.
pub fn non_negative(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || x < 0.0 {
        return Err(SolveError::param(
            name,
            format!("must be a finite number >= 0, got {}", show(x)),
        ));
    }
    Ok(x)
}

/// `x` must be finite and >= `min`.
pub fn at_least(name: &str, x: f64, min: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || x < min {
        return Err(SolveError::param(
            name,
            format!("must be a finite number >= {min}, got {}", show(x)),
        ));
    }
    Ok(x)
}

/// `x` must be a probability in [0, 1].
pub fn probability(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || !(0.0..=1.0).contains(&x) {
        return Err(SolveError::param(
            name,
            format!("must lie in [0, 1], got {}", show(x)),
        ));
    }
    Ok(x)
}

/// An integer count given as a JSON number: must be a whole number >= `min`.
/// Accepts `12` and `12.0`; refuses `12.5`, negatives and NaN.
pub fn count(name: &str, x: f64, min: u64) -> Result<usize, SolveError> {
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(SolveError::param(
            name,
            format!("must be a whole number, got {}", show(x)),
        ));
    }
    if x < min as f64 {
        return Err(SolveError::param(
            name,
            format!("must be >= {min}, got {}", show(x)),
        ));
    }
    if x > 1e9 {
        return Err(SolveError::param(
            name,
            format!("is unreasonably large ({x})"),
        ));
    }
    Ok(x as usize)
}

/// Largest buffer capacity (K, N) a queue accepts: the exact solutions and
/// the simulators keep per-level arrays, so capacity is memory.
pub const MAX_CAPACITY: usize = 1_000_000;

/// A buffer capacity: a whole number in [min, [`MAX_CAPACITY`]].
pub fn capacity(name: &str, x: f64, min: u64) -> Result<usize, SolveError> {
    let k = count(name, x, min)?;
    if k > MAX_CAPACITY {
        return Err(SolveError::param(
            name,
            format!("must be <= {MAX_CAPACITY} (the per-level arrays' memory bound), got {k}"),
        ));
    }
    Ok(k)
}

/// Coarsest float resolution of simulated time a run may reach, relative to
/// the mean interval of its fastest process: at 1 that interval is still one
/// float step at the end of the run. Coarser, its intervals round to zero.
/// (A process that fast is usually a negligible one, such as a phase of
/// 10⁻⁹ s: `hardening.rs` keeps `phi1: 1e9` answered.)
pub const MAX_TIME_QUANTUM: f64 = 1.0;

/// Checks that a run's simulated time stays resolved: at time T a float
/// steps by T·2⁻⁵², so a run over `horizon` time units with a process of
/// rate r needs horizon·2⁻⁵²·r ≤ [`MAX_TIME_QUANTUM`]. Beyond it, that
/// process's intervals round to zero and the run changes its model (or,
/// when a whole phase rounds away, never ends: the fuzz harness found an
/// MMPP whose on-phase of 1/64 vanished after 10¹⁷ simulated seconds).
/// `rates` are every rate with its parameter name; the error names the
/// slowest one, which is what stretches the horizon.
pub fn sim_time_resolution(horizon: f64, rates: &[(&str, f64)]) -> Result<(), SolveError> {
    let live = rates.iter().filter(|r| r.1 > 0.0);
    let fastest = live.clone().map(|r| r.1).fold(0.0, f64::max);
    let quantum = horizon * f64::EPSILON * fastest;
    if quantum.is_finite() && quantum <= MAX_TIME_QUANTUM {
        return Ok(());
    }
    let slowest = live
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("rates", |r| r.0);
    Err(SolveError::param(
        slowest,
        format!(
            "the run would simulate about {horizon:.1e} time units, where the float resolution ({:.1e}) is too coarse for the fastest process (rate {fastest:.1e}); the limit is one float step per mean interval: shorten the run or bring the rates closer together",
            horizon * f64::EPSILON
        ),
    ))
}

/// Rates a simulation accepts: simulated times stay far from f64 overflow
/// and underflow (a rate of 1e-308 makes the next event time infinite).
pub const MIN_SIM_RATE: f64 = 1e-100;
pub const MAX_SIM_RATE: f64 = 1e100;
/// Most events one simulation task may be asked for: at tens of millions of
/// events per second, a few minutes. Extreme rate ratios are refused up
/// front instead of running for hours.
pub const MAX_EVENTS: f64 = 1e10;

/// Checks the work a simulation would do before it starts and returns the
/// event budget its loop enforces (a safety net four times the estimate).
///
/// `units` is what the run length counts (customers, departures), `per_unit`
/// the expected events per unit (from the rates), `rates` every rate with its
/// parameter name, and `dominant` the parameter to name when the estimate is
/// over the limit.
pub fn sim_budget(
    units: f64,
    per_unit: f64,
    rates: &[(&str, f64)],
    dominant: &str,
) -> Result<u64, SolveError> {
    for &(name, r) in rates {
        sim_rate(name, r)?;
    }
    let events = units * per_unit;
    if !(events.is_finite() && events <= MAX_EVENTS) {
        return Err(SolveError::param(
            dominant,
            format!(
                "the run would take about {events:.1e} events ({units:.1e} counted units × {per_unit:.1e} events each); the limit is {MAX_EVENTS:.0e}: shorten the run (warmup, batches, batch_len) or bring the rates closer together"
            ),
        ));
    }
    Ok((4.0 * events + 1e6) as u64)
}

/// A rate of a simulation: 0 (an absent process) or within
/// [[`MIN_SIM_RATE`], [`MAX_SIM_RATE`]].
pub fn sim_rate(name: &str, r: f64) -> Result<f64, SolveError> {
    if r != 0.0 && !(MIN_SIM_RATE..=MAX_SIM_RATE).contains(&r) {
        return Err(SolveError::param(
            name,
            format!(
                "{r:e} is outside [{MIN_SIM_RATE:e}, {MAX_SIM_RATE:e}], the rates a simulation accepts (simulated times must stay finite); rescale the time unit"
            ),
        ));
    }
    Ok(r)
}

/// The error a simulation loop returns when it exceeds its budget from
/// [`sim_budget`] (the estimate was wrong by more than a factor of four).
pub fn over_budget(budget: u64) -> SolveError {
    SolveError::Numerical(format!(
        "the simulation exceeded its budget of {budget} events (four times its estimate); refusing to run on"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32 item 5: serde's messages named internal types and no parameter.
    #[test]
    fn serde_messages_name_no_internal_type() {
        for (msg, want) in [
            (
                "invalid type: string \"NaN\", expected f64",
                "invalid type: string \"NaN\", expected a number",
            ),
            (
                "invalid type: sequence, expected struct RawManifest",
                "invalid type: sequence, expected a mapping",
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "invalid value: integer `-1`, expected a whole number",
            ),
            (
                "data did not match any variant of untagged enum OneOrMany",
                "data did not match any accepted form",
            ),
            (
                "invalid type: map, expected enum FigureKind",
                "invalid type: map, expected one of the accepted names",
            ),
            // Words that only look like type names stay.
            (
                "unknown field `f64x`, expected one of `u32`, `struct`",
                "unknown field `f64x`, expected one of `u32`, `struct`",
            ),
            ("missing field `lambda`", "missing field `lambda`"),
        ] {
            assert_eq!(plain_serde_message(msg), want, "{msg}");
        }
    }

    #[test]
    fn a_type_error_names_its_parameter() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct P {
            k: f64,
            #[serde(default)]
            flows: Vec<F>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct F {
            src: f64,
        }
        let e = |v: serde_json::Value| match parse::<P>(&v) {
            Err(SolveError::BadParams(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            e(serde_json::json!({"k": "NaN"})),
            "parameter `k`: invalid type: string \"NaN\", expected a number"
        );
        assert_eq!(
            e(serde_json::json!({"k": 1, "flows": [{"src": 1}, {"src": []}]})),
            "parameter `flows[1].src`: invalid type: sequence, expected a number"
        );
        assert_eq!(
            e(serde_json::json!({"k": 1, "flows": 3})),
            "parameter `flows`: invalid type: integer `3`, expected a sequence"
        );
        // Unknown and missing keys: serde's message, which names them.
        assert!(e(serde_json::json!({"k": 1, "bogus": 2})).starts_with("unknown field `bogus`"));
        assert_eq!(e(serde_json::json!({})), "missing field `k`");
    }

    /// Issue 32 item 5: an unknown key nested in an object parameter said
    /// neither where it was nor what was meant.
    #[test]
    fn an_unknown_key_says_where_and_the_nearest_name() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct P {
            lambda: f64,
            #[serde(default)]
            flows: Vec<F>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct F {
            src: f64,
            dst: f64,
        }
        let e = |v: serde_json::Value| match parse::<P>(&v) {
            Err(SolveError::BadParams(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            e(serde_json::json!({"lambda": 1, "flows": [{"src": 1, "dst": 2}, {"srcx": 1}]})),
            "parameter `flows[1]`: unknown field `srcx` (did you mean `src`?), expected `src` or `dst`"
        );
        assert_eq!(
            e(serde_json::json!({"lamda": 1})),
            "unknown field `lamda` (did you mean `lambda`?), expected `lambda` or `flows`"
        );
        // Nothing near: serde's message alone.
        assert_eq!(
            e(serde_json::json!({"lambda": 1, "zzzzzz": 1})),
            "unknown field `zzzzzz`, expected `lambda` or `flows`"
        );
    }
}
