// A test-only storage type, TOY8, and a weight format that reads it. TOY8 is Q8_0 stored
// backwards: 32 int8 codes in reverse order, then the f16 scale. It repacks exactly into
// Q8_0, and its format's model source looks the type up through the SDK, which only works
// when the runtime has handed this plugin its host services.
#include <array>
#include <cstring>
#include <string>

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

const sy::StorageTypeTable* toy_types() noexcept {
  static const std::array<sy::StorageTypeDesc, 1> types = [] {
    sy::StorageTypeDesc d;
    d.name = "TOY8";
    d.block_size = kBlock;
    d.block_bytes = kBytes;
    d.flags = sy::kStorageQuantized;
    d.dequantize_row = toy_dequantize;
    d.repack_to = "Q8_0";
    d.repack = toy_repack;
    return std::array{d};
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

const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-toy";
    pd.version = "1.0.0";
    sy::ComponentDesc c;
    c.kind = sy::ComponentKind::format;
    c.name = "test_toy";
    c.version = "1.0.0";
    c.factory = [](const sy::ParamMap&) noexcept {
      return sy::guard_factory([]() -> sy::Result<std::unique_ptr<sy::Component>> { return std::make_unique<ToyFormat>(); });
    };
    pd.components.push_back(c);
    return pd;
  }();
  return &d;
}

}  // namespace
SWITCHYARD_PLUGIN(describe)
SWITCHYARD_STORAGE_TYPES(toy_types)
