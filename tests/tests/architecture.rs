//! The shape of the code, checked (docs/ARCHITECTURE.md, "Invariants"):
//!
//! 1. The pipeline's stages import each other in data-flow order only:
//!    `manifest` -> `plan` -> `execute` -> `measure` -> `render`. A stage may
//!    import an earlier stage and the shared module `shared`, never a later
//!    stage, and nothing else of the crate root (no `crate::InputError`,
//!    `crate::host`, ..: what every stage needs is in `shared`), so there is
//!    no import circle and no hidden way back. `shared` imports no stage and
//!    nothing of the crate root. Only the binary (`main.rs`, `commands/`)
//!    uses every stage.
//! 2. `lib.rs` only declares modules and re-exports: the code is in the stages.
//! 3. No `.rs` file under `pipeline/` or `store/` has more than 600 lines.
//! 4. The solvers' building blocks import in one direction:
//!    `des` -> `markov` -> `traffic` -> `queueing` -> `engines` -> `systems`
//!    (a module may use the ones before it, never one after it).
//! 5. A worker launcher is one file of `execute/launch/` with its
//!    `REGISTRATION`, listed in `LAUNCHERS`; the binary names no launcher.
//!
//! The imports are read from the source text (`use crate::..`, `super::..` in
//! a stage's `mod.rs`, and `crate::<module>::` paths written inline), so this
//! needs no dependency and no build of the pipeline.

use std::path::{Path, PathBuf};

/// The stages in data-flow order.
const STAGES: [&str; 5] = ["manifest", "plan", "execute", "measure", "render"];
/// The module every stage may use, which itself uses no stage.
const SHARED: &str = "shared";
/// The solvers' top-level modules in the order they may import each other.
const SOLVER_LAYERS: [&str; 6] = ["des", "markov", "traffic", "queueing", "engines", "systems"];
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

/// Every reference of a stage to a later stage or to the crate root other
/// than `shared`, and of `shared` to anything of the crate outside itself.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let Some(module) = owner(src, &f) else {
            continue;
        };
        let rank = STAGES.iter().position(|s| *s == module);
        let shared = module == SHARED;
        if rank.is_none() && !shared {
            continue; // lib.rs, main.rs, commands/: they may use every stage
        }
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        let depth = f.strip_prefix(src).map_or(0, |r| r.components().count());
        let in_stage_root =
            depth == 1 || f.file_name().is_some_and(|n| n == "mod.rs") && depth == 2;
        for (line, name) in referenced_modules(&text, in_stage_root) {
            if name == SHARED {
                continue;
            }
            let why = match (STAGES.iter().position(|s| *s == name), rank) {
                (Some(target), Some(r)) if target <= r => continue,
                (Some(_), Some(_)) => {
                    format!("imports the stage `{name}`, which comes later in data-flow order")
                }
                (Some(_), None) => {
                    format!("imports the stage `{name}` (the shared module imports no stage)")
                }
                (None, _) => format!(
                    "refers to `{name}` of the crate root (a stage uses earlier stages and \
                     `shared` only; put what every stage needs in `shared`)"
                ),
            };
            bad.push(format!("{}:{line}: `{module}` {why}", f.display()));
        }
    }
    bad
}

