#!/usr/bin/env bash
# Builds a libFuzzer target with clang (FUZZ_TARGET: trace_reader_fuzz, the default,
# companion_files_fuzz: .symbols and source files, or json_report_fuzz: JSON reports) and runs
# it for a number of seconds (default 60) on a scratch copy of its seed corpus (fuzz/corpus/,
# fuzz/companion_corpus/, fuzz/json_corpus/).
# Crashes are written to build-fuzz/artifacts/.
# Usage: [FUZZ_TARGET=...] scripts/fuzz.sh [SECONDS] [extra libFuzzer options...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
build="${FUZZ_BUILD_DIR:-build-fuzz}"

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCAPGUARD_FUZZ=ON -DCAPGUARD_TESTCASES=OFF >/dev/null
target="${FUZZ_TARGET:-trace_reader_fuzz}"
seeds=fuzz/corpus
[ "$target" = companion_files_fuzz ] && seeds=fuzz/companion_corpus
[ "$target" = json_report_fuzz ] && seeds=fuzz/json_corpus
cmake --build "$build" --target "$target" -j"$(nproc)"

mkdir -p "$build/corpus-$target" "$build/artifacts"
# The first directory receives new inputs; the checked-in seeds stay as they are.
# -max_total_time is checked between inputs and -timeout bounds one input; the outer timeout
# is the hard stop should libFuzzer itself not return (a minute past the time asked for).
timeout --kill-after=10 "$((seconds + 60))" \
  "$build/fuzz/$target" "$build/corpus-$target" "$seeds" \
  -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/" "$@"
