#!/bin/sh
# Build Cain-Java (github.com/ed741/cain, pom version 3.1) with Debian's JDK and jars, no Maven:
#   apt-get install default-jdk-headless libandroid-json-java libreflections-java
#   benchmarks/java/build.sh CAIN_JAVA_DIR [OUT_DIR]
# CAIN_JAVA_DIR is a checkout of Cain-Java; OUT_DIR (default CAIN_JAVA_DIR/build-debian) receives
# cain-java.jar, run as `java -jar OUT_DIR/cain-java.jar config.json`. debian.patch says what differs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:?usage: build.sh CAIN_JAVA_DIR [OUT_DIR]}
out=${2:-$src/build-debian}
jars="/usr/share/java/com.android.json.jar /usr/share/java/reflections.jar"
[ -f "$src/src/main/java/uk/co/edstow/cain/Main.java" ] || { echo "build.sh: $src is not a Cain-Java checkout (no src/main/java/uk/co/edstow/cain/Main.java)" >&2; exit 2; }
for tool in javac jar; do
  command -v "$tool" >/dev/null || { echo "build.sh: no $tool; apt-get install default-jdk-headless" >&2; exit 2; }
done
for j in $jars; do
  [ -f "$j" ] || { echo "build.sh: no $j; apt-get install libandroid-json-java libreflections-java" >&2; exit 2; }
done
rm -rf "$out/src" "$out/classes"
mkdir -p "$out/classes"
cp -R "$src/src" "$out/src"
(cd "$out" && patch -s -p1 < "$here/debian.patch")
find "$out/src/main/java" "$here/shim" -name '*.java' > "$out/sources.txt"
javac -nowarn -encoding UTF-8 -d "$out/classes" -cp "$(echo $jars | tr ' ' :)" @"$out/sources.txt" 2>&1 \
  | grep -v '^Note: ' >&2 || true
[ -f "$out/classes/uk/co/edstow/cain/Main.class" ] || { echo "build.sh: javac failed" >&2; exit 1; }
printf 'Main-Class: uk.co.edstow.cain.Main\nClass-Path: %s\n' "$(echo $jars | sed 's|/usr/share/java/|file:/usr/share/java/|g')" > "$out/manifest.txt"
jar --create --file "$out/cain-java.jar" --manifest "$out/manifest.txt" -C "$out/classes" .
git -C "$src" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || echo unknown > "$out/commit.txt"
echo "$out/cain-java.jar"
