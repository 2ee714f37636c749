//! Where things are in a manifest, from the YAML parser itself: every key
//! and list item by its dotted path (`figures.2.series`) with its line and
//! column, and serde-saphyr's errors (which carry the line and column of the
//! value or key they are about) turned into [`ManifestError`]s with file,
//! line, column and key.
//!
//! The places are read from the parser's events (serde-saphyr's own parser,
//! `granit_parser`), so a key is found where the parser found it, in block
//! or flow style, however lists and mappings are nested.

use super::ManifestError;
use serde_saphyr::granit_parser::{Event, Parser, Span};
use std::collections::BTreeMap;
use std::path::Path;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub line: usize,
    pub column: usize,
}

impl Place {
    fn of(m: &serde_saphyr::granit_parser::Marker) -> Place {
        Place {
            line: m.line(),
            column: m.col() + 1,
        }
    }
}

/// The places of one manifest's keys, list items and values.
#[derive(Debug, Default)]
pub struct Places {
    /// Dotted path -> where its key (or list item) is written.
    keys: BTreeMap<String, Place>,
    /// Every value: its path, where it starts and ends, and a scalar's text.
    values: Vec<Value>,
}

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, next: usize },
}

fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

impl Places {
    /// Reads the places of `text`; a YAML syntax error, or a tag (manifests
    /// use plain values), is returned with its place and key.
    pub fn read(text: &str) -> Result<Places, (Option<Place>, String, String)> {
        let mut places = Places::default();
        let mut stack: Vec<Frame> = Vec::new();
        // Open containers: (path, start).
        let mut open: Vec<(String, Place)> = Vec::new();
        for ev in Parser::new_from_str(text) {
            let (ev, span): (Event, Span) = ev.map_err(|e| {
                (
                    Some(Place::of(e.marker())),
                    String::new(),
                    format!("YAML syntax: {}", e.info()),
                )
            })?;
            let start = Place::of(&span.start);
            let end = Place::of(&span.end);
            let (tag, scalar, opens) = match &ev {
                Event::Scalar(s, _, _, tag) => (tag.clone(), Some(s.to_string()), false),
                Event::SequenceStart(_, _, tag) | Event::MappingStart(_, _, tag) => {
                    (tag.clone(), None, true)
                }
                Event::Alias(_) => (None, Some(String::new()), false),
                Event::SequenceEnd | Event::MappingEnd => {
                    stack.pop();
                    if let Some((path, start)) = open.pop() {
                        places.values.push((path, start, end, None));
                    }
                    Self::after_value(&mut stack);
                    continue;
                }
                _ => continue,
            };
            // A key of a mapping: where the path's key is written.
            if let Some(Frame::Map {
                path,
                key: key @ None,
            }) = stack.last_mut()
            {
                let name = scalar.clone().unwrap_or_else(|| "?".into());
                let full = join(path, &name);
                places.keys.entry(full).or_insert(start);
                *key = Some(name);
                if opens {
                    // A mapping or list as a key: its contents have no path of their own.
                    let p = join(path, "?");
                    open.push((p.clone(), start));
                    stack.push(match ev {
                        Event::MappingStart(..) => Frame::Map { path: p, key: None },
                        _ => Frame::Seq { path: p, next: 0 },
                    });
                }
                continue;
            }
            let path = match stack.last() {
                None => String::new(),
                Some(Frame::Map { path, key }) => join(path, key.as_deref().unwrap_or("?")),
                Some(Frame::Seq { path, next }) => {
                    let p = join(path, &next.to_string());
                    places.keys.entry(p.clone()).or_insert(start);
                    p
                }
            };
            if let Some(t) = tag.filter(|t| !t.is_yaml_core_schema()) {
                return Err((
                    Some(start),
                    path,
                    format!("YAML tag `{t}`: manifests use plain YAML values without tags"),
                ));
            }
            if opens {
                open.push((path.clone(), start));
                stack.push(match ev {
                    Event::MappingStart(..) => Frame::Map { path, key: None },
                    _ => Frame::Seq { path, next: 0 },
                });
            } else {
                places.values.push((path, start, end, scalar));
                Self::after_value(&mut stack);
            }
        }
        Ok(places)
    }

    /// After a value: its mapping waits for the next key, its list for the next item.
    fn after_value(stack: &mut [Frame]) {
        match stack.last_mut() {
            Some(Frame::Map { key, .. }) => *key = None,
            Some(Frame::Seq { next, .. }) => *next += 1,
            None => {}
        }
    }

    /// Where the key (or list item) at dotted `path` is written; for a path
    /// the file does not hold (a key that is missing), its nearest ancestor
    /// that it does.
    pub fn key(&self, path: &str) -> Option<Place> {
        let mut p = path;
        loop {
            if let Some(at) = self.keys.get(p) {
                return Some(*at);
            }
            p = &p[..p.rfind('.')?];
        }
    }

    /// The path of the key written at `at`, if a key starts there.
    fn key_at(&self, at: Place) -> Option<&str> {
        self.keys
            .iter()
            .filter(|(p, k)| **k == at && !p.ends_with(|c: char| c.is_ascii_digit()))
            .map(|(p, _)| p.as_str())
            .max_by_key(|p| p.len())
    }

