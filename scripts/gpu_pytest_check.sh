#!/usr/bin/env bash
# The pytest plugin on the GPU machine: a pytest file with one failing and one clean test
# (testcases/python/pytest_capture/test_capture_pair.py) under
#   capguard run -o junit:... -- python3 -m pytest -p capguard_cuda.pytest_plugin
# must give a JUnit report where only the failing test's case carries the finding
# (sync-during-capture, from .item() inside torch.cuda.graph); pytest without capguard and with
# --capguard must say capguard is not attached. One PASS or FAIL line per check.
#   CAPGUARD=/tmp/capguard-gpu-build/capguard OUT=/tmp/out scripts/gpu_pytest_check.sh
# CAPGUARD: a capguard with libcapguard.so beside it (a bundle). Logs, reports and the traces
# (with the plugin's capguard.<pid>.tests) go to OUT. Exits 1 when a check fails, 77 (SKIP,
# with the reason) where python3 has no torch or no pytest.
set -uo pipefail
CAPGUARD=$(realpath -m "${CAPGUARD:-/tmp/capguard-gpu-build/capguard}")
OUT=$(realpath -m "${OUT:-/tmp/capguard-pytest}")
cd "$(dirname "$0")/.."
FILE=testcases/python/pytest_capture/test_capture_pair.py
FAILING=test_item_in_capture RULE=sync-during-capture CLEAN=test_clean_capture
mkdir -p "$OUT"
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
unset PYTEST_ADDOPTS CAPGUARD_TRACE_DIR
if [[ ! -x $CAPGUARD ]]; then
  echo "FAIL: $CAPGUARD is not an executable capguard"
  exit 1
fi
for module in torch pytest; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "SKIP: $(command -v python3) has no $module"
    exit 77
  fi
done
python3 -c 'import sys, torch, pytest; print("python", sys.version.split()[0], "torch", torch.__version__, "pytest", pytest.__version__)'

failures=0
result() {  # result 1|0 MESSAGE: one PASS or FAIL line
  if [[ $1 == 1 ]]; then echo "PASS: $2"; else echo "FAIL: $2"; failures=$((failures + 1)); fi
}
passes() { if "$@"; then echo 1; else echo 0; fi; }  # 1 when the command succeeds
pytest_args=(-m pytest -p capguard_cuda.pytest_plugin -p no:cacheprovider --rootdir "$(dirname "$FILE")" -rA)

# Under capguard: the JUnit and text reports, the traces kept (with the tests' marks).
rm -rf "$OUT/traces" "$OUT/pytest.junit.xml" "$OUT/pytest.txt"
"$CAPGUARD" run --trace-dir "$OUT/traces" --fail-on error --format junit -o "$OUT/pytest.junit.xml" \
  -o "text:$OUT/pytest.txt" -q -- python3 "${pytest_args[@]}" "$FILE" >"$OUT/pytest.log" 2>&1
status=$?
result $((status == 1)) "capguard run exit $status (1: an error finding reached --fail-on error)"
result "$(passes grep -q "capguard: attached" "$OUT/pytest.log")" "pytest's header says capguard is attached"
tally=$(grep -Eo '[0-9]+ (failed|passed|errors?)[^=]*' "$OUT/pytest.log" | tail -1)
result "$(passes grep -Eq "(^|[^0-9])1 failed, 1 passed" "$OUT/pytest.log")" \
  "pytest under capguard: 1 failed, 1 passed (pytest: ${tally:-no result line})"
marks=$(find "$OUT/traces" -name 'capguard.*.tests' 2>/dev/null | head -1)
result $((${#marks} > 0)) "the plugin wrote its marks: ${marks:-no capguard.<pid>.tests in $OUT/traces}"
python3 scripts/check_pytest_junit.py "$OUT/pytest.junit.xml" "$FAILING" "$RULE" "$CLEAN" ||
  failures=$((failures + 1))
result "$(passes grep -Eq "^==[0-9]+==ERROR: capguard: $RULE" "$OUT/pytest.txt")" \
  "the text report has a $RULE error"
result "$(passes grep -Eq "^  in test .*::$FAILING\$" "$OUT/pytest.txt")" \
  "the text report names a finding in test ...::$FAILING"
result $((1 - $(passes grep -Eq "^  in test .*::$CLEAN\$" "$OUT/pytest.txt"))) \
  "the text report names no finding in test ...::$CLEAN"

# Without capguard: the same tests, and --capguard says that nothing is attached.
python3 "${pytest_args[@]}" --capguard "$FILE" >"$OUT/pytest-native.log" 2>&1
status=$?
result $((status == 1)) "pytest without capguard exit $status (1: the failing test fails natively too)"
result "$(passes grep -q "capguard: not attached" "$OUT/pytest-native.log")" \
  "pytest without capguard, with --capguard: says \"capguard: not attached\""

echo "logs and reports: $OUT (pytest.log, pytest.txt, pytest.junit.xml, pytest-native.log, traces/)"
if ((failures)); then
  echo "gpu_pytest_check: FAILED ($failures)"
  exit 1
fi
echo "gpu_pytest_check: ok"
