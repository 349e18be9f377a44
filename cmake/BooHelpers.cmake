# boo: helpers for libraries and tests.

# boo_add_library(NAME SRCS <files> DEPS <targets>)
function(boo_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  boo_set_warnings(${name})
endfunction()

function(boo_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  if(BOO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# boo_add_test(NAME SRCS <files> DEPS <targets> LABELS <labels>)
# One gtest executable; each TEST() becomes its own ctest case.
function(boo_add_test name)
  # SERIAL: the cases run alone (timing comparisons must not share the GPU).
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  boo_set_warnings(${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${serial}
    DISCOVERY_TIMEOUT 60)
endfunction()
