//! The content hash of a program: its command and the SHA-256 of each of its
//! files, hashed into one digest that enters every task key of the program.

use crate::spec::Program;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most files a declaration may hash (folders are walked).
pub const MAX_FILES: usize = 10_000;

/// What a program's results depend on besides its parameters: the command and
/// every file's SHA-256 (hex), by the path written in the declaration (a
/// folder's files as `folder/inner/path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Code {
    pub command: Vec<String>,
    pub files: BTreeMap<String, String>,
}

impl Code {
    /// The hex SHA-256 of the canonical JSON of this record.
    pub fn hash(&self) -> String {
        let text = serde_json::to_string(self).expect("code serialises");
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// Reads and hashes the program's files. The error names the file and why.
    pub fn of(program: &Program) -> Result<Code, String> {
        let mut files = BTreeMap::new();
        for f in &program.files {
            let path = program.dir.join(f);
            add(&path, f, &mut files)?;
        }
        Ok(Code {
            command: program.command.clone(),
            files,
        })
    }

    /// What differs from `older`, one `(what, older, newer)` per difference:
    /// `command`, or `file PATH` with each side's hash (or "absent").
    pub fn diff(&self, older: &Code) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        if self.command != older.command {
            out.push((
                "command".to_string(),
                older.command.join(" "),
                self.command.join(" "),
            ));
        }
        let short = |h: Option<&String>| {
            h.map_or("absent".to_string(), |h| {
                format!("sha256 {}", &h[..h.len().min(12)])
            })
        };
        let mut names: Vec<&String> = self.files.keys().chain(older.files.keys()).collect();
        names.sort();
        names.dedup();
        for n in names {
            let (a, b) = (older.files.get(n), self.files.get(n));
            if a != b {
                out.push((format!("file {n}"), short(a), short(b)));
            }
        }
        out
    }
}

fn add(path: &Path, name: &str, out: &mut BTreeMap<String, String>) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    if meta.is_dir() {
        for (rel, p) in walk(path)? {
            if out.len() >= MAX_FILES {
                return Err(format!(
                    "`{}` holds more than {MAX_FILES} files; list the ones that matter",
                    path.display()
                ));
            }
            let key = format!("{}/{rel}", name.trim_end_matches('/'));
            out.insert(key, file_hash(&p)?);
        }
    } else {
        if out.len() >= MAX_FILES {
            return Err(format!("more than {MAX_FILES} files"));
        }
        out.insert(name.to_string(), file_hash(path)?);
    }
    Ok(())
}

/// The files under `dir` (relative path, full path), sorted; hidden entries
/// and `__pycache__` (which Python rewrites as it runs) are left out.
fn walk(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), dir.to_path_buf())];
    while let Some((prefix, d)) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| format!("`{}`: {e}", d.display()))?;
        for entry in rd {
            let entry = entry.map_err(|e| format!("`{}`: {e}", d.display()))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || name == "__pycache__" {
                continue;
            }
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let p = entry.path();
            if p.is_dir() {
                stack.push((rel, p));
            } else {
                out.push((rel, p));
            }
            if out.len() > MAX_FILES {
                return Err(format!(
                    "`{}` holds more than {MAX_FILES} files; list the ones that matter",
                    dir.display()
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn file_hash(path: &Path) -> Result<String, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("`{}`: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use solvers::Kind;

    fn program(dir: &Path, files: &[&str]) -> Program {
        Program {
            name: "p".into(),
            kind: Kind::Analytic,
            version: 1,
            command: vec!["python3".into(), "a.py".into()],
            dir: dir.to_path_buf(),
            files: files.iter().map(|s| s.to_string()).collect(),
            params: vec![],
            metrics: vec!["x".into()],
            timeout_s: 1.0,
            memory_mb: 64,
            summary: String::new(),
        }
    }

    #[test]
    fn files_and_folders_are_hashed_and_diffed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.py"), "print(1)").unwrap();
        std::fs::create_dir_all(d.path().join("lib/__pycache__")).unwrap();
        std::fs::write(d.path().join("lib/m.py"), "x = 1").unwrap();
        std::fs::write(d.path().join("lib/__pycache__/m.pyc"), "junk").unwrap();
        let p = program(d.path(), &["a.py", "lib"]);
        let c1 = Code::of(&p).unwrap();
        assert_eq!(
            c1.files.keys().collect::<Vec<_>>(),
            vec!["a.py", "lib/m.py"]
        );
        // Python's byte-code cache does not change the hash.
        std::fs::write(d.path().join("lib/__pycache__/m.pyc"), "other").unwrap();
        assert_eq!(Code::of(&p).unwrap().hash(), c1.hash());
        std::fs::write(d.path().join("lib/m.py"), "x = 2").unwrap();
        let c2 = Code::of(&p).unwrap();
        assert_ne!(c2.hash(), c1.hash());
        let d12 = c2.diff(&c1);
        assert_eq!(d12.len(), 1);
        assert_eq!(d12[0].0, "file lib/m.py");
        let missing = program(d.path(), &["nope.py"]);
        assert!(Code::of(&missing).unwrap_err().contains("nope.py"));
    }
}
