# kiln_add_library(): compile a generator with a schedule into a static
# library at build time, as Halide's add_halide_library().
#
#   kiln_add_library(<name> GENERATOR <generator>
#                    [SCHEDULE <file.sched>|auto] # default: every Func inlined; auto: Kiln chooses
#                    [TARGET <target>]            # default: host
#                    [FUNCTION <function>]        # default: <name>
#                    [PARAMS <param>=<value>...]  # GeneratorParams
#                    [ESTIMATES <buffer>=W,H...]  # sizes SCHEDULE auto schedules for (kiln-gen --estimate)
#                    [MAX_STATES <n>]             # SCHEDULE auto: the most schedules it evaluates (default 1500)
#                    [RESIDUAL_BUDGET <bytes>]    # a backward generator: the most bytes of saved residuals
#                    [NARROW_RESIDUALS float16|bfloat16]  # SCHEDULE auto, backward: allow 16-bit copies
#                    [FROM <kiln-gen target>])    # default: Kiln::kiln-gen; or one of kiln_add_generator()
#
# runs kiln-gen into ${CMAKE_CURRENT_BINARY_DIR}/<name>.kiln/ whenever the
# generator program or the schedule file changes, and builds <name> from the
# emitted <function>.cpp and the Kiln runtime. Link it and include
# "<function>.h":
#
#   target_link_libraries(my_app PRIVATE <name>)
#
# The kernel is compiled with the flags kiln-gen writes for the target
# (<function>.flags: -O3 -fopenmp -ffp-contract=off ... -march=...).
#
#   kiln_add_generator(<name> SOURCES <generator.cpp>... [LINK_LIBRARIES <lib>...])
#
# builds a kiln-gen of your own with the generators in SOURCES linked in; use
# it with kiln_add_library(... FROM <name>).
include_guard(GLOBAL)

# In Kiln's own build these are found next to this file; the installed
# package config (KilnConfig.cmake) sets them before including it.
if(NOT DEFINED KILN_RUNTIME_SOURCE_DIR)
  set(KILN_RUNTIME_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/../runtime)
endif()
if(NOT DEFINED KILN_GEN_MAIN_SOURCE)
  set(KILN_GEN_MAIN_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../dsl/driver/kiln_gen_main.cpp)
endif()
if(NOT DEFINED KILN_LAB_SOURCE_DIR)
  set(KILN_LAB_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/../apps/lab)
  set(KILN_LAB_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR}/../apps/common)
endif()
set_property(GLOBAL PROPERTY KILN_LAB_SOURCE_DIR ${KILN_LAB_SOURCE_DIR})
set_property(GLOBAL PROPERTY KILN_LAB_COMMON_DIR ${KILN_LAB_COMMON_DIR})
set_property(GLOBAL PROPERTY KILN_RUNTIME_SOURCE_DIR ${KILN_RUNTIME_SOURCE_DIR})
set_property(GLOBAL PROPERTY KILN_GEN_MAIN_SOURCE ${KILN_GEN_MAIN_SOURCE})

