#!/usr/bin/env bash
# Builds the Debian package with cpack, checks its dependencies, unpacks it into a temporary
# root and runs the packaged capguard from there. Exits 77 (skipped) only without dpkg.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source_dir=$2
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v $tool >/dev/null || { echo "skip: $tool not found (apt-get install dpkg-dev)"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
targets=(capguard capguard_interposer)
grep -q '^HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt" && targets+=(capguard_man)
cmake --build "$build" --target "${targets[@]}" >/dev/null
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/capguard_*.deb)
echo "ok: built $(basename "$deb")"

depends=$(dpkg-deb -f "$deb" Depends)
# Everything but the C library is linked statically: a fresh Debian or Ubuntu needs nothing else.
if [[ "$depends" =~ ^libc6( \(>= [0-9.]+\))?$ ]]; then
  echo "ok: Depends: $depends"
else
  echo "FAIL: Depends: '$depends' (expected libc6 only)"; exit 1
fi
# apt-get can install it (dependencies resolvable); simulated, so no root is needed.
if command -v apt-get >/dev/null; then
  apt-get install -s "$deb" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
  echo "ok: apt-get install -s $(basename "$deb")"
fi

dpkg-deb -x "$deb" "$work/root"
"$source_dir/tests/install/check_installed.sh" "$work/root/usr" "$source_dir"
