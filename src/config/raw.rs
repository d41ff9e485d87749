//! Raw model of `benchgate.toml`: every field optional and carrying its byte span,
//! read from the spanned tree (`tree`). This layer checks the *shape* only: unknown
//! fields, value types, tables versus arrays of tables. What the values mean (ranges,
//! units, names, combinations) is checked in `validate`.

use std::ops::Range;

use super::error::Problem;
use super::tree::{Key, Node, Value};

/// A value and the byte span it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct At<T> {
    pub value: T,
    pub span: Range<usize>,
}

/// A size as written: a unit string (`"1MiB"`) or a plain integer of bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeInput {
    Text(String),
    Bytes(i64),
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawConfig {
    pub run: RawRun,
    pub clients: Vec<RawClient>,
    /// Span of the `client` value, when the key is present at all.
    pub clients_span: Option<Range<usize>>,
    pub scenarios: Vec<RawScenario>,
    pub scenarios_span: Option<Range<usize>>,
    /// `[gate]` and `[compare]` as written; `gate_parse` reads them (their keys
    /// are metric names, not a fixed field list).
    pub gate: Option<Node>,
    pub compare: Option<Node>,
    /// `[jmh]` as written; `jmh::build` reads it.
    pub jmh: Option<Node>,
    /// `[publish.cloudwatch]`, when present.
    pub publish_cloudwatch: Option<RawCloudWatch>,
    /// `[[server]]` (or a single `[server]`): servers under test, in order.
    pub servers: Vec<super::server::RawServer>,
    pub servers_span: Option<Range<usize>>,
    /// Length of the text: where "add a table" errors point.
    pub end: usize,
}

/// `[run]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawRun {
    pub rounds: Option<At<i64>>,
    pub max_rounds: Option<At<i64>>,
    pub warmup: Option<At<String>>,
    pub duration: Option<At<String>>,
    pub requests: Option<At<i64>>,
    pub timeout: Option<At<String>>,
    pub pin: Option<At<bool>>,
    pub anchor: Option<At<bool>>,
    pub budget: Option<At<String>>,
    pub windows: Option<At<i64>>,
    pub schedule: Option<At<String>>,
}

/// A table of string values with their keys, in document order.
pub type StringTable = Vec<(At<String>, At<String>)>;

/// One `[[client]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawClient {
    /// How errors name this entry: `client "hyper"` or `client[1]`.
    pub label: String,
    /// Span of the whole table (header to last key).
    pub span: Range<usize>,
    pub name: Option<At<String>>,
    pub kind: Option<At<String>>,
    pub pool: Option<At<i64>>,
    pub http: Option<At<String>>,
    pub tls: Option<At<bool>>,
    /// `kind = "command"` only: argv, setup argv, working directory, extra
    /// environment, variables passed through, per-trial time limit.
    pub command: Option<At<Vec<At<String>>>>,
    pub setup: Option<At<Vec<At<String>>>>,
    pub cwd: Option<At<String>>,
    pub env: Option<At<StringTable>>,
    pub pass_env: Option<At<Vec<At<String>>>>,
    pub timeout: Option<At<String>>,
    /// `kind = "command"` only: the result format (`"jmh"`) and, for JMH,
    /// the benchmark method.
    pub result: Option<At<String>>,
    pub benchmark: Option<At<String>>,
    /// CPU to burn per request, a duration string (`"1300ns"`).
    pub inject_cpu: Option<At<String>>,
    /// Deprecated spelling of `inject_cpu`: whole microseconds.
    pub inject_cpu_us: Option<At<i64>>,
    /// A share of requests delayed: `{ share = "2%", delay = "1ms" }`.
    pub inject_tail: Option<At<StringTable>>,
}

