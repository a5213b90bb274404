#!/usr/bin/env bash
# Builds the Python wheel once (pip, scikit-build-core from PyPI, the same CMake build), checks
# what it carries (the binaries, the man page, the relinking kit, every licence, no URL, no
# `capguard` import package), installs it into a fresh venv and runs capguard from there, as
# `capguard` and as `python -m capguard_cuda`. Then, offline: `pip install -U capguard-cuda`
# finding a newer release (the same wheel under a newer version, in a local index) keeps a
# working capguard, and so does installing PyPI's unrelated `capguard` beside it.
# Exits 77 (skipped) only when Python's venv module is missing.
# Usage: wheel_test.sh SOURCE_DIR [PYTHON] [KEEP_DIR]
#   KEEP_DIR: the wheel is left there for the CI examples' test (github_workflow).
set -euo pipefail
source_dir=$1 python=${2:-python3} keep=${3:-}
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "skip: $python has no venv/ensurepip (apt-get install python3-venv)"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export PIP_DISABLE_PIP_VERSION_CHECK=1
# The wheel compiles the sources the test build compiled, with the same flags: through ccache
# (scripts/setup.sh configures the test build the same way) they are not compiled again, and
# what this test adds, pip and scikit-build-core configuring, linking and installing the wheel,
# takes about a minute instead of a full build.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="env;CCACHE_NOHASHDIR=1;ccache"
  export CMAKE_C_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER
fi

"$python" -m venv "$work/builder"
"$work/builder/bin/pip" wheel --quiet --no-deps -w "$work/dist" "$source_dir" >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/capguard_cuda-*.whl)
echo "ok: built $(basename "$wheel")"
if [ -n "$keep" ]; then rm -rf "$keep" && mkdir -p "$keep" && cp "$wheel" "$keep/"; fi
version=$(sed -nE 's/^project\(capguard VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")

"$python" - "$wheel" "$version" <<'PY' || exit 1
import re, sys, zipfile
wheel, version = sys.argv[1:]
names = set(zipfile.ZipFile(wheel).namelist())
data, info = f"capguard_cuda-{version}.data/data", f"capguard_cuda-{version}.dist-info"
wanted = [f"{data}/bin/capguard", f"{data}/lib/capguard/libcapguard.so",
          f"{data}/share/man/man1/capguard.1.gz", f"{data}/lib/capguard/relink/link.sh",
          f"{data}/lib/capguard/relink/lib/libcapguard_symbolize.a",
          "capguard_cuda/__init__.py", "capguard_cuda/_version.py"]
wanted += [f"{info}/licenses/{name}" for name in
           ("LICENSE", "licenses/copyright", "licenses/LGPL-3.0.txt", "licenses/GPL-3.0.txt",
            "licenses/GPL-2.0.txt", "licenses/GCC-exception-3.1.txt")]
problems = [f"missing {name}" for name in wanted if name not in names]
problems += [f"an import package `capguard` ({name})" for name in names
             if name.startswith("capguard/")]
metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
if not re.search(r"^Name: capguard-cuda$", metadata, re.M):
    problems.append("METADATA: Name is not capguard-cuda")
problems += [f"METADATA names a URL: {line}" for line in metadata.splitlines()
             if line.startswith(("Project-URL", "Home-page", "Download-URL"))]
if not re.search(r"^License-Expression: Apache-2.0 AND .*LGPL-3.0-or-later", metadata, re.M):
    problems.append("METADATA: no License-Expression naming the linked licences")
for problem in problems:
    print("FAIL: wheel:", problem)
if problems:
    sys.exit(1)
print("ok: the wheel carries the binaries, the man page, the relinking kit and every licence")
PY

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir" \
  "$work/venv/bin/python" -m capguard_cuda
fail() { echo "FAIL: $*"; exit 1; }
got=$("$work/venv/bin/python" -c 'import capguard_cuda; print(capguard_cuda.__version__)')
[ "$got" = "$version" ] || fail "capguard_cuda.__version__ is '$got', not $version"
got=$("$work/venv/bin/capguard" -V)
[ "$got" = "capguard $version" ] || fail "capguard -V says '$got'"
# The usage line names the command, not where this venv keeps it.
usage=$("$work/venv/bin/python" -m capguard_cuda run --help | grep -m1 '^Usage:')
[ "$usage" = "Usage: capguard run [OPTIONS] command..." ] || fail "python -m capguard_cuda: '$usage'"
echo "ok: __version__ $version, capguard -V, '$usage'"

# pip install -U capguard-cuda, offline: a local index holding a newer release.
mkdir -p "$work/index"
"$python" "$source_dir/tests/install/wheel_tools.py" bump "$wheel" "$work/index" "$version.post1" >/dev/null
"$work/venv/bin/pip" install --quiet --no-index --find-links "$work/index" -U capguard-cuda
got=$("$work/venv/bin/pip" show capguard-cuda | sed -n 's/^Version: //p')
[ "$got" = "$version.post1" ] || fail "pip install -U capguard-cuda left version '$got'"
echo "ok: pip install -U capguard-cuda (local index) upgraded to $got"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir" \
  "$work/venv/bin/python" -m capguard_cuda
# PyPI's `capguard` is another project with an import package `capguard`: it shares no file
# with this one, so installing it (pip install capguard, by habit) breaks nothing here.
"$python" "$source_dir/tests/install/wheel_tools.py" impostor "$work/index" >/dev/null
"$work/venv/bin/pip" install --quiet --no-index "$work/index/capguard-0.1.6-py3-none-any.whl"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir" \
  "$work/venv/bin/python" -m capguard_cuda
# Both import, each its own; the pytest plugin's entry point is still capguard-cuda's.
"$work/venv/bin/python" - <<'PY' || fail "capguard_cuda and the unrelated capguard do not coexist"
import importlib.metadata as metadata, capguard, capguard_cuda
assert capguard_cuda.rehearse and "Not capguard-cuda" in capguard.__doc__
points = [p for p in metadata.entry_points().select(group="pytest11")
          if p.value == "capguard_cuda.pytest_plugin"]
assert points and points[0].dist.name == "capguard-cuda", points
PY
echo "ok: the unrelated 'capguard' installed beside it changes nothing"
