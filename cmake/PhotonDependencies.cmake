# Optional system packages. Included from the top CMakeLists.txt before the `photon` target
# exists: it only finds packages and records the results.
#
# For every optional part that is ON but whose package is missing, the part is switched OFF for
# this configure run (a normal variable shadows the cached option, so installing the package and
# re-running cmake turns it back on) and ONE status line names the Debian package to install.
# Nothing is downloaded.
#
# Results, for each PART in URING LIBAIO TLS CURL FUSE EXTFS:
#   PHOTON_ENABLE_<PART>    ON only if requested and found
#   PHOTON_HAVE_<PART>      same value, for code that prefers the HAVE spelling
#   PHOTON_<PART>_LIBRARIES the imported target(s) to link when a source starts using the part:
#       URING  PkgConfig::LIBURING           (pkg-config liburing)
#       LIBAIO libaio::libaio                (find_library aio + libaio.h)
#       TLS    OpenSSL::SSL OpenSSL::Crypto  (find_package OpenSSL)
#       CURL   CURL::libcurl                 (find_package CURL)
#       FUSE   PkgConfig::FUSE3              (pkg-config fuse3 >= 3.8: the FUSE adaptor, fs/fuse_*.cpp)
#       EXTFS  PkgConfig::EXT2FS             (pkg-config ext2fs: <photon/fs/extfs/extfs.h>, fs/extfs/)
# photonConfig.cmake recreates the same target names for find_package(photon) users.
#
# photon_target_dependencies(<target>) adds the PUBLIC compile definitions PHOTON_HAVE_<PART>=1
# for the parts found. Nothing links the libraries yet: link them with
#   target_link_libraries(photon PUBLIC ${PHOTON_<PART>_LIBRARIES})
# where a source starts using them.
include(GNUInstallDirs)

set(_photon_parts URING LIBAIO TLS CURL FUSE EXTFS)

if(PHOTON_ENABLE_URING OR PHOTON_ENABLE_FUSE OR PHOTON_ENABLE_EXTFS)
    find_package(PkgConfig QUIET)
endif()

# Cross builds need the target architecture's -dev packages (Debian multiarch, e.g. :arm64).
set(_photon_deb_arch "")
if(CMAKE_CROSSCOMPILING)
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
        set(_photon_deb_arch ":arm64")
    elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
        set(_photon_deb_arch ":amd64")
    endif()
endif()

# _photon_switch_off(<PART> <what is missing> <debian package>)
macro(_photon_switch_off _part _what _deb)
    if("${_deb}" STREQUAL "pkg-config")  # a host tool
        set(_photon_pkg "${_deb}")
    else()
        set(_photon_pkg "${_deb}${_photon_deb_arch}")
    endif()
    message(STATUS "photon: ${_what} not found, PHOTON_ENABLE_${_part} switched OFF "
                   "(install the Debian package ${_photon_pkg})")
    set(PHOTON_ENABLE_${_part} OFF)
endmacro()

# io_uring: liburing through pkg-config.
set(PHOTON_URING_LIBRARIES "")
if(PHOTON_ENABLE_URING)
    if(NOT PKG_CONFIG_FOUND)
        _photon_switch_off(URING "pkg-config (needed to find liburing)" "pkg-config")
    else()
        pkg_check_modules(LIBURING QUIET IMPORTED_TARGET liburing)
        if(LIBURING_FOUND)
            set(PHOTON_URING_LIBRARIES PkgConfig::LIBURING)
        else()
            _photon_switch_off(URING "liburing" "liburing-dev")
        endif()
    endif()
endif()

