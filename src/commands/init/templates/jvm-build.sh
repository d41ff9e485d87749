#!/bin/sh
# Builds the benchmark client: compiles bench/*.java into bench/out/ against
# your project's classpath (CP below) and the jars in bench/lib/. benchgate runs
# it as the client's `setup`, once in each commit's tree (base and head), before
# the rounds; commit it. Written by `benchgate init` @@VERSION@@.
#
# bench/QuickStart.java, benchgate's Java harness quick start, needs two jars in
# bench/lib/, committed with the project (this script stops, naming them, while
# one is missing):
#   benchgate-harness.jar  the Java harness: in a clone of benchgate ($BENCHGATE),
#                          sh "$BENCHGATE/harness/java/build.sh" builds it into
#                          $BENCHGATE/harness/java/out/benchgate-harness.jar
#   HdrHistogram 2.1.x     Debian's /usr/share/java/hdrhistogram.jar
#                          (libhdrhistogram-java), or HdrHistogram-2.1.12.jar
#                          from Maven Central
# A program of your own that already speaks benchgate's protocol needs neither
# (bench/run.sh says how to run it): the jars are required only while a source
# in bench/ imports dev.benchgate.harness.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

CP=""
# TODO: build your client library and add it to CP, the benchmark's classpath,
# for example:
@@BUILD_HINT@@

if grep -q 'dev\.benchgate\.harness' "$here"/*.java 2>/dev/null; then
  missing=""
  [ -f "$here/lib/benchgate-harness.jar" ] ||
    missing="benchgate-harness.jar (sh harness/java/build.sh in a clone of benchgate builds it into harness/java/out/)"
  found=""
  for jar in "$here"/lib/*[Hh]dr[Hh]istogram*.jar; do
    [ -f "$jar" ] && found=1
  done
  [ -n "$found" ] ||
    missing="${missing:+$missing and }an HdrHistogram 2.1.x jar (Debian: /usr/share/java/hdrhistogram.jar, from libhdrhistogram-java; or HdrHistogram-2.1.12.jar from Maven Central)"
  [ -z "$missing" ] || {
    echo "bench/build.sh: bench/*.java use benchgate's Java harness, which needs in bench/lib/: $missing. Copy them there and commit them; or run a program of your own that already speaks benchgate's protocol instead, without the harness (see bench/run.sh)" >&2
    exit 2
  }
fi

cp="$here/lib/*${CP:+:$CP}"
rm -rf "$here/out"
mkdir -p "$here/out"
set -- "$here"/*.java
if [ -f "$1" ]; then
  command -v javac >/dev/null 2>&1 || {
    echo "bench/build.sh: javac not found; install a JDK (17 or newer)" >&2
    exit 2
  }
  javac -nowarn --release 17 -encoding UTF-8 -cp "$cp" -d "$here/out" "$@"
fi
printf '%s\n' "$cp" >"$here/out/.classpath"
echo "bench/build.sh: built into bench/out/" >&2
