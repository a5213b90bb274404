#!/usr/bin/env bash
# On the two-GPU machine (nvidia-h200-x2 / nvidia-h100-x2): a torchrun job's ranks in
# one report, with capguard INSIDE torchrun (one `capguard run` per rank, as the recipe of
# docs/multi-rank.md says), then per node and merged:
#   torch_allreduce_2ranks_ok             clean: exit 0, "2 of 2 ranks" in the summary
#   torch_allreduce_2ranks_both_sync      .item() in the capture on both ranks: ONE finding,
#                                          "sync-during-capture, on 2 of 2 ranks", exit 1
#   torch_allreduce_2ranks_one_rank_sync  on rank 1 only: "rank 1 only (1 of 2 ranks): rank 1
#                                          (node <host>, GPU 1)", exit 1
#   two_nodes                             both_sync as two simulated nodes: two torchrun
#                                          (--nnodes 2, one rank each, GPU 0 and GPU 1), two
#                                          `capguard run` with CAPGUARD_HOST=nodeA / nodeB into
#                                          one shared directory; each node's report --one-node,
#                                          then the merge of the two JSON reports: the same
#                                          groups and exit status as one report over all traces
# Keeps everything under $OUT (traces under $OUT/<case>/<host>/rank<R>/, reports beside them) for
# the lead to record (testcases/README.md). Passing ends with "4 passed, 0 failed".
#   BUNDLE=.gpu-bundle OUT=/tmp/capguard-multirank scripts/gpu_multirank.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-multirank}
CG=$(readlink -f "$BUNDLE/capguard")
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -lt 2 ]; then
  echo "SKIP: the multi-rank testcases need 2 GPUs, nvidia-smi -L lists $gpus"
  exit 0
fi
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
rm -rf "$OUT"
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
passed=0 failed=0
verdict() {  # name, ok (0/1), what
  if [ "$2" = 0 ]; then echo "PASS $1"; passed=$((passed + 1)); else echo "FAIL $1: $3"; failed=$((failed + 1)); fi
}
# The host as trace directories and file names carry it, and as the reports name it.
host=$(python3 -c 'import re,socket; print(re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:64])')
node=$(python3 -c 'import socket; print(socket.gethostname())')

# $1 case name, $2 program; capguard inside torchrun, then the node's report and the merge.
inside() {
  local dir=$OUT/$1
  (cd testcases/multi && timeout 200 torchrun --standalone --nproc_per_node 2 --no-python \
     "$CG" run --fail-on never --trace-dir "$dir" -- python3 "$2.py") >"$OUT/$1.run.log" 2>&1
  echo "$1: torchrun exit $?"
  "$CG" report --one-node -q -o "json:$dir/$host.json" "$dir/$host"/*/ >"$OUT/$1.node.log" 2>&1
  echo "$1: node report exit $?"
  "$CG" report --no-source -o "json:$OUT/$1.json" -o "text:$OUT/$1.txt" -q "$dir/$host.json" \
    >"$OUT/$1.merge.log" 2>&1
  echo $? >"$OUT/$1.status"
  echo "$1: merged report exit $(cat "$OUT/$1.status")"
}

inside ok torch_allreduce_2ranks_ok
s=$(cat "$OUT/ok.status")
grep -q "0 errors, 0 warnings, 0 notes in 2 of 2 ranks (" "$OUT/ok.txt"
verdict ok $(( s != 0 || $? != 0 )) "exit $s; $(tail -1 "$OUT/ok.txt")"

inside both_sync torch_allreduce_2ranks_both_sync
s=$(cat "$OUT/both_sync.status")
n=$(grep -c 'ERROR: capguard: sync-during-capture, on 2 of 2 ranks$' "$OUT/both_sync.txt")
verdict both_sync $(( s != 1 || n != 1 )) "exit $s, headings 'on 2 of 2 ranks': $n"

inside one_rank_sync torch_allreduce_2ranks_one_rank_sync
s=$(cat "$OUT/one_rank_sync.status")
n=$(grep -cF "ERROR: capguard: sync-during-capture, rank 1 only (1 of 2 ranks): rank 1 (node $node, GPU 1)" \
  "$OUT/one_rank_sync.txt")
verdict one_rank_sync $(( s != 1 || n != 1 )) "exit $s, headings 'rank 1 only': $n"

# Two simulated nodes sharing one trace directory: CAPGUARD_HOST names each.
dir=$OUT/two_nodes
port=$((29500 + RANDOM % 1000))
for node in 0 1; do
  name=$([ $node = 0 ] && echo nodeA || echo nodeB)
  (cd testcases/multi && CAPGUARD_HOST=$name CUDA_VISIBLE_DEVICES=$node timeout 200 \
     torchrun --nnodes 2 --node_rank $node --nproc_per_node 1 --master_addr 127.0.0.1 \
     --master_port $port --no-python "$CG" run --fail-on never --trace-dir "$dir" -- \
     python3 torch_allreduce_2ranks_both_sync.py) >"$OUT/two_nodes.$name.log" 2>&1 &
done
wait
for name in nodeA nodeB; do
  "$CG" report --one-node -q -o "json:$dir/$name.json" "$dir/$name"/*/ >"$OUT/two_nodes.$name.report.log" 2>&1
  echo "two_nodes: $name report exit $?"
done
"$CG" report --no-source -q -o "json:$OUT/two_nodes.json" -o "text:$OUT/two_nodes.txt" \
  "$dir/nodeA.json" "$dir/nodeB.json" >"$OUT/two_nodes.merge.log" 2>&1
merged=$?
"$CG" report --no-source -q -o "json:$OUT/two_nodes.all.json" "$dir"/node*/*/ >"$OUT/two_nodes.all.log" 2>&1
all=$?
python3 - "$OUT/two_nodes.json" "$OUT/two_nodes.all.json" <<'PY'
import json, sys
def groups(path):
    data = json.load(open(path))
    return sorted((g["rule"], tuple(g["ranks"]), g["where"]) for g in data["finding_groups"]), \
        sorted(p["who"]["label"] for p in data["processes"])
merged, everything = groups(sys.argv[1]), groups(sys.argv[2])
print("merged:", merged)
print("one report:", everything)
ok = merged == everything and merged[0] == [("sync-during-capture", (0, 1), "on 2 of 2 ranks")] \
    and merged[1] == ["rank 0 (node nodeA, GPU 0)", "rank 1 (node nodeB, GPU 1)"]
sys.exit(0 if ok else 1)
PY
same=$?
verdict two_nodes $(( merged != 1 || all != 1 || same != 0 )) "merge exit $merged, one report exit $all, same groups: $same"

echo "== the merged reports"
for f in both_sync one_rank_sync two_nodes; do echo "--- $f"; cat "$OUT/$f.txt"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