# libaio: no pkg-config file on Debian 12, so the library and its header.
set(PHOTON_LIBAIO_LIBRARIES "")
if(PHOTON_ENABLE_LIBAIO)
    find_library(PHOTON_LIBAIO_LIBRARY NAMES aio)
    find_path(PHOTON_LIBAIO_INCLUDE_DIR NAMES libaio.h)
    mark_as_advanced(PHOTON_LIBAIO_LIBRARY PHOTON_LIBAIO_INCLUDE_DIR)
    if(PHOTON_LIBAIO_LIBRARY AND PHOTON_LIBAIO_INCLUDE_DIR)
        if(NOT TARGET libaio::libaio)
            add_library(libaio::libaio UNKNOWN IMPORTED)
            set_target_properties(libaio::libaio PROPERTIES
                IMPORTED_LOCATION "${PHOTON_LIBAIO_LIBRARY}"
                INTERFACE_INCLUDE_DIRECTORIES "${PHOTON_LIBAIO_INCLUDE_DIR}")
        endif()
        set(PHOTON_LIBAIO_LIBRARIES libaio::libaio)
    else()
        _photon_switch_off(LIBAIO "libaio (libaio.so and libaio.h)" "libaio-dev")
    endif()
endif()

# TLS: OpenSSL's libssl and libcrypto.
set(PHOTON_TLS_LIBRARIES "")
if(PHOTON_ENABLE_TLS)
    find_package(OpenSSL QUIET COMPONENTS SSL Crypto)
    if(OPENSSL_FOUND)
        set(PHOTON_TLS_LIBRARIES OpenSSL::SSL OpenSSL::Crypto)
    else()
        _photon_switch_off(TLS "OpenSSL (libssl, libcrypto)" "libssl-dev")
    endif()
endif()

# libcurl.
set(PHOTON_CURL_LIBRARIES "")
if(PHOTON_ENABLE_CURL)
    find_package(CURL QUIET)
    if(CURL_FOUND)
        set(PHOTON_CURL_LIBRARIES CURL::libcurl)
    else()
        _photon_switch_off(CURL "libcurl" "libcurl4-openssl-dev")
    endif()
endif()

# FUSE: fuse3 through pkg-config; 3.8 brought the lseek operation the adaptor uses.
set(PHOTON_FUSE_LIBRARIES "")
if(PHOTON_ENABLE_FUSE)
    if(NOT PKG_CONFIG_FOUND)
        _photon_switch_off(FUSE "pkg-config (needed to find fuse3)" "pkg-config")
    else()
        pkg_check_modules(FUSE3 QUIET IMPORTED_TARGET fuse3>=3.8)
        if(FUSE3_FOUND)
            set(PHOTON_FUSE_LIBRARIES PkgConfig::FUSE3)
        else()
            _photon_switch_off(FUSE "fuse3 (>= 3.8)" "libfuse3-dev")
        endif()
    endif()
endif()

# extfs: e2fsprogs' libext2fs through pkg-config (PhotonLibOS's option name, PHOTON_ENABLE_EXTFS).
set(PHOTON_EXTFS_LIBRARIES "")
if(PHOTON_ENABLE_EXTFS)
    if(NOT PKG_CONFIG_FOUND)
        _photon_switch_off(EXTFS "pkg-config (needed to find ext2fs)" "pkg-config")
    else()
        pkg_check_modules(EXT2FS QUIET IMPORTED_TARGET ext2fs)
        if(EXT2FS_FOUND)
            set(PHOTON_EXTFS_LIBRARIES PkgConfig::EXT2FS)
        else()
            _photon_switch_off(EXTFS "libext2fs (pkg-config ext2fs)" "libext2fs-dev")
        endif()
    endif()
endif()

set(_photon_summary "")
foreach(_part IN LISTS _photon_parts)
    if(PHOTON_ENABLE_${_part})
        set(PHOTON_HAVE_${_part} ON)
    else()
        set(PHOTON_HAVE_${_part} OFF)
    endif()
    string(TOLOWER "${_part}" _lower)
    string(APPEND _photon_summary " ${_lower}=${PHOTON_HAVE_${_part}}")
endforeach()
message(STATUS "photon: optional parts:${_photon_summary}")

# PUBLIC compile definitions PHOTON_HAVE_<PART>=1 for the parts that were found.
function(photon_target_dependencies _target)
    foreach(_part IN LISTS _photon_parts)
        if(PHOTON_HAVE_${_part})
            target_compile_definitions(${_target} PUBLIC PHOTON_HAVE_${_part}=1)
        endif()
    endforeach()
endfunction()
