#!/usr/bin/env python3
"""Checks that every place naming benchgate's minimum Rust names the same one.

Cargo.toml's `rust-version` is the single source. These must agree with it:
- every `FROM rust:<version>-...` line of every Dockerfile (the image's builder),
- README.md's "a Rust toolchain (<version>+)",
- `RUST_VERSION: "<version>"` in .github/workflows/release.yml (the release
  builds with exactly the declared toolchain), when that workflow exists;
- the `toolchain: "<version>"` that .github/workflows/ci.yml installs
  (scripts/test.sh builds and tests with exactly the declared toolchain), when
  that workflow exists.

The lock file's need is checked by building, not here: scripts/test.sh builds
and tests with that version (scripts/check-msrv.sh --install). No Docker engine is
needed: this reads the files. Run from the repository root (scripts/lint.sh
does). Exit 0 when all agree, 1 otherwise, naming the file, line and fix.
"""

import glob
import os
import re
import sys
import tomllib


def main() -> int:
    with open("Cargo.toml", "rb") as f:
        declared = tomllib.load(f)["package"].get("rust-version")
    if not declared:
        print("Cargo.toml: [package] has no rust-version; declare the minimum Rust")
        return 1
    problems = []

    def check(path, pattern, what, required):
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except FileNotFoundError:
            if required:
                problems.append(f"{path}: missing ({what})")
            return
        found = False
        for no, line in enumerate(lines, 1):
            for m in re.finditer(pattern, line):
                found = True
                if m.group(1) != declared:
                    problems.append(
                        f"{path}:{no}: {what} names Rust {m.group(1)}, but Cargo.toml's "
                        f"rust-version is {declared}; make them the same"
                    )
        if not found and required:
            problems.append(f"{path}: names no Rust version ({what}); expected {declared}")

    dockerfiles = [p for p in glob.glob("**/Dockerfile*", recursive=True) if not p.startswith("target")]
    for path in sorted(dockerfiles):
        check(path, r"^FROM\s+(?:--\S+\s+)*rust:([0-9][0-9.]*)", "the builder image `FROM rust:...`", True)
    check("README.md", r"Rust toolchain \(([0-9][0-9.]*)\+\)", "\"a Rust toolchain (X+)\"", True)
    if os.path.exists(".github/workflows/release.yml"):
        check(".github/workflows/release.yml", r"RUST_VERSION:\s*\"?([0-9][0-9.]*)\"?",
              "the release toolchain `RUST_VERSION`", True)
    if os.path.exists(".github/workflows/ci.yml"):
        check(".github/workflows/ci.yml", r"toolchain:\s*\"?([0-9][0-9.]*)\"?",
              "the test job's toolchain", True)

    for p in problems:
        print(p)
    if not problems:
        print(f"rust-version {declared}: Cargo.toml, {len(dockerfiles)} Dockerfile(s), README.md"
              + (", release.yml" if os.path.exists(".github/workflows/release.yml") else "")
              + (", ci.yml" if os.path.exists(".github/workflows/ci.yml") else "") + " agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
