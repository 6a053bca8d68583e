# Read after project() when tests/CMakeLists.txt configures payops again with
# -DCMAKE_PROJECT_INCLUDE=<this file> (the layers_refuse_the_lab_in_the_endpoint_* tests): it adds
# the link PAYOPS_PROBE_LINK names, before app/CMakeLists.txt's check runs at the end of the
# configure. Every link but "allowed" must make that configure fail.
if(PAYOPS_PROBE_LINK STREQUAL "direct")
    # The endpoint's main links the lab itself.
    cmake_language(DEFER CALL target_link_libraries payops-callbackd PRIVATE payops_lab)
elseif(PAYOPS_PROBE_LINK STREQUAL "through")
    # A room the service links carries the lab, two links down.
    add_library(probe_lab_carrier INTERFACE)
    target_link_libraries(probe_lab_carrier INTERFACE payops_lab)
    cmake_language(DEFER CALL target_link_libraries payops_callback PUBLIC probe_lab_carrier)
elseif(PAYOPS_PROBE_LINK STREQUAL "httplib")
    # The lab's HTTP client, privately, in the lowest room: it still ends up in the binary.
    cmake_language(DEFER CALL target_link_libraries payops_money PRIVATE PkgConfig::httplib)
elseif(PAYOPS_PROBE_LINK STREQUAL "allowed")
    # A room the endpoint does not need is no test lab: this configure succeeds.
    cmake_language(DEFER CALL target_link_libraries payops_service PUBLIC payops_statement)
endif()
