// Test-only storage types and weight formats that read them. TOY8 is Q8_0 stored
// backwards: 32 int8 codes in reverse order, then the f16 scale. It repacks exactly into
// Q8_0. TOY8P is the same layout without a repack, so only the CPU's generic kernel or a
// requantization (format.convert_to) computes it. The formats' model sources look the types
// up through the SDK, which only works when the runtime has handed this plugin its host
// services: test_toy makes one tensor up; test_toy_gguf and test_toy_gguf_plain read a GGUF
// model and present its Q8_0 tensors as TOY8 or TOY8P (a model whose weights the core has no
// kernel for, for the conversion plan's end-to-end tests); test_toy_gguf_f32 presents them
// dequantized, as the reference the generic kernel's f32 dots are held to.
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "model.hpp"  // formats/gguf, linked statically

#include "switchyard/format.hpp"
#include "switchyard/plugin.hpp"
#include "switchyard/quant.hpp"

namespace {

constexpr int kBlock = 32, kBytes = 34;

void toy_dequantize(const void* src, float* dst, int64_t n) noexcept {
  const auto* b = static_cast<const uint8_t*>(src);
  for (int64_t blk = 0; blk < n / kBlock; ++blk, b += kBytes) {
    uint16_t h;
    std::memcpy(&h, b + kBlock, 2);
    const float d = sy::fp16_to_fp32(h);
    for (int j = 0; j < kBlock; ++j) dst[blk * kBlock + j] = static_cast<float>(static_cast<int8_t>(b[kBlock - 1 - j])) * d;
  }
}

// Q8_0 (f16 d, then 32 codes in order) from TOY8: the same numbers, rearranged.
void toy_repack(const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  for (int64_t blk = 0; blk < rows * (n / kBlock); ++blk, s += kBytes, d += kBytes) {
    std::memcpy(d, s + kBlock, 2);
    for (int j = 0; j < kBlock; ++j) d[2 + j] = s[kBlock - 1 - j];
  }
}

// TOY8 from Q8_0: the inverse of toy_repack.
void q8_0_to_toy(const uint8_t* q, uint8_t* t, int64_t blocks) {
  for (int64_t blk = 0; blk < blocks; ++blk, q += kBytes, t += kBytes) {
    std::memcpy(t + kBlock, q, 2);
    for (int j = 0; j < kBlock; ++j) t[kBlock - 1 - j] = q[2 + j];
  }
}

const sy::StorageTypeTable* toy_types() noexcept {
  static const std::array<sy::StorageTypeDesc, 2> types = [] {
    sy::StorageTypeDesc d;
    d.name = "TOY8";
    d.block_size = kBlock;
    d.block_bytes = kBytes;
    d.flags = sy::kStorageQuantized;
    d.dequantize_row = toy_dequantize;
    d.repack_to = "Q8_0";
    d.repack = toy_repack;
    sy::StorageTypeDesc p = d;
    p.name = "TOY8P";
    p.repack_to = nullptr;
    p.repack = nullptr;
    return std::array{d, p};
  }();
  static const sy::StorageTypeTable t{sizeof(sy::StorageTypeTable), static_cast<uint32_t>(types.size()), types.data()};
  return &t;
}

// One TOY8 tensor of 2 rows x 64: codes j - 16 of block b, scale 0.5 * (b + 1).
class ToySource final : public sy::ModelSource {
 public:
  explicit ToySource(sy::StorageType type) {
    desc_.name = "toy.weight";
    desc_.type = type;
    desc_.shape = {64, 2};
    desc_.bytes = 4 * kBytes;
    for (int b = 0; b < 4; ++b) {
      uint8_t* blk = bytes_.data() + b * kBytes;
      for (int j = 0; j < kBlock; ++j) blk[kBlock - 1 - j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
      const uint16_t h = sy::fp32_to_fp16(0.5f * static_cast<float>(b + 1));
      std::memcpy(blk + kBlock, &h, 2);
    }
  }
  const sy::Metadata& metadata() const noexcept override { return meta_; }
  std::span<const sy::TensorDesc> tensors() const noexcept override { return {&desc_, 1}; }
  sy::Result<std::span<const std::byte>> view(size_t) const noexcept override {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes_.data()), bytes_.size());
  }
  sy::Status read(size_t, uint64_t offset, std::span<std::byte> out) const noexcept override {
    if (offset + out.size() > bytes_.size()) return sy::error::out_of_range("read past the toy tensor");
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return sy::Status::ok();
  }

 private:
  sy::Metadata meta_;
  sy::TensorDesc desc_;
  std::array<uint8_t, 4 * kBytes> bytes_{};
};

class ToyFormat final : public sy::WeightFormat {
 public:
  int probe(const std::filesystem::path& path) const noexcept override { return path.extension() == ".toy" ? 100 : 0; }
  sy::Result<std::unique_ptr<sy::ModelSource>> open(const std::filesystem::path&) const noexcept override {
    // By its bare name, through the host services: an unattached plugin finds nothing.
    const auto type = sy::storage_type_from_name("TOY8");
    if (!type) return sy::error::not_found("TOY8 is not registered (was this plugin attached?)");
    return std::unique_ptr<sy::ModelSource>(std::make_unique<ToySource>(*type));
  }
};

