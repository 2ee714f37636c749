//! The shape of the code, checked (docs/ARCHITECTURE.md, "Invariants"):
//!
//! 1. The pipeline's stages import each other in data-flow order only:
//!    `manifest` -> `plan` -> `execute` -> `measure` -> `render`. A stage may
//!    import an earlier stage, never a later one, so there is no import circle.
//!    The shared modules (`store_open`) import no stage at all. Only the crate
//!    root (`lib.rs`, the driver of `repro run`) and the binary (`main.rs`,
//!    `commands/`) may use every stage.
//! 2. No `.rs` file under `pipeline/` or `store/` has more than 600 lines.
//!
//! The imports are read from the source text (`use crate::..`, `super::..` in
//! a stage's `mod.rs`, and `crate::<module>::` paths written inline), so this
//! needs no dependency and no build of the pipeline.

use std::path::{Path, PathBuf};

/// The stages in data-flow order.
const STAGES: [&str; 5] = ["manifest", "plan", "execute", "measure", "render"];
/// Modules every stage may use, which themselves use no stage.
const SHARED: [&str; 1] = ["store_open"];
/// The most lines a source file may have.
const MAX_LINES: usize = 600;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules of the crate (first path segments) that `source`
/// refers to, with the line of each reference. `in_stage_root` says whether
/// the file is a stage's `mod.rs` (or a file directly under `src/`), where
/// `super::` is the crate root.
fn referenced_modules(source: &str, in_stage_root: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut statement = String::new();
    let mut statement_line = 0;
    for (i, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.is_empty() {
            continue;
        }
        // Inline paths: `crate::render::write_index(..)` anywhere.
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((i + 1, name));
            }
            rest = after;
        }
        // `use` statements, possibly over several lines, with `{..}` groups.
        if statement.is_empty() && (code.starts_with("use ") || code.starts_with("pub use ")) {
            statement_line = i + 1;
        }
        if statement_line > 0 {
            statement.push_str(code);
            statement.push(' ');
            if code.ends_with(';') {
                let prefixes: &[&str] = if in_stage_root {
                    &["crate::", "super::"]
                } else {
                    &["crate::", "super::super::"]
                };
                for prefix in prefixes {
                    for name in group_heads(&statement, prefix) {
                        out.push((statement_line, name));
                    }
                }
                statement.clear();
                statement_line = 0;
            }
        }
    }
    // A `use crate::x` line is seen both as a statement and inline.
    out.sort();
    out.dedup();
    out
}

/// In a `use` statement, the first segments after `prefix`: `crate::a::b` gives
/// `a`; `crate::{a::x, b}` gives `a` and `b`.
fn group_heads(statement: &str, prefix: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut rest = statement;
    while let Some(at) = rest.find(prefix) {
        // `super::super::` must not also count as `super::`.
        if prefix == "super::" && rest[..at].ends_with("super::") {
            rest = &rest[at + prefix.len()..];
            continue;
        }
        let after = &rest[at + prefix.len()..];
        if let Some(inner) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in inner.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        heads.push(head(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            heads.push(head(&item));
        } else {
            heads.push(head(after));
        }
        rest = after;
    }
    heads.retain(|h| !h.is_empty());
    heads
}

fn head(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The stage (index into [`STAGES`]) or shared module a file belongs to.
fn owner(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every import of a later stage (or, from a shared module, of any stage).
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let Some(module) = owner(src, &f) else {
            continue;
        };
        let rank = STAGES.iter().position(|s| *s == module);
        let shared = SHARED.contains(&module.as_str());
        if rank.is_none() && !shared {
            continue; // lib.rs, main.rs, commands/: they may use every stage
        }
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        let depth = f.strip_prefix(src).map_or(0, |r| r.components().count());
        let in_stage_root =
            depth == 1 || f.file_name().is_some_and(|n| n == "mod.rs") && depth == 2;
        for (line, name) in referenced_modules(&text, in_stage_root) {
            let Some(target) = STAGES.iter().position(|s| *s == name) else {
                continue;
            };
            let allowed = match rank {
                Some(r) => target <= r,
                None => false,
            };
            if !allowed {
                bad.push(format!(
                    "{}:{line}: `{module}` imports the stage `{name}`{}",
                    f.display(),
                    if shared {
                        " (a shared module imports no stage)"
                    } else {
                        ", which comes later in data-flow order"
                    }
                ));
            }
        }
    }
    bad
}

#[test]
fn stages_import_only_earlier_stages() {
    let src = root().join("pipeline/src");
    for s in STAGES {
        assert!(
            src.join(s).join("mod.rs").is_file(),
            "the stage `{s}` should be the folder pipeline/src/{s}/"
        );
    }
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the data flow (docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let mut files = Vec::new();
    for dir in ["pipeline", "store"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by concern):\n{}",
        long.join("\n")
    );
}

/// The checker itself finds what it must: a later stage imported in a `use`
/// group, through `super::` from a stage root, and inline.
#[test]
fn the_checker_sees_each_form_of_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    for s in STAGES {
        std::fs::create_dir_all(src.join(s)).unwrap();
        std::fs::write(src.join(s).join("mod.rs"), "").unwrap();
    }
    std::fs::write(
        src.join("manifest/parse.rs"),
        "use crate::{\n    manifest::Manifest,\n    render::index,\n};\n",
    )
    .unwrap();
    std::fs::write(src.join("plan/mod.rs"), "use super::measure::Agg;\n").unwrap();
    std::fs::write(
        src.join("execute/local.rs"),
        "// crate::render is only mentioned here\nfn f() { crate::measure::collect(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("store_open.rs"), "use crate::plan::Plan;\n").unwrap();
    std::fs::write(
        src.join("render/mod.rs"),
        "use crate::manifest::Manifest;\nuse super::render::x;\n",
    )
    .unwrap();
    let bad = violations(src);
    let joined = bad.join("\n");
    assert_eq!(bad.len(), 4, "{joined}");
    assert!(joined.contains("parse.rs:1: `manifest` imports the stage `render`"));
    assert!(joined.contains("plan/mod.rs:1: `plan` imports the stage `measure`"));
    assert!(joined.contains("local.rs:2: `execute` imports the stage `measure`"));
    assert!(joined.contains("store_open.rs:1: `store_open` imports the stage `plan`"));
}
