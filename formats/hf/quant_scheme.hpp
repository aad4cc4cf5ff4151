// What a quantized-checkpoint reader (the awq, gptq and fp8 plugins) adds to the Hugging Face
// reader: which checkpoint tensors form a quantized linear, and how one such linear becomes a
// storage type the engine computes. The hf reader keeps everything else (config mapping,
// tensor names, expert stacking, q/k row order, unquantized tensors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint.hpp"
#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"

namespace sy::hf {

/// A quantized linear decoded into a storage type: `rows` output features, each a row of
/// `cols` input features in `type`'s blocks, row after row.
struct DecodedLinear {
  StorageType type = StorageType::F32;
  int64_t rows = 0, cols = 0;
  std::vector<std::byte> bytes;
  /// Empty: the columns are the input features in order. Else column p holds input feature
  /// input_order[p] (GPTQ act-order, stored so that each group's columns are adjacent): the
  /// engine gathers the activation in this order before the product.
  std::vector<int32_t> input_order;
  /// A static activation scale (FP8 `activation_scheme: static`), else 0: the engine may
  /// quantize the linear's input with it (pipeline key format.fp8_activations).
  float input_scale = 0;
};

/// A checkpoint tensor found by name, with its bytes in place in the mapped shard.
struct FoundTensor {
  const StTensor* tensor = nullptr;
  std::span<const std::byte> data;
  std::string file;  ///< the shard, for messages
};

/// Finds tensors of a checkpoint by name (any shard).
class TensorFinder {
 public:
  explicit TensorFinder(const Checkpoint& ck);
  /// The tensor, or an empty FoundTensor (tensor == nullptr).
  [[nodiscard]] FoundTensor find(const std::string& name) const;
  [[nodiscard]] const std::filesystem::path& dir() const { return ck_.dir; }
  /// Drops the pages of every tensor found so far from this process's memory: decoded, a
  /// module's source bytes are not read again, and the peak stays near the decoded size.
  void release_found() const noexcept;

 private:
  const Checkpoint& ck_;
  mutable std::vector<std::span<const std::byte>> found_;
};

class QuantScheme {
 public:
  virtual ~QuantScheme() = default;
  /// The module ("model.layers.0.mlp.down_proj") whose quantized weight `t` is, or "" when
  /// `t` is not the main tensor of a quantized linear.
  [[nodiscard]] virtual std::string module_of(const StTensor& t) const = 0;
  /// Whether `t` is read by decode() of its module (scales, zero points, g_idx) and has no
  /// place of its own in the model.
  [[nodiscard]] virtual bool companion(const StTensor& t) const = 0;
  /// Decodes one module; errors name the tensor and the fix.
  [[nodiscard]] virtual Result<DecodedLinear> decode(const TensorFinder& find, const std::string& module) const = 0;
};

/// How a quantized-checkpoint plugin opens its folders through the hf reader.
struct QuantReader {
  std::string method;  ///< what quantized_by() answers for its checkpoints: "awq", "gptq", "fp8"
  /// The scheme for a checkpoint, from its quantization_config; errors name `config_file` and
  /// the field.
  std::function<Result<std::unique_ptr<QuantScheme>>(const nlohmann::json& qcfg, const std::string& config_file)> make;
};

}  // namespace sy::hf
