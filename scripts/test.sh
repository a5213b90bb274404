#!/usr/bin/env bash
# The test command: sets up (installs what is missing, builds), then runs every test.
# GPU-only tests print why they skip on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# lintian checks the Debian package (deb_package); a user's set-up does not need it.
CAPGUARD_EXTRA_PACKAGES="lintian ${CAPGUARD_EXTRA_PACKAGES:-}" ./scripts/setup.sh
# setup.sh built what a user needs; the tests need everything (unit tests, testcase programs).
cmake --build "${BUILD_DIR:-build}" -j"$(nproc)"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test: no GPU here (nvidia-smi -L failed): skipping gpu_testcases (the testcase programs"
  echo "      under capguard run); the traces recorded on the GPU machine are replayed instead"
fi
# The CI examples' checkers (ci_examples) and the manual's site generator (docs_site: MkDocs and
# its Material theme), from PyPI into the build tree, pinned: a newer zizmor may audit
# differently, a newer MkDocs warn differently under --strict. Offline, the tests say what they
# skipped.
tools=${BUILD_DIR:-build}/test-tools
if [ ! -x "$tools/bin/zizmor" ] || [ ! -x "$tools/bin/check-jsonschema" ] ||
   [ ! -x "$tools/bin/mkdocs" ]; then
  { python3 -m venv "$tools" &&
    "$tools/bin/pip" install --quiet --disable-pip-version-check check-jsonschema==0.39.0 \
      zizmor==1.32.0 mkdocs==1.6.1 mkdocs-material==9.8.1; } ||
    echo "test: could not install check-jsonschema, zizmor, mkdocs and mkdocs-material into" \
      "$tools (offline?): ci_examples skips the first two, docs_site the site build"
fi
# The tests' analyses keep their symbol cache in the build tree, not in the user's ~/.cache.
export CAPGUARD_SYMBOL_CACHE="${CAPGUARD_SYMBOL_CACHE:-$PWD/${BUILD_DIR:-build}/test-symbol-cache}"
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
# The aarch64 build, cross-built and tested under qemu-user (scripts/test_aarch64.sh: the unit
# suite, the injection tests, the goldens); skipped, saying why, without the cross toolchain or
# qemu, or with CAPGUARD_AARCH64=0.
./scripts/test_aarch64.sh
# The JSON report reader's fuzz target for a bounded time where clang is (merged node
# reports are untrusted input); a crash, or a run past its time, fails the test command.
# CAPGUARD_FUZZ_SECONDS=0 skips it. Without clang, or a clang that cannot link libFuzzer
# (compiler-rt missing), it says why and skips.
fuzz_seconds=${CAPGUARD_FUZZ_SECONDS:-30}
fuzz_probe=$(mktemp -d)
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$fuzz_probe/probe.cpp"
if [ "$fuzz_seconds" = 0 ]; then
  echo "test: CAPGUARD_FUZZ_SECONDS=0: the JSON report reader's fuzz target is not run"
elif ! command -v clang++ >/dev/null || ! command -v clang >/dev/null; then
  echo "test: no clang here: the JSON report reader's fuzz target (scripts/fuzz.sh) is not run"
elif ! clang++ -fsanitize=fuzzer,address,undefined "$fuzz_probe/probe.cpp" -o "$fuzz_probe/probe" \
    >/dev/null 2>&1; then
  echo "test: clang++ here cannot link a libFuzzer target (no compiler-rt?): the JSON report"
  echo "      reader's fuzz target (scripts/fuzz.sh) is not run"
else
  FUZZ_TARGET=json_report_fuzz ./scripts/fuzz.sh "$fuzz_seconds"
fi
rm -rf "$fuzz_probe"
