# One static library per module under src/balancenet/<name>, all sharing one precompiled header of the
# heavy torch/c10d headers: compiled once, reused by every target (build time matters on 2 cores).
# Measured (docs/benchmarks.md, "Build time"): loading that 490 MB header costs a translation unit about
# 3 s, more than a file without torch takes in all, and parsing torch's headers is most of a torch
# file's time. So a file that includes no torch, ATen or c10 header, directly or through the project's
# own headers, skips the PCH; the torch files of a target are compiled in unity batches (one parse of
# the headers per batch).
option(BALANCENET_UNITY_BUILD "Compile each target's torch files in batches (faster cold builds)" ON)
set(BALANCENET_UNITY_BATCH 10 CACHE STRING "Torch files per unity batch")
include(ModuleOrder)  # balancenet_module checks each library's links against the module order

add_library(balancenet_pch STATIC ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(balancenet_pch PUBLIC balancenet_torch spdlog::spdlog fmt::fmt nlohmann_json::nlohmann_json)
target_include_directories(balancenet_pch BEFORE PUBLIC ${BALANCENET_DEBIAN_INCLUDE})  # cmake/TorchFromPython.cmake
target_include_directories(balancenet_pch PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_compile_options(balancenet_pch PUBLIC -Wall -Wextra -Wno-unused-parameter)
# PyPI's libtorch.so and libtorch_cpu.so export copies of libstdc++'s std::filesystem (and other) functions from
# the toolchain they were built with; a program that needs libtorch before libstdc++ binds its own calls to those
# (std::filesystem::remove_all crashed in them). libstdc++ first among a binary's needed libraries puts its
# definitions first in symbol lookup.
target_link_options(balancenet_pch INTERFACE "LINKER:--push-state,--no-as-needed" -lstdc++ "LINKER:--pop-state")
target_precompile_headers(balancenet_pch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/balancenet_pch.h)
# The PCH that the targets of a directory reuse; tests/ sets the cold one (below).
set(BALANCENET_PCH balancenet_pch)

# Code that runs once per job, round or failure, never per sample (flags, launching, reports, the federated
# server and clients' bookkeeping, elastic re-forming, the Python bindings), is compiled at -O0: balancenet_module's
# COLD. clang 14 compiled the cli's first unity batch in 8 s of CPU at -O0 against 36 s at -O3 (the optimiser and
# the code generator were two thirds of it), and none of that code is in a step's time. A PCH is tied to the
# optimisation level it was built at, so the cold code has its own, built the same way; tests/ reuses it.
add_library(balancenet_pch_cold STATIC ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(balancenet_pch_cold PUBLIC balancenet_pch)
target_compile_options(balancenet_pch_cold PRIVATE -O0)
target_precompile_headers(balancenet_pch_cold PRIVATE ${CMAKE_CURRENT_LIST_DIR}/balancenet_pch.h)

# _balancenet_uses_torch(<file> <out>): TRUE if <file> includes a torch, ATen or c10 header, directly or
# through a quoted include found next to it, in src/ or in tests/. Answers are kept per file.
function(_balancenet_uses_torch file out)
  get_property(known GLOBAL PROPERTY "_bn_torch:${file}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "_bn_torch:${file}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "_bn_torch:${file}" FALSE)  # a cycle ends here; include guards make it harmless
  get_filename_component(dir "${file}" DIRECTORY)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
  set(answer FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "<(torch|ATen|c10)/")
      set(answer TRUE)
    elseif(line MATCHES "\"([^\"]+)\"")
      set(name "${CMAKE_MATCH_1}")
      foreach(base "${dir}" "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests")
        if(EXISTS "${base}/${name}")
          _balancenet_uses_torch("${base}/${name}" answer)
          break()
        endif()
      endforeach()
    endif()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "_bn_torch:${file}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# The shared PCH for a target's torch files, unity batches of them, and neither for the others. COLD: at -O0,
# with the cold PCH.
function(_balancenet_compile_setup target)
  cmake_parse_arguments(ARG "COLD" "" "" ${ARGN})
  if(ARG_COLD)
    target_compile_options(${target} PRIVATE -O0)
    target_precompile_headers(${target} REUSE_FROM balancenet_pch_cold)
  else()
    target_precompile_headers(${target} REUSE_FROM ${BALANCENET_PCH})
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(sourceDir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${sourceDir}")
    _balancenet_uses_torch("${path}" torch)
    if(NOT torch)
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
                                  SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON _BN_PLAIN ON)
    endif()
  endforeach()
  if(BALANCENET_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${BALANCENET_UNITY_BATCH})
    # At the end of the target's directory, when its CMakeLists has set the properties of its own files (EVAL:
    # a deferred call reads its arguments' variables when it runs, and `target` is gone by then).
    cmake_language(EVAL CODE "cmake_language(DEFER CALL _balancenet_batch_plain [[${target}]])")
  endif()
endfunction()

# The files without torch in batches of their own, without the PCH (CMake's unity batches take a target's PCH):
# a batch parses gtest's, fmt's and JSON's headers once instead of once per file. A file with compile
# definitions or options of its own is compiled alone, as it is.
function(_balancenet_batch_plain target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(sourceDir ${target} SOURCE_DIR)
  get_target_property(binaryDir ${target} BINARY_DIR)
  set(paths "")
  foreach(source IN LISTS sources)
    get_source_file_property(plain ${source} _BN_PLAIN)
    get_source_file_property(definitions ${source} COMPILE_DEFINITIONS)
    get_source_file_property(options ${source} COMPILE_OPTIONS)
    if(plain AND NOT definitions AND NOT options)
      get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${sourceDir}")
      list(APPEND paths "${path}")
      set_source_files_properties(${source} PROPERTIES HEADER_FILE_ONLY ON)  # compiled through its batch
    endif()
  endforeach()
  set(index 0)
  list(LENGTH paths left)
  while(left GREATER 0)
    list(SUBLIST paths 0 ${BALANCENET_UNITY_BATCH} batchPaths)
    if(left GREATER BALANCENET_UNITY_BATCH)
      list(SUBLIST paths ${BALANCENET_UNITY_BATCH} -1 paths)
    else()
      set(paths "")
    endif()
    list(LENGTH paths left)
    set(content "// Made by cmake/BalancenetModule.cmake: files of ${target} without torch, compiled as one.\n")
    foreach(path IN LISTS batchPaths)
      string(APPEND content "#include \"${path}\"\n")
    endforeach()
    set(batch "${binaryDir}/plain_batches/${target}_${index}.cxx")
    file(CONFIGURE OUTPUT "${batch}" CONTENT "${content}" @ONLY)  # rewritten only when it changes
    target_sources(${target} PRIVATE "${batch}")
    set_source_files_properties("${batch}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON)
    math(EXPR index "${index} + 1")
  endwhile()
endfunction()

# balancenet_module(<name> [COLD] SOURCES ... DEPS ...) -> target bn_<name> (COLD: compiled at -O0, above)
# Its folder is its module (cmake/ModuleOrder.cmake): it may link only libraries of the modules before it.
function(balancenet_module name)
  cmake_parse_arguments(ARG "COLD" "" "SOURCES;DEPS" ${ARGN})
  file(RELATIVE_PATH module "${PROJECT_SOURCE_DIR}/src/balancenet" "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT module MATCHES "^\\.\\./")  # the tests' own libraries (tests/testing) may link any module
    _balancenet_check_module_links(bn_${name} "${module}" "${ARG_DEPS}")
  endif()
  add_library(bn_${name} STATIC ${ARG_SOURCES})
  target_link_libraries(bn_${name} PUBLIC balancenet_pch ${ARG_DEPS})
  if(ARG_COLD)
    _balancenet_compile_setup(bn_${name} COLD)
  else()
    _balancenet_compile_setup(bn_${name})
  endif()
endfunction()

# balancenet_executable(<name> SOURCES ... DEPS ...): an app, test or bench binary using the shared PCH.
function(balancenet_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  # -fPIC like the libraries and their shared PCH (CMake would give an executable -fPIE, which makes gcc
  # refuse the PCH and parse torch's headers in every file).
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(${name} PRIVATE -fPIC)
  _balancenet_compile_setup(${name})
endfunction()
