# overlaybd's CMake/Findphoton.cmake, replaced by tools/downstream/overlaybd.sh: photon from
# PHOTON_SOURCE_DIR instead of PhotonLibOS fetched from the network. Nothing else changes.
set(PHOTON_BUILD_TESTING OFF CACHE BOOL "" FORCE)
set(PHOTON_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
set(PHOTON_INSTALL OFF CACHE BOOL "" FORCE)
add_subdirectory("${PHOTON_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/photon")
if(PHOTON_ENABLE_RESIZE)  # photon's resize_extfs, as PhotonLibOS's patched libext2fs gives it
    add_definitions(-DPHOTON_ENABLE_RESIZE)
endif()
set(photon_FOUND TRUE)
# The round trip's reader (tools/downstream/overlaybd_image_dump.cpp), on overlaybd's image lib.
add_executable(overlaybd-image-dump "${PHOTON_SOURCE_DIR}/tools/downstream/overlaybd_image_dump.cpp")
target_include_directories(overlaybd-image-dump PRIVATE "${CMAKE_SOURCE_DIR}/src")
target_compile_definitions(overlaybd-image-dump PRIVATE RAPIDJSON_HAS_STDSTRING=1)  # as src/ has it
target_link_libraries(overlaybd-image-dump photon_static overlaybd_image_lib)
