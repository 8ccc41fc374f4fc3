# The warnings photon's own targets (the library, tests, examples, fuzzers) build with, and
# PHOTON_WERROR, which makes them errors. Third-party code (GoogleTest built from source, gRPC's
# generated peer) and system headers keep their own flags. OFF by default: a user's build must
# not break on a warning a newer compiler adds; CI turns it on (doc/build.md).
option(PHOTON_WERROR "treat warnings as errors in photon's own targets" OFF)
set(PHOTON_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter)
if(PHOTON_WERROR)
    list(APPEND PHOTON_WARNING_FLAGS -Werror)
    message(STATUS "photon: warnings are errors (PHOTON_WERROR=ON)")
endif()

# photon_target_warnings(<target>...): PHOTON_WARNING_FLAGS on the C++ sources (not the
# assembly) of each target.
function(photon_target_warnings)
    foreach(_t IN LISTS ARGN)
        target_compile_options(${_t} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${PHOTON_WARNING_FLAGS}>")
    endforeach()
endfunction()
