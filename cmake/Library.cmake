# libonda: the layer libraries (gpu, tensor, kernels, graph, onnx, ops, runtime, audio) as one library with
# the public API of include/onda/, and what `cmake --install` puts in a prefix: the headers, the
# library (shared, SONAME libonda.so.MAJOR; static with -DONDA_SHARED=OFF), Dawn's library beside it,
# the onda command, a CMake package (find_package(onda CONFIG) -> onda::onda) and a pkg-config file.
# Everything installed finds its libraries through $ORIGIN/../lib, so the prefix can move.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ONDA_LAYER_LIBRARIES onda_gpu onda_tensor onda_kernels onda_graph onda_onnx onda_ops onda_runtime onda_audio)
set(ONDA_LIBRARY_OBJECTS)
foreach(layer IN LISTS ONDA_LAYER_LIBRARIES)
  list(APPEND ONDA_LIBRARY_OBJECTS "$<TARGET_OBJECTS:${layer}>")
endforeach()
if(ONDA_SHARED)
  add_library(onda_library SHARED ${ONDA_LIBRARY_OBJECTS})
else()
  add_library(onda_library STATIC ${ONDA_LIBRARY_OBJECTS})
endif()
add_library(onda::onda ALIAS onda_library)
# The layers' own dependencies (not their objects, which are above).
# The audio layer's (include/onda/audio.h): libsndfile and soxr (src/audio/CMakeLists.txt's imported
# targets are local to that folder, so they are looked up again here).
find_package(PkgConfig REQUIRED)
pkg_check_modules(ONDA_AUDIO_DEPENDENCIES REQUIRED IMPORTED_TARGET sndfile soxr)
target_link_libraries(onda_library PRIVATE $<BUILD_INTERFACE:dawn> fmt::fmt onnx_proto
                                           $<BUILD_INTERFACE:PkgConfig::ONDA_AUDIO_DEPENDENCIES>)
target_include_directories(onda_library PUBLIC "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
                                               "$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>"
                                               "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_compile_features(onda_library INTERFACE cxx_std_20)
set_target_properties(onda_library PROPERTIES
  OUTPUT_NAME onda
  EXPORT_NAME onda
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}"
  ARCHIVE_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")

install(TARGETS onda_library EXPORT ondaTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS onda RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/onda" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES "${PROJECT_BINARY_DIR}/include/onda/version.h" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onda)
# Dawn's library goes beside libonda (its file has no SONAME: NEEDED names the file itself).
install(FILES "${ONDA_DAWN_LIBRARY}" DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(ONDA_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/onda")
install(EXPORT ondaTargets NAMESPACE onda:: DESTINATION ${ONDA_CMAKE_DIR})
set(ONDA_PACKAGE_SHARED ${ONDA_SHARED})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/ondaConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/ondaConfig.cmake" INSTALL_DESTINATION ${ONDA_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ondaConfigVersion.cmake" COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ondaConfig.cmake" "${PROJECT_BINARY_DIR}/ondaConfigVersion.cmake"
        DESTINATION ${ONDA_CMAKE_DIR})
if(ONDA_SHARED)
  set(ONDA_PC_PRIVATE_LIBS "")
else()
  set(ONDA_PC_PRIVATE_LIBS "-lwebgpu_wrapper -lfmt -lonnx_proto -lprotobuf -lsndfile -lsoxr -lstdc++")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/onda.pc.in" "${PROJECT_BINARY_DIR}/onda.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/onda.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
