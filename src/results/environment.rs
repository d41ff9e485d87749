//! The environment fingerprint: what a run was measured on, so that runs on
//! different machines are recognised as not comparable.

use serde::{Deserialize, Serialize};

/// Machine and build facts recorded with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub cores: u32,
    pub kernel: String,
    pub os: String,
    pub arch: String,
    pub benchgate_version: String,
    pub rustc_version: String,
    pub pinning: Pinning,
}

/// How server and clients were placed on CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pinning {
    pub enabled: bool,
    pub server_cpus: Vec<usize>,
    pub client_cpus: Vec<usize>,
}

/// Git commit and ref the run measured, when known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitInfo {
    pub sha: Option<String>,
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
}

impl Environment {
    /// The fingerprint of a run whose machine is not known (a JMH result
    /// file records its JVM, not its CPU): every field `unknown`, so two
    /// such runs differ in nothing benchgate checks.
    pub fn unknown() -> Environment {
        let unknown = || "unknown".to_string();
        Environment {
            cpu_model: unknown(),
            cores: 0,
            kernel: unknown(),
            os: unknown(),
            arch: unknown(),
            benchgate_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc_version: unknown(),
            pinning: Pinning {
                enabled: false,
                server_cpus: Vec::new(),
                client_cpus: Vec::new(),
            },
        }
    }

    /// Reads the fingerprint of this machine.
    pub fn detect(pinning: Pinning) -> Environment {
        Environment {
            cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
            cores: crate::measure::resources::allowed_cpus().len() as u32,
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            os: os_name(),
            arch: std::env::consts::ARCH.to_string(),
            benchgate_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc_version: option_env!("BENCHGATE_RUSTC_VERSION")
                .unwrap_or("unknown")
                .to_string(),
            pinning,
        }
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn os_name() -> String {
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_this_machine() {
        let env = Environment::detect(Pinning {
            enabled: false,
            server_cpus: vec![],
            client_cpus: vec![],
        });
        assert!(env.cores >= 1);
        assert_ne!(env.kernel, "unknown");
        assert_eq!(env.benchgate_version, env!("CARGO_PKG_VERSION"));
        assert!(
            env.rustc_version.starts_with("rustc "),
            "{}",
            env.rustc_version
        );
    }
}