/// Lines of `lib.rs` that are neither a module declaration nor a re-export
/// (nor a comment or an attribute).
fn lib_rs_code(text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut in_use = false;
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.is_empty() || code.starts_with("#[") || code.starts_with("#![") {
            continue;
        }
        if in_use {
            in_use = !code.ends_with(';');
            continue;
        }
        let decl = |p: &str| code.starts_with(p);
        if decl("pub mod ") || decl("mod ") || decl("pub(crate) mod ") {
            if code.ends_with(';') {
                continue;
            }
        } else if decl("pub use ") {
            in_use = !code.ends_with(';');
            continue;
        }
        bad.push(format!("lib.rs:{}: {code}", i + 1));
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
    assert!(
        src.join(SHARED).join("mod.rs").is_file(),
        "the shared module should be the folder pipeline/src/{SHARED}/"
    );
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the data flow (docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
}

#[test]
fn lib_rs_only_declares_modules_and_re_exports() {
    let text = std::fs::read_to_string(root().join("pipeline/src/lib.rs")).expect("lib.rs");
    let bad = lib_rs_code(&text);
    assert!(
        bad.is_empty(),
        "lib.rs holds code; it belongs in a stage, `shared` or a command:\n{}",
        bad.join("\n")
    );
    assert_eq!(
        lib_rs_code(
            "//! doc\npub mod a;\npub use a::{\n    b,\n};\nfn f() {}\npub const X: u8 = 1;\n"
        ),
        vec!["lib.rs:6: fn f() {}", "lib.rs:7: pub const X: u8 = 1;"]
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
/// group, through `super::` from a stage root, and inline; the crate root
/// referred to from a stage (`use crate::X`, `super::X` from a stage root,
/// inline `crate::x()`), and from `shared`.
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
    std::fs::create_dir_all(src.join("shared")).unwrap();
    std::fs::write(
        src.join("shared/mod.rs"),
        "pub mod store_open;\nuse crate::shared::store_open::x;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("shared/store_open.rs"),
        "use crate::plan::Plan;\nuse super::InputError;\nfn f() { crate::host(); }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("render/mod.rs"),
        "use crate::manifest::Manifest;\nuse super::render::x;\nuse crate::shared::InputError;\n\
         use super::{InputError, shared::host};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("measure/stored.rs"),
        "use crate::{plan::Plan, CODE_VERSION};\nfn f() { let v = crate::exit::OK; }\n",
    )
    .unwrap();
    let bad = violations(src);
    let joined = bad.join("\n");
    assert_eq!(bad.len(), 8, "{joined}");
    assert!(joined.contains("parse.rs:1: `manifest` imports the stage `render`"));
    assert!(joined.contains("plan/mod.rs:1: `plan` imports the stage `measure`"));
    assert!(joined.contains("local.rs:2: `execute` imports the stage `measure`"));
    assert!(joined.contains("store_open.rs:1: `shared` imports the stage `plan`"));
    assert!(joined.contains("store_open.rs:3: `shared` refers to `host` of the crate root"));
    assert!(joined.contains("render/mod.rs:4: `render` refers to `InputError` of the crate root"));
    assert!(joined.contains("stored.rs:1: `measure` refers to `CODE_VERSION` of the crate root"));
    assert!(joined.contains("stored.rs:2: `measure` refers to `exit` of the crate root"));
}

/// Every reference of a solvers module of [`SOLVER_LAYERS`] to one after it
/// (the crate's contract, params, registry and root re-exports are not
/// layers and may be used by all).
fn solver_layer_violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let Some(module) = owner(src, &f) else {
            continue;
        };
        let Some(rank) = SOLVER_LAYERS.iter().position(|s| *s == module) else {
            continue;
        };
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        let depth = f.strip_prefix(src).map_or(0, |r| r.components().count());
        let in_root = depth == 1 || f.file_name().is_some_and(|n| n == "mod.rs") && depth == 2;
        for (line, name) in referenced_modules(&text, in_root) {
            if SOLVER_LAYERS.iter().position(|s| *s == name) > Some(rank) {
                bad.push(format!(
                    "{}:{line}: `{module}` imports `{name}`, which comes after it",
                    f.display()
                ));
            }
        }
    }
    bad
}

