#!/bin/sh
# Runs one trial of the benchmark client (benchgate's `command`, once per trial,
# with the workload in BENCHGATE_* variables); bench/build.sh builds it first.
# Written by `benchgate init` @@VERSION@@; commit it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$here/.venv/bin/python" ] || {
  echo "bench/run.sh: not built; run: sh bench/build.sh" >&2
  exit 2
}
exec "$here/.venv/bin/python" "$here/quickstart.py"
