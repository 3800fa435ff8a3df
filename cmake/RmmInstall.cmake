# SPDX-License-Identifier: Apache-2.0
# `cmake --install` produces a package: find_package(rmm) + target_link_libraries(app rmm::rmm).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The build tree keeps its debug information (the default build type is RelWithDebInfo, for
# debuggers and stack traces in tests); the installed package does not, unless asked: with it the
# shim is about 55 MB, without it under 2 MB. `cmake --install` strips the programs and shared
# libraries (as --strip does) and removes the debug sections of the static libraries.
option(RMM_INSTALL_DEBUG_INFO "Keep debug information in installed binaries and libraries" OFF)
if(NOT RMM_INSTALL_DEBUG_INFO)
  install(CODE "set(CMAKE_INSTALL_DO_STRIP ON)")
endif()

install(TARGETS rmm EXPORT rmm-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY core/include/rmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# rmm::config (TOML stacks; toml++ is compiled in) and the commands rmm-run and rmm-replay.
install(TARGETS rmm_config EXPORT rmm-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY config/include/rmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS rmm-run rmm-ctl rmm-replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The preload shim, next to rmm-run's bin/ (rmm-run finds it there), and its control header.
install(TARGETS rmm_shim LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES shim/include/rmm/shim.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rmm)

install(EXPORT rmm-targets NAMESPACE rmm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmm)
configure_package_config_file(cmake/rmm-config.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/rmm-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmm)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rmm-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rmm-config.cmake ${CMAKE_CURRENT_BINARY_DIR}/rmm-config-version.cmake
  cmake/rmm-toolkit-cccl.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rmm)

if(NOT RMM_INSTALL_DEBUG_INFO AND CMAKE_STRIP)
  install(CODE "
    foreach(archive rmm rmm_config)
      set(path \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/lib\${archive}.a\")
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${path}\" RESULT_VARIABLE failed)
      if(failed)
        message(FATAL_ERROR \"could not remove the debug information of \${path}\")
      endif()
    endforeach()")
endif()

# `cpack -G DEB` in the build directory: a Debian package of what `cmake --install` installs (the
# headers, librmm and rmm::config with their CMake files, the shim, rmm-run, rmm-ctl and
# rmm-replay), under /usr. The CUDA runtime is not a Debian package (NVIDIA's repository names it
# cuda-cudart-13-0), so it is recommended rather than required; the rest is Debian's.
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_PACKAGE_NAME rmm)
  set(CPACK_PACKAGE_VENDOR "rmm")
  set(CPACK_PACKAGE_CONTACT "rmm maintainers")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION devel)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), zlib1g, libfmt-dev")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cuda-cudart-13-0")
  set(CPACK_GENERATOR DEB)
  include(CPack)
endif()
