//! A GitHub Release of the test build of benchgate: the archive
//! benchgate-<version>-<target>.tar.gz with its checksums, and a tiny HTTP
//! server on the loopback standing in for the release download
//! (`BENCHGATE_RELEASE_BASE_URL`).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The release target and the tool-cache arch setup/install.sh picks on this
/// machine.
pub fn target_and_arch() -> (&'static str, &'static str) {
    match std::env::consts::ARCH {
        "x86_64" => ("x86_64-unknown-linux-musl", "x64"),
        "aarch64" => ("aarch64-unknown-linux-musl", "arm64"),
        other => panic!("no benchgate release target for {other}"),
    }
}

pub fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// A release archive holding the test build of benchgate, with its checksum
/// and its binary's.
pub struct Asset {
    pub target: &'static str,
    /// benchgate-<version>-<target>.tar.gz
    pub name: String,
    pub bytes: Vec<u8>,
    pub archive_sha: String,
    pub binary_sha: String,
}

impl Asset {
    /// Packs the test build as the release of `version` (tar + gzip). With
    /// `strip`, its debug info is stripped when `strip` is on the machine (a
    /// quarter of the size, 5 s less gzip).
    pub fn build(version: &str, strip: bool) -> Asset {
        let (target, _) = target_and_arch();
        let dir = tempfile::tempdir().unwrap();
        let stem = format!("benchgate-{version}-{target}");
        std::fs::create_dir(dir.path().join(&stem)).unwrap();
        let bin = dir.path().join(&stem).join("benchgate");
        let stripped = strip
            && Command::new("strip")
                .args(["--strip-debug", "-o"])
                .arg(&bin)
                .arg(env!("CARGO_BIN_EXE_benchgate"))
                .status()
                .is_ok_and(|s| s.success());
        if !stripped {
            std::fs::copy(env!("CARGO_BIN_EXE_benchgate"), &bin).unwrap();
        }
        let name = format!("{stem}.tar.gz");
        let status = Command::new("sh")
            .arg("-c")
            .arg(r#"tar -C "$1" -cf - "$2" | gzip -1 >"$1/$3""#)
            .args(["sh", dir.path().to_str().unwrap(), &stem, &name])
            .status()
            .unwrap();
        assert!(status.success(), "tar | gzip");
        let archive = dir.path().join(&name);
        Asset {
            target,
            archive_sha: sha256(&archive),
            binary_sha: sha256(&bin),
            bytes: std::fs::read(&archive).unwrap(),
            name,
        }
    }

    /// Its path on the download server as the release of `version`.
    pub fn url_path(&self, version: &str) -> String {
        format!("/releases/download/v{version}/{}", self.name)
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1:0: GET of a known path answers its
/// bytes, anything else 404. Records every requested path.
pub struct ReleaseServer {
    /// The download base: `http://127.0.0.1:<port>/releases/download`.
    pub base: String,
    pub hits: Arc<Mutex<Vec<String>>>,
}

impl ReleaseServer {
    /// A server with these release assets, at /releases/download/v<version>/<name>.
    pub fn with(assets: &[(&str, &Arc<Asset>)]) -> ReleaseServer {
        let files = assets
            .iter()
            .map(|(v, a)| (a.url_path(v), Arc::clone(a)))
            .collect();
        ReleaseServer::start(files)
    }

    fn start(files: HashMap<String, Arc<Asset>>) -> ReleaseServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!(
            "http://{}/releases/download",
            listener.local_addr().unwrap()
        );
        let hits = Arc::new(Mutex::new(Vec::new()));
        let seen = hits.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&req);
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                seen.lock().unwrap().push(path.clone());
                let (status, body): (&str, &[u8]) = match files.get(&path) {
                    Some(a) => ("200 OK", &a.bytes),
                    None => ("404 Not Found", b"Not Found"),
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(body);
            }
        });
        ReleaseServer { base, hits }
    }

    /// The paths requested so far, in order.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}
