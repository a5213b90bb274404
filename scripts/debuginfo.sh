#!/usr/bin/env bash
# The shipped binaries' debug information, by build-id, as a tarball to unpack at / (gdb and
# eu-stack then find it in /usr/lib/debug/.build-id/), instead of a -dbgsym package (CPack's is
# not lintian-clean: cmake/install.cmake). The stripped binaries in the .deb and the wheel keep
# their build-id, which this checks against each file's name.
# Usage: scripts/debuginfo.sh BUILD_DIR OUTPUT.tar.xz
set -euo pipefail
build=$1 out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for binary in "$build/capguard" "$build/libcapguard.so"; do
  id=$(readelf -n "$binary" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  [ -n "$id" ] || { echo "debuginfo: $binary has no build-id"; exit 1; }
  dir=$work/usr/lib/debug/.build-id/${id:0:2}
  mkdir -p "$dir"
  objcopy --only-keep-debug --compress-debug-sections "$binary" "$dir/${id:2}.debug"
  echo "debuginfo: $(basename "$binary") build-id $id"
done
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" -cJf "$out" usr
echo "debuginfo: $out"
