# Binaries that run on glibc 2.28 and newer (RHEL 8, Debian 10, Ubuntu 20.04, and the
# manylinux_2_28 wheel tag), built with this machine's compiler. With CAPGUARD_GLIBC_STUBS set to
# a directory of glibc 2.28 link stubs (cmake/glibc-floor/make_stubs.sh), capguard and
# libcapguard.so link against those instead of this machine's glibc, so every symbol they import
# gets a version 2.28 has; compat.c defines the few functions that GCC's static C++ runtime and
# unwinder take from newer glibc, and start.c makes the executable start the pre-2.34 way.
# scripts/release.sh builds this way; the ctest glibc_floor checks the result.
set(CAPGUARD_GLIBC_STUBS "" CACHE PATH
    "Directory of glibc 2.28 link stubs (cmake/glibc-floor/make_stubs.sh); empty: link against this machine's glibc")
if(CAPGUARD_GLIBC_STUBS)
  if(NOT EXISTS ${CAPGUARD_GLIBC_STUBS}/libc.so.6 OR NOT EXISTS ${CAPGUARD_GLIBC_STUBS}/libc.so)
    message(FATAL_ERROR "CAPGUARD_GLIBC_STUBS=${CAPGUARD_GLIBC_STUBS} holds no glibc link stubs "
                        "(make them with cmake/glibc-floor/make_stubs.sh DIR)")
  endif()
  add_library(capguard_glibc_compat OBJECT cmake/glibc-floor/compat.c)
  set_target_properties(capguard_glibc_compat PROPERTIES C_STANDARD 11 C_VISIBILITY_PRESET hidden)
  target_sources(capguard PRIVATE $<TARGET_OBJECTS:capguard_glibc_compat> cmake/glibc-floor/start.c)
  target_sources(capguard_interposer PRIVATE $<TARGET_OBJECTS:capguard_glibc_compat>)
  # zig's stubs give environ and __environ two addresses, where glibc has one variable under
  # both names; a PIE's copy relocation of environ would then never see what libc stores in it
  # (capguard run crashed reading it). Compiled -fPIC, capguard reads such variables through
  # the GOT, from libc itself; the link still makes a PIE.
  set_target_properties(capguard capguard_cli PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(capguard PRIVATE -fPIC)
  target_compile_options(capguard_cli PRIVATE -fPIC)
  foreach(target capguard capguard_interposer)
    # -L before the compiler's own directories: -lc, -lm, -lpthread and -ldl find the stubs.
    # pthread and dl are named because glibc 2.28 has them in their own libraries.
    target_link_options(${target} PRIVATE -L${CAPGUARD_GLIBC_STUBS}
                        -Wl,-rpath-link,${CAPGUARD_GLIBC_STUBS})
    target_link_libraries(${target} PRIVATE pthread dl)
  endforeach()
  message(STATUS "capguard and libcapguard.so link against the glibc stubs in ${CAPGUARD_GLIBC_STUBS}")
endif()
