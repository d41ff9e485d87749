#!/bin/sh
# Runs one trial of the benchmark client (benchgate's `command`, once per trial,
# with the workload in BENCHGATE_* variables); bench/build.sh builds it first.
# Extra JVM flags: JAVA_OPTS (benchgate.toml's `env`). Written by `benchgate
# init` @@VERSION@@; commit it.
#
# The client's main class. A program of your own that already speaks
# benchgate's protocol (the BENCHGATE_* variables, the optional result file:
# docs/external-clients.md in benchgate's repository, "The protocol") runs
# without the harness: name its main class here, have bench/build.sh put it on
# the classpath (your project's classes in CP, or its source in bench/), and
# delete bench/QuickStart.java; bench/lib/ then needs no jar. Unless it also
# speaks the window loop ("The window loop"), set schedule = "sequential" in
# benchgate.toml: its forks then measure one window each.
main=QuickStart
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/out/.classpath" ] || {
  echo "bench/run.sh: not built; run: sh bench/build.sh" >&2
  exit 2
}
# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
exec java ${JAVA_OPTS:-} -cp "$here/out:$(cat "$here/out/.classpath")" "$main"
