#!/bin/sh
# Runs one trial of the benchmark client (benchgate's `command`, once per trial,
# with the workload in BENCHGATE_* variables); bench/build.sh builds it first.
# Extra JVM flags: JAVA_OPTS (benchgate.toml's `env`). Written by `benchgate
# init` @@VERSION@@; commit it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/out/.classpath" ] || {
  echo "bench/run.sh: not built; run: sh bench/build.sh" >&2
  exit 2
}
# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
exec java ${JAVA_OPTS:-} -cp "$here/out:$(cat "$here/out/.classpath")" QuickStart
