#!/usr/bin/env python3
"""Checks that what the docs show as copies of files is those files.

1. Workflows: examples/workflows/*.yml are the single source. A fenced code block in README.md
or docs/*.md whose first line is a comment naming one of them, e.g.

    ```yaml
    # examples/workflows/pr.yml
    name: benchmark
    ...
    ```

must show that file exactly (the rest of the block, byte for byte). Also fails
when a named file does not exist, and when a file in examples/workflows/ is
shown nowhere in README.md (its quick start shows them all).

2. The example comment. README.md shows the start of docs/example-comment.md
(everything before its first `<details>`) as a blockquote between the lines
`<!-- example-comment:begin -->` and `<!-- example-comment:end -->`;
scripts/example-comment.sh writes both. The quoted lines must be that start.

Run from the repository root (scripts/lint.sh does). Exit 0 when all match, 1
otherwise.
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


COMMENT = "docs/example-comment.md"
BEGIN = "<!-- example-comment:begin"
END = "<!-- example-comment:end -->"


def comment_excerpt(text):
    """The part of the comment README.md quotes: up to the first <details>."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("<details>"):
            break
        lines.append(line)
    return "\n".join(lines).strip("\n") + "\n"


def check_comment_excerpt():
    """Problems with README.md's quote of docs/example-comment.md."""
    with open("README.md", encoding="utf-8") as f:
        readme = f.read().split("\n")
    starts = [i for i, l in enumerate(readme) if l.startswith(BEGIN)]
    ends = [i for i, l in enumerate(readme) if l.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        return [f"README.md: needs one `{BEGIN} ... -->` ... `{END}` region quoting {COMMENT}"]
    quoted = [l for l in readme[starts[0] + 1 : ends[0]] if l.startswith(">")]
    shown = "\n".join(l[2:] if l.startswith("> ") else l[1:] for l in quoted).strip("\n") + "\n"
    try:
        with open(COMMENT, encoding="utf-8") as f:
            actual = comment_excerpt(f.read())
    except FileNotFoundError:
        return [f"README.md:{starts[0] + 1}: quotes {COMMENT}, which does not exist"]
    if shown == actual:
        return []
    diff = "".join(
        difflib.unified_diff(
            actual.splitlines(True),
            shown.splitlines(True),
            fromfile=f"{COMMENT} (up to the first <details>)",
            tofile=f"README.md:{starts[0] + 1}",
        )
    )
    return [f"README.md:{starts[0] + 1}: the quote differs from {COMMENT} (run scripts/example-comment.sh):\n{diff}"]


def main():
    docs = ["README.md"] + sorted(glob.glob("docs/*.md"))
    failures = 0
    shown_in_readme = set()
    for doc in docs:
        for line, name, shown in blocks(doc):
            if doc == "README.md":
                shown_in_readme.add(name)
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
    for name in sorted(glob.glob("examples/workflows/*.yml")):
        if name not in shown_in_readme:
            print(f"README.md: shows no block marked `# {name}`")
            failures += 1
    for problem in check_comment_excerpt():
        print(problem)
        failures += 1
    if failures:
        print(f"check-doc-copies: {failures} problem(s)")
        return 1
    print("check-doc-copies: the docs' copies match examples/workflows/ and " + COMMENT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
