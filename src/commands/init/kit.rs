//! What `benchgate init` writes for each kind of project: the files of the kit
//! and their text, from the templates beside this file. No I/O here but
//! [`detect`], which looks at which files a directory has (and whether its
//! pom.xml names jmh-core).

use std::path::Path;

use super::workflows;
use crate::cli::ProjectKind;

/// The config's file name, in the project's directory.
pub const CONFIG: &str = "benchgate.toml";

/// The version written into every file's header and the workflows' pin comment.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit the workflows pin until the user replaces it: a full SHA (what
/// zizmor and organizations' policies require), which no repository has, so a
/// workflow whose pin was not replaced fails at its first run instead of running
/// an unpinned action.
pub const PLACEHOLDER_SHA: &str = "0000000000000000000000000000000000000000";

/// The files that decide a project's kind, in the order they win.
const MARKERS: &[(&str, ProjectKind)] = &[
    ("pom.xml", ProjectKind::Maven),
    ("build.gradle", ProjectKind::Gradle),
    ("build.gradle.kts", ProjectKind::Gradle),
    ("settings.gradle", ProjectKind::Gradle),
    ("settings.gradle.kts", ProjectKind::Gradle),
    ("pyproject.toml", ProjectKind::Python),
    ("requirements.txt", ProjectKind::Python),
    ("setup.py", ProjectKind::Python),
    ("package.json", ProjectKind::Node),
];

/// Every marker file `dir` holds, with its kind, in the order they win; a
/// pom.xml that names jmh-core (a JMH module) first as that.
pub fn detect(dir: &Path) -> Vec<(&'static str, ProjectKind)> {
    let jmh = std::fs::read_to_string(dir.join("pom.xml"))
        .is_ok_and(|pom| pom.contains("<artifactId>jmh-core</artifactId>"));
    let found = MARKERS
        .iter()
        .filter(|(file, _)| dir.join(file).is_file())
        .copied();
    jmh.then_some(("jmh-core in pom.xml", ProjectKind::Jmh))
        .into_iter()
        .chain(found)
        .collect()
}

/// One file of the kit: its path relative to the project's directory.
#[derive(Debug)]
pub struct KitFile {
    pub path: String,
    pub text: String,
    pub executable: bool,
}

/// The `[run]` timing of a kit whose client measures one window per process.
const ONE_WINDOW: &str =
    "warmup = \"1s\"           # excluded from every figure (JIT, connection pool)\n\
                          duration = \"2s\"         # measured, per trial\n";

/// The `[run]` timing of a kit whose harness speaks the window loop (issue 52):
/// the runtime (`$start`: what its warmup covers) starts and warms up once per
/// fork, then measures its windows in `$process`, each read at its edges by
/// benchgate.
macro_rules! warm_windows {
    ($start:literal, $process:literal) => {
        concat!(
            "warmup = \"3s\"           # once per fork (",
            $start,
            "), excluded from every figure\n",
            "windows = 4             # windows per fork, all in ",
            $process,
            " (the window loop); their sum is the fork's value\n",
            "duration = \"1s\"         # each window\n",
            "schedule = \"interleaved\" # base and head forks alive at once, their windows taking turns,\n",
            "                         # the idle one frozen; a run of one commit (main, nightly) runs\n",
            "                         # its forks one after another\n",
        )
    };
}

/// A command client in one language: the harness quick start it starts from
/// and the scripts that build and run it.
struct Lang {
    language: &'static str,
    client_file: &'static str,
    client: &'static str,
    client_name: &'static str,
    build: &'static str,
    run: &'static str,
    ignore: &'static str,
    /// The `benchgate.toml` comment lines on where the harness comes from.
    note: &'static str,
    /// Extra `[[client]]` lines.
    extra: &'static str,
    /// The `[run]` lines on a fork's warmup and windows.
    timing: &'static str,
    /// The workflows' steps that set up the runtime, before benchgate's.
    setup_steps: &'static str,
    /// What to do before the first `benchgate run`.
    first: &'static str,
}

