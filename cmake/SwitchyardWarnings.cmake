# Warnings for Switchyard's own targets only; third-party headers come in as SYSTEM.
add_library(sy_warnings INTERFACE)
target_compile_options(sy_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${SWITCHYARD_WERROR}>>:-Werror>)

function(sy_target_warnings target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:sy_warnings>)
endfunction()

# GCC 12 reports std::string concatenation as an overlapping memcpy at -O3 (GCC PR105329,
# fixed in 13); the warning is wrong there, so it is off for those versions only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(sy_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
