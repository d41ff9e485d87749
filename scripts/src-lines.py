#!/usr/bin/env python3
"""Counts src/'s non-test lines: every line of every .rs file under src/ except
the files named *tests.rs, the files under a tests/ folder of src/, and the
items marked #[cfg(test)] (a test module, inline or declared `mod x;`, or any
other item only test builds compile). Blank and comment lines count, as in
`wc -l`. Prints the total (issue 50's measure of the shipped code's size);
`--files` prints each file's count first, largest first.

The items are found by rustfmt's layout: an item marked #[cfg(test)] ends at
the first line after it that closes a brace at the item's indentation (or at
its own line when that ends with `;`).
"""

import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def is_test_file(rel):
    parts = rel.split(os.sep)
    return parts[-1].endswith("tests.rs") or "tests" in parts[:-1]


def non_test_lines(lines):
    count = 0
    i = 0
    while i < len(lines):
        if lines[i].strip() != "#[cfg(test)]":
            count += 1
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        i += 1
        # Further attributes and doc comments belong to the same item.
        while i < len(lines) and lines[i].strip().startswith(("#[", "///", "//")):
            i += 1
        if i >= len(lines):
            break
        if lines[i].rstrip().endswith(";"):
            i += 1
            continue
        closing = " " * indent + "}"
        i += 1
        while i < len(lines) and not (
            lines[i].startswith(closing) and lines[i][indent + 1 :].strip() in ("", ";", ",")
        ):
            i += 1
        i += 1
    return count


def main():
    per_file = []
    for dirpath, _, names in os.walk(ROOT):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            if is_test_file(rel):
                continue
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            per_file.append((non_test_lines(lines), "src/" + rel.replace(os.sep, "/")))
    if "--files" in sys.argv[1:]:
        for n, rel in sorted(per_file, reverse=True):
            print(f"{n:7} {rel}")
    print(sum(n for n, _ in per_file))


if __name__ == "__main__":
    main()
