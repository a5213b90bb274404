#!/usr/bin/env bash
# Builds the trace reader's libFuzzer target with clang and runs it for a number of seconds
# (default 60) on a scratch copy of the seed corpus in fuzz/corpus/. Crashes are written to
# build-fuzz/artifacts/. Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer options...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
build="${FUZZ_BUILD_DIR:-build-fuzz}"

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCAPGUARD_FUZZ=ON -DCAPGUARD_TESTCASES=OFF >/dev/null
cmake --build "$build" --target trace_reader_fuzz -j"$(nproc)"

mkdir -p "$build/corpus" "$build/artifacts"
# The first directory receives new inputs; the checked-in seeds stay as they are.
"$build/fuzz/trace_reader_fuzz" "$build/corpus" fuzz/corpus \
  -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" "$@"
