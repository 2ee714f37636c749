//! Values: YAML to canonical JSON (integral numbers as integers, so `12` and
//! `12.0` name one task), parameter mappings, and the checks on ids, names and
//! free text.

use super::place::Ctx;
use super::yaml::{Mapping, Value as Yaml};
use super::{limits, ManifestError};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// `12` and `12.0` name the same task. Over-long strings are refused (tags
/// are refused where the manifest is read, `place.rs`).
pub fn yaml_to_json(v: &Yaml) -> Result<Json, String> {
    Ok(match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else {
                let f = n.as_f64().ok_or("number out of range")?;
                canonical_number(f)?
            }
        }
        Yaml::String(s) => {
            if s.chars().count() > limits::MAX_STRING_CHARS {
                return Err(format!(
                    "a string of {} characters; the limit is {}",
                    s.chars().count(),
                    limits::MAX_STRING_CHARS
                ));
            }
            Json::String(s.clone())
        }
        Yaml::Sequence(seq) => Json::Array(seq.iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let k = k.as_str().ok_or("mapping keys must be strings")?;
                out.insert(k.to_string(), yaml_to_json(v)?);
            }
            Json::Object(out)
        }
    })
}

pub fn canonical_number(f: f64) -> Result<Json, String> {
    if !f.is_finite() {
        return Err(format!("{f} is not a finite number"));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Ok(Json::from(f as i64))
    } else {
        Ok(Json::from(f))
    }
}

pub(super) fn mapping_to_params(
    ctx: &Ctx,
    key: &str,
    m: &Mapping,
) -> Result<BTreeMap<String, Json>, ManifestError> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let k = k
            .as_str()
            .ok_or_else(|| ctx.err(key, "parameter names must be strings"))?;
        check_name(ctx, &format!("{key}.{k}"), k)?;
        let v = yaml_to_json(v).map_err(|e| ctx.err(&format!("{key}.{k}"), e))?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// Ids that become file names or keys: `[A-Za-z0-9][A-Za-z0-9._-]*`, at most
/// [`limits::MAX_ID_CHARS`] characters, so `../../x` or an empty id never
/// reaches the renderer.
pub(super) fn check_id(ctx: &Ctx, key: &str, id: &str) -> Result<(), ManifestError> {
    let ok_first = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let ok_rest = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok_first || !ok_rest {
        return Err(ctx.err(
            key,
            format!(
                "`{}` is not a valid id: it must start with a letter or digit and contain only letters, digits, `-`, `_` and `.`",
                shorten(id)
            ),
        ));
    }
    if id.chars().count() > limits::MAX_ID_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "id of {} characters; the limit is {}",
                id.chars().count(),
                limits::MAX_ID_CHARS
            ),
        ));
    }
    Ok(())
}

/// Parameter, axis and metric names: any text, but short.
pub(super) fn check_name(ctx: &Ctx, key: &str, name: &str) -> Result<(), ManifestError> {
    let n = name.chars().count();
    if n == 0 || n > limits::MAX_ID_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "a name of {n} characters; names have 1 to {} characters",
                limits::MAX_ID_CHARS
            ),
        ));
    }
    Ok(())
}

pub(super) fn check_text(ctx: &Ctx, key: &str, text: &str) -> Result<(), ManifestError> {
    let n = text.chars().count();
    if n > limits::MAX_STRING_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "a string of {n} characters; the limit is {}",
                limits::MAX_STRING_CHARS
            ),
        ));
    }
    Ok(())
}

pub(super) fn shorten(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}
