# boo: what `cmake --install build --prefix P` installs, by component:
#   runtime      bin/boo, bin/boo-driver, lib/libboo.so.<version>, share/boo/report/ (boo report's Python),
#                share/boo/tuning/ (the shipped tunings: tuning/*.json)
#   development  include/boo/, lib/libboo.a, the libboo.so link, lib/cmake/boo/ (find_package(boo CONFIG):
#                boo::boo, the shared library, and boo::boo_static), lib/pkgconfig/boo.pc
# Everything is relative to the prefix (relocatable). The library needs nothing
# else at run time: the device sources are compiled in, and libcuda, NVRTC and
# the vendor libraries are found and loaded when used (src/cuda/library_loader.cpp).
# The Python extension is the python component's alone (pyproject.toml).
include(CMakePackageConfigHelpers)

set(BOO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/boo)

install(TARGETS boo-driver boo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS boo_shared boo_static EXPORT booTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
# boo report's Python package, where bin/boo looks for it: <bin>/../share/boo/report (tools/boo/boo_main.cpp).
install(DIRECTORY tools/report/boo_report DESTINATION ${CMAKE_INSTALL_DATADIR}/boo/report COMPONENT runtime
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
# The shipped tunings, where the library and the tools look for them: <lib or bin>/../share/boo/tuning
# (src/cache/shipped_tunings.cpp).
install(DIRECTORY tuning/ DESTINATION ${CMAKE_INSTALL_DATADIR}/boo/tuning COMPONENT runtime
  FILES_MATCHING PATTERN "*.json")
install(DIRECTORY include/boo DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(EXPORT booTargets NAMESPACE boo:: DESTINATION ${BOO_CMAKE_DIR} COMPONENT development)

configure_package_config_file(cmake/booConfig.cmake.in ${PROJECT_BINARY_DIR}/booConfig.cmake
  INSTALL_DESTINATION ${BOO_CMAKE_DIR})
# The SONAME's rule: a 0.x consumer needs the minor version it was built against.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/booConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/booConfig.cmake ${PROJECT_BINARY_DIR}/booConfigVersion.cmake
  DESTINATION ${BOO_CMAKE_DIR} COMPONENT development)

# pkg-config finds the prefix from the .pc file's own folder (${pcfiledir}).
file(RELATIVE_PATH BOO_PC_PREFIX_FROM_PCDIR /P/${CMAKE_INSTALL_LIBDIR}/pkgconfig /P)
string(REGEX REPLACE "/$" "" BOO_PC_PREFIX_FROM_PCDIR "${BOO_PC_PREFIX_FROM_PCDIR}")
list(TRANSFORM CMAKE_DL_LIBS PREPEND -l OUTPUT_VARIABLE BOO_PC_DL_LIB)
configure_file(cmake/boo.pc.in ${PROJECT_BINARY_DIR}/boo.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/boo.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
