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
    /// The CI runner's image (`ImageOS ImageVersion` on GitHub's hosted
    /// runners, read at the edge); absent elsewhere and in files written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_image: Option<String>,
    /// The CPU frequency governor of the first CPU this process may use
    /// (`cpufreq/scaling_governor`); absent where the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
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
            runner_image: None,
            governor: None,
        }
    }

    /// Reads the fingerprint of this machine; `runner_image` is the CI's
    /// word ([`runner_image`]), read at the edge.
    pub fn detect(pinning: Pinning, runner_image: Option<String>) -> Environment {
        let cpus = crate::measure::resources::allowed_cpus();
        Environment {
            cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
            cores: cpus.len() as u32,
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            os: os_name(),
            arch: std::env::consts::ARCH.to_string(),
            benchgate_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc_version: option_env!("BENCHGATE_RUSTC_VERSION")
                .unwrap_or("unknown")
                .to_string(),
            pinning,
            runner_image,
            governor: cpus.first().and_then(|cpu| {
                read_trimmed(&format!(
                    "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
                ))
            }),
        }
    }
}

/// The runner image the CI names, from `get` (a variable's value by name):
/// GitHub's hosted runners set `ImageOS` (`ubuntu24`) and `ImageVersion`
/// (`20250105.1.0`); `None` without an `ImageVersion`.
pub fn runner_image(get: impl Fn(&str) -> Option<String>) -> Option<String> {
    let get = |k: &str| {
        get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let version = get("ImageVersion")?;
    Some(match get("ImageOS") {
        Some(os) => format!("{os} {version}"),
        None => version,
    })
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
        let env = Environment::detect(
            Pinning {
                enabled: false,
                server_cpus: vec![],
                client_cpus: vec![],
            },
            None,
        );
        assert!(env.cores >= 1);
        assert_ne!(env.kernel, "unknown");
        assert_eq!(env.benchgate_version, env!("CARGO_PKG_VERSION"));
        assert!(
            env.rustc_version.starts_with("rustc "),
            "{}",
            env.rustc_version
        );
    }

    #[test]
    fn the_runner_image_is_the_ci_s_word() {
        let hosted = |k: &str| match k {
            "ImageOS" => Some("ubuntu24".to_string()),
            "ImageVersion" => Some("20250105.1.0".to_string()),
            _ => None,
        };
        assert_eq!(
            runner_image(hosted).as_deref(),
            Some("ubuntu24 20250105.1.0")
        );
        let version_only = |k: &str| (k == "ImageVersion").then(|| "2.0".to_string());
        assert_eq!(runner_image(version_only).as_deref(), Some("2.0"));
        let own = |k: &str| (k == "ImageOS").then(|| "ubuntu24".to_string());
        assert_eq!(runner_image(own), None, "no version: not a known image");
    }
}
