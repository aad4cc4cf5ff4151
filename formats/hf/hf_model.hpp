// A Hugging Face model folder (config.json + safetensors, one file or shards) as one
// ModelSource with canonical tensor names. Most tensors are zero-copy views of the mapped
// files; the few that need their bytes changed (stacked per-expert matrices, llama's q/k row
// order, norms and the router as F32) are assembled by read(), and view() says so.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint.hpp"
#include "config.hpp"
#include "names.hpp"
#include "quant_scheme.hpp"
#include "switchyard/format.hpp"

namespace sy::hf {

class Model final : public ModelSource {
 public:
  /// Opens a folder, or the folder of a .safetensors file. Without `quant` only unquantized
  /// checkpoints open; with it, only checkpoints of its method, its linears decoded by its scheme.
  static Result<std::unique_ptr<Model>> open(const std::filesystem::path& path, const QuantReader* quant = nullptr);

  const Metadata& metadata() const noexcept override { return config_.md; }
  std::span<const TensorDesc> tensors() const noexcept override { return descs_; }
  Result<std::span<const std::byte>> view(size_t index) const noexcept override;
  Status read(size_t index, uint64_t offset, std::span<std::byte> out) const noexcept override;

  /// The checkpoint's files (for `inspect` and tests).
  [[nodiscard]] const Checkpoint& checkpoint() const { return ckpt_; }
  /// What config.json said (for tests and tools that map names themselves).
  [[nodiscard]] const HfConfig& config() const { return config_; }

  /// Source bytes of a canonical tensor, in its element order: contiguous ranges of one shard.
  struct Piece {
    uint32_t shard = 0;
    uint64_t begin = 0, bytes = 0;
  };
  struct Recipe {
    std::vector<Piece> pieces;
    Dtype src = Dtype::F32;
    bool to_f32 = false;           ///< each source element becomes an F32 (then `values` applies)
    std::vector<std::byte> owned;  ///< data computed at open (rope_freqs.weight) instead of pieces
    Values values = Values::as_is;
  };

 private:
  Status add(TensorDesc d, Recipe r);
  Status build(const std::string& config_file);
  /// One stacked expert tensor of a quantized checkpoint, filled expert by expert.
  struct QuantStack {
    size_t desc = 0;
    std::vector<DecodedLinear> parts;  ///< rows == 0: not seen yet
  };
  Status add_quantized(const std::string& module, const std::string& config_file,
                       std::map<std::string, QuantStack>& stacks, std::map<std::string, int64_t>& skipped);
  /// `<weight minus .weight>.input_order`, I32, when the linear's columns are reordered.
  Status add_input_order(const std::string& weight, const std::vector<int32_t>& order);
  /// `<weight minus .weight>.input_scale`, F32: the static activation scale of a linear
  /// ([1]), or of each expert of a stacked one ([E]).
  Status add_input_scale(const std::string& weight, const std::vector<float>& scales);
  Status stack_quantized(std::map<std::string, QuantStack>& stacks, const std::string& config_file);

  std::unique_ptr<QuantScheme> scheme_;
  Checkpoint ckpt_;
  HfConfig config_;
  std::vector<TensorDesc> descs_;
  std::vector<Recipe> recipes_;
};

}  // namespace sy::hf
