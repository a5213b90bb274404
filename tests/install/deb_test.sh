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
# Stripped binaries (the debug information is in the -dbgsym .ddeb), the licence, and no lintian
# error (scripts/test.sh installs lintian; without it this part is reported as not checked).
for binary in usr/bin/capguard usr/lib/libcapguard.so; do
  if readelf -S "$work/root/$binary" | grep -qE '\.(symtab|debug_info)\b'; then
    echo "FAIL: $binary is not stripped"; exit 1
  fi
done
ls "$work"/capguard-dbgsym_*.ddeb >/dev/null || { echo "FAIL: no capguard-dbgsym .ddeb"; exit 1; }
echo "ok: stripped binaries, debug information in $(basename "$work"/capguard-dbgsym_*.ddeb)"
grep -q '^License: Apache-2.0$' "$work/root/usr/share/doc/capguard/copyright" ||
  { echo "FAIL: no Apache-2.0 copyright file"; exit 1; }
if command -v lintian >/dev/null; then
  lintian --fail-on error --tag-display-limit 0 "$deb" >"$work/lintian.log" 2>&1 ||
    { echo "FAIL: lintian:"; grep -v 'root privileges' "$work/lintian.log"; exit 1; }
  echo "ok: lintian: no errors ($(grep -c '^W:' "$work/lintian.log" || true) warnings)"
else
  echo "note: lintian not installed, the package was not linted"
fi
"$source_dir/tests/install/check_installed.sh" "$work/root/usr" "$source_dir"
