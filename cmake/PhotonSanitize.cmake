# PHOTON_SANITIZE=address,undefined | thread: flags for photon and everything
# built in this tree, plus the defines that turn on the fiber annotations.
if(PHOTON_SANITIZE)
    string(REPLACE "," ";" _photon_sanitizers "${PHOTON_SANITIZE}")
    set(_flags "")
    foreach(_s IN LISTS _photon_sanitizers)
        if(NOT _s MATCHES "^(address|undefined|thread)$")
            message(FATAL_ERROR "PHOTON_SANITIZE: unknown sanitizer '${_s}'")
        endif()
    endforeach()
    string(REPLACE ";" "," _list "${_photon_sanitizers}")
    add_compile_options(-fsanitize=${_list} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    if(_list MATCHES "thread")
        # TSan does not model fences; ours sit next to seq_cst accesses it does model.
        add_compile_options($<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
    endif()
    add_link_options(-fsanitize=${_list})
    message(STATUS "photon: sanitizers ${_list}")
endif()
