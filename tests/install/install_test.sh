#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed capguard is run from there.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source_dir=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
targets=(capguard capguard_interposer)
grep -q '^HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt" && targets+=(capguard_man)
cmake --build "$build" --target "${targets[@]}" >/dev/null
cmake --install "$build" --prefix "$prefix" >/dev/null
"$source_dir/tests/install/check_installed.sh" "$prefix" "$source_dir"
# The README, the manual it points to, and the schema the SARIF page names.
for doc in share/doc/capguard-cuda/README.md share/doc/capguard-cuda/docs/index.md \
    share/doc/capguard-cuda/docs/sarif-2.1.0.schema.json; do
  [ -f "$prefix/$doc" ] || { echo "FAIL: $doc not installed"; exit 1; }
done
if [[ " ${targets[*]} " == *" capguard_man "* ]]; then
  [ -f "$prefix/share/man/man1/capguard.1.gz" ] ||
    { echo "FAIL: share/man/man1/capguard.1.gz not installed"; exit 1; }
  man=$(mktemp)
  trap 'rm -rf "$prefix" "$man"' EXIT
  # As a reader sees it, at 80 columns.
  gzip -dc "$prefix/share/man/man1/capguard.1.gz" | MANWIDTH=80 man -l - 2>/dev/null >"$man" ||
    { echo "FAIL: man cannot render capguard.1.gz"; exit 1; }
  grep -q 'unjoined-fork' "$man" && grep -q -- '--fail-on' "$man" ||
    { echo "FAIL: $man lacks the rules or the options"; exit 1; }
  # Every "Usage:" line names the plain command, never the build directory it was made from.
  bad_usage=$(grep 'Usage:' "$man" | grep -v '^ *Usage: capguard ' || true)
  [ -z "$bad_usage" ] && grep -q '^ *Usage: capguard report ' "$man" ||
    { echo "FAIL: $man: Usage lines not of plain capguard: ${bad_usage:-none found}"; exit 1; }
  ! grep -qF "$build" "$man" || { echo "FAIL: $man names the build directory $build"; exit 1; }
  wide=$(awk 'length > 80' "$man")
  [ -z "$wide" ] || { echo "FAIL: man page lines over 80 columns:"; echo "$wide"; exit 1; }
  for section in ENVIRONMENT EXAMPLES 'EXIT STATUS' RULES; do
    grep -q "^$section\$" "$man" || { echo "FAIL: man page has no $section section"; exit 1; }
  done
  # CLI11's notation is not for readers: {false} negations, TEXT:/INT: types, REQUIRED.
  leftovers=$(grep -nE '\{false\}|,--no-|TEXT:|INT:|REQUIRED' "$man" || true)
  [ -z "$leftovers" ] || { echo "FAIL: CLI11 notation in the man page:"; echo "$leftovers"; exit 1; }
  echo "ok: man page share/man/man1/capguard.1.gz (80 columns, ENVIRONMENT, EXAMPLES)"
else
  echo "note: help2man not found, no man page checked"
fi

# The relinking kit (LGPL-3 for libdw): capguard relinked from it with this machine's libdw
# works like the installed one.
kit=$prefix/lib/capguard/relink
[ -x "$kit/link.sh" ] && ls "$kit"/obj/*.o "$kit"/lib/libcapguard_engine.a >/dev/null ||
  { echo "FAIL: no relinking kit in $kit"; exit 1; }
if readelf -S "$kit/lib/libcapguard_engine.a" | grep -q '\.debug_info'; then
  echo "FAIL: $kit/lib keeps debug information"; exit 1
fi
libdw=$(grep -E '^LIBDW_A:FILEPATH=' "$build/CMakeCache.txt" | cut -d= -f2)
libelf=$(grep -E '^LIBELF_A:FILEPATH=' "$build/CMakeCache.txt" | cut -d= -f2)
mkdir -p "$prefix/relinked/bin"
"$kit/link.sh" "$libdw" "$libelf" "$prefix/relinked/bin/capguard" >/dev/null ||
  { echo "FAIL: $kit/link.sh $libdw $libelf failed"; exit 1; }
out=$("$prefix/relinked/bin/capguard" report "$source_dir/testcases/recorded/traces/unjoined_fork" 2>&1 || true)
grep -q '^SUMMARY: capguard: 1 error' <<<"$out" || { echo "FAIL: the relinked capguard: $out"; exit 1; }
echo "ok: relinked capguard from $kit with $libdw: it reports"
