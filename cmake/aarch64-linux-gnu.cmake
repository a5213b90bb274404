# Cross-building capguard for aarch64 Linux (Grace Hopper, Grace Blackwell) on an x86-64 Debian 12:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Debian's cross compiler (g++-aarch64-linux-gnu) and its arm64 libraries installed by multiarch
# (libdw-dev:arm64 and the rest: scripts/setup.sh --aarch64 installs them); the CUDA and CUPTI
# headers are the host toolkit's, which are the same for SBSA. Built binaries run here under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR: ctest, and the man page's --help). The glibc floor
# works as for x86-64 (cmake/glibc_floor.cmake with aarch64 stubs: scripts/release.sh --arch).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The static qemu: a dynamic one would have the host's loader try the aarch64 LD_PRELOAD that
# `capguard run` sets (and print an error into the output the tests read).
find_program(CAPGUARD_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(CAPGUARD_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CAPGUARD_QEMU_AARCH64})
endif()
# Libraries and headers of the target only (multiarch: /usr/lib/aarch64-linux-gnu); programs
# (python3, help2man, objcopy's fallback) and package configuration files of the host. The
# header-only packages (fmt, CLI11, doctest) are used for their headers alone.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# FindCUDAToolkit looks for an SBSA target directory when cross-compiling; the host toolkit's
# headers are the ones wanted (nothing links a CUDA library).
if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
