# switchyard_add_conformance_test(<name> BACKEND <backend> PLUGIN_DIR <dir> [DEVICE <n>]
#                                 [REQUIRE_DEVICE] [ARGS <arg>...])
#
# Adds a ctest <name> running the backend conformance suite on a backend plugin:
#   switchyard conformance <backend> --plugin-path <dir> [--device <n>] <arg>...
# (every op x storage type x shape against the CPU's scalar kernels; ARGS can add
# --require-all, --ops, --types, --fixtures <shared/fixtures>, ...). The suite exits 3 when
# the backend finds no usable device on the machine; the test then counts as skipped,
# unless REQUIRE_DEVICE makes that a failure (a CI runner that must have the GPU).
# Used in-tree and, through find_package(Switchyard), by out-of-tree backend plugins: the
# executable is the imported Switchyard::switchyard, or the build's own `switchyard`.

function(switchyard_add_conformance_test name)
  cmake_parse_arguments(ARG "REQUIRE_DEVICE" "BACKEND;PLUGIN_DIR;DEVICE" "ARGS" ${ARGN})
  if(NOT ARG_BACKEND OR NOT ARG_PLUGIN_DIR)
    message(FATAL_ERROR "switchyard_add_conformance_test(${name}): BACKEND and PLUGIN_DIR are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "switchyard_add_conformance_test(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(TARGET Switchyard::switchyard)
    set(exe Switchyard::switchyard)
  elseif(TARGET switchyard)
    set(exe switchyard)
  else()
    message(FATAL_ERROR "switchyard_add_conformance_test(${name}): no switchyard executable (find_package(Switchyard) first)")
  endif()
  set(cmd conformance ${ARG_BACKEND} --plugin-path ${ARG_PLUGIN_DIR})
  if(DEFINED ARG_DEVICE)
    list(APPEND cmd --device ${ARG_DEVICE})
  endif()
  add_test(NAME ${name} COMMAND ${exe} ${cmd} ${ARG_ARGS})
  if(NOT ARG_REQUIRE_DEVICE)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 3)
  endif()
endfunction()
