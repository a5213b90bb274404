# The relinking kit (LGPL-3.0 section 4(d)0): capguard links elfutils' libdw and libelf
# statically, so it ships, beside the executable, what relinking it with a modified libdw
# needs: the command-line objects, the analyzer's static libraries (debug information removed)
# and the link command. Installed to lib/capguard/relink/ (the wheel's data, the .deb), where
# an architecture-dependent file may live. cmake/relink/README.in says how to use it.
set(CAPGUARD_RELINK_DIR ${CAPGUARD_PRIVATE_LIBDIR}/relink)
set(CAPGUARD_VERSION ${PROJECT_VERSION})
configure_file(cmake/relink/link.sh.in ${CMAKE_BINARY_DIR}/relink/link.sh @ONLY)
configure_file(cmake/relink/README.in ${CMAKE_BINARY_DIR}/relink/README @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/relink/link.sh DESTINATION ${CAPGUARD_RELINK_DIR})
install(FILES ${CMAKE_BINARY_DIR}/relink/README DESTINATION ${CAPGUARD_RELINK_DIR})
install(FILES $<TARGET_OBJECTS:capguard_cli> DESTINATION ${CAPGUARD_RELINK_DIR}/obj)
set(relink_libraries)
foreach(layer trace util model rules symbolize report engine)
  list(APPEND relink_libraries $<TARGET_FILE:capguard_${layer}>)
endforeach()
install(FILES ${relink_libraries} DESTINATION ${CAPGUARD_RELINK_DIR}/lib)
# Debug information out (tens of MB), symbols kept (the link needs them); deterministic
# archives (-D) so that the package is reproducible.
find_program(CAPGUARD_OBJCOPY NAMES ${CMAKE_OBJCOPY} objcopy REQUIRED)
if(IS_ABSOLUTE ${CAPGUARD_RELINK_DIR})  # scikit-build-core's SKBUILD_DATA_DIR
  set(installed "\$ENV{DESTDIR}${CAPGUARD_RELINK_DIR}")
else()
  set(installed "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CAPGUARD_RELINK_DIR}")
endif()
install(CODE "
  file(GLOB relink_files \"${installed}/obj/*.o\" \"${installed}/lib/*.a\")
  foreach(file \${relink_files})
    execute_process(COMMAND ${CAPGUARD_OBJCOPY} -D --strip-debug \${file} RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR \"objcopy --strip-debug \${file} failed\")
    endif()
  endforeach()")
