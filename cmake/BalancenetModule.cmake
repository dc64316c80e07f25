# One static library per module under src/balancenet/<name>, all sharing one precompiled header of the
# heavy torch/c10d headers: compiled once, reused by every target (build time matters on 2 cores).

add_library(balancenet_pch STATIC ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(balancenet_pch PUBLIC ${TORCH_LIBRARIES} spdlog::spdlog fmt::fmt nlohmann_json::nlohmann_json)
target_include_directories(balancenet_pch PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_compile_options(balancenet_pch PUBLIC -Wall -Wextra -Wno-unused-parameter)
target_precompile_headers(balancenet_pch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/balancenet_pch.h)

# balancenet_module(<name> SOURCES ... DEPS ...) -> target bn_<name>
function(balancenet_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(bn_${name} STATIC ${ARG_SOURCES})
  target_link_libraries(bn_${name} PUBLIC balancenet_pch ${ARG_DEPS})
  target_precompile_headers(bn_${name} REUSE_FROM balancenet_pch)
endfunction()

# balancenet_executable(<name> SOURCES ... DEPS ...): an app, test or bench binary using the shared PCH.
function(balancenet_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_precompile_headers(${name} REUSE_FROM balancenet_pch)
endfunction()
