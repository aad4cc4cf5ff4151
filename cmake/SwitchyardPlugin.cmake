# switchyard_add_plugin(<target> SOURCES <src>... [LIBRARIES <lib>...] [OUTPUT_DIRECTORY <dir>] [INSTALL])
#
# Builds a Switchyard plugin: a MODULE library linked against the SDK, with hidden
# symbols except the descriptor, and, right after linking, its manifest
# (<library>.json) written from the library's own descriptor by switchyard-manifest.
# Used in-tree and, through find_package(Switchyard), by out-of-tree plugins.

function(switchyard_add_plugin target)
  cmake_parse_arguments(ARG "INSTALL" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "switchyard_add_plugin(${target}): SOURCES is required")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  # The client last: it answers the storage functions that any of the libraries call.
  target_link_libraries(${target} PRIVATE Switchyard::sdk ${ARG_LIBRARIES} Switchyard::sdk_client)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  if(TARGET switchyard-manifest)
    add_dependencies(${target} switchyard-manifest)
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND Switchyard::manifest_tool $<TARGET_FILE:${target}> $<TARGET_FILE:${target}>.json
    COMMENT "Writing plugin manifest for ${target}"
    VERBATIM)
  if(ARG_INSTALL)
    set_property(GLOBAL APPEND PROPERTY SWITCHYARD_INSTALLED_PLUGINS ${target})
    install(TARGETS ${target} LIBRARY DESTINATION "${SWITCHYARD_PLUGIN_SUBDIR}" COMPONENT plugins)
    install(FILES "$<TARGET_FILE:${target}>.json" DESTINATION "${SWITCHYARD_PLUGIN_SUBDIR}" COMPONENT plugins)
  endif()
endfunction()
