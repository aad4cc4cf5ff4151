// Writing an opened model (gguf_tools/input.hpp) as GGUF with a chosen type per tensor: the
// one path quantize, convert, split and merge share. A tensor that changes type is read
// through its type's reference dequantizer and written by the SDK's quantizer, rows split
// over threads (a row does not depend on the others, so neither does the result on the
// thread count). Files are written under a temporary name in their folder, synced and
// renamed (gguf::Writer), so an interrupted run leaves no half file under the final name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gguf_tools/input.hpp"
#include "writer.hpp"

namespace sy::gguf_tools {

/// What becomes of one source tensor.
struct Target {
  bool keep = true;            ///< false: not written (a reader's helper tensor GGUF has no use for)
  StorageType type{};          ///< the type written
  /// Non-empty: column p of the source holds input feature column_order[p] (GPTQ act-order);
  /// the tensor is written with its columns back in feature order (always re-encoded).
  std::vector<int32_t> column_order;
  /// Non-empty: the weight of each column in the quantizer's squared error (an importance
  /// matrix), n_mat blocks of row-length values; rows [k * rows / n_mat, (k+1) * rows / n_mat)
  /// (expert k of a stack) use block k. The type must have a weighted quantizer.
  std::vector<float> importance;
};

/// One line per tensor as it is written.
struct TensorReport {
  size_t index = 0, count = 0;  ///< the tensor's place among those written to this file
  std::string name;
  StorageType from = StorageType::F32, to = StorageType::F32;
  uint64_t bytes_in = 0, bytes_out = 0;
};
using Progress = std::function<void(const TensorReport&)>;

/// The descriptor written for source tensor `index` under `t`.
TensorDesc target_desc(const Input& in, size_t index, const Target& t);

/// Checks that every kept tensor can be written as its target says: a registered type GGUF
/// stores, a quantizer for it and a dequantizer for the source when the type changes. The
/// error names the tensor.
Status check_targets(const Input& in, std::span<const Target> targets);

/// The targets a source's reader tensors ask for: `X.input_order` (I32, GPTQ act-order) puts
/// its order on `X.weight` and is not written; `X.input_scale` (static FP8 activation scales,
/// which GGUF has no place for) is not written, with a note. `targets` holds one per tensor.
Status fold_reader_tensors(const Input& in, std::vector<Target>& targets, std::vector<std::string>& notes);

/// True for a tensor fold_reader_tensors() handles (not a weight of the model).
bool is_reader_tensor(const std::string& name);

/// Adds `md` to `w`; general.alignment sets the writer's alignment instead of being copied.
Status add_metadata(gguf::Writer& w, const MetaEntries& md);

/// Adds source tensor `index` to `w` as `t` says; its bytes are produced when `w` writes.
/// `report` (optional) is called once the tensor's bytes are ready.
void add_tensor(gguf::Writer& w, const Input& in, size_t index, const Target& t, int threads,
                std::function<void()> report = {});

/// Writes `in` with `md` and one target per source tensor to `output`. `threads` 0: every
/// hardware thread.
Status write_gguf(const Input& in, const MetaEntries& md, std::span<const Target> targets,
                  const std::filesystem::path& output, int threads, const Progress& progress = {});

}  // namespace sy::gguf_tools
