#!/bin/sh
# Builds the Java harness library into harness/java/out/benchgate-harness.jar with
# javac against Debian's HdrHistogram jar (/usr/share/java/hdrhistogram.jar, package
# libhdrhistogram-java; scripts/install-test-deps.sh installs it). Idempotent: does
# nothing when the jar is newer than every source.
# Run from anywhere: sh harness/java/build.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
jar="$out/benchgate-harness.jar"
hdr=${BENCHGATE_JAVA_JARS:-/usr/share/java}/hdrhistogram.jar

command -v javac >/dev/null 2>&1 || {
  echo "harness/java/build.sh: javac not found; install it with: apt-get install -y default-jdk-headless" >&2
  exit 1
}
[ -f "$hdr" ] || {
  echo "harness/java/build.sh: $hdr is missing; install it with: apt-get install -y libhdrhistogram-java" >&2
  exit 1
}

sources=$(find "$here/src/main/java" -name '*.java' | sort)
if [ -f "$jar" ] && [ -z "$(find "$here/src/main/java" "$0" -newer "$jar" -type f | head -n 1)" ]; then
  echo "harness/java/build.sh: up to date ($jar)" >&2
  exit 0
fi
rm -rf "$out/classes"
mkdir -p "$out/classes"
# shellcheck disable=SC2086 # $sources: paths without spaces under the repo
javac -Xlint:all -Werror --release 17 -encoding UTF-8 -cp "$hdr" -d "$out/classes" $sources
jar --create --file "$jar.tmp" -C "$out/classes" .
mv "$jar.tmp" "$jar"
echo "harness/java/build.sh: built $jar" >&2
