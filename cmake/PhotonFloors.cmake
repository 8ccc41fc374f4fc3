# photon_split_floors(<target>): compiles the library's sources as one OBJECT library per floor
# of tools/floors.txt (photon_base, photon_thread, ..., photon_rpc; doc/style.md, "Layout"),
# each linked to the floors it stands on, and makes <target> (the one static library users
# link and install) out of their objects. Called once every folder has added its sources to
# <target>: each source goes to the floor the table puts it on (longest path match, as
# tools/check-floors.py reads it), and is compiled with <target>'s own settings, so the objects
# are the same as before. The floor targets are internal: not installed, not exported.
function(photon_split_floors _target)
    set(_table "${PROJECT_SOURCE_DIR}/tools/floors.txt")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_table}")
    file(STRINGS "${_table}" _lines)
    set(_floors "")
    set(_places "")
    foreach(_line IN LISTS _lines)
        string(REGEX REPLACE "#.*" "" _line "${_line}")
        string(STRIP "${_line}" _line)
        if(_line MATCHES "^floor +([a-z_]+):(.*)$")
            set(_f "${CMAKE_MATCH_1}")
            string(STRIP "${CMAKE_MATCH_2}" _on)
            string(REPLACE " " ";" _on "${_on}")
            list(APPEND _floors ${_f})
            set(_on_${_f} ${_on})
            set(_srcs_${_f} "")
        elseif(_line MATCHES "^([^ ]+) +([a-z_]+)$")
            list(APPEND _places "${CMAKE_MATCH_1}")
            set("_place_${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
        endif()
    endforeach()

    get_target_property(_sources ${_target} SOURCES)
    foreach(_src IN LISTS _sources)
        if(_src MATCHES "^\\$<")
            message(FATAL_ERROR "photon_split_floors: ${_src}: a generator expression; "
                                "add the source under an if() instead")
        endif()
        get_filename_component(_abs "${_src}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
        file(RELATIVE_PATH _rel "${PROJECT_SOURCE_DIR}" "${_abs}")
        set(_floor "")
        if(DEFINED "_place_${_rel}")
            set(_floor "${_place_${_rel}}")
        else()
            set(_dir "${_rel}")
            while(_floor STREQUAL "" AND _dir MATCHES "/")
                get_filename_component(_dir "${_dir}" DIRECTORY)
                if(DEFINED "_place_${_dir}/")
                    set(_floor "${_place_${_dir}/}")
                endif()
            endwhile()
        endif()
        if(_floor STREQUAL "")
            message(FATAL_ERROR "photon_split_floors: ${_rel} is on no floor (tools/floors.txt)")
        endif()
        list(APPEND _srcs_${_floor} "${_abs}")
    endforeach()

    # What <target> compiles its own sources with (its dependencies' usage requirements come
    # through the same link libraries).
    set(_props COMPILE_DEFINITIONS COMPILE_OPTIONS INCLUDE_DIRECTORIES COMPILE_FEATURES
        CXX_STANDARD CXX_STANDARD_REQUIRED CXX_EXTENSIONS POSITION_INDEPENDENT_CODE)
    get_target_property(_libs ${_target} LINK_LIBRARIES)
    set(_objects "")
    foreach(_f IN LISTS _floors)
        if(NOT _srcs_${_f})
            continue()
        endif()
        add_library(photon_${_f} OBJECT ${_srcs_${_f}})
        foreach(_p IN LISTS _props)
            get_target_property(_v ${_target} ${_p})
            if(NOT _v STREQUAL "_v-NOTFOUND")
                set_property(TARGET photon_${_f} PROPERTY ${_p} "${_v}")
            endif()
        endforeach()
        if(_libs)
            target_link_libraries(photon_${_f} PRIVATE ${_libs})
        endif()
        foreach(_lower IN LISTS _on_${_f})
            if(TARGET photon_${_lower})
                target_link_libraries(photon_${_f} PRIVATE photon_${_lower})
            endif()
        endforeach()
        list(APPEND _objects $<TARGET_OBJECTS:photon_${_f}>)
        string(APPEND _listing "${_f} $<JOIN:$<TARGET_OBJECTS:photon_${_f}>,\n${_f} >\n")
    endforeach()
    set_property(TARGET ${_target} PROPERTY SOURCES ${_objects})
    set_property(TARGET ${_target} PROPERTY LINKER_LANGUAGE CXX)
    if(PHOTON_BUILD_TESTING)
        _photon_check_floor_links(${_target} "${_listing}")
    endif()
endfunction()

# The floors' objects, listed for tools/check-floor-links.py, which the build runs once the
# library is made (an upward link dependency fails the build), and ctest again.
function(_photon_check_floor_links _target _listing)
    find_program(PHOTON_PYTHON3 python3)
    if(NOT PHOTON_PYTHON3 OR NOT CMAKE_NM)
        message(STATUS "photon: link floors unchecked (needs python3 and nm)")
        return()
    endif()
    set(_list "${PROJECT_BINARY_DIR}/photon-floor-objects-$<CONFIG>.txt")
    file(GENERATE OUTPUT "${_list}" CONTENT "${_listing}")
    set(_script "${PROJECT_SOURCE_DIR}/tools/check-floor-links.py")
    set(_stamp "${PROJECT_BINARY_DIR}/photon-floor-links.stamp")
    add_custom_command(OUTPUT "${_stamp}"
        COMMAND "${PHOTON_PYTHON3}" "${_script}" "${_list}" --nm "${CMAKE_NM}"
        COMMAND "${CMAKE_COMMAND}" -E touch "${_stamp}"
        DEPENDS ${_target} "${_script}" "${PROJECT_SOURCE_DIR}/tools/floors.py"
                "${PROJECT_SOURCE_DIR}/tools/floors.txt"
        COMMENT "Checking that photon's link dependencies run down its floors"
        VERBATIM)
    add_custom_target(photon_floor_links ALL DEPENDS "${_stamp}")
    set_property(GLOBAL PROPERTY PHOTON_FLOOR_LINKS_TEST
        "${PHOTON_PYTHON3};${_script};${_list};--nm;${CMAKE_NM}")
endfunction()
