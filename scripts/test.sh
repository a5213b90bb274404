#!/usr/bin/env bash
# The test command: sets up (installs what is missing, builds), then runs every test.
# GPU-only tests print why they skip on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
