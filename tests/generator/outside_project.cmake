# CTest generator/outside_project: install the Kiln build KILN_BUILD_DIR into
# a fresh prefix under WORK_DIR, then configure, build and run PROJECT_DIR
# (tests/generator/outside_project) against it, as a user of Kiln would.
# Checks too that the installed kiln-gen's flags name the prefix, not the
# build tree, and that the PNG helper's headers are installed.
#   cmake -DKILN_BUILD_DIR=... -DPROJECT_DIR=... -DWORK_DIR=... [-DCMAKE_GENERATOR=...] [-DCXX=...] -P outside_project.cmake
foreach(var KILN_BUILD_DIR PROJECT_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "outside_project.cmake: -D${var}=... is required")
  endif()
endforeach()

# Runs a command, echoing it; stops with its output if it fails.
function(step what)
  message(STATUS "${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("install Kiln" ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix})

# The installed kiln-gen names the installed NPU header, not the build's.
execute_process(COMMAND ${prefix}/bin/kiln-gen --print-cxx-flags -t npu RESULT_VARIABLE result OUTPUT_VARIABLE flags
                ERROR_VARIABLE flags)
file(REAL_PATH ${prefix} real_prefix)
string(FIND "${flags}" " -I${real_prefix}/include/kiln/npu" at)
if(NOT result EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "the installed kiln-gen --print-cxx-flags -t npu does not name ${real_prefix}/include/kiln/npu:\n"
                      "${flags}")
endif()
foreach(file include/kiln_apps/png_io.h include/kiln_apps/image_ops.h)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the installed Kiln lacks ${file}")
  endif()
endforeach()

set(configure ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
              -DCMAKE_PREFIX_PATH=${prefix})
if(CMAKE_GENERATOR)
  list(APPEND configure -G ${CMAKE_GENERATOR})
endif()
if(CXX)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX})
endif()
step("configure the outside project" ${configure})
step("build the outside project" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
step("run the outside project" ${CMAKE_COMMAND} -E chdir ${WORK_DIR}/build ${WORK_DIR}/build/outside_app)
