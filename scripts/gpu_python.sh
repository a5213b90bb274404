#!/usr/bin/env bash
# The Python testcases (PyTorch, CuPy, JAX) under capguard on the GPU machine: the expectation
# table, then each finding with its user frame (the program's own Python file:line).
#   BUNDLE=.gpu-bundle OUT=/tmp/out scripts/gpu_python.sh      (BUNDLE: capguard + libcapguard.so)
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-python}
B=/tmp/capguard-gpu-build
mkdir -p "$OUT" "$B"
cp "$BUNDLE/capguard" "$BUNDLE/libcapguard.so" "$B/"
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
python3 --version
python3 testcases/check_expectations.py --source testcases --build "$B" --capguard "$B/capguard" \
  --out "$OUT" --only '^(torch|cupy|jax)_' --timeout 300 "$@"
status=$?
echo "== findings and their user frames"
for report in "$OUT"/*.json; do
  [ "$(basename "$report")" = results.json ] && continue
  python3 - "$report" <<'PY'
import json, os, sys
report = json.load(open(sys.argv[1]))
name = os.path.basename(sys.argv[1])[:-5]
findings = report.get("findings", [])
print(f"-- {name}: {len(findings)} findings")
for f in findings:
    loc = f.get("location") or {}
    frames, i = loc.get("frames") or [], loc.get("user_frame", -1)
    user = frames[i] if isinstance(i, int) and 0 <= i < len(frames) else {}
    py = sum(1 for fr in frames if fr.get("module") == "python")
    print(f"   {f.get('severity')} {f.get('rule')} at {user.get('file')}:{user.get('line')} "
          f"in {user.get('function')} ({len(frames)} frames, {py} Python)")
PY
done
exit $status
