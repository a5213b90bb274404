#!/usr/bin/env bash
# Builds the Debian package with cpack, checks its dependencies, unpacks it into a temporary
# root and runs the packaged capguard from there. Exits 77 (skipped) only without dpkg.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source_dir=$2
for tool in dpkg-deb; do
  command -v $tool >/dev/null || { echo "skip: $tool not found (apt-get install dpkg-dev)"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
targets=(capguard capguard_interposer)
grep -q '^HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt" && targets+=(capguard_man)
cmake --build "$build" --target "${targets[@]}" >/dev/null
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/capguard-cuda_*.deb)
echo "ok: built $(basename "$deb")"

depends=$(dpkg-deb -f "$deb" Depends)
# Everything but the C library is linked statically: a fresh Debian or Ubuntu needs nothing else
# (cmake/install.cmake: this machine's glibc, 2.28 in release builds).
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
# Stripped binaries (the debug information goes to scripts/dbgsym.sh's package, not CPack's
# .ddeb), the private library, no maintainer script (no ldconfig: nothing public), no URL.
for binary in usr/bin/capguard usr/lib/capguard/libcapguard.so; do
  if readelf -S "$work/root/$binary" | grep -qE '\.(symtab|debug_info)\b'; then
    echo "FAIL: $binary is not stripped"; exit 1
  fi
done
ls "$work"/*.ddeb >/dev/null 2>&1 && { echo "FAIL: a -dbgsym .ddeb was built"; exit 1; }
dpkg-deb -e "$deb" "$work/control"
scripts=$(cd "$work/control" && ls | grep -vxE 'control|md5sums' || true)
[ -z "$scripts" ] || { echo "FAIL: maintainer scripts: $scripts"; exit 1; }
[ -z "$(dpkg-deb -f "$deb" Homepage)" ] || { echo "FAIL: a Homepage: $(dpkg-deb -f "$deb" Homepage)"; exit 1; }
echo "ok: stripped binaries, /usr/lib/capguard/libcapguard.so, no maintainer script, no Homepage"
# The copyright file holds every notice itself: only Debian's common licences are referred to.
[ "$(dpkg-deb -f "$deb" Package)" = capguard-cuda ] || { echo "FAIL: the package is not capguard-cuda"; exit 1; }
copyright=$work/root/usr/share/doc/capguard-cuda/copyright
cmp -s "$copyright" "$source_dir/licenses/copyright" || { echo "FAIL: copyright is not licenses/copyright"; exit 1; }
others=$(grep -oE '/usr/share/(doc|common-licenses)/[^ "'"'"'/)]+' "$copyright" | sort -u |
  grep -vE '^/usr/share/common-licenses/(Apache-2\.0|GPL-2|GPL-3|LGPL-3)$|^/usr/share/doc/capguard-cuda$' || true)
[ -z "$others" ] || { echo "FAIL: copyright refers to other packages' files: $others"; exit 1; }
echo "ok: copyright: $(grep -c '^Files: embedded/' "$copyright") statically linked components, self-contained"
if command -v lintian >/dev/null; then
  lintian --fail-on error,warning --tag-display-limit 0 "$deb" >"$work/lintian.log" 2>&1 ||
    { echo "FAIL: lintian:"; grep -v 'root privileges' "$work/lintian.log"; exit 1; }
  echo "ok: lintian: no errors, no warnings"
  # The -dbgsym package release.sh ships, from this package and the build's binaries.
  "$source_dir/scripts/dbgsym.sh" "$build" "$deb" "$work" >/dev/null
  dbgsym=$(ls "$work"/capguard-cuda-dbgsym_*.deb)
  lintian --fail-on error,warning --tag-display-limit 0 "$dbgsym" >"$work/lintian.log" 2>&1 ||
    { echo "FAIL: lintian $(basename "$dbgsym"):"; grep -v 'root privileges' "$work/lintian.log"; exit 1; }
  dpkg-deb -x "$dbgsym" "$work/dbgsym"
  dpkg-deb -e "$dbgsym" "$work/dbgsym-control"
  (cd "$work/dbgsym" && md5sum --quiet -c "$work/dbgsym-control/md5sums") ||
    { echo "FAIL: $(basename "$dbgsym"): md5sums do not check"; exit 1; }
  echo "ok: $(basename "$dbgsym"): lintian clean, md5sums relative and right"
else
  echo "note: lintian not installed, the package was not linted"
fi
"$source_dir/tests/install/check_installed.sh" "$work/root/usr" "$source_dir"