#[test]
fn solver_modules_import_in_one_direction() {
    let src = root().join("solvers/src");
    for s in SOLVER_LAYERS {
        assert!(
            src.join(s).join("mod.rs").is_file(),
            "solvers/src/{s}/ should be a module folder"
        );
    }
    let bad = solver_layer_violations(&src);
    assert!(
        bad.is_empty(),
        "solvers modules importing a later one (docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
    // The checker sees the tie this order broke (traffic used queueing's CTMC).
    let dir = tempfile::tempdir().unwrap();
    for s in SOLVER_LAYERS {
        std::fs::create_dir_all(dir.path().join(s)).unwrap();
    }
    std::fs::write(
        dir.path().join("traffic/sources.rs"),
        "use crate::queueing::ctmc::Generator;\nuse crate::{des::Rng, markov::ctmc::gth};\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("markov/mod.rs"),
        "use super::{traffic::Map, SolveError};\n",
    )
    .unwrap();
    let bad = solver_layer_violations(dir.path());
    assert_eq!(bad.len(), 2, "{}", bad.join("\n"));
    assert!(bad[0].ends_with("mod.rs:1: `markov` imports `traffic`, which comes after it"));
    assert!(bad[1].ends_with("sources.rs:1: `traffic` imports `queueing`, which comes after it"));
}

/// Every text file of the repository (sources, docs, manifests, scripts),
/// without build output, results and version control.
fn repository_text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            if p.is_dir() {
                if !matches!(name.as_deref(), Some("target" | ".git" | "results")) {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| {
                ["rs", "md", "yaml", "yml", "toml", "sh", "py"].contains(&&*x.to_string_lossy())
            }) || name.as_deref() == Some("run")
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out
}

/// What a document cites that the repository does not hold: the design
/// notes the project started from (their text is in docs/design.md), files
/// outside the repository, and `docs/..` paths or Markdown links (from
/// `docs/` and the README) to files that do not exist.
fn missing_citations(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    for (i, line) in text.lines().enumerate() {
        let at = |what: String| format!("{rel}:{}: {what}", i + 1);
        for outside in ["DESIGN.md", "STYLE.md", "/work/shared", "../shared/"] {
            if line.contains(outside) {
                bad.push(at(format!(
                    "cites `{outside}`, which is not in the repository"
                )));
            }
        }
        let mut rest = line;
        while let Some(k) = rest.find("docs/") {
            let path: String = rest[k..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
                .collect();
            rest = &rest[k + "docs/".len()..];
            let path = path.trim_end_matches('.');
            let is_file = [".md", ".yaml", ".csv", ".txt"]
                .iter()
                .any(|x| path.ends_with(x));
            // `docs/models/NAME.md`: a pattern, not a file.
            let placeholder =
                path.chars().any(|c| c.is_ascii_uppercase()) && !path.ends_with("ARCHITECTURE.md");
            if is_file && !placeholder && !root.join(path).is_file() {
                bad.push(at(format!("cites `{path}`, which does not exist")));
            }
        }
        let mut rest = if rel.ends_with(".md") { line } else { "" };
        while let Some(k) = rest.find("](") {
            let target: String = rest[k + 2..].chars().take_while(|c| *c != ')').collect();
            rest = &rest[k + 2..];
            let target = target.split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let base = file.parent().unwrap_or(root);
            if !base.join(target).exists() {
                bad.push(at(format!("links `{target}`, which does not exist")));
            }
        }
    }
    bad
}

/// The repository cites only documents it holds.
#[test]
fn every_document_the_repository_cites_is_in_it() {
    let root = root();
    let files = repository_text_files();
    assert!(files.len() > 100, "found only {} files", files.len());
    let bad: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("tests/tests/architecture.rs"))
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            missing_citations(&root, f, &text)
        })
        .collect();
    assert!(
        bad.is_empty(),
        "citations of documents the repository does not hold:\n{}",
        bad.join("\n")
    );
    // The checker finds each kind.
    let text = "see DESIGN.md\nsee docs/nope.md and docs/models/NAME.md\n[x](missing.md) [y](https://e.org)\n";
    let found = missing_citations(&root, &root.join("docs/x.md"), text);
    assert_eq!(found.len(), 3, "{found:?}");
}

/// What docs/catalogue.md defines: its numbered sections ("0", "3.2", from
/// `## 3.` / `### 3.2 ...` headings) and the ids of its errata (`* **W-6`),
/// model components (`| M-5 |`) and simulators (`**SIM-3:`).
fn catalogue_anchors(text: &str) -> (Vec<String>, Vec<String>) {
    let mut sections = Vec::new();
    let mut ids = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix('#') {
            let number: String = heading
                .trim_start_matches('#')
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if !number.is_empty() {
                sections.push(number.to_string());
            }
        }
        for prefix in ["* **", "| ", "**"] {
            if let Some(rest) = line.strip_prefix(prefix) {
                if let Some(id) = catalogue_ids(rest).into_iter().next() {
                    if rest.starts_with(&id) {
                        ids.push(id);
                    }
                }
            }
        }
    }
    (sections, ids)
}

/// The catalogue ids in a text: `Y-8`, `W-21`, `G-1`, `M-5`, `SIM-3` (a
/// letter suffix such as `Y-8j` names a part of `Y-8`).
fn catalogue_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for (k, _) in text.match_indices('-') {
        let before = &text[..k];
        let prefix = ["SIM", "Y", "G", "W", "M"]
            .into_iter()
            .find(|p| before.ends_with(p));
        let Some(prefix) = prefix else { continue };
        let start = k - prefix.len();
        if text[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric())
        {
            continue;
        }
        let digits: String = text[k + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if !digits.is_empty() {
            ids.push(format!("{prefix}-{digits}"));
        }
    }
    ids
}