/// One `[[scenario]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawScenario {
    /// How errors name this entry: `scenario "get-22b"` or `scenario[2]`.
    pub label: String,
    pub span: Range<usize>,
    pub name: Option<At<String>>,
    pub method: Option<At<String>>,
    pub path: Option<At<String>>,
    pub body: Option<At<SizeInput>>,
    pub concurrency: Option<At<i64>>,
    pub rate: Option<At<f64>>,
    pub max_in_flight: Option<At<i64>>,
    pub warmup: Option<At<String>>,
    pub duration: Option<At<String>>,
    pub requests: Option<At<i64>>,
    pub timeout: Option<At<String>>,
    pub clients: Option<At<Vec<At<String>>>>,
}

/// `dimensions = { Name = "value" }`: names and values with their spans.
pub type RawDimensions = At<Vec<(At<String>, At<String>)>>;

/// `[publish.cloudwatch]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawCloudWatch {
    pub span: Range<usize>,
    pub namespace: Option<At<String>>,
    pub region: Option<At<String>>,
    /// `dimensions = { Name = "value" }`, in document order.
    pub dimensions: Option<RawDimensions>,
    pub metrics: Option<At<Vec<At<String>>>>,
    pub storage_resolution: Option<At<i64>>,
    pub run_id_dimension: Option<At<bool>>,
}

/// An entry of an array of tables: its span and its entries.
type SpannedTable<'a> = (Range<usize>, &'a [(Key, Node)]);

/// A known field: its name, the type in words, and an example line for fixes.
pub(crate) struct Spec {
    name: &'static str,
    expected: &'static str,
    example: &'static str,
}

pub(super) const fn spec(
    name: &'static str,
    expected: &'static str,
    example: &'static str,
) -> Spec {
    Spec {
        name,
        expected,
        example,
    }
}

const TOP: &[Spec] = &[
    spec("run", "a table", "[run]"),
    spec("client", "an array of tables", "[[client]]"),
    spec("scenario", "an array of tables", "[[scenario]]"),
    spec("gate", "a table", "[gate]"),
    spec("compare", "a table", "[compare]"),
    spec("publish", "a table", "[publish.cloudwatch]"),
    spec("server", "an array of tables", "[[server]]"),
    spec("jmh", "a table", "[jmh]"),
];

const PUBLISH: &[Spec] = &[spec("cloudwatch", "a table", "[publish.cloudwatch]")];

const CLOUDWATCH: &[Spec] = &[
    spec("namespace", "a string", "namespace = \"Benchgate\""),
    spec("region", "a string", "region = \"us-east-1\""),
    spec(
        "dimensions",
        "a table of strings",
        "dimensions = { Team = \"sdk\" }",
    ),
    spec(
        "metrics",
        "an array of metric names",
        "metrics = [\"throughput_rps\", \"latency_p99_us\"]",
    ),
    spec("storage_resolution", INTEGER, "storage_resolution = 60"),
    spec("run_id_dimension", "a boolean", "run_id_dimension = true"),
];

pub(super) const DURATION: &str = "a duration string";
const INTEGER: &str = "an integer";

const RUN: &[Spec] = &[
    spec("rounds", INTEGER, "rounds = 5"),
    spec("max_rounds", INTEGER, "max_rounds = 30"),
    spec("warmup", DURATION, "warmup = \"1s\""),
    spec("duration", DURATION, "duration = \"3s\""),
    spec("requests", INTEGER, "requests = 200000"),
    spec("timeout", DURATION, "timeout = \"10s\""),
    spec("pin", "a boolean", "pin = true"),
    spec("anchor", "a boolean", "anchor = true"),
    spec("budget", DURATION, "budget = \"5m\""),
    spec("windows", INTEGER, "windows = 4"),
    spec("schedule", "a string", "schedule = \"sequential\""),
];