# kiln_aot_runtime: the Kiln runtime (error handler, thread count), compiled
# once and linked by every library kiln_add_library() makes.
function(_kiln_add_runtime)
  if(TARGET kiln_aot_runtime)
    return()
  endif()
  get_property(dir GLOBAL PROPERTY KILN_RUNTIME_SOURCE_DIR)
  add_library(kiln_aot_runtime STATIC ${dir}/kiln_runtime.cpp)
  target_include_directories(kiln_aot_runtime PUBLIC ${dir} ${KILN_HALIDE_INCLUDE_DIR})
  target_link_libraries(kiln_aot_runtime PUBLIC OpenMP::OpenMP_CXX)
  set_target_properties(kiln_aot_runtime PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endfunction()

# The autoscheduler's and the residuals' options of kiln_add_library()
# (ARG_* of the caller), checked when the project is configured: kiln-gen
# checks them too, but only when the library is built.
macro(_kiln_check_search_options name)
  if(DEFINED ARG_MAX_STATES AND NOT ARG_MAX_STATES MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "kiln_add_library(${name}): MAX_STATES ${ARG_MAX_STATES}: give a positive number of "
                        "schedules, e.g. MAX_STATES 1500 (the default)")
  endif()
  if(DEFINED ARG_RESIDUAL_BUDGET AND NOT ARG_RESIDUAL_BUDGET MATCHES "^[0-9]+$")
    message(FATAL_ERROR "kiln_add_library(${name}): RESIDUAL_BUDGET ${ARG_RESIDUAL_BUDGET}: give a number of "
                        "bytes, e.g. RESIDUAL_BUDGET 4194304 for 4 MiB")
  endif()
  if(DEFINED ARG_NARROW_RESIDUALS AND NOT ARG_NARROW_RESIDUALS MATCHES "^(float16|bfloat16)$")
    message(FATAL_ERROR "kiln_add_library(${name}): NARROW_RESIDUALS ${ARG_NARROW_RESIDUALS}: give float16 or "
                        "bfloat16, the type of the copies SCHEDULE auto may save")
  endif()
  foreach(option MAX_STATES NARROW_RESIDUALS)
    if(DEFINED ARG_${option} AND NOT ARG_SCHEDULE STREQUAL "auto")
      message(FATAL_ERROR "kiln_add_library(${name}): ${option} is an option of the autoscheduler, but SCHEDULE "
                          "is \"${ARG_SCHEDULE}\"; write SCHEDULE auto, or leave ${option} out (a schedule file "
                          "chooses for itself, e.g. save(bfloat16))")
    endif()
  endforeach()
endmacro()

function(kiln_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG ""
                        "GENERATOR;SCHEDULE;TARGET;FUNCTION;FROM;MAX_STATES;RESIDUAL_BUDGET;NARROW_RESIDUALS"
                        "PARAMS;ESTIMATES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_library(${name}): unexpected arguments \"${ARG_UNPARSED_ARGUMENTS}\"; "
                        "the arguments are GENERATOR, SCHEDULE, TARGET, FUNCTION, PARAMS, ESTIMATES, MAX_STATES, "
                        "RESIDUAL_BUDGET, NARROW_RESIDUALS and FROM")
  endif()
  _kiln_check_search_options(${name})
  if(NOT ARG_GENERATOR)
    message(FATAL_ERROR "kiln_add_library(${name}): GENERATOR <name> is required (kiln-gen --list shows them)")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET host)
  endif()
  if(NOT ARG_FUNCTION)
    set(ARG_FUNCTION ${name})
  endif()
  if(NOT ARG_FROM)
    set(ARG_FROM Kiln::kiln-gen)
  endif()
  if(NOT TARGET ${ARG_FROM})
    message(FATAL_ERROR "kiln_add_library(${name}): there is no program ${ARG_FROM}; call find_package(Kiln) "
                        "first, or name a kiln_add_generator() target with FROM")
  endif()

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.kiln)
  set(base ${dir}/${ARG_FUNCTION})
  set(command $<TARGET_FILE:${ARG_FROM}> -g ${ARG_GENERATOR} -t ${ARG_TARGET} -o ${dir} -f ${ARG_FUNCTION}
              -e h,cpp,stmt,schedule,flags)
  set(depends)
  if(ARG_SCHEDULE STREQUAL "auto")
    # kiln::autoschedule chooses the schedule (docs/autoschedule.md); its
    # choice is written beside the kernel as FUNCTION.sched.
    list(APPEND command -s auto)
  elseif(ARG_SCHEDULE)
    get_filename_component(schedule ${ARG_SCHEDULE} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${schedule})
      message(FATAL_ERROR "kiln_add_library(${name}): the schedule file ${schedule} does not exist")
    endif()
    list(APPEND command -s ${schedule})
    list(APPEND depends ${schedule})
  endif()
  foreach(estimate IN LISTS ARG_ESTIMATES)
    list(APPEND command --estimate ${estimate})
  endforeach()
  if(DEFINED ARG_MAX_STATES)
    list(APPEND command --max-states ${ARG_MAX_STATES})
  endif()
  if(DEFINED ARG_RESIDUAL_BUDGET)
    list(APPEND command --residual-budget ${ARG_RESIDUAL_BUDGET})
  endif()
  if(DEFINED ARG_NARROW_RESIDUALS)
    list(APPEND command --narrow-residuals ${ARG_NARROW_RESIDUALS})
  endif()
  list(APPEND command ${ARG_PARAMS})

  # Rerun when the generator program changes: depend on the target that
  # builds it, or on its file when it is imported from an installed Kiln.
  get_target_property(aliased ${ARG_FROM} ALIASED_TARGET)
  get_target_property(imported ${ARG_FROM} IMPORTED)
  if(aliased)
    list(APPEND depends ${aliased})
  elseif(imported)
    list(APPEND depends $<TARGET_FILE:${ARG_FROM}>)
  else()
    list(APPEND depends ${ARG_FROM})
  endif()

  add_custom_command(
    OUTPUT ${base}.h ${base}.cpp ${base}.stmt ${base}.sched ${base}.flags
    COMMAND ${command}
    DEPENDS ${depends}
    COMMENT "kiln-gen: ${ARG_GENERATOR} ${ARG_PARAMS} with ${ARG_SCHEDULE} for ${ARG_TARGET} -> ${ARG_FUNCTION}"
    VERBATIM)

  _kiln_add_runtime()
  add_library(${name} STATIC ${base}.cpp ${base}.h)
  target_include_directories(${name} PUBLIC ${dir} ${KILN_HALIDE_INCLUDE_DIR})
  # The kernel's flags come from kiln-gen, as a response file.
  target_compile_options(${name} PRIVATE "@${base}.flags")
  set_source_files_properties(${base}.cpp PROPERTIES OBJECT_DEPENDS ${base}.flags)
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_link_libraries(${name} PUBLIC kiln_aot_runtime)
  if(ARG_TARGET MATCHES "(^|-)npu($|-)")
    target_link_libraries(${name} PUBLIC Kiln::kiln_npu)  # the simulator the host stub runs
  endif()
