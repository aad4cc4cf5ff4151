// Importance matrices (`switchyard imatrix`, `quantize --imatrix`): per weight matrix (and
// per expert of a stack), the sum over the text's tokens of each input column's squared
// activation, and how many tokens were summed. Stored in llama.cpp's imatrix GGUF format
// (general.type = imatrix; imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size;
// tensors NAME.in_sum2 [cols, n_mat] and NAME.counts [1, n_mat], F32), so either tool
// reads the other's files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "switchyard/status.hpp"

namespace sy::quant_tool {

struct ImatrixEntry {
  int64_t cols = 0;
  std::vector<double> sum2;    ///< n_mat * cols: per matrix (expert), per input column
  std::vector<double> counts;  ///< n_mat: tokens summed into each matrix
  [[nodiscard]] int64_t n_mat() const { return static_cast<int64_t>(counts.size()); }
  /// The importance of each column of matrix `mat`: the mean squared activation (sum2 /
  /// count), as llama-quantize uses it; empty when no token reached the matrix.
  [[nodiscard]] std::vector<float> importance(int64_t mat) const;
};

struct Imatrix {
  std::map<std::string, ImatrixEntry> entries;  ///< by weight name ("blk.0.attn_q.weight")
  std::vector<std::string> datasets;
  int64_t chunk_count = 0, chunk_size = 0;
};

/// Sums linears' inputs as the engine reports them. Like llama-imatrix: only `blk.*`
/// weights (and output.weight with `output`), and plain matrices only from steps of at
/// least 16 tokens (a generation step says little about a column's scale).
class ImatrixCollector {
 public:
  explicit ImatrixCollector(bool output = false) : output_(output) {}
  /// One linear's input; non-finite values are an error naming the weight.
  Status add(const engine::LinearInput& in);
  [[nodiscard]] const Imatrix& result() const { return m_; }
  Imatrix& result() { return m_; }

 private:
  bool output_;
  Imatrix m_;
};

/// Writes `m` in llama.cpp's format, through a temporary renamed into place.
Status write_imatrix(const Imatrix& m, const std::filesystem::path& path);

/// Reads an imatrix GGUF (ours or llama-imatrix's); errors name the file and the tensor.
Result<Imatrix> read_imatrix(const std::filesystem::path& path);

}  // namespace sy::quant_tool