const CLIENT: &[Spec] = &[
    spec("name", "a string", "name = \"hyper\""),
    spec("kind", "a string", "kind = \"hyper\""),
    spec("pool", INTEGER, "pool = 10"),
    spec("http", "a string", "http = \"1.1\" or http = \"2\""),
    spec("tls", "a boolean", "tls = false"),
    spec(
        "command",
        "an array of strings (argv)",
        "command = [\"java\", \"-jar\", \"bench.jar\"]",
    ),
    spec(
        "setup",
        "an array of strings (argv)",
        "setup = [\"sh\", \"build.sh\"]",
    ),
    spec("cwd", "a string (a directory)", "cwd = \"clients\""),
    spec(
        "env",
        "a table of strings",
        "env = { JAVA_OPTS = \"-Xmx256m\" }",
    ),
    spec(
        "pass_env",
        "an array of variable names",
        "pass_env = [\"NPM_TOKEN\"]",
    ),
    spec("timeout", DURATION, "timeout = \"60s\""),
    spec("result", "a string", "result = \"jmh\""),
    spec(
        "benchmark",
        "a string (a JMH benchmark method)",
        "benchmark = \"org.example.HttpBench.get\"",
    ),
    spec("inject_cpu", DURATION, "inject_cpu = \"1300ns\""),
    spec("inject_cpu_us", INTEGER, "inject_cpu_us = 50"),
    spec(
        "inject_tail",
        "a table of strings",
        "inject_tail = { share = \"2%\", delay = \"1ms\" }",
    ),
];

const SCENARIO: &[Spec] = &[
    spec("name", "a string", "name = \"get-22b\""),
    spec("method", "a string", "method = \"GET\""),
    spec("path", "a string", "path = \"/bytes/22\""),
    spec(
        "body",
        "a size (string with unit, or integer bytes)",
        "body = \"1MiB\"",
    ),
    spec("concurrency", INTEGER, "concurrency = 10"),
    spec("rate", "a number (requests per second)", "rate = 2000"),
    spec("max_in_flight", INTEGER, "max_in_flight = 256"),
    spec("warmup", DURATION, "warmup = \"1s\""),
    spec("duration", DURATION, "duration = \"3s\""),
    spec("requests", INTEGER, "requests = 200000"),
    spec("timeout", DURATION, "timeout = \"10s\""),
    spec(
        "clients",
        "an array of client names",
        "clients = [\"hyper\", \"reqwest\"]",
    ),
];

/// Reads the spanned tree into the raw model, rejecting unknown fields and wrong types.
pub(crate) fn read(root: &[(Key, Node)], text_len: usize) -> Result<RawConfig, Problem> {
    let top = Fields {
        label: String::new(),
        section: "the top level",
        entries: root,
        specs: TOP,
    };
    top.check_keys()?;
    let mut config = RawConfig {
        end: text_len,
        ..RawConfig::default()
    };
    if let Some(node) = top.get("run") {
        let Value::Table(entries) = &node.value else {
            return Err(top.wrong_type(
                "run",
                node,
                "write a single [run] table (single brackets)",
            ));
        };
        config.run = read_run(entries)?;
    }
    if let Some(node) = top.get("client") {
        config.clients_span = Some(node.span.clone());
        for (i, (span, entries)) in top.tables("client", node)?.into_iter().enumerate() {
            config.clients.push(read_client(i, span, entries)?);
        }
    }
    if let Some(node) = top.get("server") {
        config.servers_span = Some(node.span.clone());
        // A single `[server]` table is one server; `[[server]]` any number.
        let tables = match &node.value {
            Value::Table(entries) => vec![(node.span.clone(), entries.as_slice())],
            _ => top.tables("server", node)?,
        };
        for (i, (span, entries)) in tables.into_iter().enumerate() {
            config.servers.push(super::server::read(i, span, entries)?);
        }
    }
    if let Some(node) = top.get("scenario") {
        config.scenarios_span = Some(node.span.clone());
        for (i, (span, entries)) in top.tables("scenario", node)?.into_iter().enumerate() {
            config.scenarios.push(read_scenario(i, span, entries)?);
        }
    }
    config.gate = top.get("gate").cloned();
    config.compare = top.get("compare").cloned();
    config.jmh = top.get("jmh").cloned();
    if let Some(node) = top.get("publish") {
        config.publish_cloudwatch = read_publish(&top, node)?;
    }
    Ok(config)
}

