# Install rules, the man page and the Debian package. `capguard run` finds libcapguard.so in
# ../lib/capguard/ beside its bin/ (a private directory: nothing else should load it), so the
# library goes to lib/capguard/ under every prefix (never a multiarch libdir such as
# lib/x86_64-linux-gnu, where it would not be found).

# `cmake --install` and cpack install what is already built instead of building everything
# first (the CUDA testcases are slow to build and are never installed).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

if(SKBUILD)
  # A Python wheel: bin/, lib/ and share/ go to the environment's root (the wheel's data
  # scheme), so a venv gets venv/bin/capguard, venv/lib/capguard/libcapguard.so and
  # venv/share/man/man1/capguard.1.gz; the licences go to the dist-info (pyproject.toml).
  set(CAPGUARD_INSTALL_ROOT ${SKBUILD_DATA_DIR}/)
else()
  set(CAPGUARD_INSTALL_ROOT "")
endif()
set(CAPGUARD_PRIVATE_LIBDIR ${CAPGUARD_INSTALL_ROOT}lib/capguard)
# The package's name, as on PyPI (`capguard` there is another project); the command is capguard.
set(CAPGUARD_PACKAGE_NAME capguard-cuda)
set(CAPGUARD_DOC_DIR share/doc/${CAPGUARD_PACKAGE_NAME})

set(CAPGUARD_MAINTAINER "capguard maintainers <capguard@users.noreply.github.com>" CACHE STRING
    "Maintainer of the Debian package (name <email>)")

install(TARGETS capguard RUNTIME DESTINATION ${CAPGUARD_INSTALL_ROOT}bin)
if(TARGET capguard_interposer)
  install(TARGETS capguard_interposer LIBRARY DESTINATION ${CAPGUARD_PRIVATE_LIBDIR})
  # Beside the library, where `capguard run` looks for it (python_startup_dir in run_command.cpp).
  install(FILES python/capguard_python_startup/sitecustomize.py
          DESTINATION ${CAPGUARD_PRIVATE_LIBDIR}/capguard_python_startup)
endif()
include(cmake/relink.cmake)  # what relinking capguard with another libdw needs (LGPL-3)
if(NOT SKBUILD)
  install(FILES README.md ARCHITECTURE.md DESTINATION ${CAPGUARD_DOC_DIR})
  # Debian's machine-readable copyright file: capguard's licence and those of every library
  # its binaries link statically (licenses/copyright, the one list; the wheel and the sdist
  # carry it too), and the changelog a native package carries (lintian checks both), and the
  # reasoned lintian overrides.
  install(FILES licenses/copyright DESTINATION ${CAPGUARD_DOC_DIR})
  configure_file(cmake/debian/changelog.in ${CMAKE_BINARY_DIR}/changelog @ONLY)
  execute_process(COMMAND gzip -9 -n -f -k ${CMAKE_BINARY_DIR}/changelog
                  RESULT_VARIABLE gzip_status)
  if(NOT gzip_status EQUAL 0)
    message(FATAL_ERROR "gzip of ${CMAKE_BINARY_DIR}/changelog failed")
  endif()
  install(FILES ${CMAKE_BINARY_DIR}/changelog.gz DESTINATION ${CAPGUARD_DOC_DIR})
  install(FILES cmake/debian/lintian-overrides DESTINATION share/lintian/overrides
          RENAME ${CAPGUARD_PACKAGE_NAME})
  install(DIRECTORY docs/ DESTINATION ${CAPGUARD_DOC_DIR}/docs)
endif()

# capguard.1, generated from the built executable's own --help, subcommand help and rule table
# (cmake/make_man_page.py) so that it cannot drift from them.
find_program(HELP2MAN help2man)
find_package(Python3 COMPONENTS Interpreter)
if(HELP2MAN AND Python3_Interpreter_FOUND)
  set(CAPGUARD_MAN ${CMAKE_BINARY_DIR}/capguard.1)
  # Installed compressed, as Debian's policy asks (man reads either); -n: reproducible.
  add_custom_command(
    OUTPUT ${CAPGUARD_MAN} ${CAPGUARD_MAN}.gz
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/cmake/make_man_page.py
            $<TARGET_FILE:capguard> ${HELP2MAN} ${CAPGUARD_MAN} ${CMAKE_CROSSCOMPILING_EMULATOR}
    COMMAND gzip -9 -n -f -k ${CAPGUARD_MAN}
    DEPENDS capguard ${CMAKE_SOURCE_DIR}/cmake/make_man_page.py
            ${CMAKE_SOURCE_DIR}/scripts/env_rows.py ${CMAKE_SOURCE_DIR}/util/env.def
    COMMENT "Generating capguard.1 from capguard --help")
  add_custom_target(capguard_man ALL DEPENDS ${CAPGUARD_MAN} ${CAPGUARD_MAN}.gz)
  install(FILES ${CAPGUARD_MAN}.gz DESTINATION ${CAPGUARD_INSTALL_ROOT}share/man/man1)
else()
  # pyproject.toml builds capguard_man: without help2man the wheel has no man page.
  add_custom_target(capguard_man)
  message(WARNING "help2man or Python 3 not found: no man page (scripts/setup.sh installs them)")
endif()

# cpack -G DEB: a package installing under /usr. Both binaries link libstdc++, libgcc and
# elfutils statically (licenses/copyright lists all they contain).
set(CPACK_PACKAGE_NAME ${CAPGUARD_PACKAGE_NAME})
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
# A cross build's package is for its target: CPack would ask dpkg for this machine's.
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
# Both binaries link everything but the C library statically, so the one dependency is libc6,
# at the version they were linked against: this machine's glibc, or 2.28 with the glibc floor
# (cmake/glibc_floor.cmake; the glibc_floor test and release.sh check that nothing needs more).
# Not dpkg-shlibdeps: CPack's scan for it also makes postinst and postrm call ldconfig for any
# library under /usr/lib, which libcapguard.so, private and loaded by path, does not need
# (lintian warns of such calls).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
if(CAPGUARD_GLIBC_STUBS)
  set(capguard_libc_version 2.28)
else()
  execute_process(COMMAND getconf GNU_LIBC_VERSION OUTPUT_VARIABLE capguard_libc_version
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCH "[0-9]+\\.[0-9]+" capguard_libc_version "${capguard_libc_version}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${capguard_libc_version})")
# Stripped binaries (53 MB -> a few MB). Not CPack's -dbgsym package (CPACK_DEBIAN_DEBUGINFO_
# PACKAGE): it lists absolute build paths in its md5sums, has no copyright or changelog (lintian
# errors) and stops at the relinking kit's objects, which have no build-id. scripts/dbgsym.sh
# makes capguard-cuda-dbgsym from this package and the build's unstripped binaries instead.
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
