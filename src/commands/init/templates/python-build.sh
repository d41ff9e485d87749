#!/bin/sh
# Builds the benchmark client: a venv in bench/.venv with benchgate's Python
# harness (from the wheel in bench/) and its dependency hdrhistogram (from
# PyPI). benchgate runs it as the client's `setup`, once in each commit's tree
# (base and head), before the rounds; commit it. Written by `benchgate init`
# @@VERSION@@.
#
# bench/ needs the harness wheel, committed with the project: in a clone of
# benchgate ($BENCHGATE), from this project's root:
#   pip wheel --no-deps -w bench "$BENCHGATE/harness/python"
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

wheel=""
for w in "$here"/benchgate_harness-*.whl; do
  [ -f "$w" ] && wheel=$w
done
[ -n "$wheel" ] || {
  echo "bench/build.sh: no benchgate_harness-*.whl in bench/; from a clone of benchgate (\$BENCHGATE) run: pip wheel --no-deps -w bench \"\$BENCHGATE/harness/python\", and commit the wheel" >&2
  exit 2
}
[ -x "$here/.venv/bin/python" ] || python3 -m venv "$here/.venv"
"$here/.venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"

# TODO: install your client library into the same venv, for example:
#   "$here/.venv/bin/pip" install --quiet --disable-pip-version-check .
#   "$here/.venv/bin/pip" install --quiet --disable-pip-version-check -r requirements.txt
echo "bench/build.sh: bench/.venv ready" >&2