fn read_publish(top: &Fields, node: &Node) -> Result<Option<RawCloudWatch>, Problem> {
    let Value::Table(entries) = &node.value else {
        return Err(top.wrong_type("publish", node, "write it as a [publish.cloudwatch] table"));
    };
    let publish = Fields {
        label: "publish".into(),
        section: "[publish]",
        entries,
        specs: PUBLISH,
    };
    publish.check_keys()?;
    let Some(node) = publish.get("cloudwatch") else {
        return Ok(None);
    };
    let Value::Table(entries) = &node.value else {
        return Err(publish.wrong_type(
            "cloudwatch",
            node,
            "write it as a [publish.cloudwatch] table",
        ));
    };
    let f = Fields {
        label: "publish.cloudwatch".into(),
        section: "[publish.cloudwatch]",
        entries,
        specs: CLOUDWATCH,
    };
    f.check_keys()?;
    Ok(Some(RawCloudWatch {
        span: node.span.clone(),
        namespace: f.string("namespace")?,
        region: f.string("region")?,
        dimensions: f.string_table("dimensions")?,
        metrics: f.strings_of("metrics", "a metric name")?,
        storage_resolution: f.integer("storage_resolution")?,
        run_id_dimension: f.boolean("run_id_dimension")?,
    }))
}

fn read_run(entries: &[(Key, Node)]) -> Result<RawRun, Problem> {
    let f = Fields {
        label: "run".into(),
        section: "[run]",
        entries,
        specs: RUN,
    };
    f.check_keys()?;
    Ok(RawRun {
        rounds: f.integer("rounds")?,
        max_rounds: f.integer("max_rounds")?,
        warmup: f.string("warmup")?,
        duration: f.string("duration")?,
        requests: f.integer("requests")?,
        timeout: f.string("timeout")?,
        pin: f.boolean("pin")?,
        anchor: f.boolean("anchor")?,
        budget: f.string("budget")?,
        windows: f.integer("windows")?,
        schedule: f.string("schedule")?,
    })
}

fn read_client(
    index: usize,
    span: Range<usize>,
    entries: &[(Key, Node)],
) -> Result<RawClient, Problem> {
    let f = Fields {
        label: label("client", index, entries),
        section: "[[client]]",
        entries,
        specs: CLIENT,
    };
    f.check_keys()?;
    Ok(RawClient {
        span,
        name: f.string("name")?,
        kind: f.string("kind")?,
        pool: f.integer("pool")?,
        http: f.string("http")?,
        tls: f.boolean("tls")?,
        command: f.strings("command")?,
        setup: f.strings("setup")?,
        cwd: f.string("cwd")?,
        env: f.string_table("env")?,
        pass_env: f.strings_of("pass_env", "a variable name")?,
        timeout: f.string("timeout")?,
        result: f.string("result")?,
        benchmark: f.string("benchmark")?,
        inject_cpu: f.string("inject_cpu")?,
        inject_cpu_us: f.integer("inject_cpu_us")?,
        inject_tail: f.string_table("inject_tail")?,
        label: f.label,
    })
}

fn read_scenario(
    index: usize,
    span: Range<usize>,
    entries: &[(Key, Node)],
) -> Result<RawScenario, Problem> {
    let f = Fields {
        label: label("scenario", index, entries),
        section: "[[scenario]]",
        entries,
        specs: SCENARIO,
    };
    f.check_keys()?;
    Ok(RawScenario {
        span,
        name: f.string("name")?,
        method: f.string("method")?,
        path: f.string("path")?,
        body: f.size("body")?,
        concurrency: f.integer("concurrency")?,
        rate: f.number("rate")?,
        max_in_flight: f.integer("max_in_flight")?,
        warmup: f.string("warmup")?,
        duration: f.string("duration")?,
        requests: f.integer("requests")?,
        timeout: f.string("timeout")?,
        clients: f.strings("clients")?,
        label: f.label,
    })
}

/// `client "hyper"` when the entry has a name fit to show, `client[1]` otherwise.
pub(super) fn label(section: &str, index: usize, entries: &[(Key, Node)]) -> String {
    let name = entries
        .iter()
        .find(|(k, _)| k.name == "name")
        .map(|(_, n)| &n.value);
    match name {
        Some(Value::String(s)) if super::validate::name_problem(s).is_none() => {
            format!("{section} {s:?}")
        }
        _ => format!("{section}[{index}]"),
    }
}

