//! `benchgate init`: a starting kit for the project in a directory. A commented
//! `benchgate.toml` for the kind of project found there (a command client with
//! `bench/` scripts for Maven, Gradle, Python and Node; the built-in clients
//! otherwise), with `--workflow` the pull-request and main-branch workflows
//! (at the root of the repository the directory lies in, where GitHub reads
//! them: [`workflows`]).
//! Fetches nothing and never overwrites: when any file of the kit exists,
//! nothing is written. What each kind gets: [`kit`].

pub mod kit;
pub mod workflows;

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{InitArgs, ProjectKind};
use crate::config::Suite;
use kit::KitFile;

/// `benchgate init`.
pub fn init(args: InitArgs) -> anyhow::Result<u8> {
    let dir = &args.dir;
    if !dir.is_dir() {
        anyhow::bail!(
            "--dir {}: no such directory; pass the directory of your project (default: the current one)",
            dir.display()
        );
    }
    let found = kit::detect(dir);
    let (kind, why) = match (args.kind, found.first()) {
        (Some(kind), _) => (kind, format!("--kind {}", name(kind))),
        (None, Some((file, kind))) => (
            *kind,
            format!("found {file}: a {} project", kit::describe(*kind)),
        ),
        (None, None) => (
            ProjectKind::Builtin,
            "no pom.xml, build.gradle*, settings.gradle*, pyproject.toml, requirements.txt, \
             setup.py or package.json: the built-in clients"
                .to_string(),
        ),
    };
    // The workflows go where GitHub reads them: the repository's root.
    let (root, sub) = match args.workflow {
        true => repository(dir)?,
        false => (dir.clone(), String::new()),
    };
    let files = kit::files(kind, args.workflow, &sub);
    // The templates' config must load as the user's will; a failure is a bug here.
    let config = files
        .iter()
        .find(|f| f.path == format!("{sub}{}", kit::CONFIG));
    if let Some(config) = config {
        Suite::from_toml(&config.text, "benchgate init's benchgate.toml")
            .context("benchgate init wrote a config benchgate cannot load (a bug)")?;
    }
    write_all(&root, &files)?;

    let mut out = format!("benchgate init: {why}; wrote in {}:\n", root.display());
    for f in &files {
        let exec = if f.executable { " (executable)" } else { "" };
        out.push_str(&format!("  {}{exec}\n", f.path));
    }
    let others: Vec<String> = found
        .iter()
        .filter(|(_, k)| *k != kind)
        .map(|(file, k)| format!("{file} (--kind {})", name(*k)))
        .collect();
    if !others.is_empty() {
        out.push_str(&format!(
            "also found {}: remove what init wrote and pass --kind for that kit instead\n",
            others.join(", ")
        ));
    }
    out.push_str("next:\n");
    for (i, step) in kit::next_steps(kind, args.workflow, &sub)
        .iter()
        .enumerate()
    {
        out.push_str(&format!("  {}. {step}\n", i + 1));
    }
    crate::stdout!("{out}");
    Ok(0)
}

fn name(kind: ProjectKind) -> &'static str {
    match kind {
        ProjectKind::Maven => "maven",
        ProjectKind::Gradle => "gradle",
        ProjectKind::Python => "python",
        ProjectKind::Node => "node",
        ProjectKind::Jmh => "jmh",
        ProjectKind::Builtin => "builtin",
    }
}

/// The repository `dir` lies in (the nearest directory up that holds a
/// `.git`) and `dir`'s path from its root as a prefix (`client/`); `dir`
/// itself and no prefix when it is the root or lies in no repository.
fn repository(dir: &Path) -> anyhow::Result<(PathBuf, String)> {
    let abs = fs::canonicalize(dir).with_context(|| format!("--dir {}", dir.display()))?;
    let Some(root) = abs.ancestors().find(|a| a.join(".git").exists()) else {
        return Ok((dir.to_path_buf(), String::new()));
    };
    let Ok(rel) = abs.strip_prefix(root) else {
        return Ok((dir.to_path_buf(), String::new()));
    };
    if rel.as_os_str().is_empty() {
        return Ok((dir.to_path_buf(), String::new()));
    }
    let rel = rel.to_str().with_context(|| {
        format!(
            "--dir {}: its path from the repository's root {} is not UTF-8, which the workflows \
             need as text; rename it, or write the kit without --workflow",
            dir.display(),
            root.display()
        )
    })?;
    Ok((root.to_path_buf(), format!("{rel}/")))
}

/// Writes every file of the kit under `dir`, or none: refuses when any of them
/// exists (a dangling symlink too), and removes what it wrote when a later
/// write fails.
fn write_all(dir: &Path, files: &[KitFile]) -> anyhow::Result<()> {
    let existing: Vec<PathBuf> = files
        .iter()
        .map(|f| dir.join(&f.path))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        let list: Vec<String> = existing.iter().map(|p| p.display().to_string()).collect();
        anyhow::bail!(
            "{} already exist{}; benchgate init never overwrites and wrote nothing. \
             Move {} away (or pass --dir with another directory) and run it again",
            list.join(", "),
            if list.len() == 1 { "s" } else { "" },
            if list.len() == 1 { "it" } else { "them" },
        );
    }
    let mut created: Vec<PathBuf> = Vec::new();
    for f in files {
        let path = dir.join(&f.path);
        if let Err(e) = write_new(&path, f, &mut created) {
            for p in created.iter().rev() {
                // Files first (pushed after their directories), then empty directories.
                let _ = fs::remove_file(p).or_else(|_| fs::remove_dir(p));
            }
            return Err(e.context(format!(
                "writing {}; benchgate init removed what it had written",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Creates `path` (never replacing a file) and the directories above it that
/// are missing, recording each in `created`.
fn write_new(path: &Path, f: &KitFile, created: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        let missing: Vec<&Path> = parent.ancestors().take_while(|a| !a.exists()).collect();
        for d in missing.into_iter().rev() {
            fs::create_dir(d)?;
            created.push(d.to_path_buf());
        }
    }
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if f.executable { 0o755 } else { 0o644 })
        .open(path)?;
    created.push(path.to_path_buf());
    file.write_all(f.text.as_bytes())?;
    Ok(())
}
