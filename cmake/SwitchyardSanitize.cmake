# SWITCHYARD_SANITIZE=ON builds everything (runtime, plugins, tests) with AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer; scripts/test --sanitize uses it in its own
# build folder. Any UB report stops the program (-fno-sanitize-recover), so ctest sees it.
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
  message(STATUS "Switchyard: sanitizers on (ASan + UBSan)")
endif()