const JAVA: Lang = Lang {
    language: "Java",
    client_file: "QuickStart.java",
    client: include_str!("../../../harness/java/examples/QuickStart.java"),
    client_name: "java-client",
    build: include_str!("templates/jvm-build.sh"),
    run: include_str!("templates/jvm-run.sh"),
    ignore: "out/\n",
    note: "# The harness: bench/QuickStart.java needs two jars committed in bench/lib/,\n\
           # benchgate-harness.jar (built in a clone of benchgate by\n\
           # `sh harness/java/build.sh`) and HdrHistogram 2.1.x; bench/build.sh stops,\n\
           # naming them, while one is missing. A program of your own that already\n\
           # speaks the protocol needs neither: bench/run.sh says how to run it.",
    extra: "env = { JAVA_OPTS = \"-Xmx256m\" }   # extra JVM flags (bench/run.sh)\n",
    timing: warm_windows!("JVM start, JIT, heap, pool", "one JVM"),
    setup_steps: workflows::SETUP_JAVA,
    first: "copy benchgate-harness.jar (sh harness/java/build.sh in a clone of benchgate) and an HdrHistogram 2.1.x jar into bench/lib/; \
            or, for a program of your own that already speaks benchgate's protocol, name its main class in bench/run.sh \
            and delete bench/QuickStart.java (no jar needed then)",
};

const PYTHON: Lang = Lang {
    language: "Python",
    client_file: "quickstart.py",
    client: include_str!("../../../harness/python/examples/quickstart.py"),
    client_name: "python-client",
    build: include_str!("templates/python-build.sh"),
    run: include_str!("templates/python-run.sh"),
    ignore: ".venv/\n",
    note: "# The harness: bench/build.sh installs it into bench/.venv from the wheel\n\
           # committed in bench/ (`pip wheel --no-deps -w bench \"$BENCHGATE/harness/python\"`\n\
           # from a clone of benchgate); its dependency hdrhistogram comes from PyPI.",
    extra: "",
    timing: ONE_WINDOW,
    setup_steps: "      - uses: actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0\n\
                  \x20       with:\n\
                  \x20         python-version: \"3.12\"\n",
    first: "put the harness wheel in bench/ (pip wheel --no-deps -w bench \"$BENCHGATE/harness/python\", $BENCHGATE a clone of benchgate)",
};

const NODE: Lang = Lang {
    language: "Node",
    client_file: "quickstart.mjs",
    client: include_str!("../../../harness/node/examples/quickstart.mjs"),
    client_name: "node-client",
    build: include_str!("templates/node-build.sh"),
    run: include_str!("templates/node-run.sh"),
    ignore: "node_modules/\n",
    note: "# The harness: bench/build.sh installs it into bench/node_modules from the\n\
           # tarball committed in bench/ (`npm pack --pack-destination bench\n\
           # \"$BENCHGATE/harness/node\"` from a clone of benchgate); no dependencies.",
    extra: "",
    timing: warm_windows!("Node's start, JIT, heap, pool", "one Node process"),
    setup_steps: "      - uses: actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0\n\
                  \x20       with:\n\
                  \x20         node-version: \"24\"\n\
                  \x20         package-manager-cache: false   # bench/build.sh installs the harness from bench/\n",
    first: "put the harness tarball in bench/ (npm pack --pack-destination bench \"$BENCHGATE/harness/node\", $BENCHGATE a clone of benchgate)",
};

/// What `bench/build.sh` suggests for building the project itself.
fn build_hint(kind: ProjectKind) -> &'static str {
    match kind {
        ProjectKind::Gradle => {
            "#   CP=$(./gradlew -q --init-script bench/classpath.gradle benchgateClasspath)\n\
             # (your classes and every runtime dependency's jar: bench/classpath.gradle;\n\
             # or gradle -q ...; in a multi-project build :app:benchgateClasspath)"
        }
        _ => {
            "#   mvn -q -DskipTests package\n\
             #   mvn -q dependency:build-classpath -Dmdep.outputFile=target/benchgate.classpath\n\
             #   CP=\"target/classes:$(cat target/benchgate.classpath)\""
        }
    }
}

/// The project's name in headers and messages.
pub fn describe(kind: ProjectKind) -> &'static str {
    match kind {
        ProjectKind::Maven => "Maven",
        ProjectKind::Gradle => "Gradle",
        ProjectKind::Python => "Python",
        ProjectKind::Node => "Node",
        ProjectKind::Jmh => "Maven JMH",
        ProjectKind::Builtin => "built-in clients",
    }
}

fn lang(kind: ProjectKind) -> Option<&'static Lang> {
    match kind {
        ProjectKind::Maven | ProjectKind::Gradle => Some(&JAVA),
        ProjectKind::Python => Some(&PYTHON),
        ProjectKind::Node => Some(&NODE),
        ProjectKind::Jmh | ProjectKind::Builtin => None,
    }
}

/// `template` with every `@@KEY@@` replaced; a key left over is a bug in the
/// templates, caught by the tests below.
pub(super) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = template.replace("@@VERSION@@", VERSION);
    for (key, value) in values {
        text = text.replace(&format!("@@{key}@@"), value);
    }
    text
}

