# Install rules: the static library, the public headers, an exported CMake package
# (find_package(photon CONFIG) -> photon::photon) and a pkg-config file (photon.pc).
#
# Layout under CMAKE_INSTALL_PREFIX:
#   include/photon/...                        public headers, as in include/photon
#   <libdir>/libphoton.a
#   <libdir>/cmake/photon/photonConfig.cmake  + photonConfigVersion.cmake, photonTargets*.cmake
#   <libdir>/pkgconfig/photon.pc
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PHOTON_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/photon")
set(PHOTON_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

install(TARGETS photon EXPORT photonTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# The FUSE adaptor's and extfs' headers only where their code was built.
set(_photon_header_excludes "")
if(NOT PHOTON_HAVE_FUSE)
    set(_photon_header_excludes PATTERN "fuse_adaptor.h" EXCLUDE PATTERN "fuse-adaptor.h" EXCLUDE)
endif()
if(NOT PHOTON_HAVE_EXTFS)  # likewise extfs, built only with libext2fs
    list(APPEND _photon_header_excludes PATTERN "extfs" EXCLUDE)
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/photon"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
    FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.inl" ${_photon_header_excludes})

install(EXPORT photonTargets
    NAMESPACE photon::
    FILE photonTargets.cmake
    DESTINATION "${PHOTON_INSTALL_CMAKEDIR}")

configure_package_config_file(
    "${CMAKE_CURRENT_LIST_DIR}/photonConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/photonConfig.cmake"
    INSTALL_DESTINATION "${PHOTON_INSTALL_CMAKEDIR}"
    PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version bump may break the API.
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/photonConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/photonConfig.cmake"
    "${PROJECT_BINARY_DIR}/photonConfigVersion.cmake"
    DESTINATION "${PHOTON_INSTALL_CMAKEDIR}")

# photon.pc: relocatable (paths relative to ${pcfiledir}) unless the install dirs are absolute,
# so `cmake --install <build> --prefix <dir>` gives a working file.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(PHOTON_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(PHOTON_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    file(RELATIVE_PATH _photon_pc_up
        "/photon-prefix/${PHOTON_INSTALL_PKGCONFIGDIR}" "/photon-prefix")
    string(REGEX REPLACE "/$" "" _photon_pc_up "${_photon_pc_up}")
    set(PHOTON_PC_PREFIX "\${pcfiledir}/${_photon_pc_up}")
    set(PHOTON_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(PHOTON_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(PHOTON_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# photon is static: its dependencies go in Requires/Libs (not .private) so that a plain
# `pkg-config --libs photon` links.
set(_photon_pc_requires "")
set(_photon_pc_libs "")
set(_photon_pc_cflags "")
foreach(_part URING LIBAIO TLS CURL FUSE EXTFS)
    if(PHOTON_HAVE_${_part})
        string(APPEND _photon_pc_cflags " -DPHOTON_HAVE_${_part}=1")
    endif()
endforeach()
if(PHOTON_HAVE_URING)
    list(APPEND _photon_pc_requires liburing)
endif()
if(PHOTON_HAVE_LIBAIO)
    string(APPEND _photon_pc_libs " -laio")
endif()
if(PHOTON_HAVE_TLS)
    list(APPEND _photon_pc_requires libssl libcrypto)
endif()
if(PHOTON_HAVE_CURL)
    list(APPEND _photon_pc_requires libcurl)
endif()
if(PHOTON_HAVE_FUSE)
    list(APPEND _photon_pc_requires fuse3)
endif()
if(PHOTON_HAVE_ZLIB)
    list(APPEND _photon_pc_requires zlib)
endif()
if(PHOTON_HAVE_EXTFS)
    list(APPEND _photon_pc_requires ext2fs)
endif()
if(PHOTON_SANITIZE)
    string(APPEND _photon_pc_libs " -fsanitize=${PHOTON_SANITIZE}")
endif()
string(APPEND _photon_pc_libs " -pthread")
string(REPLACE ";" " " PHOTON_PC_REQUIRES "${_photon_pc_requires}")
string(STRIP "${_photon_pc_libs}" PHOTON_PC_LIBS)
string(STRIP "${_photon_pc_cflags}" PHOTON_PC_CFLAGS)
configure_file("${CMAKE_CURRENT_LIST_DIR}/photon.pc.in" "${PROJECT_BINARY_DIR}/photon.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/photon.pc" DESTINATION "${PHOTON_INSTALL_PKGCONFIGDIR}")