/// The sections a line cites as "catalogue §N" (also "catalogue (§0, §3.2
/// and §5").
fn catalogue_sections(line: &str) -> Vec<String> {
    let lower = line.to_lowercase();
    let mut out = Vec::new();
    for (k, _) in lower.match_indices("catalogue") {
        let mut rest = lower[k + "catalogue".len()..].trim_start_matches([' ', '(']);
        while let Some(after) = rest.strip_prefix('§') {
            let number: String = after
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if number.is_empty() {
                break;
            }
            out.push(number.to_string());
            rest = after.trim_start()[number.len()..]
                .trim_start_matches('.')
                .trim_start_matches([',', ' '])
                .trim_start_matches("and ");
        }
    }
    out
}

/// What a text cites of docs/catalogue.md that it does not define: "catalogue
/// §N" sections, and erratum/component/simulator ids on lines that speak of
/// the catalogue or its errata.
fn missing_catalogue_anchors(
    (sections, ids): &(Vec<String>, Vec<String>),
    rel: &str,
    text: &str,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for s in catalogue_sections(line) {
            if !sections.contains(&s) {
                bad.push(format!(
                    "{rel}:{}: cites catalogue §{s}, which it does not have",
                    i + 1
                ));
            }
        }
        let lower = line.to_lowercase();
        if lower.contains("catalogue") || lower.contains("errat") {
            for id in catalogue_ids(line) {
                if !ids.contains(&id) {
                    bad.push(format!(
                        "{rel}:{}: cites catalogue id {id}, which it does not define",
                        i + 1
                    ));
                }
            }
        }
    }
    bad
}

/// Every "catalogue §N" and erratum id the repository cites is in
/// docs/catalogue.md.
#[test]
fn every_catalogue_section_and_erratum_cited_exists() {
    let root = root();
    let catalogue =
        std::fs::read_to_string(root.join("docs/catalogue.md")).expect("docs/catalogue.md");
    let anchors = catalogue_anchors(&catalogue);
    assert!(
        anchors.0.len() >= 20 && anchors.1.len() > 100,
        "{anchors:?}"
    );
    for s in ["0", "1.2", "3.5", "4.3", "7"] {
        assert!(anchors.0.iter().any(|x| x == s), "§{s} not found");
    }
    for id in ["Y-1", "G-6", "W-60", "M-20", "SIM-6"] {
        assert!(anchors.1.iter().any(|x| x == id), "{id} not found");
    }
    let mut cited = 0;
    let bad: Vec<String> = repository_text_files()
        .iter()
        .filter(|f| !f.ends_with("tests/tests/architecture.rs"))
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            cited += text
                .lines()
                .map(|l| catalogue_sections(l).len())
                .sum::<usize>();
            let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            missing_catalogue_anchors(&anchors, &rel, &text)
        })
        .collect();
    assert!(cited > 100, "found only {cited} catalogue § citations");
    assert!(
        bad.is_empty(),
        "citations of docs/catalogue.md that it does not hold:\n{}",
        bad.join("\n")
    );
    // The checker finds each kind.
    let text =
        "catalogue §9.9; see the catalogue (§0, §3.2 and §8)\nerrata W-4, W-99, Y-8j, SIM-9\n";
    let found = missing_catalogue_anchors(&anchors, "x", text);
    assert_eq!(found.len(), 4, "{found:?}");
}

