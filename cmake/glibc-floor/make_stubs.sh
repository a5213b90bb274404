#!/usr/bin/env bash
# Writes link stubs of glibc 2.28 into DIR, for CAPGUARD_GLIBC_STUBS (cmake/glibc_floor.cmake):
# libc.so.6, libpthread.so.0, libdl.so.2, libm.so.6, librt.so.1 and the dynamic loader, each
# exporting exactly the symbols and versions glibc 2.28 has, plus 2.28's libc_nonshared.a, and
# the libc.so linker script and lib*.so names the compiler driver looks for. They come from zig
# (PyPI's ziglang), which generates them from glibc's ABI lists; only the linker ever reads them.
# Usage: make_stubs.sh [--arch x86_64|aarch64] DIR [ZIG]   (ZIG defaults to `python3 -m ziglang`)
set -euo pipefail
arch=x86_64
if [[ ${1:-} == --arch ]]; then arch=$2; shift 2; fi
# Per architecture: the dynamic loader's name and the linker's name for the output format.
case $arch in
  x86_64) loader=ld-linux-x86-64.so.2 format=elf64-x86-64 ;;
  aarch64) loader=ld-linux-aarch64.so.1 format=elf64-littleaarch64 ;;
  *) echo "make_stubs: no glibc stubs for architecture $arch (x86_64, aarch64)"; exit 2 ;;
esac
dir=$1
shift
if (($#)); then zig=("$@"); else zig=(python3 -m ziglang); fi
version=2.28
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Linking any program for the target makes zig build the stubs; its link line names them.
echo 'int main(void) { return 0; }' >"$work/main.c"
"${zig[@]}" cc -target "$arch-linux-gnu.$version" "$work/main.c" -o "$work/main" -v \
  >"$work/zig.log" 2>&1 || { cat "$work/zig.log"; exit 1; }
libc=$(grep -oE '[^ ]+/libc\.so\.6' "$work/zig.log" | head -n 1)
nonshared=$(grep -oE '[^ ]+/libc_nonshared\.a' "$work/zig.log" | head -n 1)
[[ -f $libc && -f $nonshared ]] || { echo "make_stubs: no stubs in zig's link line:"; cat "$work/zig.log"; exit 1; }
stubs=$(dirname "$libc")

for lib in libc.so.6 libpthread.so.0 libdl.so.2 libm.so.6 librt.so.1 libutil.so.1 libresolv.so.2; do
  cp "$stubs/$lib" "$dir/$lib"
  [[ $lib == libc.so.6 ]] || ln -sf "$lib" "$dir/${lib%.so.*}.so"
done
cp "$stubs/libld.so.2" "$dir/$loader"
cp "$nonshared" "$dir/libc_nonshared.a"
# What -lc finds: like the system's libc.so script, but naming the stubs.
cat >"$dir/libc.so" <<SCRIPT
/* glibc $version link stubs from zig: cmake/glibc-floor/make_stubs.sh */
OUTPUT_FORMAT($format)
GROUP ( $dir/libc.so.6 $dir/libc_nonshared.a AS_NEEDED ( $dir/$loader ) )
SCRIPT

# The stubs must not offer anything newer than the floor, or the floor means nothing.
newest=$(objdump -T "$dir"/*.so.* | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sort -uV | tail -n 1)
[[ $newest == "GLIBC_$version" ]] || { echo "make_stubs: newest version $newest, expected GLIBC_$version"; exit 1; }
echo "make_stubs: glibc $version link stubs for $arch in $dir"