/// One table being read: its entries, the fields it allows, and how to name it.
pub(super) struct Fields<'a> {
    pub label: String,
    pub section: &'static str,
    pub entries: &'a [(Key, Node)],
    pub specs: &'static [Spec],
}

impl<'a> Fields<'a> {
    fn path(&self, field: &str) -> String {
        if self.label.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.label)
        }
    }

    pub(super) fn check_keys(&self) -> Result<(), Problem> {
        for (key, _) in self.entries {
            if self.specs.iter().any(|s| s.name == key.name) {
                continue;
            }
            let allowed: Vec<&str> = self.specs.iter().map(|s| s.name).collect();
            let hint = match closest(&key.name, &allowed) {
                Some(near) => format!("did you mean `{near}`? "),
                None => String::new(),
            };
            return Err(Problem::new(
                key.span.clone(),
                self.path(&key.name),
                format!("unknown field `{}` in {}", key.name, self.section),
                format!("{hint}allowed fields are: {}", allowed.join(", ")),
            ));
        }
        Ok(())
    }

    pub(super) fn get(&self, name: &str) -> Option<&'a Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == name)
            .map(|(_, n)| n)
    }

    fn spec(&self, name: &str) -> &'static Spec {
        self.specs
            .iter()
            .find(|s| s.name == name)
            .expect("field is in the spec list")
    }

    fn wrong_type(&self, name: &str, node: &Node, fix: &str) -> Problem {
        let spec = self.spec(name);
        Problem::new(
            node.span.clone(),
            self.path(name),
            format!(
                "expected {}, found {}",
                spec.expected,
                node.value.describe()
            ),
            fix.to_string(),
        )
    }

    fn typed<T>(
        &self,
        name: &str,
        pick: impl Fn(&Value) -> Option<T>,
    ) -> Result<Option<At<T>>, Problem> {
        let Some(node) = self.get(name) else {
            return Ok(None);
        };
        match pick(&node.value) {
            Some(value) => Ok(Some(At {
                value,
                span: node.span.clone(),
            })),
            None => Err(self.wrong_type(
                name,
                node,
                &format!("write it like {}", self.spec(name).example),
            )),
        }
    }

    pub(super) fn string(&self, name: &str) -> Result<Option<At<String>>, Problem> {
        self.typed(name, |v| match v {
            Value::String(s) => Some(s.clone()),
            _ => None,
        })
    }

    fn integer(&self, name: &str) -> Result<Option<At<i64>>, Problem> {
        self.typed(name, |v| match v {
            Value::Integer(i) => Some(*i),
            _ => None,
        })
    }

    pub(super) fn boolean(&self, name: &str) -> Result<Option<At<bool>>, Problem> {
        self.typed(name, |v| match v {
            Value::Boolean(b) => Some(*b),
            _ => None,
        })
    }

    fn number(&self, name: &str) -> Result<Option<At<f64>>, Problem> {
        self.typed(name, |v| match v {
            Value::Integer(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        })
    }

    fn size(&self, name: &str) -> Result<Option<At<SizeInput>>, Problem> {
        self.typed(name, |v| match v {
            Value::Integer(i) => Some(SizeInput::Bytes(*i)),
            Value::String(s) => Some(SizeInput::Text(s.clone())),
            _ => None,
        })
    }

    pub(super) fn strings(&self, name: &str) -> Result<Option<At<Vec<At<String>>>>, Problem> {
        self.strings_of(name, "a client name")
    }

    /// An array of strings; `what` names one in errors (`a metric name`).
    pub(super) fn strings_of(
        &self,
        name: &str,
        what: &str,
    ) -> Result<Option<At<Vec<At<String>>>>, Problem> {
        let Some(node) = self.get(name) else {
            return Ok(None);
        };
        let fix = format!("write it like {}", self.spec(name).example);
        let Value::Array(items) = &node.value else {
            return Err(self.wrong_type(name, node, &fix));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Value::String(s) = &item.value else {
                return Err(Problem::new(
                    item.span.clone(),
                    format!("{}[{i}]", self.path(name)),
                    format!(
                        "expected {what} (a string), found {}",
                        item.value.describe()
                    ),
                    fix,
                ));
            };
            out.push(At {
                value: s.clone(),
                span: item.span.clone(),
            });
        }
        Ok(Some(At {
            value: out,
            span: node.span.clone(),
        }))
    }

    /// A table of string values (`dimensions = { Team = "sdk" }`), in order.
    pub(super) fn string_table(&self, name: &str) -> Result<Option<RawDimensions>, Problem> {
        let Some(node) = self.get(name) else {
            return Ok(None);
        };
        let fix = format!("write it like {}", self.spec(name).example);
        let Value::Table(entries) = &node.value else {
            return Err(self.wrong_type(name, node, &fix));
        };
        let mut out = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Value::String(s) = &value.value else {
                return Err(Problem::new(
                    value.span.clone(),
                    format!("{}.{}", self.path(name), key.name),
                    format!("expected a string, found {}", value.value.describe()),
                    fix,
                ));
            };
            out.push((
                At {
                    value: key.name.clone(),
                    span: key.span.clone(),
                },
                At {
                    value: s.clone(),
                    span: value.span.clone(),
                },
            ));
        }
        Ok(Some(At {
            value: out,
            span: node.span.clone(),
        }))
    }

    /// The tables of an array of tables (`[[name]]`), with their spans.
    fn tables(&self, name: &str, node: &'a Node) -> Result<Vec<SpannedTable<'a>>, Problem> {
        let fix = format!(
            "write each entry as a {} table (double brackets)",
            self.spec(name).example
        );
        let Value::Array(items) = &node.value else {
            return Err(self.wrong_type(name, node, &fix));
        };
        items
            .iter()
            .map(|item| match &item.value {
                Value::Table(entries) => Ok((item.span.clone(), entries.as_slice())),
                other => Err(Problem::new(
                    item.span.clone(),
                    self.path(name),
                    format!("expected a table, found {}", other.describe()),
                    fix.clone(),
                )),
            })
            .collect()
    }
}

