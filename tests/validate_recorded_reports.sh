#!/usr/bin/env bash
# SARIF and JUnit produced from the traces recorded on the GPU machine (testcases/recorded/), one
# report per testcase program, validated against the SARIF 2.1.0 schema (plus GitHub's extra
# requirements) and the JUnit structure CI readers expect.
#   validate_recorded_reports.sh CAPGUARD SOURCE_DIR WORK_DIR
set -euo pipefail
capguard=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
sarif=() junit=()
for traces in "$source"/testcases/recorded/traces/*/; do
  name=$(basename "$traces")
  "$capguard" report --fail-on never -q -o "sarif:$work/$name.sarif" -o "junit:$work/$name.xml" \
    "$traces"
  sarif+=("$work/$name.sarif")
  junit+=("$work/$name.xml")
done
echo "validating ${#sarif[@]} SARIF logs and ${#junit[@]} JUnit files from recorded traces"
status=0
/usr/bin/python3 "$source/tests/validate_sarif.py" "$source/docs/sarif-2.1.0.schema.json" \
  "${sarif[@]}" || status=$?
[ $status = 77 ] && exit 77  # jsonschema missing: skipped, with the validator's reason
/usr/bin/python3 "$source/tests/validate_junit.py" "${junit[@]}" || status=1
exit $status
