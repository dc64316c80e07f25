# The module order, enforced: a module (a library's folder under src/balancenet, listed in
# src/balancenet/Modules.cmake) may include and link only the modules before it. A file that includes a later
# module's header, or a module that links a later module's library, stops the configure with one line naming both.
# docs/architecture.md's table follows the same list and the dependencies found here (tests/build checks it).
#
# Also a script, for the tests: cmake -DMODULES="core;data;..." -DSRC=<src/balancenet> [-DOUT=<file>]
#   -P cmake/ModuleOrder.cmake
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_policy(VERSION 3.18)  # a script has no project's policies (IN_LIST); functions keep those they are defined with
endif()

# _balancenet_module_of(<include path under balancenet/> <modules> <out>): the module whose folder holds the header
# (the longest folder that is a prefix: federated/process/X.h is federated/process's, federated/X.h federated's).
function(_balancenet_module_of path modules out)
  set(found "")
  foreach(module IN LISTS modules)
    string(LENGTH "${module}/" length)
    string(LENGTH "${found}" foundLength)
    string(SUBSTRING "${path}" 0 ${length} head)
    if(head STREQUAL "${module}/" AND length GREATER foundLength)
      set(found "${module}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# balancenet_check_module_order(<modules> <src dir> [<graph file>]): every module's includes against the order;
# FATAL_ERROR at the first violation. Writes "<module>: <modules it includes, in order>" per line to the graph file.
function(balancenet_check_module_order modules src)
  set(graph "")
  set(before "")
  foreach(module IN LISTS modules)
    if(NOT IS_DIRECTORY "${src}/${module}")
      message(FATAL_ERROR "balancenet: module ${module} in src/balancenet/Modules.cmake has no folder src/balancenet/${module}")
    endif()
    file(GLOB_RECURSE files "${src}/${module}/*.h" "${src}/${module}/*.cpp")
    set(uses "")
    foreach(file IN LISTS files)
      file(RELATIVE_PATH relative "${src}" "${file}")
      _balancenet_module_of("${relative}" "${modules}" owner)
      if(NOT owner STREQUAL module)  # a module in a subfolder (federated/process) is checked on its own
        continue()
      endif()
      file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"balancenet/")
      foreach(line IN LISTS lines)
        string(REGEX REPLACE "^[^\"]*\"balancenet/([^\"]+)\".*$" "\\1" header "${line}")
        _balancenet_module_of("${header}" "${modules}" used)
        if(used STREQUAL module)
          continue()
        elseif(used STREQUAL "")
          message(FATAL_ERROR "balancenet: src/balancenet/${relative} includes balancenet/${header}, which is in no module of src/balancenet/Modules.cmake")
        elseif(NOT used IN_LIST before)
          message(FATAL_ERROR "balancenet: src/balancenet/${relative} includes balancenet/${header}, but module ${used} comes after ${module} in src/balancenet/Modules.cmake (a module may use only those before it)")
        endif()
        list(APPEND uses "${used}")
      endforeach()
    endforeach()
    set(ordered "")
    foreach(candidate IN LISTS before)  # in the modules' order
      if(candidate IN_LIST uses)
        list(APPEND ordered "${candidate}")
      endif()
    endforeach()
    list(JOIN ordered " " text)
    string(APPEND graph "${module}: ${text}\n")
    list(APPEND before "${module}")
  endforeach()
  if(ARGC GREATER 2)
    file(CONFIGURE OUTPUT "${ARGV2}" CONTENT "${graph}" @ONLY)  # rewritten only when it changes
  endif()
endfunction()

# _balancenet_check_module_links(<target> <module> <deps>): what balancenet_module calls for each library. Its
# module must be listed; every bn_ library it links must be of a module before it (or its own: a module of
# several libraries), and so already defined.
function(_balancenet_check_module_links target module deps)
  if(NOT module IN_LIST BALANCENET_MODULES)
    message(FATAL_ERROR "balancenet: ${target} is in src/balancenet/${module}, which is not a module of src/balancenet/Modules.cmake")
  endif()
  list(FIND BALANCENET_MODULES "${module}" position)
  foreach(dep IN LISTS deps)
    if(NOT dep MATCHES "^bn_")
      continue()
    endif()
    get_property(depModule GLOBAL PROPERTY "_bn_module_of:${dep}")
    if(NOT depModule)
      message(FATAL_ERROR "balancenet: ${target} (${module}) links ${dep}, which is not a library of a module before it in src/balancenet/Modules.cmake")
    endif()
    list(FIND BALANCENET_MODULES "${depModule}" depPosition)
    if(depPosition GREATER position)
      message(FATAL_ERROR "balancenet: ${target} (${module}) links ${dep}, but module ${depModule} comes after ${module} in src/balancenet/Modules.cmake")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "_bn_module_of:${target}" "${module}")
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  get_filename_component(SRC "${SRC}" ABSOLUTE)
  if(DEFINED OUT)
    balancenet_check_module_order("${MODULES}" "${SRC}" "${OUT}")
  else()
    balancenet_check_module_order("${MODULES}" "${SRC}")
  endif()
endif()
