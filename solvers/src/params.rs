//! Parameter parsing and validation helpers shared by every solver.

use crate::SolveError;
use serde::de::DeserializeOwned;

/// Deserialises a solver's typed parameter struct (which should use
/// `#[serde(deny_unknown_fields)]`), turning serde's message into a `SolveError`.
pub fn parse<T: DeserializeOwned>(params: &serde_json::Value) -> Result<T, SolveError> {
    serde_json::from_value(params.clone()).map_err(|e| SolveError::BadParams(e.to_string()))
}

/// `x` must be finite and > 0.
pub fn positive(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() {
        return Err(SolveError::param(
            name,
            format!("must be a finite number, got {x}"),
        ));
    }
    if x <= 0.0 {
        return Err(SolveError::param(name, format!("must be > 0, got {x}")));
    }
    Ok(x)
}

/// `x` must be finite and >= 0.
pub fn non_negative(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || x < 0.0 {
        return Err(SolveError::param(
            name,
            format!("must be a finite number >= 0, got {x}"),
        ));
    }
    Ok(x)
}

/// `x` must be finite and >= `min`.
pub fn at_least(name: &str, x: f64, min: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || x < min {
        return Err(SolveError::param(
            name,
            format!("must be a finite number >= {min}, got {x}"),
        ));
    }
    Ok(x)
}

/// `x` must be a probability in [0, 1].
pub fn probability(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || !(0.0..=1.0).contains(&x) {
        return Err(SolveError::param(
            name,
            format!("must lie in [0, 1], got {x}"),
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
            format!("must be a whole number, got {x}"),
        ));
    }
    if x < min as f64 {
        return Err(SolveError::param(
            name,
            format!("must be >= {min}, got {x}"),
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
