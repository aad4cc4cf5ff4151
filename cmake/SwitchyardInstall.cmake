# cmake --install: the executable, the plugins with their manifests (installed by
# switchyard_add_plugin), the SDK headers + helper library, the manifest tool, and a
# CMake package so out-of-tree plugins can use find_package(Switchyard).
include(CMakePackageConfigHelpers)

install(TARGETS switchyard RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(switchyard-manifest PROPERTIES EXPORT_NAME manifest_tool)
install(TARGETS switchyard_sdk switchyard_sdk_client switchyard-manifest EXPORT SwitchyardTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY sdk/include/switchyard DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT SwitchyardTargets NAMESPACE Switchyard:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Switchyard)

configure_package_config_file(cmake/SwitchyardConfig.cmake.in
  "${CMAKE_BINARY_DIR}/SwitchyardConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Switchyard)
write_basic_package_version_file("${CMAKE_BINARY_DIR}/SwitchyardConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${CMAKE_BINARY_DIR}/SwitchyardConfig.cmake"
  "${CMAKE_BINARY_DIR}/SwitchyardConfigVersion.cmake"
  cmake/SwitchyardPlugin.cmake
  cmake/SwitchyardConformance.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Switchyard)
