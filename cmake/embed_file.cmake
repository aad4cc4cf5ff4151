# Writes a C++ source defining `std::string_view NAME()` with the bytes of INPUT, so a
# static file (the chat page) ships inside the executable. Run as
#   cmake -DINPUT=... -DOUTPUT=... -DNAME=... -DNAMESPACE=... -P embed_file.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
# One line per 32 bytes keeps the generated file readable by compilers and people.
set(body "")
set(pos 0)
while(pos LESS n)
  string(SUBSTRING "${hex}" ${pos} 64 line)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," line "${line}")
  string(APPEND body "${line}\n")
  math(EXPR pos "${pos} + 64")
endwhile()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.\n#include <string_view>\nnamespace ${NAMESPACE} {\nnamespace {\nconstexpr char kData[] = {\n${body}'\\0'};\n}  // namespace\nstd::string_view ${NAME}() { return {kData, ${bytes}}; }\n}  // namespace ${NAMESPACE}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
