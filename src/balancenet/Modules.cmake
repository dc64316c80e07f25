# The modules in dependency order: each may include and link only those before it. The configure enforces it
# (cmake/ModuleOrder.cmake) and docs/architecture.md's table follows it (tests/build checks both). A module is a
# folder under src/balancenet with its own CMakeLists.txt; a module in a subfolder (federated/process) is one of
# its own, as a later part of the same capability.
set(BALANCENET_MODULES
  core memory device precision compression schedulers data comm commchoice metrics objective models recompute emulation monitor orchestrator adaptive report simulate
  trainer pipeline ps checkpoint federated elastic job federated/process ps/process launch worker session python cli)
