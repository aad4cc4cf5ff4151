# sy_no_unity(FILE...) keeps sources out of the unity batches (SWITCHYARD_UNITY_BUILD): files
# whose anonymous-namespace helpers or constants share a name with another file's in the same
# target. Call it in the directory that adds the target. Sources with their own
# COMPILE_OPTIONS (the CPU's ISA kernels) are kept out by CMake already.
function(sy_no_unity)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