/// The files of the kit for `kind`, the workflows too with `workflow`; `sub`
/// is the project's directory from the repository's root (`client/`, or
/// empty), where every file but the workflows goes. Paths are from the root.
pub fn files(kind: ProjectKind, workflow: bool, sub: &str) -> Vec<KitFile> {
    let file = |path: &str, text: String, executable: bool| KitFile {
        path: format!("{sub}{path}"),
        text,
        executable,
    };
    let mut out = Vec::new();
    let lang = lang(kind);
    match lang {
        Some(l) => {
            let config = fill(
                include_str!("templates/command.toml"),
                &[
                    ("PROJECT", describe(kind)),
                    ("CLIENT_FILE", l.client_file),
                    ("LANGUAGE", l.language),
                    ("HARNESS_NOTE", l.note),
                    ("CLIENT_NAME", l.client_name),
                    ("CLIENT_EXTRA", l.extra),
                    ("RUN_TIMING", l.timing),
                ],
            );
            let hint = [("BUILD_HINT", build_hint(kind))];
            out.push(file(CONFIG, config, false));
            out.push(file("bench/build.sh", fill(l.build, &hint), true));
            out.push(file("bench/run.sh", fill(l.run, &[]), true));
            out.push(file(
                &format!("bench/{}", l.client_file),
                l.client.to_string(),
                false,
            ));
            if kind == ProjectKind::Gradle {
                let script = include_str!("templates/gradle-classpath.gradle");
                out.push(file("bench/classpath.gradle", fill(script, &[]), false));
            }
            out.push(file(
                "bench/.gitignore",
                format!("# What bench/build.sh builds\n{}", l.ignore),
                false,
            ));
        }
        None if kind == ProjectKind::Jmh => out.push(file(
            CONFIG,
            fill(include_str!("templates/jmh.toml"), &[]),
            false,
        )),
        None => out.push(file(
            CONFIG,
            fill(include_str!("templates/builtin.toml"), &[]),
            false,
        )),
    }
    if workflow {
        out.extend(match (kind, lang) {
            (_, Some(l)) => workflows::command(l.setup_steps, sub),
            (ProjectKind::Jmh, None) => workflows::jmh(sub),
            (_, None) => workflows::builtin(sub),
        });
    }
    out
}

/// What to do after `init`, in order; `sub` as for [`files`].
pub fn next_steps(kind: ProjectKind, workflow: bool, sub: &str) -> Vec<String> {
    let mut steps = Vec::new();
    if let Some(l) = lang(kind) {
        steps.push(l.first.to_string());
        steps.push(format!(
            "make bench/{} send its request with your client",
            l.client_file
        ));
    }
    let cd = match sub.trim_end_matches('/') {
        "" => String::new(),
        dir => format!("cd {dir} && "),
    };
    steps.extend(match (kind, lang(kind)) {
        (_, Some(_)) => vec![format!(
            "{cd}benchgate run --compare-base HEAD   (base vs head as in a pull request: \
             the working tree against the last commit; a base without bench/ gets \
             \"no baseline\")"
        )],
        (ProjectKind::Jmh, None) => vec![
            format!(
                "{cd}mvn -B package && java -jar target/benchmarks.jar -f 4 -rf json -rff jmh.json   \
                 (your benchmarks, 4 forks: fewer decide nothing)"
            ),
            format!(
                "{cd}benchgate compare --config benchgate.toml --baseline base.json --current jmh.json   \
                 (base.json: the same run on the base commit, with -rff base.json)"
            ),
        ],
        (_, None) => vec![format!(
            "{cd}benchgate run   (measures benchgate.toml's suite here)"
        )],
    });
    if workflow {
        steps.push(
            "replace the TODO pin in .github/workflows/benchgate-*.yml with the benchgate action's commit"
                .to_string(),
        );
    }
    steps.push("commit benchgate.toml and what else init wrote".to_string());
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [ProjectKind; 6] = [
        ProjectKind::Maven,
        ProjectKind::Gradle,
        ProjectKind::Python,
        ProjectKind::Node,
        ProjectKind::Jmh,
        ProjectKind::Builtin,
    ];

    #[test]
    fn every_placeholder_is_filled() {
        for kind in KINDS {
            for f in files(kind, true, "") {
                assert!(
                    !f.text.contains("@@"),
                    "{kind:?}: {} keeps a @@ key",
                    f.path
                );
            }
        }
    }

    #[test]
    fn every_config_validates() {
        for kind in KINDS {
            let kit = files(kind, false, "");
            let config = kit.iter().find(|f| f.path == "benchgate.toml").unwrap();
            if let Err(e) = crate::config::Suite::from_toml(&config.text, "benchgate.toml") {
                panic!("{kind:?}: {e}");
            }
        }
    }
}
