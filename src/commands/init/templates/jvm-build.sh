#!/bin/sh
# Builds the benchmark client: compiles bench/*.java into bench/out/ against the
# jars in bench/lib/. benchgate runs it as the client's `setup`, once in each
# commit's tree (base and head), before the rounds; commit it. Written by
# `benchgate init` @@VERSION@@.
#
# bench/lib/ needs two jars, committed with the project:
#   benchgate-harness.jar  the Java harness: in a clone of benchgate ($BENCHGATE),
#                          sh "$BENCHGATE/harness/java/build.sh" builds it into
#                          $BENCHGATE/harness/java/out/benchgate-harness.jar
#   HdrHistogram 2.1.x     Debian's /usr/share/java/hdrhistogram.jar
#                          (libhdrhistogram-java), or HdrHistogram-2.1.12.jar
#                          from Maven Central
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

CP=""
# TODO: build your client library and add it to CP, the benchmark's classpath,
# for example:
@@BUILD_HINT@@

command -v javac >/dev/null 2>&1 || {
  echo "bench/build.sh: javac not found; install a JDK (17 or newer)" >&2
  exit 2
}
[ -f "$here/lib/benchgate-harness.jar" ] || {
  echo "bench/build.sh: bench/lib/benchgate-harness.jar is missing; build it in a clone of benchgate with: sh harness/java/build.sh, then copy harness/java/out/benchgate-harness.jar to bench/lib/ and commit it" >&2
  exit 2
}
found=""
for jar in "$here"/lib/*[Hh]dr[Hh]istogram*.jar; do
  [ -f "$jar" ] && found=1
done
[ -n "$found" ] || {
  echo "bench/build.sh: no HdrHistogram jar in bench/lib/; copy /usr/share/java/hdrhistogram.jar (Debian: libhdrhistogram-java) or HdrHistogram-2.1.12.jar (Maven Central) there and commit it" >&2
  exit 2
}

cp="$here/lib/*${CP:+:$CP}"
rm -rf "$here/out"
mkdir -p "$here/out"
javac -nowarn --release 17 -encoding UTF-8 -cp "$cp" -d "$here/out" "$here"/*.java
printf '%s\n' "$cp" >"$here/out/.classpath"
echo "bench/build.sh: compiled into bench/out/" >&2
