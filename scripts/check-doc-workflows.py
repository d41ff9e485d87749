#!/usr/bin/env python3
"""Checks that the workflow YAML shown in the docs is the example workflow files.

examples/workflows/*.yml are the single source. A fenced code block in README.md
or docs/*.md whose first line is a comment naming one of them, e.g.

    ```yaml
    # examples/workflows/pr.yml
    name: benchmark
    ...
    ```

must show that file exactly (the rest of the block, byte for byte). Also fails
when a named file does not exist. Run from the repository root (scripts/lint.sh does).
Exit 0 when all match, 1 otherwise.
"""

import difflib
import glob
import re
import sys

MARKER = re.compile(r"#\s*(examples/workflows/[A-Za-z0-9._-]+\.ya?ml)\b")
FENCE = re.compile(r"^(\s*)(```+|~~~+)")


def blocks(path):
    """(line number, marker path, body) for each marked fenced block of path."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            # Blocks inside list items are indented: strip the fence's indent.
            body.append(line[len(indent):] if line.startswith(indent) else line)
            i += 1
        i += 1  # the closing fence
        if body:
            marker = MARKER.fullmatch(body[0].strip())
            if marker:
                yield start + 1, marker.group(1), "\n".join(body[1:]) + "\n"


def main():
    docs = ["README.md"] + sorted(glob.glob("docs/*.md"))
    failures = 0
    for doc in docs:
        for line, name, shown in blocks(doc):
            try:
                with open(name, encoding="utf-8") as f:
                    actual = f.read()
            except FileNotFoundError:
                print(f"{doc}:{line}: names {name}, which does not exist")
                failures += 1
                continue
            if shown != actual:
                failures += 1
                print(f"{doc}:{line}: the block differs from {name} (copy the file into the block):")
                sys.stdout.writelines(
                    difflib.unified_diff(
                        actual.splitlines(True),
                        shown.splitlines(True),
                        fromfile=name,
                        tofile=f"{doc}:{line}",
                    )
                )
    if failures:
        print(f"check-doc-workflows: {failures} problem(s)")
        return 1
    print("check-doc-workflows: the workflows shown in the docs match examples/workflows/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
