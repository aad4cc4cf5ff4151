// Rewriting a GGUF model in tests: every tensor and metadata entry read into memory, edited
// (renamed, fused, removed, new values), and written again with the project's writer.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model.hpp"
#include "writer.hpp"

namespace sy::test {

/// A model file's tensors in memory, in file order, with their metadata: edited, then written.
struct Tensors {
  std::vector<std::pair<std::string, MetaValue>> kv;
  std::vector<TensorDesc> descs;
  std::vector<std::vector<std::byte>> data;

  static Tensors read(const std::filesystem::path& p) {
    auto m = gguf::Model::open(p);
    REQUIRE(m.has_value());
    Tensors t;
    t.kv = (*m)->ordered_metadata();
    for (size_t i = 0; i < (*m)->tensors().size(); ++i) {
      t.descs.push_back((*m)->tensors()[i]);
      auto v = (*m)->view(i);
      REQUIRE(v.has_value());
      t.data.emplace_back(v->begin(), v->end());
    }
    return t;
  }
  [[nodiscard]] bool has(const std::string& name) const { return index(name) >= 0; }
  [[nodiscard]] int index(const std::string& name) const {
    for (size_t i = 0; i < descs.size(); ++i)
      if (descs[i].name == name) return static_cast<int>(i);
    return -1;
  }
  const std::vector<std::byte>& bytes(const std::string& name) const {
    const int i = index(name);
    REQUIRE(i >= 0);
    return data[static_cast<size_t>(i)];
  }
  const TensorDesc& desc(const std::string& name) const {
    const int i = index(name);
    REQUIRE(i >= 0);
    return descs[static_cast<size_t>(i)];
  }
  void remove(const std::string& name) {
    const int i = index(name);
    REQUIRE(i >= 0);
    descs.erase(descs.begin() + i);
    data.erase(data.begin() + i);
  }
  void add(const std::string& name, StorageType type, std::vector<int64_t> shape, std::vector<std::byte> bytes) {
    TensorDesc d;
    d.name = name;
    d.type = type;
    d.shape = std::move(shape);
    d.bytes = bytes.size();
    descs.push_back(d);
    data.push_back(std::move(bytes));
  }
  void set(const std::string& key, MetaValue v) {
    for (auto& [k, old] : kv)
      if (k == key) {
        old = std::move(v);
        return;
      }
    kv.emplace_back(key, std::move(v));
  }
  void write(const std::filesystem::path& p) const {
    gguf::Writer w;
    for (const auto& [k, v] : kv) w.add(k, v);
    for (size_t i = 0; i < descs.size(); ++i) w.add_tensor(descs[i], std::span<const std::byte>(data[i]));
    const Status st = w.write(p);
    INFO(st.message());
    REQUIRE(st.is_ok());
  }
};

}  // namespace sy::test
