//! Records the git commit the binary was built from, for provenance.
//!
//! It must not make every build stale (README "Build"): it watches only the
//! files that change when HEAD or the index change, found through git itself
//! (in a worktree `.git` is a file, and a path that does not exist makes Cargo
//! rerun this script, and recompile the crate, on every build), and it runs
//! `git status` with `GIT_OPTIONAL_LOCKS=0` so that git does not rewrite the
//! index it is watching.
use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let v = if rev.is_empty() {
        "unknown".to_string()
    } else if dirty {
        format!("{rev}-dirty")
    } else {
        rev
    };
    println!("cargo:rustc-env=REPRO_GIT_REV={v}");
    let git_dir = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from);
    let common =
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]).map(PathBuf::from);
    let head_ref = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    let mut watched = Vec::new();
    if let Some(d) = &git_dir {
        watched.push(d.join("HEAD"));
        watched.push(d.join("index"));
    }
    if let (Some(c), Some(r)) = (&common, head_ref.filter(|r| r.starts_with("refs/"))) {
        // A commit moves the branch's ref, not HEAD; packed refs live elsewhere.
        watched.push(c.join(r));
        watched.push(c.join("packed-refs"));
    }
    let watched: Vec<PathBuf> = watched.into_iter().filter(|p| p.exists()).collect();
    if watched.is_empty() {
        // Not a git checkout: nothing to watch, never rerun for it.
        println!("cargo:rerun-if-changed=build.rs");
    }
    for p in watched {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