// A GGUF model whose Q8_0 tensors are presented as `type` (TOY8 or TOY8P): their bytes
// rearranged once at open into memory of its own, every other tensor viewed in place.
class ToyGgufSource final : public sy::ModelSource {
 public:
  ToyGgufSource(std::unique_ptr<sy::gguf::Model> m, sy::StorageType type) : m_(std::move(m)) {
    const auto src = m_->tensors();
    descs_.assign(src.begin(), src.end());
    owned_.resize(descs_.size());
    for (size_t i = 0; i < descs_.size(); ++i) {
      if (descs_[i].type != sy::StorageType::Q8_0) continue;
      auto v = m_->view(i);
      if (!v) continue;  // left as Q8_0; reading it reports the error
      const auto blocks = static_cast<int64_t>(v->size() / kBytes);
      if (type == sy::StorageType::F32) {  // the reference: the same numbers as plain floats
        owned_[i].resize(static_cast<size_t>(blocks * kBlock) * sizeof(float));
        if (!sy::dequantize_row(sy::StorageType::Q8_0, v->data(), reinterpret_cast<float*>(owned_[i].data()), blocks * kBlock))
          continue;
        descs_[i].bytes = owned_[i].size();
      } else {
        owned_[i].resize(v->size());
        q8_0_to_toy(reinterpret_cast<const uint8_t*>(v->data()), owned_[i].data(), blocks);
      }
      descs_[i].type = type;
    }
  }
  const sy::Metadata& metadata() const noexcept override { return m_->metadata(); }
  std::span<const sy::TensorDesc> tensors() const noexcept override { return descs_; }
  sy::Result<std::span<const std::byte>> view(size_t i) const noexcept override {
    if (i < owned_.size() && !owned_[i].empty())
      return std::span<const std::byte>(reinterpret_cast<const std::byte*>(owned_[i].data()), owned_[i].size());
    return m_->view(i);
  }
  sy::Status read(size_t i, uint64_t offset, std::span<std::byte> out) const noexcept override {
    auto v = view(i);
    if (!v) return v.status();
    if (offset > v->size() || out.size() > v->size() - offset) return sy::error::out_of_range("read past a toy tensor");
    std::memcpy(out.data(), v->data() + offset, out.size());
    return sy::Status::ok();
  }

 private:
  std::unique_ptr<sy::gguf::Model> m_;
  std::vector<sy::TensorDesc> descs_;
  std::vector<std::vector<uint8_t>> owned_;
};

class ToyGgufFormat final : public sy::WeightFormat {
 public:
  /// `type`: "TOY8", "TOY8P", or "F32" for the same weights dequantized (a reference).
  explicit ToyGgufFormat(const char* type) : type_(type) {}
  // Only when named (model.format): the file is an ordinary GGUF.
  int probe(const std::filesystem::path&) const noexcept override { return 0; }
  sy::Result<std::unique_ptr<sy::ModelSource>> open(const std::filesystem::path& path) const noexcept override {
    const auto type = sy::storage_type_from_name(type_);
    if (!type) return sy::error::not_found(std::string(type_) + " is not registered (was this plugin attached?)");
    try {
      auto m = sy::gguf::Model::open(path);
      if (!m) return m.status();
      return std::unique_ptr<sy::ModelSource>(std::make_unique<ToyGgufSource>(std::move(*m), *type));
    } catch (const std::exception& e) {
      return sy::error::internal(e.what());
    }
  }

 private:
  const char* type_;
};

template <class Make>
sy::ComponentDesc format_component(const char* name, Make) {
  sy::ComponentDesc c;
  c.kind = sy::ComponentKind::format;
  c.name = name;
  c.version = "1.0.0";
  c.factory = [](const sy::ParamMap&) noexcept {
    return sy::guard_factory([]() -> sy::Result<std::unique_ptr<sy::Component>> { return Make{}(); });
  };
  return c;
}

const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-toy";
    pd.version = "1.0.0";
    pd.components.push_back(format_component("test_toy", [] { return std::unique_ptr<sy::Component>(std::make_unique<ToyFormat>()); }));
    pd.components.push_back(format_component(
        "test_toy_gguf", [] { return std::unique_ptr<sy::Component>(std::make_unique<ToyGgufFormat>("TOY8")); }));
    pd.components.push_back(format_component(
        "test_toy_gguf_plain", [] { return std::unique_ptr<sy::Component>(std::make_unique<ToyGgufFormat>("TOY8P")); }));
    pd.components.push_back(format_component(
        "test_toy_gguf_f32", [] { return std::unique_ptr<sy::Component>(std::make_unique<ToyGgufFormat>("F32")); }));
    return pd;
  }();
  return &d;
}

}  // namespace
SWITCHYARD_PLUGIN(describe)
SWITCHYARD_STORAGE_TYPES(toy_types)
