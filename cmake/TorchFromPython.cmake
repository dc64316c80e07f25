# libtorch from the torch wheel of one Python interpreter (the project's .venv by default, made by
# scripts/setup.sh with the version pinned in requirements/torch.txt), so the C++ program, the Python package
# and the peers of every comparison (DDP, torchvision) are one and the same torch.
#   -DBALANCENET_PYTHON=/path/to/python   builds against that interpreter's torch (2.9 or newer).
# Sets BALANCENET_TORCH_VERSION, BALANCENET_TORCH_CUDA ("" for a CPU build) and BALANCENET_TORCH_DIR (the
# wheel's torch/ folder), then find_package(Torch) through torch.utils.cmake_prefix_path.
set(BALANCENET_MIN_TORCH "2.9")
if(SKBUILD AND Python_EXECUTABLE)  # pip install .: the Python that runs pip, with the user's torch
  set(_bn_default_python "${Python_EXECUTABLE}")
elseif(EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(_bn_default_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
else()
  find_program(_bn_default_python NAMES python3 python)
endif()
set(BALANCENET_PYTHON "${_bn_default_python}" CACHE FILEPATH "The Python whose torch balancenet builds against")

execute_process(
  COMMAND "${BALANCENET_PYTHON}" -c
    "import torch, torch.utils, os; print(torch.__version__.split('+')[0]); print(torch.version.cuda or ''); print(torch.utils.cmake_prefix_path); print(os.path.dirname(torch.__file__)); print(int(torch.compiled_with_cxx11_abi()))"
  OUTPUT_VARIABLE _bn_torch_out ERROR_VARIABLE _bn_torch_err RESULT_VARIABLE _bn_torch_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _bn_torch_rc EQUAL 0)
  message(FATAL_ERROR "balancenet: no torch in ${BALANCENET_PYTHON} (needs torch ${BALANCENET_MIN_TORCH} or newer: "
                      "run scripts/setup.sh, or pass -DBALANCENET_PYTHON=<a python with torch>)")
endif()
string(REPLACE "\n" ";" _bn_torch_out "${_bn_torch_out}")
list(GET _bn_torch_out 0 BALANCENET_TORCH_VERSION)
list(GET _bn_torch_out 1 BALANCENET_TORCH_CUDA)
list(GET _bn_torch_out 2 _bn_torch_prefix)
list(GET _bn_torch_out 3 BALANCENET_TORCH_DIR)
list(GET _bn_torch_out 4 _bn_torch_cxx11)
if(BALANCENET_TORCH_VERSION VERSION_LESS BALANCENET_MIN_TORCH)
  message(FATAL_ERROR "balancenet: ${BALANCENET_PYTHON} has torch ${BALANCENET_TORCH_VERSION}; "
                      "balancenet needs torch ${BALANCENET_MIN_TORCH} or newer (scripts/setup.sh installs the pinned one)")
endif()
if(NOT _bn_torch_cxx11)
  message(FATAL_ERROR "balancenet: torch ${BALANCENET_TORCH_VERSION} in ${BALANCENET_PYTHON} uses the old C++ ABI; "
                      "Debian's libraries need the C++11 ABI (PyPI's wheels from 2.7 on have it)")
endif()

set(Python3_EXECUTABLE "${BALANCENET_PYTHON}")  # the Python package is built for this interpreter

# A CUDA wheel's Torch config looks for the CUDA toolkit; a machine without one still builds the CPU program.
list(APPEND CMAKE_PREFIX_PATH "${_bn_torch_prefix}")
find_package(Torch REQUIRED)
# The environment (venv or prefix) that holds that torch: sys.prefix of the interpreter.
execute_process(COMMAND "${BALANCENET_PYTHON}" -c "import sys; print(sys.prefix)"
                OUTPUT_VARIABLE BALANCENET_TORCH_ENV OUTPUT_STRIP_TRAILING_WHITESPACE)
# What balancenet links: libtorch_cpu and libc10 by their imported targets (inside the wheel), not TORCH_LIBRARIES,
# which adds libtorch_cuda with every CUDA library (0.25 s more to start each process here: 0.42 s against 0.67 s
# for a program doing one tensor op), the CUDA toolkit's own libnvrtc, and whatever libc10.so a system directory
# holds first (TorchConfig's find_library searches those before the wheel: Debian's libtorch-dev would win).
# The CPU program needs no CUDA library; GPU work will load torch's CUDA part where a GPU is asked for.
add_library(balancenet_torch INTERFACE)
target_link_libraries(balancenet_torch INTERFACE torch_cpu_library c10)
target_include_directories(balancenet_torch INTERFACE ${TORCH_INCLUDE_DIRS})
foreach(_bn_target torch_cpu c10)
  get_target_property(_bn_location ${_bn_target} IMPORTED_LOCATION_RELEASE)
  if(NOT _bn_location)
    get_target_property(_bn_location ${_bn_target} IMPORTED_LOCATION)
  endif()
  if(NOT _bn_location MATCHES "^${BALANCENET_TORCH_DIR}/")
    message(FATAL_ERROR "balancenet: ${_bn_target} resolves to ${_bn_location}, not inside ${BALANCENET_TORCH_DIR}")
  endif()
endforeach()

# The installed program finds the wheel's libraries where they are (RPATH to torch/lib); so does the .deb.
set(CMAKE_INSTALL_RPATH "${BALANCENET_TORCH_DIR}/lib")
message(STATUS "balancenet: torch ${BALANCENET_TORCH_VERSION} (CUDA '${BALANCENET_TORCH_CUDA}') from ${BALANCENET_TORCH_DIR}")

# The wheel ships its own fmt (12) and pybind11 under torch/include, which CMake puts on the include path before
# /usr/include. balancenet links Debian's libfmt and libspdlog (built against Debian's fmt 9), so those headers
# must be Debian's: a folder of links to them goes first (-I precedes -isystem). pybind11 stays the wheel's.
set(BALANCENET_DEBIAN_INCLUDE "${CMAKE_BINARY_DIR}/debian-include")
file(MAKE_DIRECTORY "${BALANCENET_DEBIAN_INCLUDE}")
foreach(_bn_dir fmt spdlog)
  if(NOT EXISTS "${BALANCENET_DEBIAN_INCLUDE}/${_bn_dir}")
    file(CREATE_LINK "/usr/include/${_bn_dir}" "${BALANCENET_DEBIAN_INCLUDE}/${_bn_dir}" SYMBOLIC)
  endif()
endforeach()