endfunction()

function(kiln_add_generator name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LINK_LIBRARIES")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_generator(${name} SOURCES <generator.cpp>... [LINK_LIBRARIES <lib>...])")
  endif()
  find_package(CLI11 REQUIRED)
  get_property(main GLOBAL PROPERTY KILN_GEN_MAIN_SOURCE)
  add_executable(${name} ${main} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Kiln::kiln CLI11::CLI11 ${ARG_LINK_LIBRARIES})
endfunction()

# kiln_add_lab(NAME SOURCES <generator.cpp>... [SCHEDULE_DIR dir] [LINK_LIBRARIES lib...])
# builds the schedule lab (apps/lab, docs/lab.md) with your own generators
# linked in: `NAME GENERATOR --schedule a.sched b.sched ...` times, checks and
# reports each schedule. SCHEDULE_DIR (default: <source dir>/schedules) holds
# <generator>/<name>.sched, the schedules used when none are given.
function(kiln_add_lab name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SCHEDULE_DIR" "SOURCES;LINK_LIBRARIES")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_lab(${name} SOURCES <generator.cpp>... [SCHEDULE_DIR dir] [LINK_LIBRARIES lib...])")
  endif()
  find_package(CLI11 REQUIRED)
  find_package(PNG REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
  get_property(lab GLOBAL PROPERTY KILN_LAB_SOURCE_DIR)
  get_property(common GLOBAL PROPERTY KILN_LAB_COMMON_DIR)
  add_executable(${name} ${lab}/lab.cpp ${lab}/lab_buffers.cpp ${lab}/lab_chart.cpp ${lab}/lab_results.cpp
                         ${common}/png_io.cpp ${common}/image_ops.cpp ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${lab} ${common})
  target_link_libraries(${name} PRIVATE Kiln::kiln CLI11::CLI11 PNG::PNG nlohmann_json::nlohmann_json
                                        ${ARG_LINK_LIBRARIES})
  set(dir ${ARG_SCHEDULE_DIR})
  if(NOT dir)
    set(dir ${CMAKE_CURRENT_SOURCE_DIR}/schedules)
  endif()
  target_compile_definitions(${name} PRIVATE KILN_LAB_SCHEDULE_DIR="${dir}")
endfunction()
