# SWITCHYARD_SANITIZE=ON builds everything (runtime, plugins, tests) with AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer; scripts/test --sanitize uses it in its own
# build folder, with clang. Any UB report stops the program (-fno-sanitize-recover), so
# ctest sees it.
option(SWITCHYARD_SANITIZE "Build with ASan + UBSan (scripts/test --sanitize)" OFF)
if(SWITCHYARD_SANITIZE)
  # float-cast-overflow is not part of GCC's -fsanitize=undefined, and a double converted to an
  # integer it does not fit is exactly the bug class this run exists to catch.
  set(sy_san_flags -fsanitize=address,undefined,float-cast-overflow
      -fno-sanitize-recover=undefined,float-cast-overflow -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${sy_san_flags}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:${sy_san_flags}>")
  # GCC's -Wmaybe-uninitialized sees through the sanitizers' instrumentation and reports
  # std::variant and std::optional copies that are initialised (GCC PR 105562 and kin); the
  # Release build keeps the warning, and ASan itself checks the real thing here.
  add_compile_options("$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>")
  # -O1 and line tables (-g1) are what a report needs (function, file and line): instrumented
  # code compiles in a third of the time it takes at RelWithDebInfo's -O2 -g (docs/testing.md).
  # The build type Sanitize (scripts/test passes it); an explicit -DCMAKE_CXX_FLAGS_SANITIZE wins.
  foreach(lang C CXX)
    if("${CMAKE_${lang}_FLAGS_SANITIZE}" STREQUAL "")
      set(CMAKE_${lang}_FLAGS_SANITIZE "-O1 -g1 -DNDEBUG" CACHE STRING "Flags of the Sanitize build type" FORCE)
    endif()
  endforeach()
  message(STATUS "Switchyard: sanitizers on (ASan + UBSan), ${CMAKE_CXX_COMPILER_ID}, build type ${CMAKE_BUILD_TYPE}")
endif()

# sy_sanitize_unoptimized(<target>...): in the sanitizer build, compiles the targets at -O0.
# For code whose speed the sanitizer run hardly depends on (the unit tests' own code, the
# command line, the server's HTTP layer): instrumented code compiles twice as fast unoptimized,
# and the engine and kernels the tests drive keep -O1. (The conformance tests keep -O1: their
# reference checks, JSON reading above all, took three times as long unoptimized.) A no-op
# in other builds.
function(sy_sanitize_unoptimized)
  if(SWITCHYARD_SANITIZE)
    foreach(t IN LISTS ARGN)
      target_compile_options(${t} PRIVATE -O0)
    endforeach()
  endif()
endfunction()
