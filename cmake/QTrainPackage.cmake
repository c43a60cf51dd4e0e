# qtrain_install_package_config(<source root> <has compiler> <version>)
#
# Installs lib/cmake/qtrain/QTrainConfig.cmake and its version file, so that
# another project finds an installed qtrain with
#   find_package(QTrain CONFIG REQUIRED)                      QTrain::Runtime
#   find_package(QTrain CONFIG REQUIRED COMPONENTS Compiler)  + the MLIR libraries
# (docs/install.md). The runtime's targets are exported by runtime/, the
# compiler's by the top-level project; a standalone runtime build installs
# a config without the Compiler component.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

function(qtrain_install_package_config source_root has_compiler version)
  set(QTRAIN_HAS_COMPILER ${has_compiler})
  set(QTRAIN_MLIR_DIR "${MLIR_DIR}")
  set(out "${CMAKE_BINARY_DIR}/lib/cmake/qtrain")
  configure_package_config_file(
    "${source_root}/cmake/QTrainConfig.cmake.in" "${out}/QTrainConfig.cmake"
    INSTALL_DESTINATION lib/cmake/qtrain)
  write_basic_package_version_file("${out}/QTrainConfigVersion.cmake"
    VERSION ${version} COMPATIBILITY SameMinorVersion)
  install(FILES "${out}/QTrainConfig.cmake" "${out}/QTrainConfigVersion.cmake"
    DESTINATION lib/cmake/qtrain)
endfunction()
