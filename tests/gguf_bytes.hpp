// A byte-level GGUF encoder for tests, written from the GGUF specification independently
// of formats/gguf, so crafted (valid or corrupt) files test the reader from outside.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sy::test {

struct GgufBytes {
  std::vector<uint8_t> b;

  template <class T>
  GgufBytes& put(T v) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    b.insert(b.end(), tmp, tmp + sizeof(T));
    return *this;
  }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  GgufBytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  // Metadata value type ids from the spec.
  enum : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };
  GgufBytes& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(U32).u32(v); }
  GgufBytes& kv_str(const std::string& k, const std::string& v) { return str(k).u32(STRING).str(v); }
  GgufBytes& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  GgufBytes& pad(size_t alignment = 32) {
    while (b.size() % alignment) b.push_back(0);
    return *this;
  }
  GgufBytes& data(size_t n, uint8_t fill = 0xab) {
    b.insert(b.end(), n, fill);
    return *this;
  }
  size_t size() const { return b.size(); }
};

}  // namespace sy::test
