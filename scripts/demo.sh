#!/usr/bin/env bash
# The main job, after ./scripts/setup.sh: five chosen capguard reports that fit a screen, then
# one line about all the rest and the HTML report that holds every case.
#   With a GPU (nvidia-smi -L works): runs the chosen testcase programs under `capguard run`.
#   Without one, or with DEMO_FROM_TRACES=1: re-analyzes their recorded traces
#   (testcases/recorded/traces/) with `capguard report`.
# BUILD_DIR (default build) holds capguard and libcapguard.so (and testcases/ with a GPU).
# At most 60 lines of at most 120 columns without a GPU (tests/demo_test.sh checks it).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
capguard=$build/capguard
recorded=testcases/recorded/traces
html=${DEMO_HTML:-/tmp/capguard-demo.html}
if [[ ! -x $capguard ]]; then
  echo "demo: $capguard is missing: run ./scripts/setup.sh first" >&2
  exit 2
fi

# program | what it shows | how much of its stack: all (up to where the capture is described)
# or user (up to the user's line and its source, no frames beyond it)
cases=(
  "torch_item_in_capture|PyTorch: Tensor.item() inside torch.cuda.graph|all"
  "unjoined_fork|a C++ capture that forks a stream and never joins it (its picture is in the HTML)|user"
  "escaped_sync_copy|a silent escape: cudaMemcpy during a capture ran once, now, not in the graph|user"
  "graph_replay_after_free|a graph replaying memory freed after it was instantiated|user"
  "torch_graph_rebuilt_every_step|PyTorch: the same graph captured again every step|user"
)

# The first finding of a report, up to where its capture is described: the heading, the
# message, the user's line (its source line without the context around it; with `user`: no
# frames after it), then its fix: line. The count of frames not shown is left out: the last
# lines say how to see any case in full. The report's lines are 120 columns at most already
# (report/text_wrap.h); `cut -c` would count bytes, not columns, and cut words off lines
# holding "…".
first_finding() {
  awk -v user_only="$([[ $1 == user ]] && echo 1 || echo 0)" '
       /^==[0-9]+==(ERROR|WARNING|NOTE)/ {on = 1}
       !on {next}
       infix && /^       / {print; next}
       infix && skipping {exit}
       {infix = 0}
       skipping && /^  fix:/ {print; infix = 1; next}
       skipping {next}
       /^  fix:/ {fixed = 1; print; infix = 1; next}
       /^  (capture #|stream forked|event recorded|last work|capture began|instantiate|\[)/ ||
         (culprit && user_only && !/^ +[0-9]+ \|/) {if (fixed) exit; skipping = 1; next}
       /^ +\(.*(not shown|shows them|--native-frames)\)$/ {next}
       /^      > +[0-9]+ \|/ {culprit = 1; print; next}
       /^ +[0-9]+ \|/ {next}
       {print}'
}

gpu=0
[[ ${DEMO_FROM_TRACES:-0} == 1 ]] || ! nvidia-smi -L >/dev/null 2>&1 || gpu=1
for entry in "${cases[@]}"; do
  IFS='|' read -r program what stack <<<"$entry"
  echo "── $program: $what"
  if ((gpu)) && [[ $program == torch_* ]]; then
    (cd testcases/python && "../../$capguard" run --fail-on never -- python3 "$program.py" 2>&1 >/dev/null) |
      first_finding "$stack"
  elif ((gpu)) && [[ -x $build/testcases/$program ]]; then
    "$capguard" run --fail-on never -- "$build/testcases/$program" 2>&1 >/dev/null | first_finding "$stack"
  elif [[ -d $recorded/$program ]]; then
    "$capguard" report --fail-on never "$recorded/$program" 2>&1 | first_finding "$stack"
  else
    echo "   (no recorded trace of $program here)"
  fi
  echo
done

# Every recorded case in one HTML report; its summary line is the one line about the rest.
if [[ -d $recorded ]]; then
  summary=$("$capguard" report --fail-on never --format html -o "$html" "$recorded"/*/ 2>&1 |
            grep '^SUMMARY' | sed 's/^SUMMARY: capguard: //; s/ (\([0-9]* captures\?\).*/, \1/')
  count=$(find "$recorded" -mindepth 1 -maxdepth 1 -type d | wc -l)
  echo "All $count recorded programs: ${summary:-see the report}."
  echo "Every finding, with a picture of each capture: $html"
  echo "Any one of them in full: $capguard report $recorded/<program>"
fi
