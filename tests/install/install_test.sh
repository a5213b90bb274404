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
for doc in share/doc/capguard/README.md share/doc/capguard/docs/sarif-2.1.0.schema.json; do
  [ -f "$prefix/$doc" ] || { echo "FAIL: $doc not installed"; exit 1; }
done
if [[ " ${targets[*]} " == *" capguard_man "* ]]; then
  [ -f "$prefix/share/man/man1/capguard.1.gz" ] ||
    { echo "FAIL: share/man/man1/capguard.1.gz not installed"; exit 1; }
  man=$(mktemp)
  trap 'rm -rf "$prefix" "$man"' EXIT
  gzip -dc "$prefix/share/man/man1/capguard.1.gz" >"$man"
  grep -q 'unjoined-fork' "$man" && grep -q -- '--fail-on' "$man" ||
    { echo "FAIL: $man lacks the rules or the options"; exit 1; }
  # Every "Usage:" line names the plain command, never the build directory it was made from.
  bad_usage=$(grep 'Usage:' "$man" | grep -v '^Usage: capguard ' || true)
  [ -z "$bad_usage" ] && grep -q '^Usage: capguard report ' "$man" ||
    { echo "FAIL: $man: Usage lines not of plain capguard: ${bad_usage:-none found}"; exit 1; }
  ! grep -qF "$build" "$man" || { echo "FAIL: $man names the build directory $build"; exit 1; }
  echo "ok: man page share/man/man1/capguard.1.gz"
else
  echo "note: help2man not found, no man page checked"
fi