    /// The innermost value that starts at `at` (else contains it): its path
    /// and, for a scalar, its text.
    fn value_at(&self, at: Place) -> Option<(&str, Option<&str>)> {
        let starting = || self.values.iter().filter(move |v| v.1 == at);
        let containing = self.values.iter().filter(|v| v.1 <= at && at < v.2);
        deepest(starting().filter(|v| v.3.is_some()))
            .or_else(|| deepest(starting()))
            .or_else(|| deepest(containing))
    }
}

type Value = (String, Place, Place, Option<String>);

/// The innermost of `values` (the one that ends first): its path and text.
fn deepest<'a>(values: impl Iterator<Item = &'a Value>) -> Option<(&'a str, Option<&'a str>)> {
    values
        .min_by_key(|v| (v.2, std::cmp::Reverse(v.0.len())))
        .map(|v| (v.0.as_str(), v.3.as_deref()))
}

/// What the manifest checks need to name a place: the file and its places.
pub(super) struct Ctx<'a> {
    pub(super) file: &'a Path,
    pub(super) places: &'a Places,
}

impl Ctx<'_> {
    pub(super) fn err(&self, key: &str, message: impl Into<String>) -> ManifestError {
        error_at(self.file, self.places.key(key), key, message)
    }
}

pub(super) fn error_at(
    file: &Path,
    at: Option<Place>,
    key: &str,
    message: impl Into<String>,
) -> ManifestError {
    ManifestError {
        file: file.to_path_buf(),
        line: at.map(|p| p.line),
        column: at.map(|p| p.column),
        key: key.to_string(),
        message: message.into(),
    }
}

/// The line and column of the key (or list item) at dotted `path` in
/// manifest `text`, for errors found after loading (an id another manifest
/// uses, a program declared twice); `None` if the text does not parse.
pub fn locate(text: &str, path: &str) -> Option<Place> {
    Places::read(text).ok()?.key(path)
}

/// Reads manifest `text` into `T` (said as `what` when the document is not
/// one) and the places of its keys: syntax errors, tags and serde's errors
/// (unknown or missing keys, wrong types) with file, line, column and key.
pub(super) fn read<T: serde::de::DeserializeOwned>(
    file: &Path,
    text: &str,
    what: &str,
) -> Result<(T, Places), ManifestError> {
    let places =
        Places::read(text).map_err(|(at, key, message)| error_at(file, at, &key, message))?;
    // YAML 1.2's core schema, as manifests have always been read: `n`, `no`
    // and `off` are text, not false; `012` and `1_000` are text; `<<` is a
    // key like any other.
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    options.merge_keys = serde_saphyr::MergeKeyPolicy::AsOrdinary;
    match serde_saphyr::from_str_with_options(text, options) {
        Ok(v) => Ok((v, places)),
        Err(e) => Err(serde_error(file, &places, e.without_snippet(), what)),
    }
}

fn serde_error(file: &Path, places: &Places, e: &serde_saphyr::Error, what: &str) -> ManifestError {
    use serde_saphyr::Error as E;
    let at = e.location().map(|l| Place {
        line: l.line() as usize,
        column: l.column() as usize,
    });
    let value = at.and_then(|a| places.value_at(a));
    let value_path = value.map_or(String::new(), |(p, _)| p.to_string());
    let (key, message) = match e {
        E::SerdeUnknownField {
            field, expected, ..
        } => {
            let key = at
                .and_then(|a| places.key_at(a))
                .map_or_else(|| join(&value_path, field), str::to_string);
            let list = expected
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let mut message = format!("unknown field `{field}`, expected one of {list}");
            // A misspelt key (`swep`): the known key it is closest to.
            if let Some(k) = solvers::params::nearest(field, expected.iter().copied()) {
                message.push_str(&format!(" (did you mean `{k}`?)"));
            }
            (key, message)
        }
        E::SerdeMissingField { field, .. } => {
            (join(&value_path, field), format!("missing field `{field}`"))
        }
        E::InvalidScalar { ty, .. } => {
            let text = value.and_then(|(_, s)| s).unwrap_or("");
            let message = if text.parse::<f64>().is_ok() {
                format!("invalid value: `{text}`, expected {ty}")
            } else {
                format!("invalid type: string {text:?}, expected {ty}")
            };
            (value_path, message)
        }
        other => {
            let msg = other.to_string();
            let msg = match msg.find(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            // A scalar or list where a mapping belongs (or the reverse).
            let msg = match msg
                .strip_prefix("expected ")
                .and_then(|m| m.strip_suffix(" start"))
            {
                Some(kind @ ("mapping" | "sequence")) => {
                    let found = match value {
                        Some((_, Some(s))) => format!("`{s}`"),
                        _ if kind == "mapping" => "a list".into(),
                        _ => "a mapping".into(),
                    };
                    let want = match (value_path.is_empty(), kind) {
                        (true, _) => what,
                        (false, "mapping") => "a mapping",
                        (false, _) => "a list",
                    };
                    format!("invalid type: {found}, expected {want}")
                }
                _ => msg,
            };
            (value_path, msg)
        }
    };
    // No internal type names (`expected struct RawQuick`) in what users read.
    let message = solvers::params::plain_serde_message(&message);
    error_at(file, at, &key, message)
}
