//! build.rs stops a build for a target other than Linux with one line (issue
//! 54: on macOS `cargo install` failed with a cascade of compile errors). No
//! other target's standard library is on this machine, so the test compiles
//! build.rs with rustc and runs it as cargo would, with the target's
//! `CARGO_CFG_TARGET_OS`.

use std::path::Path;
use std::process::Command;

use super::ROOT;

/// build.rs's stdout (its instructions to cargo) for a target OS.
fn build_script_says(exe: &Path, os: &str) -> String {
    let out = Command::new(exe)
        .env("CARGO_CFG_TARGET_OS", os)
        .env("RUSTC", "rustc")
        .output()
        .expect("the compiled build.rs");
    assert!(out.status.success(), "{os}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_target_other_than_linux_stops_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("build-script");
    let out = Command::new("rustc")
        .args(["--edition", "2021", "-o"])
        .arg(&exe)
        .arg(Path::new(ROOT).join("build.rs"))
        .output()
        .expect("rustc");
    assert!(out.status.success(), "rustc build.rs: {out:?}");

    for os in ["macos", "windows", "freebsd"] {
        let said = build_script_says(&exe, os);
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 1, "{os}: {said}");
        assert!(
            lines[0].starts_with("cargo::error=benchgate runs on Linux only")
                && lines[0].contains(&format!("{os:?}")),
            "{os}: {said}"
        );
    }
    let linux = build_script_says(&exe, "linux");
    assert!(!linux.contains("cargo::error"), "{linux}");
    assert!(
        linux.contains("cargo:rustc-env=BENCHGATE_RUSTC_VERSION=rustc "),
        "{linux}"
    );
}
