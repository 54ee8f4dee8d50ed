# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# Install rules: headers, both libraries, a CMake package (find_package(roialign CONFIG)) and pkg-config.
include(CMakePackageConfigHelpers)
# The license of the whole project (LICENSE), as an SPDX identifier: roialignConfig.cmake sets roialign_LICENSE to
# it and roialign.pc names it.
set(ROIALIGN_LICENSE "Apache-2.0")
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/roialign)

install(DIRECTORY include/roialign DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Two export sets: the shared library's (no dependencies, loaded always) and the static library's (needs Highway
# and OpenMP; roialignConfig.cmake loads it only when it finds them).
install(TARGETS roialign EXPORT roialignTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS roialign_static EXPORT roialignStaticTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT roialignTargets NAMESPACE roialign:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/roialign)
install(EXPORT roialignStaticTargets NAMESPACE roialign:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/roialign)
configure_package_config_file(cmake/roialignConfig.cmake.in ${PROJECT_BINARY_DIR}/roialignConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/roialign)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/roialignConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/roialignConfig.cmake ${PROJECT_BINARY_DIR}/roialignConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/roialign)
set(ROIALIGN_PC_OPENMP "")
if(ROIALIGN_OPENMP)
  set(ROIALIGN_PC_OPENMP "-fopenmp")  # the static library's OpenMP runtime
endif()
configure_file(cmake/roialign.pc.in ${PROJECT_BINARY_DIR}/roialign.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/roialign.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
