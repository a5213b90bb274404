#!/usr/bin/env bash
# libcapguard.so's dlsym and launch exports (interposer/driver_exports.cpp), preloaded into a
# program on the CPU (a fake libcuda.so.1): RTLD_NEXT stays the caller's, the launch entry points
# and the attach guards (attach_guards.def, their exports in guard_exports.cpp) are wrapped when
# capguard is active and untouched when it is not, and every call arrives with its arguments.
# A library loaded RTLD_LOCAL with libcuda in its own scope only still reaches libcuda.
#   preloaded_dlsym_test.sh LIBCAPGUARD PROGRAM FAKE_CUDA_DIR LOCAL_PROGRAM LOCAL_LIBRARY
# CAPGUARD_TEST_EMULATOR (scripts/test_aarch64.sh: qemu-aarch64-static) runs the programs, of
# another architecture, under it.
set -euo pipefail
read -r -a emu <<<"${CAPGUARD_TEST_EMULATOR:-}"
lib=$1 program=$2 fake_dir=$3 local_program=$4 local_library=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$fake_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
expect() {  # expect FILE LINE
  grep -qxF "$2" "$1" || { echo "FAIL: expected '$2' in:"; cat "$1"; exit 1; }
}
"${emu[@]}" "$program" >"$work/native.txt"
expect "$work/native.txt" "RTLD_NEXT from libnext_a: b"
expect "$work/native.txt" "launch by dlsym wrapped: no"

# Preloaded but inactive (no CAPGUARD_TRACE_DIR): nothing changes.
LD_PRELOAD=$lib "${emu[@]}" "$program" >"$work/inactive.txt"
expect "$work/inactive.txt" "RTLD_NEXT from libnext_a: b"
expect "$work/inactive.txt" "launch by the runtime's resolver wrapped: no"
expect "$work/inactive.txt" "launch by dlsym wrapped: no"
expect "$work/inactive.txt" "launches that reached libcuda: 3 of 3"
expect "$work/inactive.txt" "guarded call by dlsym wrapped: no"
expect "$work/inactive.txt" "guarded calls that arrived intact: 3 of 3 (3 reached libcuda)"

# Active: wrapped, and still RTLD_NEXT from the caller's place.
mkdir "$work/traces"
CAPGUARD_TRACE_DIR=$work/traces LD_PRELOAD=$lib "${emu[@]}" "$program" >"$work/active.txt"
expect "$work/active.txt" "RTLD_NEXT from libnext_a: b"
expect "$work/active.txt" "launch by the runtime's resolver wrapped: yes"
expect "$work/active.txt" "launch by dlsym wrapped: yes"
expect "$work/active.txt" "launches that reached libcuda: 3 of 3"
expect "$work/active.txt" "guarded call by the runtime's resolver wrapped: yes"
expect "$work/active.txt" "guarded call by dlsym wrapped: yes"
expect "$work/active.txt" "guarded calls that arrived intact: 3 of 3 (3 reached libcuda)"

# CAPGUARD_LAUNCH_HOOKS=0: active, launches left to CUPTI.
CAPGUARD_LAUNCH_HOOKS=0 CAPGUARD_TRACE_DIR=$work/traces LD_PRELOAD=$lib "${emu[@]}" "$program" >"$work/off.txt"
expect "$work/off.txt" "launch by dlsym wrapped: no"
expect "$work/off.txt" "launches that reached libcuda: 3 of 3"
# A library loaded RTLD_LOCAL (TorchInductor's C++ wrapper): libcuda is in its scope only.
for hooks in 1 0; do
  CAPGUARD_LAUNCH_HOOKS=$hooks CAPGUARD_TRACE_DIR=$work/traces LD_PRELOAD=$lib \
    "${emu[@]}" "$local_program" "$local_library" >"$work/local.txt"
  expect "$work/local.txt" "calls from a library loaded RTLD_LOCAL that reached libcuda: 2 of 2"
done
echo "preloaded dlsym: all checks passed"
