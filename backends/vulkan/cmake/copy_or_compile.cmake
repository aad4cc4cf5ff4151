# cmake -DFROM=<compiled variant> -DOUT=<output> -DSOURCES=<sources;...> -DCOMPILE=<command;...>
#       -P copy_or_compile.cmake
# Copies FROM to OUT when FROM exists and is newer than every one of SOURCES (another build
# compiled this same variant from these same files); otherwise runs COMPILE, which writes OUT.
set(fresh FALSE)
if(EXISTS "${FROM}")
  set(fresh TRUE)
  foreach(src IN LISTS SOURCES)
    if("${src}" IS_NEWER_THAN "${FROM}")
      set(fresh FALSE)
    endif()
  endforeach()
endif()
if(fresh)
  file(COPY_FILE "${FROM}" "${OUT}")
else()
  execute_process(COMMAND ${COMPILE} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${OUT} failed")
  endif()
endif()
