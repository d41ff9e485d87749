#!/usr/bin/env python3
"""Checks the YAML the docs show, above all docs/gitlab.md's GitLab CI jobs.

1. Every ```yaml block of README.md and docs/*.md parses (ruamel.yaml, safe).
2. Every ```yaml block of docs/gitlab.md validates against GitLab's CI schema
   (check-jsonschema's bundled vendor.gitlab-ci; CHECK_JSONSCHEMA names the
   program, scripts/lint.sh passes its venv's).
3. docs/gitlab.md's jobs keep what issue 32 fixed:
   - a job that runs `benchgate-gitlab.sh note` has `when: always` (job level, or
     in every rule) and needs, with `artifacts: true`, a job shown on the page that
     writes benchgate-report.md;
   - a job that writes benchgate-report.md uploads it with `artifacts: when: always`;
   - a job that runs benchgate-gitlab.sh has `environment: {name: benchgate}` (the
     token's environment scope) and is the only kind of job that does.
4. The JVM job's install lines (the job with BENCHGATE_SHA256) run in sh against a
   local copy of a release archive (its checksum read from a setup/release.txt
   written by scripts/release-manifest.sh, as the page says), with GitHub's
   download URL pointed at 127.0.0.1 and /usr/local/bin at a temporary directory;
   then again with a wrong checksum, which must fail.

Run from the repository root (scripts/lint.sh does, with its venv's Python).
Exit 0 all good, 1 a finding.
"""

import functools
import glob
import http.server
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading

from ruamel.yaml import YAML

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
PAGE = "docs/gitlab.md"
problems = []


def yaml_blocks(path):
    """(line number, text) of each ```yaml block of path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i + 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if lang in ("yaml", "yml"):
            yield start, "\n".join(body) + "\n"


def load(text):
    return YAML(typ="safe", pure=True).load(text)


def runs(job, what):
    lines = [*job.get("before_script", []), *job.get("script", [])]
    return any(what in str(line) for line in lines)


def check_jobs(shown):
    """shown: (block line, job name, job) for every job on the page; a name may
    appear in several blocks (variants)."""
    writers = {n for _, n, j in shown if runs(j, "--markdown benchgate-report.md")}
    if not writers:
        problems.append(f"{PAGE}: no job writes benchgate-report.md")
    notes = 0
    for line, name, job in shown:
        where = f"{PAGE}:{line}: job {name}"
        if runs(job, "--markdown benchgate-report.md"):
            art = job.get("artifacts") or {}
            if art.get("when") != "always" or "benchgate-report.md" not in art.get("paths", []):
                problems.append(f"{where} writes the report but does not upload it with artifacts: when: always")
        if runs(job, "benchgate-gitlab.sh note"):
            notes += 1
            rules = job.get("rules") or []
            if job.get("when") != "always" and not (rules and all(r.get("when") == "always" for r in rules)):
                problems.append(f"{where} posts the note without when: always (skipped when the gate fails)")
            needed = [n for n in job.get("needs", []) if isinstance(n, dict) and n.get("artifacts") is True]
            if not any(n.get("job") in writers for n in needed):
                problems.append(f"{where} does not need a report-writing job with artifacts: true")
        env = job.get("environment")
        scoped = isinstance(env, dict) and env.get("name") == "benchgate"
        if runs(job, "benchgate-gitlab.sh") != scoped:
            problems.append(f"{where}: the token's environment (benchgate) belongs to the jobs that run benchgate-gitlab.sh, and only to them")
    if not notes:
        problems.append(f"{PAGE}: no job runs benchgate-gitlab.sh note")


def check_schema(blocks):
    tool = os.environ.get("CHECK_JSONSCHEMA", "check-jsonschema")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for line, text in blocks:
            path = os.path.join(tmp, f"gitlab-md-line-{line}.yml")
            open(path, "w", encoding="utf-8").write(text)
            files.append(path)
        try:
            res = subprocess.run([tool, "--builtin-schema", "vendor.gitlab-ci", *files], capture_output=True, text=True)
        except FileNotFoundError:
            problems.append(f"{PAGE}: {tool} not found (scripts/lint.sh installs it)")
            return
        if res.returncode != 0:
            problems.append(f"{PAGE}: GitLab CI schema:\n{res.stdout}{res.stderr}")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def check_install(shown):
    job = next((j for _, _, j in shown if "BENCHGATE_SHA256" in (j.get("variables") or {})), None)
    if job is None:
        problems.append(f"{PAGE}: no job installs the static binary (variable BENCHGATE_SHA256)")
        return
    script = "\n".join(job.get("before_script", []))
    url, dest = "https://github.com/OWNER/benchgate/releases/download", "/usr/local/bin/benchgate"
    for part in (url, dest, "sha256sum -c"):
        if part not in script:
            problems.append(f"{PAGE}: the install lines no longer hold {part!r}: update scripts/check-doc-yaml.py")
            return
    version, target = "9.9.9", "x86_64-unknown-linux-musl"
    name = f"benchgate-{version}-{target}"
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist", f"v{version}")
        os.makedirs(dist)
        archive = os.path.join(dist, f"{name}.tar.gz")
        with tarfile.open(archive, "w:gz") as tar:
            data = f"#!/bin/sh\necho 'benchgate {version}'\n".encode()
            info = tarfile.TarInfo(f"{name}/benchgate")
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
        manifest = os.path.join(tmp, "release.txt")
        subprocess.run(["bash", "scripts/release-manifest.sh", version, "OWNER/benchgate", dist, manifest],
                       check=True, capture_output=True)
        line = next(l for l in open(manifest) if l.startswith(target + " "))
        sha = line.split()[1]  # the first SHA-256 on the target's line, as the page says
        handler = functools.partial(Quiet, directory=os.path.join(tmp, "dist"))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        local = script.replace(url, f"http://127.0.0.1:{server.server_address[1]}").replace(dest, os.path.join(bindir, "benchgate"))
        try:
            for given, want_ok in ((sha, True), ("0" * 64, False)):
                work = tempfile.mkdtemp(dir=tmp)
                env = dict(os.environ, BENCHGATE_VERSION=version, BENCHGATE_SHA256=given,
                           PATH=bindir + os.pathsep + os.environ["PATH"])
                res = subprocess.run(["sh", "-e", "-c", local], cwd=work, env=env, capture_output=True, text=True, timeout=60)
                ok = res.returncode == 0 and f"benchgate {version}" in res.stdout
                if ok != want_ok:
                    what = "the right checksum failed" if want_ok else "a wrong checksum was accepted"
                    problems.append(f"{PAGE}: the JVM job's install lines: {what}:\n{res.stdout}{res.stderr}")
        finally:
            server.shutdown()


def main():
    for path in ["README.md", *sorted(glob.glob("docs/*.md"))]:
        for line, text in yaml_blocks(path):
            try:
                load(text)
            except Exception as e:  # ruamel's errors have no common base worth naming
                problems.append(f"{path}:{line}: not valid YAML: {e}")
    blocks = list(yaml_blocks(PAGE))
    shown = []
    for line, text in blocks:
        try:
            doc = load(text) or {}
        except Exception:
            continue  # reported above
        shown += [(line, k, v) for k, v in doc.items() if isinstance(v, dict) and not k.startswith(".")]
    check_schema(blocks)
    check_jobs(shown)
    check_install(shown)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"check-doc-yaml: ok: the YAML of README.md and docs/, {len(blocks)} GitLab CI blocks in {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
