#!/usr/bin/env bash
# CUPTI's cost measured on the GPU machine, one session: where capture and replay time goes
# (native, an empty CUPTI subscriber, the cuGetProcAddress probe in each mode, capguard),
# whether the runtime resolves its launch entry points through cuGetProcAddress after the
# injection attaches (static cudart and PyTorch's shared one), and where a JAX report's
# after-exit time goes.
#   BUNDLE=.gpu-bundle OUT=/tmp/out ROUNDS=5 scripts/gpu_perf_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-.gpu-bundle}; OUT=${OUT:-/tmp/capguard-perf}; ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT" /tmp/pp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o /tmp/pp/empty.so \
  interposer/smoke/empty_subscriber.cpp -L/usr/local/cuda/lib64 -lcupti || exit 1
g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o /tmp/pp/probe.so \
  interposer/smoke/proc_address_probe.cpp -L/usr/local/cuda/lib64 -lcupti || exit 1
g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o /tmp/pp/dlsym.so \
  interposer/smoke/dlsym_probe.cpp -ldl || exit 1
g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o /tmp/pp/census.so \
  interposer/smoke/callback_census.cpp -L/usr/local/cuda/lib64 -lcupti || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ -n "${CENSUS:-}" ]; then
  echo "== callback census: capture bench (100 kernels x 2), both domains, then launches off"
  CUDA_INJECTION64_PATH=/tmp/pp/census.so "$B/bench/bench_capture_kernels" 100 2 2>&1 | grep census
  CUDA_INJECTION64_PATH=/tmp/pp/census.so CENSUS_EXCLUDE=launch "$B/bench/bench_capture_kernels" 100 2 2>&1 | grep census
  echo "== callback census: replay bench (1000 replays)"
  CUDA_INJECTION64_PATH=/tmp/pp/census.so "$B/bench/bench_graph_replay" 1000 2>&1 | grep census
fi
[ -n "${SKIP_RESOLVE:-}" ] || {
echo "== resolved symbols (static cudart bench, verbose)"
CUDA_INJECTION64_PATH=/tmp/pp/probe.so PROBE_MODE=wrap PROBE_VERBOSE=1 \
  "$B/bench/bench_capture_kernels" 100 2 >/dev/null 2>"$OUT/resolve_static.txt"
grep -c resolve "$OUT/resolve_static.txt"; grep -i "launch\|report\|wrapped\|mode=" "$OUT/resolve_static.txt" | head -30
echo "== PyTorch (shared cudart): launches through the wrapped pointer?"
CUDA_INJECTION64_PATH=/tmp/pp/probe.so PROBE_MODE=wrap PROBE_VERBOSE=1 python3 -c '
import torch
x = torch.ones(1000, device="cuda")
for _ in range(100): x = x + 1
torch.cuda.synchronize(); print("sum", float(x.sum()))' 2>"$OUT/resolve_torch.txt"
grep -c resolve "$OUT/resolve_torch.txt"; grep -i "LaunchKernel\|wrapped\|mode=" "$OUT/resolve_torch.txt" | head
echo "== dlsym probe: static cudart bench, then PyTorch's shared cudart"
LD_PRELOAD=/tmp/pp/dlsym.so PROBE_VERBOSE=1 PROBE_CHECK=1 "$B/bench/bench_capture_kernels" 100 2 2>"$OUT/dlsym_static.txt" >/dev/null
grep -c resolve "$OUT/dlsym_static.txt"; grep -v "resolve" "$OUT/dlsym_static.txt"; grep resolve "$OUT/dlsym_static.txt" | head -6
LD_PRELOAD=/tmp/pp/dlsym.so "$B/bench/bench_graph_replay" 100 2>&1 | grep -v metric
LD_PRELOAD=/tmp/pp/dlsym.so python3 -c '
import torch
x = torch.ones(1000, device="cuda"); s = torch.cuda.Stream(); g = torch.cuda.CUDAGraph()
with torch.cuda.stream(s):
    for _ in range(3): x = x + 1
torch.cuda.synchronize()
with torch.cuda.graph(g):
    y = x * 2
for _ in range(10): g.replay()
torch.cuda.synchronize(); print("torch ok", float(y.sum()))' 2>&1 | tail -8
}
[ -n "${PROBE_ONLY:-}" ] && exit 0
# PIN=<cpu>: every run (native, probes, capguard and its program) on that one CPU; this VM's
# capture benchmark is bimodal by placement (0.5 or 0.9 ms natively).
pin=(); [ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
run_metric() { "${pin[@]}" "$@" 2>/dev/null | awk '$1=="metric"{print $3}'; }
declare -A V
modes=${MODES:-native empty probe_none probe_wrap probe_runtime probe_driver dlsym dlsym_check capguard}
IFS=, read -ra benches <<<"${BENCHES:-bench_capture_kernels 1000 50,bench_graph_replay 20000,bench_eager_launch 200000}"
for bench in "${benches[@]}"; do
  name=${bench%% *}
  for r in $(seq "$ROUNDS"); do
    for m in $modes; do
      exe="$B/bench/$bench"
      case $m in
        native) v=$(run_metric $exe);;
        empty) v=$(CUDA_INJECTION64_PATH=/tmp/pp/empty.so run_metric $exe);;
        probe_*) v=$(CUDA_INJECTION64_PATH=/tmp/pp/probe.so PROBE_MODE=${m#probe_} run_metric $exe);;
        census_all) v=$(CUDA_INJECTION64_PATH=/tmp/pp/census.so CENSUS_QUIET=1 run_metric $exe);;
        census_ex) v=$(CUDA_INJECTION64_PATH=/tmp/pp/census.so CENSUS_QUIET=1 CENSUS_EXCLUDE=launch run_metric $exe);;
        dlsym) v=$(LD_PRELOAD=/tmp/pp/dlsym.so run_metric $exe);;
        dlsym_check) v=$(LD_PRELOAD=/tmp/pp/dlsym.so PROBE_CHECK=1 run_metric $exe);;
        capguard) d=$(mktemp -d); v=$("${pin[@]}" "$B/capguard" run --trace-dir $d -- $exe 2>/dev/null | awk '$1=="metric"{print $3}'); rm -rf $d;;
        capguard_cupti_launches) d=$(mktemp -d); v=$(CAPGUARD_LAUNCH_HOOKS=0 "${pin[@]}" "$B/capguard" run --trace-dir $d -- $exe 2>/dev/null | awk '$1=="metric"{print $3}'); rm -rf $d;;
      esac
      V[$name.$m]="${V[$name.$m]:-} $v"
    done
  done
  for m in $modes; do
    python3 - "$name" "$m" ${V[$name.$m]} ${V[$name.native]} <<'PY'
import statistics, sys
name, mode, *vals = sys.argv[1:]
n = len(vals) // 2
v, nat = [float(x) for x in vals[:n]], [float(x) for x in vals[n:]]
print(f"{name:24s} {mode:14s} median {statistics.median(v):9.4f} ratio {statistics.median(v)/statistics.median(nat):6.3f}  rounds {' '.join(f'{x:.3f}' for x in v)}")
PY
  done
done | tee "$OUT/ratios.txt"