/// The allowed name closest to a misspelt one (edit distance at most 2).
pub(super) fn closest<'s>(word: &str, allowed: &[&'s str]) -> Option<&'s str> {
    allowed
        .iter()
        .map(|a| (strsim::levenshtein(word, a), *a))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Result<RawConfig, Problem> {
        read(&super::super::tree::parse(text).unwrap(), text.len())
    }

    #[test]
    fn reads_fields_with_spans() {
        let text = "[run]\nrounds = 3\n[[scenario]]\nname = \"a\"\nrate = 5\nbody = 10\nclients = [\"x\"]\n";
        let c = raw(text).unwrap();
        assert_eq!(c.run.rounds.as_ref().unwrap().value, 3);
        let s = &c.scenarios[0];
        assert_eq!(s.label, "scenario \"a\"");
        assert_eq!(s.rate.as_ref().unwrap().value, 5.0);
        assert_eq!(s.body.as_ref().unwrap().value, SizeInput::Bytes(10));
        let x = &s.clients.as_ref().unwrap().value[0];
        assert_eq!(&text[x.span.clone()], "\"x\"");
    }

    #[test]
    fn unknown_field_suggests_the_closest_name() {
        let p = raw("[[scenario]]\nconcurency = 3\n").unwrap_err();
        assert_eq!(p.field, "scenario[0].concurency");
        assert!(
            p.fix.starts_with("did you mean `concurrency`?"),
            "{}",
            p.fix
        );
        assert!(p.fix.contains("max_in_flight"));
    }

    #[test]
    fn labels_fall_back_to_the_index() {
        let c = raw("[[client]]\nkind = \"hyper\"\n[[client]]\nname = \"\"\n").unwrap();
        assert_eq!(c.clients[0].label, "client[0]");
        assert_eq!(c.clients[1].label, "client[1]");
    }
}
