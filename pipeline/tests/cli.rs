//! Smoke test of the binary. Its presence also makes `cargo test --workspace`
//! build `target/<profile>/repro`, which the end-to-end tests in `tests/` drive.

use std::process::Command;

#[test]
fn help_lists_the_commands() {
    let out = Command::new(env!("CARGO_BIN_EXE_repro"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for verb in ["run", "check", "report", "list", "export", "solve"] {
        assert!(text.contains(verb), "--help lacks `{verb}`:\n{text}");
    }
}
