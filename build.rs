//! Stops a build for a target other than Linux with one line (benchgate reads
//! /proc, uses epoll, timerfd, prctl and Linux's scheduling: elsewhere the crate
//! would fail with a cascade of compile errors), then records the compiler
//! version for the results file's environment fingerprint.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "linux" {
        println!(
            "cargo::error=benchgate runs on Linux only (x86_64, aarch64), not on target OS \
             {os:?}: build it on Linux, or use the container image or the GitHub Action"
        );
        return;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BENCHGATE_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
