#!/usr/bin/env bash
# interposer/api_table_<major>.inc are generated (interposer/gen_api_table.py, from each CUDA
# major's CUPTI headers and trace/api_catalog.def) and committed so that a build needs no Python;
# this test regenerates both, fails when a committed copy is stale, and checks that a callback id
# names the same function in both releases (what api_table.h's lookup relies on).
#   api_table_generated_test.sh SOURCE_DIR CUDA13_INCLUDE_DIR CUDA12_CUPTI_INCLUDE_DIR
set -euo pipefail
source=$1
declare -A include=([13]=$2 [12]=$3)
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
for major in 13 12; do
  committed=$source/interposer/api_table_$major.inc
  python3 "$source/interposer/gen_api_table.py" "${include[$major]}" >"$fresh"
  if ! diff -u "$committed" "$fresh" >/dev/null; then
    diff -u "$committed" "$fresh" | head -20
    echo "api_table_generated: interposer/api_table_$major.inc is stale; regenerate it:" >&2
    echo "  python3 interposer/gen_api_table.py ${include[$major]} > interposer/api_table_$major.inc" >&2
    exit 1
  fi
done
python3 "$source/interposer/gen_api_table.py" --check-majors "${include[12]}" "${include[13]}"
echo "api_table_generated: both tables match trace/api_catalog.def and their CUPTI headers"
