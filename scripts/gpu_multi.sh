#!/usr/bin/env bash
# On the two-GPU machine (nvidia-h200-x2): the multi-GPU testcases under capguard, compared with
# their `// expect:` lines. testcases/multi/:
#   torch_allreduce_2ranks_ok             torchrun, 2 ranks capture an NCCL all-reduce: clean
#   torch_allreduce_2ranks_one_rank_sync  same, rank 1 alone calls .item() in its capture:
#                                          one sync-during-capture, from rank 1's process only
#   torch_allreduce_2ranks_extra_batch    torchrun, rank 1 captures batch size 8 besides 16 and
#                                          replays both: the job hangs at replay until its alarm
#                                          (60 s) kills it; rank-collective-mismatch twice (the
#                                          graph only rank 1 captured, the replay where they part)
#   torch_allreduce_2ranks_extra_batch_ok both ranks capture and replay 8 and 16: clean
#   two_device_fork_ok                    one process, a GPU 1 stream forked into a GPU 0 capture
#                                          and joined back: clean
#   two_device_alloc_in_capture           cudaMalloc on GPU 1 during a Global capture on GPU 0
#   two_device_join_event_wrong_device    the join event is of GPU 0, recorded on a GPU 1 stream:
#                                          400, then unjoined-fork at EndCapture
# Builds the C++ programs there (nvcc), beside a capguard built elsewhere. With fewer than
# two GPUs it prints SKIP and the reason and exits 0. Passing ends with "7 passed, 0 failed".
#   BUNDLE=.gpu-bundle OUT=/tmp/capguard-multi scripts/gpu_multi.sh   (BUNDLE: capguard + .so)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_bundle.sh
ROOT=$PWD
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-multi}
B=${BUILD_DIR:-/tmp/capguard-gpu-build}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -lt 2 ]; then
  echo "SKIP: the multi-GPU testcases need 2 GPUs, nvidia-smi -L lists $gpus"
  exit 0
fi
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
mkdir -p "$OUT" "$B/testcases"
install_bundle "$BUNDLE" "$B"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
for source in testcases/multi/*.cu; do
  name=$(basename "$source" .cu)
  nvcc -O0 -g -lineinfo -arch=sm_90 -cudart shared -Xcompiler -fno-omit-frame-pointer -I"$ROOT/testcases" \
    -o "$B/testcases/$name" "$source" >"$OUT/build-$name.log" 2>&1 ||
    { echo "FAIL: cannot build $name"; tail -20 "$OUT/build-$name.log"; exit 1; }
done
# Each program without capguard first: how it exits natively is what it must do under capguard.
echo "== native (no capguard)"
for source in testcases/multi/*; do
  name=$(basename "$source"); start=$(date +%s)
  [ "$name" = common.py ] && continue
  case "$name" in
    *.py) (cd testcases/multi && timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
             "$name") >"$OUT/native-$name.log" 2>&1 ;;
    *.cu) timeout 150 "$B/testcases/${name%.cu}" >"$OUT/native-$name.log" 2>&1 ;;
    *) continue ;;
  esac
  echo "$name: exit $? in $(($(date +%s) - start)) s"
done
echo "== under capguard"
python3 testcases/check_expectations.py --source testcases --build "$B" --capguard "$B/capguard" \
  --out "$OUT" --suites multi --timeout 200
status=$?
echo "== findings by process"
python3 scripts/print_user_frames.py "$OUT"/*.json
exit $status
