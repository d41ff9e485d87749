#!/usr/bin/env python3
"""Checks that what the docs show as copies of files is those files, and that
their links lead somewhere.

1. Workflows: examples/workflows/*.yml are the single source. A fenced code block in README.md
or docs/*.md whose first line is a comment naming one of them, e.g.

    ```yaml
    # examples/workflows/pr.yml
    name: benchmark
    ...
    ```

must show that file exactly (the rest of the block, byte for byte). Also fails
when a named file does not exist, and where a workflow is not where a reader
looks for it:
- every file in examples/workflows/ is shown exactly in README.md or a page of
  docs/ (README.md shows the pull-request workflow, docs/workflows.md the other
  uses, docs/external-clients.md the Java one);
- README.md shows examples/workflows/pr.yml (its one pull-request workflow);
- README.md links to every docs/ page that shows a workflow, and to
  examples/workflows/.

2. The example comment. README.md shows the start of docs/example-comment.md
(everything before its first `<details>`) as a blockquote between the lines
`<!-- example-comment:begin -->` and `<!-- example-comment:end -->`;
scripts/example-comment.sh writes both. The quoted lines must be that start.

3. Links. Every relative link `[text](target)` in README.md, CHANGELOG.md and
docs/ (its pages and docs/lab-notes/; outside code) must name a file or
directory of the repository, and its
`#anchor`, if any, a heading of the Markdown file it names (GitHub's anchors:
lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats) or an
`<a id="...">`. The README was split into docs/ (issue 27): this keeps every
moved section reachable.

Run from the repository root (scripts/lint.sh does). Exit 0 when all match, 1
otherwise.
"""

import difflib
import glob
import os
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


README = "README.md"
CHANGELOG = "CHANGELOG.md"
WORKFLOWS = "examples/workflows/"
# The pull-request workflow README.md shows in full; the other uses are linked.
README_SHOWS = ["examples/workflows/pr.yml"]


def check_workflows(docs):
    """Problems with the docs' copies of examples/workflows/ and where they are."""
    problems = []
    shown_in = {}  # workflow -> the docs that show it
    for doc in docs:
        for line, name, shown in blocks(doc):
            shown_in.setdefault(name, []).append(doc)
            try:
                with open(name, encoding="utf-8") as f:
                    actual = f.read()
            except FileNotFoundError:
                problems.append(f"{doc}:{line}: names {name}, which does not exist")
                continue
            if shown != actual:
                diff = "".join(
                    difflib.unified_diff(
                        actual.splitlines(True),
                        shown.splitlines(True),
                        fromfile=name,
                        tofile=f"{doc}:{line}",
                    )
                )
                problems.append(f"{doc}:{line}: the block differs from {name} (copy the file into the block):\n{diff}")
    for name in sorted(glob.glob(WORKFLOWS + "*.yml")):
        if name not in shown_in:
            problems.append(f"{name}: shown nowhere (README.md or docs/*.md needs a block marked `# {name}`)")
    for name in README_SHOWS:
        if README not in shown_in.get(name, []):
            problems.append(f"README.md: shows no block marked `# {name}` (its pull-request workflow)")
    linked = {target.partition("#")[0] for _, target in links(README)}
    pages = sorted({d for ds in shown_in.values() for d in ds if d != README})
    for page in pages + [WORKFLOWS]:
        if os.path.normpath(page) not in linked:
            problems.append(f"README.md: no link to {page} (it shows workflows of {WORKFLOWS})")
    return problems


def prose(path):
    """(line number, line) of path outside fenced code blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fence = None
    for no, line in enumerate(lines, 1):
        if fence:
            if line.strip().startswith(fence):
                fence = None
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(2)
            continue
        yield no, line


LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def links(path):
    """(line number, target with its #anchor) of every relative link in path."""
    for no, line in prose(path):
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for target in LINK.findall(line):
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            yield no, file + (f"#{anchor}" if anchor else "")


def slug(heading):
    """GitHub's anchor for a heading."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    """The anchors of a Markdown file: its headings' and its <a id>s."""
    found, seen = set(), {}
    for _, line in prose(path):
        m = HEADING.match(line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else f"{s}-{n}")
        found.update(HTML_ANCHOR.findall(line))
    return found


def check_links(docs):
    """Problems with the relative links of docs."""
    problems = []
    cache = {}
    for doc in docs:
        for no, target in links(doc):
            file, _, anchor = target.partition("#")
            if not os.path.exists(file):
                problems.append(f"{doc}:{no}: links to {file}, which does not exist")
            elif anchor and file.endswith(".md"):
                if file not in cache:
                    cache[file] = anchors(file)
                if anchor not in cache[file]:
                    problems.append(f"{doc}:{no}: links to {file}#{anchor}, but {file} has no such heading")
    return problems


def main():
    docs = [README] + sorted(glob.glob("docs/**/*.md", recursive=True))
    problems = check_workflows(docs) + check_comment_excerpt() + check_links(docs + [CHANGELOG])
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-doc-copies: {len(problems)} problem(s)")
        return 1
    print(f"check-doc-copies: the docs' copies match {WORKFLOWS} and {COMMENT}; their links resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
