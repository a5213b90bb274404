#!/usr/bin/env bash
# interposer/api_table.inc is generated (interposer/gen_api_table.py, from CUPTI's headers and
# trace/api_catalog.def) and committed so that a build needs no Python; this test regenerates it
# and fails when the committed copy is stale.
#   api_table_generated_test.sh SOURCE_DIR CUDA_INCLUDE_DIR
set -euo pipefail
source=$1 include=$2
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
python3 "$source/interposer/gen_api_table.py" "$include" >"$fresh"
if ! diff -u "$source/interposer/api_table.inc" "$fresh" >/dev/null; then
  diff -u "$source/interposer/api_table.inc" "$fresh" | head -20
  echo "api_table_generated: interposer/api_table.inc is stale; regenerate it:" >&2
  echo "  python3 interposer/gen_api_table.py $include > interposer/api_table.inc" >&2
  exit 1
fi
echo "api_table_generated: interposer/api_table.inc matches trace/api_catalog.def and CUPTI's headers"
