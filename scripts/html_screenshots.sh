#!/usr/bin/env bash
# Renders recorded traces as HTML reports and screenshots them in headless Chromium, to look at
# the pictures of the captures (docs/html-report-unjoined-fork.png was made this way).
# Usage: scripts/html_screenshots.sh OUT_DIR [PROGRAM...]   (default: a few telling testcases)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: html_screenshots.sh OUT_DIR [PROGRAM...]}
shift
programs=("$@")
((${#programs[@]})) || programs=(unjoined_fork cross_capture_event_wait escaped_sync_copy
                                 torch_training_step_ok torch_unjoined_side_stream)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "html_screenshots: no chromium (apt-get install chromium)"; exit 77; }
mkdir -p "$out"
for program in "${programs[@]}"; do
  build/capguard report --fail-on never -q -o "html:$out/$program.html" \
    "testcases/recorded/traces/$program"
  "$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1280,1400 \
    --screenshot="$out/$program.png" "file://$(realpath "$out/$program.html")" 2>/dev/null
  echo "$out/$program.png"
done
