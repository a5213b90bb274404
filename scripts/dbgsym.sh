#!/usr/bin/env bash
# Builds PACKAGE-dbgsym_VERSION_ARCH.deb (capguard-cuda-dbgsym): the debug information of the
# binaries in the capguard-cuda .deb, by build-id under /usr/lib/debug/.build-id/ (where gdb and elfutils look), the way
# Debian's dh_strip makes -dbgsym packages (Auto-Built-Package: debug-symbols, Build-Ids, the
# doc directory a link to the package's). CPack's own -dbgsym package is not lintian-clean
# (cmake/install.cmake says why). Checks that each packaged binary's build-id is the build's.
# Usage: scripts/dbgsym.sh BUILD_DIR CAPGUARD_DEB OUTPUT_DIR
set -euo pipefail
build=$1 deb=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'; }
dpkg-deb -x "$deb" "$work/package"
root=$work/root
mkdir -p "$root/DEBIAN" "$root/usr/share/doc"
ids=()
for pair in capguard:usr/bin/capguard libcapguard.so:usr/lib/capguard/libcapguard.so; do
  built=$build/${pair%%:*} packaged=$work/package/${pair#*:}
  id=$(build_id "$built")
  [ -n "$id" ] && [ "$id" = "$(build_id "$packaged")" ] ||
    { echo "dbgsym: ${pair#*:} in $(basename "$deb") is not $built (build-id)"; exit 1; }
  mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
  # OBJCOPY: the target's objcopy for a cross build (release.sh --arch aarch64).
  "${OBJCOPY:-objcopy}" --only-keep-debug --compress-debug-sections "$built" \
    "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  ids+=("$id")
done
field() { dpkg-deb -f "$deb" "$1"; }
package=$(field Package) version=$(field Version) arch=$(field Architecture)
ln -s "$package" "$root/usr/share/doc/$package-dbgsym"
cat >"$root/DEBIAN/control" <<CONTROL
Package: $package-dbgsym
Source: $package
Version: $version
Auto-Built-Package: debug-symbols
Architecture: $arch
Maintainer: $(field Maintainer)
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $package (= $version)
Section: debug
Priority: optional
Description: debug symbols for $package
Build-Ids: $(printf '%s\n' "${ids[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
CONTROL
find "$root/usr/lib/debug" -type f -exec chmod 644 {} +
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
# Reproducible: every file dated like the package's own newest file.
stamp=$(dpkg-deb --fsys-tarfile "$deb" | tar -tv --full-time | awk '{print $4" "$5}' | sort | tail -n 1)
find "$root" -exec touch -h -d "$stamp" {} +
result=$out/$package-dbgsym_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz -b "$root" "$result" >/dev/null
echo "dbgsym: $result (build-ids ${ids[*]})"
