//! Which suite a command runs and the command line's changes to it: the one
//! discovery rule for the CLI and the action, and overrides checked by the
//! same rules as the file.

use std::path::{Path, PathBuf};

use super::limits::TooManyRounds;
use super::validate::{MAX_BUDGET, MAX_ROUNDS, MIN_ROUNDS};
use super::Suite;

/// The config file looked for in the working directory.
pub const DEFAULT_CONFIG: &str = "benchgate.toml";

/// Which suite runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SuiteChoice {
    /// A config file.
    File(PathBuf),
    /// The built-in default suite.
    Builtin,
}

impl SuiteChoice {
    /// The commands' rule (`run`, `calibrate`): `--config FILE`, else
    /// `./benchgate.toml` when it exists, else the built-in default suite.
    pub fn for_command(config: Option<&Path>) -> SuiteChoice {
        match config {
            Some(path) => SuiteChoice::File(path.to_path_buf()),
            None if Path::new(DEFAULT_CONFIG).exists() => {
                SuiteChoice::File(PathBuf::from(DEFAULT_CONFIG))
            }
            None => SuiteChoice::Builtin,
        }
    }

    /// The action's rule: input `config` (`builtin`: the built-in default
    /// suite), default `benchgate.toml`, which then has to exist (the action
    /// says so rather than gate on benchgate's own clients).
    pub fn for_action(input: Option<&Path>) -> SuiteChoice {
        match input {
            Some(p) if p.as_os_str() == "builtin" => SuiteChoice::Builtin,
            Some(p) => SuiteChoice::File(p.to_path_buf()),
            None => SuiteChoice::File(PathBuf::from(DEFAULT_CONFIG)),
        }
    }

    /// The config file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SuiteChoice::File(p) => Some(p),
            SuiteChoice::Builtin => None,
        }
    }

    /// Reads and validates the suite.
    pub fn load(&self) -> Result<Suite, super::ConfigError> {
        match self {
            SuiteChoice::File(p) => Suite::from_file(p),
            SuiteChoice::Builtin => Ok(Suite::default_suite()),
        }
    }
}

/// The command line's changes to a suite (`--rounds`, `--budget`,
/// `--no-pin`, `--scenario`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub rounds: Option<u32>,
    /// `--budget`: `[run] budget`, as text (`"5m"`).
    pub budget: Option<String>,
    pub no_pin: bool,
    /// Keep only these scenarios (empty: all).
    pub scenarios: Vec<String>,
}

impl Suite {
    /// The suite with `o` applied, checked by the rules the file is: rounds
    /// in range, `max_rounds` at least `rounds` (a file that leaves extra
    /// rounds off keeps them off), scenarios that exist.
    pub fn with_overrides(mut self, o: &Overrides) -> anyhow::Result<Suite> {
        self.keep_scenarios(&o.scenarios)?;
        if let Some(rounds) = o.rounds {
            anyhow::ensure!(
                (MIN_ROUNDS..=MAX_ROUNDS).contains(&rounds),
                "--rounds {rounds}: use a value from {MIN_ROUNDS} to {MAX_ROUNDS}"
            );
            if let Some(too_many) = TooManyRounds::of(self.cell_count(), rounds, self.run.windows) {
                let fix = match too_many.fit {
                    0 => too_many.fix(rounds),
                    fit => format!("give --rounds {fit} or fewer"),
                };
                anyhow::bail!(
                    "--rounds {rounds}: {}: {}; {fix}",
                    self.source,
                    too_many.why
                );
            }
            if self.run.max_rounds == self.run.rounds {
                self.run.max_rounds = rounds;
            }
            anyhow::ensure!(
                self.run.max_rounds >= rounds,
                "--rounds {rounds}: {} sets [run] max_rounds = {}, fewer rounds than that; give --rounds {} or fewer, or raise max_rounds",
                self.source,
                self.run.max_rounds,
                self.run.max_rounds
            );
            self.run.rounds = rounds;
        }
        if let Some(text) = &o.budget {
            let budget = super::units::parse_duration(text)
                .map_err(|e| anyhow::anyhow!("--budget {text:?}: {e}"))?;
            anyhow::ensure!(
                !budget.is_zero() && budget <= MAX_BUDGET,
                "--budget {text}: give a time above 0 and at most {}, like --budget 5m",
                super::units::format_duration(MAX_BUDGET)
            );
            // Extra rounds off in the file: a budget, not a count, stops them.
            if self.run.max_rounds == self.run.rounds {
                self.run.max_rounds = self.budget_max_rounds();
            }
            self.run.budget = Some(budget);
        }
        if o.no_pin {
            self.run.pin = false;
        }
        if let Some(too_many) = self.too_many_rounds() {
            let fix = too_many.fix(self.run.rounds);
            anyhow::bail!("{}: {}; {fix}", self.source, too_many.why);
        }
        Ok(self)
    }

