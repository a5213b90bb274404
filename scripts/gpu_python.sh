#!/usr/bin/env bash
# The Python testcases (PyTorch, Triton, CuPy, JAX) under capguard on the GPU machine: the expectation
# table, then each finding with its user frame (the program's own Python file:line).
#   BUNDLE=.gpu-bundle OUT=/tmp/out scripts/gpu_python.sh      (BUNDLE: capguard + libcapguard.so)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_bundle.sh
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-python}
B=/tmp/capguard-gpu-build
mkdir -p "$OUT" "$B"
install_bundle "$BUNDLE" "$B"
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
python3 --version
python3 testcases/check_expectations.py --source testcases --build "$B" --capguard "$B/capguard" \
  --out "$OUT" --only '^(torch|cupy|jax|triton)_' --timeout 300 "$@"
status=$?
echo "== findings and their user frames"
python3 scripts/print_user_frames.py "$OUT"/*.json
exit $status