/// What a render file does that render must not: read the store (a `Store`,
/// or anything `async`: every store call is), or call into measure (a
/// `measure::` path that names a function rather than a type: render draws
/// what measure produced, it does not measure again).
fn render_violations(file: &str, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let word = |code: &str, w: &str| {
        code.match_indices(w).any(|(i, _)| {
            let before = code[..i].chars().next_back();
            let after = code[i + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for w in ["Store", "async", "await"] {
            if word(code, w) {
                bad.push(format!("{file}:{}: `{w}`: render reads no store", i + 1));
            }
        }
        let mut rest = code;
        while let Some(k) = rest.find("measure::") {
            rest = &rest[k + "measure::".len()..];
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(|item| item.trim().rsplit("::").next().unwrap_or("").to_string())
                    .collect(),
                None => {
                    let path: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    vec![path.rsplit("::").next().unwrap_or("").to_string()]
                }
            };
            for n in names {
                let first = n.chars().next();
                if first.is_some_and(|c| !c.is_ascii_uppercase()) && n != "self" {
                    bad.push(format!(
                        "{file}:{}: `measure::..{n}`: render uses measure's types, never its functions",
                        i + 1
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn render_reads_no_store_and_measures_nothing() {
    let mut files = Vec::new();
    rust_files(&root().join("pipeline/src/render"), &mut files);
    assert!(files.len() >= 5, "found only {} render files", files.len());
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("a readable source file");
            render_violations(&f.display().to_string(), &text)
        })
        .collect();
    assert!(
        bad.is_empty(),
        "render must draw what measure produced (docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
    // The checker finds each form.
    let sample = "use crate::measure::{ExperimentResults, collect_at};\n\
                  pub async fn f(s: &Store) { crate::measure::precision::replications(); }\n\
                  use crate::measure::compare::Comparison; // Store in a comment\n";
    let found = render_violations("x.rs", sample);
    assert_eq!(found.len(), 4, "{found:#?}");
}

/// Whether `code` holds `w` as a whole word.
fn has_word(code: &str, w: &str) -> bool {
    code.match_indices(w).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + w.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// What keeps a launcher from being one file: given the launcher files
/// (name, text), `execute/launch/mod.rs` and the binary's files, each file
/// without its `REGISTRATION`, each registration `LAUNCHERS` does not list,
/// and each launcher type the binary names.
fn launcher_violations(
    launchers: &[(String, String)],
    mod_rs: &str,
    binary: &[(String, String)],
) -> Vec<String> {
    let mut bad = Vec::new();
    let list = mod_rs
        .split("pub const LAUNCHERS")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or("");
    for (name, text) in launchers {
        if !text.contains("pub const REGISTRATION: Registration") {
            bad.push(format!(
                "{name}.rs declares no `pub const REGISTRATION: Registration`"
            ));
        }
        if !list.contains(&format!("{name}::REGISTRATION")) {
            bad.push(format!("LAUNCHERS does not list `{name}::REGISTRATION`"));
        }
        for line in text.lines() {
            let Some(ty) = line.trim().strip_prefix("impl Launcher for ") else {
                continue;
            };
            let ty: String = ty
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            for (file, code) in binary {
                for (i, l) in code.lines().enumerate() {
                    if has_word(l.split("//").next().unwrap_or(""), &ty) {
                        bad.push(format!(
                            "{file}:{}: names the launcher `{ty}`: the binary reads execute::launch::LAUNCHERS",
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    bad
}

/// A new worker launcher is one file (docs/ARCHITECTURE.md, "Where things
/// go"): it registers its `--executor` value and constructor itself, and
/// neither main.rs nor commands/ names a launcher.
#[test]
fn a_worker_launcher_is_one_file() {
    let src = root().join("pipeline/src");
    let dir = src.join("execute/launch");
    let mut launchers = Vec::new();
    for f in std::fs::read_dir(&dir).expect("execute/launch/") {
        let p = f.expect("an entry").path();
        let stem = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        if p.extension().is_some_and(|x| x == "rs") && stem != "mod" {
            launchers.push((stem, std::fs::read_to_string(&p).expect("a launcher file")));
        }
    }
    launchers.sort();
    assert!(launchers.len() >= 2, "found {} launchers", launchers.len());
    let mod_rs = std::fs::read_to_string(dir.join("mod.rs")).expect("launch/mod.rs");
    let mut binary = vec![src.join("main.rs")];
    rust_files(&src.join("commands"), &mut binary);
    let binary: Vec<(String, String)> = binary
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(p).expect("a source file"),
            )
        })
        .collect();
    let bad = launcher_violations(&launchers, &mod_rs, &binary);
    assert!(
        bad.is_empty(),
        "a launcher must be one file:\n{}",
        bad.join("\n")
    );
    // The checker finds each case.
    let fixture = [
        (
            "ssh".to_string(),
            "pub struct Ssh;\nimpl Launcher for Ssh {}\n".to_string(),
        ),
        (
            "k8s".to_string(),
            "pub const REGISTRATION: Registration = R;\nimpl Launcher for Job {}\n".to_string(),
        ),
    ];
    let fixture_mod = "pub const LAUNCHERS: &[Registration] = &[k8s::REGISTRATION];";
    let fixture_bin = [("run.rs".to_string(), "let l = Ssh; // Job\n".to_string())];
    let found = launcher_violations(&fixture, fixture_mod, &fixture_bin);
    assert_eq!(found.len(), 3, "{found:#?}");
}
