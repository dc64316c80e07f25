# What `cmake --install` puts beside the program (docs, examples), and the Debian package CPack makes of it all
# (`scripts/package.sh`, or `cmake --build build --target package`). The program and the Python package install
# themselves (apps/, src/balancenet/python/).
install(FILES README.md DESTINATION share/doc/balancenet)
install(DIRECTORY docs DESTINATION share/doc/balancenet)
# Debian's place for a package's examples; the docs' relative links (../examples/...) still resolve there.
install(DIRECTORY examples DESTINATION share/doc/balancenet USE_SOURCE_PERMISSIONS PATTERN "__pycache__" EXCLUDE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME balancenet)
set(CPACK_PACKAGE_CONTACT "balancenet maintainers <maintainers@users.noreply.a-seed-9e106167.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "data-parallel deep-learning training on heterogeneous clusters")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "balancenet measures every worker live and gives each its own share of \
every global batch, so a slow worker no longer sets the pace of the whole cluster. The balancenet program, its \
Python package (balancenet.torch), the documentation and the examples. It runs with the torch wheel it was built \
against, at the same path on every host (its RPATH; e.g. a venv made by scripts/setup.sh in one shared place).")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # balancenet_<version>_<arch>.deb, the version from project()
set(CPACK_STRIP_FILES ON)
# Debian's own packages only: dpkg-shlibdeps names those of the linked libraries (libyaml-cpp, libspdlog, ...);
# torch's are the wheel's (a private directory to dpkg-shlibdeps: no Debian package has them). The default
# data set is a recommendation: --data makes it unnecessary.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${BALANCENET_TORCH_DIR}/lib")
set(deps "")
get_property(python_deps GLOBAL PROPERTY BALANCENET_PYTHON_DEPENDS)
list(APPEND deps ${python_deps})
list(JOIN deps ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS dataset-fashion-mnist)
include(CPack)

# What `cmake --install` copies, built alone (scripts/package.sh): neither the tests nor the benchmarks.
add_custom_target(balancenet_installed)
add_dependencies(balancenet_installed balancenet)
if(TARGET balancenet_python)
  add_dependencies(balancenet_installed balancenet_python)
endif()
