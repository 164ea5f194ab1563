# cmake -DEXES="exe1|exe2|..." -P check_test_names.cmake
#
# CTest registers each Catch2 case under its name, and a name is a CMake list
# element: a ';' in it splits the case into two CTest tests whose filters
# match no case at all, so both "pass" and the case never runs (17 cases did
# not, until session 52). Fails naming every such case.
string(REPLACE "|" ";" exes "${EXES}")
set(bad "")
foreach(exe IN LISTS exes)
  execute_process(COMMAND ${exe} --list-test-names-only OUTPUT_VARIABLE names RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 AND names STREQUAL "")
    message(FATAL_ERROR "${exe} --list-test-names-only failed (${rc})")
  endif()
  # Each name on its own line; look for the character itself.
  string(REPLACE ";" "<semicolon>" names "${names}")
  string(REPLACE "\n" ";" lines "${names}")
  foreach(line IN LISTS lines)
    if(line MATCHES "<semicolon>")
      string(REPLACE "<semicolon>" ";" line "${line}")
      string(APPEND bad "\n  ${exe}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "test cases whose names hold ';' (CTest splits them and runs none; use ','):${bad}")
endif()
message(STATUS "no test case name holds ';'")
