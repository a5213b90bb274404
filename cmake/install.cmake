# Install rules, the man page and the Debian package. `capguard run` finds libcapguard.so in
# ../lib/ beside its bin/, so the library goes to lib/ under every prefix (never a multiarch
# libdir such as lib/x86_64-linux-gnu, where it would not be found).

# `cmake --install` and cpack install what is already built instead of building everything
# first (the CUDA testcases are slow to build and are never installed).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

if(SKBUILD)
  # A Python wheel: bin/ and lib/ go to the environment's root (the wheel's data scheme), so
  # a venv gets venv/bin/capguard and venv/lib/libcapguard.so; docs are not repeated there.
  set(CAPGUARD_INSTALL_ROOT ${SKBUILD_DATA_DIR}/)
else()
  set(CAPGUARD_INSTALL_ROOT "")
endif()

set(CAPGUARD_MAINTAINER "capguard maintainers <capguard@users.noreply.github.com>" CACHE STRING
    "Maintainer of the Debian package (name <email>)")

install(TARGETS capguard RUNTIME DESTINATION ${CAPGUARD_INSTALL_ROOT}bin)
if(TARGET capguard_interposer)
  install(TARGETS capguard_interposer LIBRARY DESTINATION ${CAPGUARD_INSTALL_ROOT}lib)
endif()
if(NOT SKBUILD)
  install(FILES README.md ARCHITECTURE.md LICENSE DESTINATION share/doc/capguard)
  # Debian's machine-readable copyright file and the changelog a native package carries
  # (lintian checks both), and the reasoned lintian overrides.
  install(FILES cmake/debian/copyright DESTINATION share/doc/capguard RENAME copyright)
  configure_file(cmake/debian/changelog.in ${CMAKE_BINARY_DIR}/changelog @ONLY)
  execute_process(COMMAND gzip -9 -n -f -k ${CMAKE_BINARY_DIR}/changelog
                  RESULT_VARIABLE gzip_status)
  if(NOT gzip_status EQUAL 0)
    message(FATAL_ERROR "gzip of ${CMAKE_BINARY_DIR}/changelog failed")
  endif()
  install(FILES ${CMAKE_BINARY_DIR}/changelog.gz DESTINATION share/doc/capguard)
  install(FILES cmake/debian/lintian-overrides DESTINATION share/lintian/overrides RENAME capguard)
  install(DIRECTORY docs/ DESTINATION share/doc/capguard/docs)
endif()

# capguard.1, generated from the built executable's own --help, subcommand help and rule table
# so that it cannot drift from them.
find_program(HELP2MAN help2man)
if(HELP2MAN AND NOT SKBUILD)  # the wheel carries the binaries only
  set(CAPGUARD_MAN ${CMAKE_BINARY_DIR}/capguard.1)
  # Installed compressed, as Debian's policy asks (man reads either); -n: reproducible.
  add_custom_command(
    OUTPUT ${CAPGUARD_MAN} ${CAPGUARD_MAN}.gz
    COMMAND ${CMAKE_COMMAND} -DCAPGUARD=$<TARGET_FILE:capguard> -DHELP2MAN=${HELP2MAN}
            -DOUTPUT=${CAPGUARD_MAN} -DENV_DEF=${CMAKE_SOURCE_DIR}/util/env.def
            -P ${CMAKE_SOURCE_DIR}/cmake/make_man_page.cmake
    COMMAND gzip -9 -n -f -k ${CAPGUARD_MAN}
    DEPENDS capguard ${CMAKE_SOURCE_DIR}/cmake/make_man_page.cmake ${CMAKE_SOURCE_DIR}/util/env.def
    COMMENT "Generating capguard.1 from capguard --help")
  add_custom_target(capguard_man ALL DEPENDS ${CAPGUARD_MAN} ${CAPGUARD_MAN}.gz)
  install(FILES ${CAPGUARD_MAN}.gz DESTINATION ${CAPGUARD_INSTALL_ROOT}share/man/man1)
else()
  message(STATUS "help2man not found: no man page (scripts/setup.sh installs it)")
endif()

# cpack -G DEB: a package installing under /usr. Both binaries link libstdc++, libgcc and
# elfutils statically; dpkg-shlibdeps works out what is left (libc6).
set(CPACK_PACKAGE_NAME capguard)
set(CPACK_PACKAGE_VENDOR capguard)
set(CPACK_PACKAGE_CONTACT "${CAPGUARD_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "finds the mistakes that break CUDA stream capture")
# The extended description, in lines Debian's tools show as written (under 80 columns).
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "capguard runs a CUDA program (C++/CUDA, PyTorch, CuPy, JAX) with\n"
    "libcapguard.so injected and reports, the way a sanitizer does, the calls\n"
    "that break CUDA stream capture or silently change what a captured graph\n"
    "does, with their host stacks and the fix. It re-analyzes recorded traces\n"
    "on machines without a GPU and writes text, JSON, SARIF, JUnit and HTML\n"
    "reports for CI.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY capguard)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/capguard/capguard")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(CAPGUARD_GLIBC_STUBS)
  # dpkg-shlibdeps reads this machine's libc6 symbols files, which ask for its own libc6 for
  # libpthread.so.0 and libdl.so.2 (2.34 on Debian 12); the binaries need glibc 2.28 at most
  # (cmake/glibc_floor.cmake; the glibc_floor test and release.sh check it).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.28)")
endif()
# Stripped binaries (53 MB -> a few MB): CPack splits the debug information into a
# capguard-dbgsym .ddeb and strips the packaged files (CPACK_STRIP_FILES would strip them
# before the split and leave no debug information to ship).
set(CPACK_STRIP_FILES FALSE)
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
# libcapguard.so lives in /usr/lib (capguard finds it in ../lib): ldconfig runs by trigger.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/cmake/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
