//! setup/install.sh, the action's installer, against a local HTTP server standing in
//! for the GitHub Release download (BENCHGATE_RELEASE_BASE_URL). Each case copies
//! setup/ into its own temporary "action tree" with its own release.txt, so the
//! repository's tree is never touched, and runs `bash install.sh` with a clean
//! environment whose RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_PATH
//! point into a temporary directory. The release archive is built from the test
//! build of benchgate (tar + gzip) with its checksums, by tests/common/release.rs,
//! which serves it too.
//! The source path runs in its dry mode (BENCHGATE_SETUP_DRY_SOURCE=1): the test
//! checks the choice and the cargo command, without a second build.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use common::release::{sha256, target_and_arch, Asset, ReleaseServer};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A release archive of `version` holding the test build of benchgate, with its
/// checksum and its binary's; built once per version.
fn asset(version: &str) -> Arc<Asset> {
    static ASSETS: OnceLock<Mutex<HashMap<String, Arc<Asset>>>> = OnceLock::new();
    let mut assets = ASSETS.get_or_init(Default::default).lock().unwrap();
    assets
        .entry(version.to_string())
        .or_insert_with(|| Arc::new(Asset::build(version, false)))
        .clone()
}

/// A temporary action tree (setup/ copied, an optional release.txt, a placeholder
/// Cargo.toml as the source to build) and the runner's directories.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new(manifest: Option<&str>) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let setup = dir.path().join("action/setup");
        std::fs::create_dir_all(&setup).unwrap();
        let repo_setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("setup");
        for f in ["install.sh", "action.yml"] {
            std::fs::copy(repo_setup.join(f), setup.join(f)).unwrap();
        }
        // Only the file: a release.txt in the repository's setup/ is never copied.
        if let Some(m) = manifest {
            std::fs::write(setup.join("release.txt"), m).unwrap();
        }
        std::fs::write(dir.path().join("action/Cargo.toml"), "[package]\n").unwrap();
        for d in ["tool-cache", "temp", "home"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        Runner { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Runs install.sh in a clean environment (nothing from a CI runner leaks in).
    fn install(&self, server: &ReleaseServer, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("bash");
        cmd.arg(self.path("action/setup/install.sh"))
            .current_dir(self.path("temp"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .env("HOME", self.path("home"))
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_TOOL_CACHE", self.path("tool-cache"))
            .env("RUNNER_TEMP", self.path("temp"))
            .env("GITHUB_OUTPUT", self.path("github_output"))
            .env("GITHUB_PATH", self.path("github_path"))
            .env("BENCHGATE_RELEASE_BASE_URL", &server.base)
            .env("BENCHGATE_SETUP_DRY_SOURCE", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("bash install.sh")
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_default()
    }

    /// Nothing was installed: no PATH entry, no outputs, nothing in the tool cache.
    fn assert_nothing_installed(&self) {
        assert_eq!(self.read("github_path"), "", "GITHUB_PATH");
        assert_eq!(self.read("github_output"), "", "GITHUB_OUTPUT");
        let cached: Vec<_> = std::fs::read_dir(self.path("tool-cache"))
            .unwrap()
            .collect();
        assert!(cached.is_empty(), "tool cache not empty: {cached:?}");
    }
}

fn manifest(version: &str, lines: &[(&str, &str, &str)]) -> String {
    let mut m = format!("# test manifest\nversion {version}\nrepository owner/benchgate\n");
    for (t, a, b) in lines {
        m.push_str(&format!("{t} {a} {b}\n"));
    }
    m
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn output_value(file: &str, key: &str) -> Option<String> {
    file.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")).map(str::to_string))
}

#[test]
fn good_asset_installs_then_the_cache_is_used() {
    let (target, arch) = target_and_arch();
    let a = asset(VERSION);
    let server = ReleaseServer::with(&[(VERSION, &a)]);
    let runner = Runner::new(Some(&manifest(
        VERSION,
        &[
            (target, &a.archive_sha, &a.binary_sha),
            (
                "riscv64gc-unknown-linux-musl",
                &"0".repeat(64),
                &"1".repeat(64),
            ),
        ],
    )));

    let t = Instant::now();
    let out = runner.install(&server, &[]);
    let took = t.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    eprintln!(
        "install from the local server, cold cache: {took:?} ({} bytes)",
        a.bytes.len()
    );
    let asset_path = format!("/releases/download/v{VERSION}/{}", a.name);
    assert_eq!(server.hits(), vec![asset_path.clone()]);

    let dir = runner.path(&format!("tool-cache/benchgate/{VERSION}/{arch}"));
    let bin = dir.join("benchgate");
    assert!(runner
        .path(&format!("tool-cache/benchgate/{VERSION}/{arch}.complete"))
        .is_file());
    assert_eq!(runner.read("github_path").trim(), dir.to_str().unwrap());
    let outputs = runner.read("github_output");
    assert_eq!(output_value(&outputs, "path").as_deref(), bin.to_str());
    assert_eq!(output_value(&outputs, "version").as_deref(), Some(VERSION));
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("benchgate {VERSION}")
    );
    assert_eq!(sha256(&bin), a.binary_sha);

    // Again: from the cache, no second download.
    let out = runner.install(&server, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("cached"), "{}", text(&out));
    assert_eq!(
        server.hits(),
        vec![asset_path.clone()],
        "the second run downloaded"
    );
    assert_eq!(
        output_value(&runner.read("github_output"), "path").as_deref(),
        bin.to_str()
    );

    // A cached binary that no longer matches the manifest is downloaded again.
    std::fs::write(&bin, b"#!/bin/sh\necho benchgate 6.6.6\n").unwrap();
    let out = runner.install(&server, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("does not match the checksum: downloading again"),
        "{}",
        text(&out)
    );
    assert_eq!(server.hits(), [asset_path.clone(), asset_path]);
    assert_eq!(sha256(&bin), a.binary_sha);
}

#[test]
fn a_wrong_checksum_is_refused_and_nothing_is_installed() {
    let (target, _) = target_and_arch();
    let a = asset(VERSION);
    let server = ReleaseServer::with(&[(VERSION, &a)]);
    let wrong = "ab".repeat(32);

    // The archive's checksum.
    let runner = Runner::new(Some(&manifest(VERSION, &[(target, &wrong, &a.binary_sha)])));
    let out = runner.install(&server, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("checksum mismatch for {}", a.name)),
        "{t}"
    );
    assert!(
        t.contains(&format!("expected {wrong}, got {}", a.archive_sha)),
        "{t}"
    );
    assert!(
        t.contains(&format!("{}/v{VERSION}/{}", server.base, a.name)),
        "{t}"
    );
    assert!(t.contains("the asset does not match the checksum committed in the action's tagged source; do not use it"), "{t}");
    assert!(
        !t.contains("building benchgate from source"),
        "a mismatch fell back to the source: {t}"
    );
    runner.assert_nothing_installed();

    // The binary's, with the archive's right.
    let runner = Runner::new(Some(&manifest(
        VERSION,
        &[(target, &a.archive_sha, &wrong)],
    )));
    let out = runner.install(&server, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("expected {wrong}, got {}", a.binary_sha)),
        "{t}"
    );
    runner.assert_nothing_installed();
}

#[test]
fn a_missing_asset_takes_the_source_path() {
    let (target, _) = target_and_arch();
    let a = asset(VERSION);
    let server = ReleaseServer::with(&[]); // every download answers 404
    let runner = Runner::new(Some(&manifest(
        VERSION,
        &[(target, &a.archive_sha, &a.binary_sha)],
    )));
    let out = runner.install(&server, &[]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(
        server.hits(),
        [format!("/releases/download/v{VERSION}/{}", a.name)]
    );
    assert!(t.contains("answered 404"), "{t}");
    assert!(t.contains("::notice title=benchgate setup::no release asset for this ref: building benchgate from source"), "{t}");
    let root = runner.path("action").canonicalize().unwrap();
    let cmd = format!("cargo install --locked --path {} --root ", root.display());
    assert!(t.contains(&cmd), "expected `{cmd}` in: {t}");
    runner.assert_nothing_installed();
}

#[test]
fn no_manifest_takes_the_source_path() {
    let server = ReleaseServer::with(&[]);
    let runner = Runner::new(None);
    let out = runner.install(&server, &[]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        server.hits().is_empty(),
        "downloaded without a manifest: {:?}",
        server.hits()
    );
    assert!(t.contains("not a release (no setup/release.txt)"), "{t}");
    let root = runner.path("action").canonicalize().unwrap();
    assert!(
        t.contains(&format!(
            "cargo install --locked --path {} --root ",
            root.display()
        )),
        "{t}"
    );
    runner.assert_nothing_installed();
}

#[test]
fn non_linux_runners_are_refused() {
    let server = ReleaseServer::with(&[]);
    let runner = Runner::new(None);
    let out = runner.install(&server, &[("RUNNER_OS", "macOS")]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("benchgate's action runs on Linux runners only (got macOS); use runs-on: ubuntu-latest, or the container image"), "{t}");
    assert!(server.hits().is_empty());
    runner.assert_nothing_installed();
}

#[test]
fn another_version_needs_its_checksum() {
    let (target, arch) = target_and_arch();
    let a = asset(VERSION);
    let server = ReleaseServer::with(&[(VERSION, &a)]);
    // This tree's release is 0.0.9; the test build (VERSION) is "another version".
    let runner = Runner::new(Some(&manifest(
        "0.0.9",
        &[(target, &"0".repeat(64), &"1".repeat(64))],
    )));

    let out = runner.install(&server, &[("BENCHGATE_SETUP_VERSION", VERSION)]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "pin the action itself to v{VERSION}: uses: owner/benchgate@v{VERSION}"
        )),
        "{t}"
    );
    assert!(server.hits().is_empty());
    runner.assert_nothing_installed();

    // A wrong explicit sha256 is refused like a wrong manifest line.
    let wrong = "cd".repeat(32);
    let out = runner.install(
        &server,
        &[
            ("BENCHGATE_SETUP_VERSION", VERSION),
            ("BENCHGATE_SETUP_SHA256", &wrong),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("expected {wrong}, got {}", a.archive_sha)),
        "{}",
        text(&out)
    );
    runner.assert_nothing_installed();

    // With its archive's sha256 (v-prefixed version too) it installs.
    let vtag = format!("v{VERSION}");
    let out = runner.install(
        &server,
        &[
            ("BENCHGATE_SETUP_VERSION", &vtag),
            ("BENCHGATE_SETUP_SHA256", &a.archive_sha),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let bin = runner.path(&format!("tool-cache/benchgate/{VERSION}/{arch}/benchgate"));
    assert_eq!(
        output_value(&runner.read("github_output"), "path").as_deref(),
        bin.to_str()
    );
    assert_eq!(
        output_value(&runner.read("github_output"), "version").as_deref(),
        Some(VERSION)
    );

    // And again from the cache: the binary's checksum recorded at install vouches for it.
    let out = runner.install(
        &server,
        &[
            ("BENCHGATE_SETUP_VERSION", VERSION),
            ("BENCHGATE_SETUP_SHA256", &a.archive_sha),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("cached"), "{}", text(&out));
    assert_eq!(server.hits().len(), 2, "{:?}", server.hits());
}
