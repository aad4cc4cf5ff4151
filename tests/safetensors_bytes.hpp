// Writes safetensors files for tests: valid ones from a list of tensors, and files whose
// header text a test has mutated (so each validation rule can be broken on its own).
#pragma once

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sy::test {

struct StEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;
};

/// The 8-byte little-endian length, the header text (padded with spaces to a multiple of 8,
/// as the reference writer does) and the data.
inline std::string safetensors_with_header(std::string header, const std::string& data) {
  while ((header.size() + 8) % 8 != 0) header += ' ';
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

/// The header of these tensors, stored one after another in list order.
inline nlohmann::ordered_json safetensors_header(const std::vector<StEntry>& ts, const nlohmann::json& metadata = nullptr) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.is_null()) h["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const auto& t : ts) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.data.size()}}};
    at += t.data.size();
  }
  return h;
}

inline std::string safetensors_data(const std::vector<StEntry>& ts) {
  std::string d;
  for (const auto& t : ts) d.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return d;
}

inline std::string safetensors_bytes(const std::vector<StEntry>& ts, const nlohmann::json& metadata = nullptr) {
  return safetensors_with_header(safetensors_header(ts, metadata).dump(), safetensors_data(ts));
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// n BF16 values v(i) (truncated from f32: the test values are exact in BF16).
template <class F>
std::vector<unsigned char> bf16_values(size_t n, F v) {
  std::vector<unsigned char> out(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(v(i));
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const auto h = static_cast<uint16_t>(u >> 16);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

}  // namespace sy::test