    /// Keeps only the named scenarios (empty: all of them).
    fn keep_scenarios(&mut self, names: &[String]) -> anyhow::Result<()> {
        if names.is_empty() {
            return Ok(());
        }
        for name in names {
            anyhow::ensure!(
                self.scenarios.iter().any(|s| &s.name == name),
                "--scenario {name:?}: no such scenario in {}; it has: {}",
                self.source,
                self.scenarios
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        self.scenarios.retain(|s| names.contains(&s.name));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(max_rounds: Option<u32>) -> Suite {
        let extra = max_rounds.map_or(String::new(), |m| format!("max_rounds = {m}\n"));
        let text = format!(
            "[run]\nrounds = 5\n{extra}\n[[client]]\nname = \"h\"\nkind = \"hyper\"\n\n[[scenario]]\nname = \"a\"\npath = \"/bytes/22\"\n\n[[scenario]]\nname = \"b\"\npath = \"/bytes/22\"\n"
        );
        Suite::from_toml(&text, "bench.toml").unwrap()
    }

    fn rounds(r: u32) -> Overrides {
        Overrides {
            rounds: Some(r),
            ..Overrides::default()
        }
    }

    #[test]
    fn rounds_follow_the_files_rules() {
        let s = suite(None).with_overrides(&rounds(8)).unwrap();
        assert_eq!(
            (s.run.rounds, s.run.max_rounds),
            (8, 8),
            "extra rounds stay off"
        );
        let s = suite(Some(20)).with_overrides(&rounds(8)).unwrap();
        assert_eq!((s.run.rounds, s.run.max_rounds), (8, 20));
        let e = suite(Some(10)).with_overrides(&rounds(12)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--rounds 12: bench.toml sets [run] max_rounds = 10, fewer rounds than that; give --rounds 10 or fewer, or raise max_rounds"
        );
        let e = suite(None).with_overrides(&rounds(0)).unwrap_err();
        assert_eq!(e.to_string(), "--rounds 0: use a value from 1 to 100");
        assert!(suite(None).with_overrides(&rounds(101)).is_err());
    }

    #[test]
    fn a_budget_from_the_command_line_opens_extra_rounds_the_file_left_off() {
        let o = Overrides {
            budget: Some("90s".into()),
            ..Overrides::default()
        };
        let s = suite(None).with_overrides(&o).unwrap();
        assert_eq!(s.run.budget, Some(std::time::Duration::from_secs(90)));
        assert_eq!(s.run.max_rounds, 300);
        // A max_rounds the file sets stays.
        assert_eq!(
            suite(Some(20)).with_overrides(&o).unwrap().run.max_rounds,
            20
        );
        for bad in ["0s", "7h", "5"] {
            let o = Overrides {
                budget: Some(bad.into()),
                ..Overrides::default()
            };
            let e = suite(None).with_overrides(&o).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--budget {bad}"))
                    || e.starts_with(&format!("--budget \"{bad}\"")),
                "{e}"
            );
        }
    }

    #[test]
    fn scenarios_and_pinning() {
        let o = Overrides {
            no_pin: true,
            scenarios: vec!["b".into()],
            ..Overrides::default()
        };
        let s = suite(None).with_overrides(&o).unwrap();
        assert!(!s.run.pin);
        let names: Vec<_> = s.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        let o = Overrides {
            scenarios: vec!["c".into()],
            ..Overrides::default()
        };
        let e = suite(None).with_overrides(&o).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--scenario \"c\": no such scenario in bench.toml; it has: a, b"
        );
    }

    #[test]
    fn the_action_and_the_commands_find_the_suite() {
        assert_eq!(
            SuiteChoice::for_action(None).path(),
            Some(Path::new("benchgate.toml"))
        );
        assert_eq!(
            SuiteChoice::for_action(Some(Path::new("builtin"))),
            SuiteChoice::Builtin
        );
        assert_eq!(
            SuiteChoice::for_command(Some(Path::new("x.toml"))),
            SuiteChoice::File("x.toml".into())
        );
    }
}
