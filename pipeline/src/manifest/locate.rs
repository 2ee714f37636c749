//! Where a key is: the 1-based line of a dotted key path in the YAML text,
//! and serde_yaml's errors turned into [`ManifestError`]s with file, line and key.

use super::ManifestError;
use std::path::Path;

/// Finds the 1-based line of a dotted key path in YAML text (block or flow style),
/// best effort: each segment is searched at or after the line of its parent.
pub fn locate(text: &str, path: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0usize;
    let mut found = None;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        if let Ok(i) = seg.parse::<usize>() {
            // The i-th list item after the parent line.
            let mut seen = 0;
            let mut hit = None;
            for (ln, l) in lines.iter().enumerate().skip(from) {
                if l.trim_start().starts_with("- ") || l.trim() == "-" {
                    if seen == i {
                        hit = Some(ln);
                        break;
                    }
                    seen += 1;
                }
            }
            let ln = hit?;
            from = ln;
            found = Some(ln);
            continue;
        }
        let hit = lines
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, l)| has_key(l, seg));
        let (ln, _) = hit?;
        from = ln;
        found = Some(ln);
    }
    found.map(|l| l + 1)
}

fn has_key(line: &str, key: &str) -> bool {
    let code = line.split(" #").next().unwrap_or(line);
    let mut start = 0;
    while let Some(pos) = code[start..].find(key) {
        let at = start + pos;
        let before_ok = at == 0
            || matches!(
                code.as_bytes()[at - 1],
                b' ' | b'{' | b',' | b'-' | b'\t' | b'"' | b'\''
            );
        let rest = code[at + key.len()..].trim_start_matches(['"', '\'']);
        if before_ok && rest.trim_start().starts_with(':') {
            return true;
        }
        start = at + key.len();
    }
    false
}

pub(super) struct Ctx<'a> {
    pub(super) file: &'a Path,
    pub(super) text: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(&self, key: &str, message: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.to_path_buf(),
            line: locate(self.text, key),
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// Converts a serde_yaml error into a ManifestError with the line and the key:
/// serde_yaml prefixes an error inside the document with its path
/// (`series.sim.replications: invalid type ...`) and names unknown and
/// missing fields in backticks.
pub(super) fn yaml_error(file: &Path, text: &str, e: &serde_yaml::Error) -> ManifestError {
    // No internal type names (`expected struct RawQuick`) in what users read.
    let msg = solvers::params::plain_serde_message(&e.to_string());
    // serde_yaml appends " at line L column C" itself; keep the message short.
    let msg = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    let (path, message) = match msg.split_once(": ") {
        Some((p, rest)) if !p.is_empty() && !p.contains([' ', '`', '"']) => {
            (dotted(p), rest.to_string())
        }
        _ => (String::new(), msg),
    };
    let field = if message.starts_with("unknown field") || message.starts_with("missing field") {
        extract_backticked(&message)
    } else {
        None
    };
    // A misspelt key (`swep`): the known key it is closest to, from serde's
    // own list of the expected ones.
    let message = match (&field, message.split_once(", expected one of ")) {
        (Some(f), Some((_, expected))) if message.starts_with("unknown field") => {
            let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            match external::spec::nearest(f, known) {
                Some(k) => format!("{message} (did you mean `{k}`?)"),
                None => message,
            }
        }
        _ => message,
    };
    let key = match (path.is_empty(), field) {
        (_, None) => path,
        (true, Some(f)) => f,
        (false, Some(f)) => format!("{path}.{f}"),
    };
    let line = e.location().map(|l| l.line()).or_else(|| {
        if key.is_empty() {
            None
        } else {
            locate(text, &key)
        }
    });
    ManifestError {
        file: file.to_path_buf(),
        line,
        key,
        message,
    }
}

/// serde_yaml's path (`figures.[0].id`) in this module's dotted form (`figures.0.id`).
fn dotted(path: &str) -> String {
    path.replace(".[", ".")
        .replace(['[', ']'], ".")
        .replace("..", ".")
        .trim_matches(['.', '?'])
        .to_string()
}

fn extract_backticked(msg: &str) -> Option<String> {
    for prefix in ["unknown field `", "missing field `", "unknown variant `"] {
        if let Some(i) = msg.find(prefix) {
            let rest = &msg[i + prefix.len()..];
            return rest.find('`').map(|j| rest[..j].to_string());
        }
    }
    None
}
