#!/bin/sh
# Builds the Java harness (build.sh), compiles its tests and runs them against a
# local server on 127.0.0.1 (src/test/java/.../HarnessTests.java, a small runner
# that prints "N passed, M failed"). Run from anywhere: sh harness/java/test.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/build.sh"
hdr=${BENCHGATE_JAVA_JARS:-/usr/share/java}/hdrhistogram.jar
cp="$here/out/benchgate-harness.jar:$hdr"
rm -rf "$here/out/test-classes"
mkdir -p "$here/out/test-classes"
javac -Xlint:all -Werror --release 17 -encoding UTF-8 -cp "$cp" -d "$here/out/test-classes" \
  "$here/src/test/java/dev/benchgate/harness/HarnessTests.java"
exec java -cp "$here/out/test-classes:$cp" dev.benchgate.harness.HarnessTests
