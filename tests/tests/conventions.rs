//! The command line's small conventions: NO_COLOR, -q / -v, shell completion
//! and the man page.

mod common;
use common::*;
use std::process::Command;

/// A small analytic manifest: a run of it logs an info line ("planned") and
/// prints a summary line, in about a second.
const MANIFEST: &str = "lib-mmpp-m1";

/// `repro ARGS` under a pseudo-terminal (util-linux `script`), so that
/// colour is on unless something turns it off. stderr and stdout come back
/// mixed, as a terminal shows them. `None` without `script`.
fn on_terminal(dir: &std::path::Path, args: &[&str], no_color: Option<&str>) -> Option<String> {
    let line = std::iter::once(repro_bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut c = Command::new("script");
    c.args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(dir)
        .env_remove("REPRO_STORE")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let out = c.output().ok()?;
    assert!(
        out.status.success(),
        "{line}: exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn no_color_turns_colour_off_on_a_terminal() {
    let p = project(&[MANIFEST]);
    let args = ["-v", "run", "--quick", "--no-progress", MANIFEST];
    let Some(coloured) = on_terminal(p.path(), &args, None) else {
        eprintln!("SKIPPED: no `script` (util-linux) to give repro a terminal");
        return;
    };
    // The check can fail: on a terminal the info line is coloured.
    assert!(coloured.contains("planned"), "{coloured}");
    assert!(
        coloured.contains('\x1b'),
        "no colour on a terminal:\n{coloured}"
    );
    // An empty NO_COLOR does not count (no-color.org).
    let empty = on_terminal(p.path(), &args, Some("")).unwrap();
    assert!(empty.contains('\x1b'), "{empty}");
    let plain = on_terminal(p.path(), &args, Some("1")).unwrap();
    assert!(plain.contains("planned"), "{plain}");
    assert!(
        !plain.contains('\x1b'),
        "colour despite NO_COLOR:\n{plain:?}"
    );
    // clap's help and errors too.
    let help = on_terminal(p.path(), &["run", "--help"], Some("1")).unwrap();
    assert!(
        help.contains("--quick") && !help.contains('\x1b'),
        "{help:?}"
    );
}

#[test]
fn quiet_prints_only_errors_and_verbose_adds_log_lines() {
    let p = project(&[MANIFEST]);
    let normal = ok(&repro(p.path(), &["run", "--quick", MANIFEST]));
    assert!(normal.contains(" tasks: "), "{normal}");
    assert!(!normal.contains("planned"), "{normal}");

    // After the command or before it (a global flag).
    for args in [
        ["run", "--quick", "-q", MANIFEST],
        ["-q", "run", "--quick", MANIFEST],
    ] {
        let o = repro(p.path(), &args);
        assert_eq!(ok(&o), "", "{args:?} printed on stderr");
    }
    let verbose = ok(&repro(p.path(), &["run", "--quick", "-v", MANIFEST]));
    assert!(
        verbose.contains("INFO") && verbose.contains("planned"),
        "{verbose}"
    );
    assert!(verbose.contains(" tasks: "), "{verbose}");

    // Errors still show with -q, and -q with -v is refused.
    let o = repro(p.path(), &["-q", "run", "--quick", "no-such-experiment"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error"), "{}", stderr(&o));
    let o = repro(p.path(), &["-q", "-v", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn completions_name_the_commands_and_their_flags() {
    let p = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = repro(p.path(), &["completions", shell]);
        let script = stdout(&o);
        ok(&o);
        // fish writes `-l quick` for `--quick`.
        for word in ["repro", "check", "export", "quick", "figure"] {
            assert!(script.contains(word), "{shell}: no `{word}`");
        }
    }
    if Command::new("bash").arg("--version").output().is_ok() {
        // The bash script loads and registers its completion function.
        let script = stdout(&repro(p.path(), &["completions", "bash"]));
        let file = p.path().join("repro.bash");
        std::fs::write(&file, script).unwrap();
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("source '{}' && complete -p repro", file.display()))
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("repro"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = repro(p.path(), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn man_pages_describe_every_command() {
    let p = tempfile::tempdir().unwrap();
    let page = stdout(&repro(p.path(), &["man"]));
    assert!(
        page.starts_with(".ie") || page.contains(".TH repro 1"),
        "{page}"
    );
    for word in ["repro", "completions", "NO_COLOR", "Exit codes"] {
        assert!(page.contains(word), "no `{word}` in the man page");
    }
    let dir = p.path().join("man");
    let o = repro(p.path(), &["man", "--out", dir.to_str().unwrap()]);
    ok(&o);
    for name in [
        "repro.1",
        "repro-run.1",
        "repro-export.1",
        "repro-completions.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.contains(".TH"), "{name} is not a man page");
    }
    // `man` renders it, where it is installed.
    if let Ok(o) = Command::new("man")
        .arg("-l")
        .arg(dir.join("repro-run.1"))
        .env("MANWIDTH", "80")
        .output()
    {
        if o.status.success() {
            assert!(String::from_utf8_lossy(&o.stdout).contains("--quick"));
        }
    }
}
