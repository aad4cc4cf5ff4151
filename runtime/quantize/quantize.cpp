#include "quantize/quantize.hpp"

#include <algorithm>

#include "gguf_tools/rewrite.hpp"

namespace sy::quant_tool {
namespace {

bool is_float(StorageType t) { return t == StorageType::F32 || t == StorageType::F16 || t == StorageType::BF16; }

}  // namespace

Result<std::vector<float>> importance_weights(const TensorDesc& t, const ImatrixEntry& e) {
  const int64_t row = t.shape.empty() ? 1 : t.shape[0];
  const int64_t n_mat = t.shape.size() >= 3 ? t.shape[2] : 1;
  if (e.cols != row || e.n_mat() != n_mat)
    return error::invalid_argument("the importance matrix has " + std::to_string(e.n_mat()) + " x " + std::to_string(e.cols) +
                                   " values for tensor '" + t.name + "', which has " + std::to_string(n_mat) + " x " +
                                   std::to_string(row) + "; it was made for another model");
  std::vector<float> w(static_cast<size_t>(n_mat * row), 1.0f);
  for (int64_t m = 0; m < n_mat; ++m) {
    const auto imp = e.importance(m);
    double mean = 0;
    for (float v : imp) mean += v;
    if (imp.empty() || !(mean > 0)) continue;
    mean /= static_cast<double>(imp.size());
    for (int64_t j = 0; j < row; ++j)
      w[static_cast<size_t>(m * row + j)] = static_cast<float>(std::max(1e-3, imp[static_cast<size_t>(j)] / mean));
  }
  return w;
}

Result<QuantizeSummary> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                       const QuantizeOptions& o, const gguf_tools::Progress& progress) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec))
    return error::invalid_argument("the output " + output.string() + " is the input; write to another file");
  auto opened = gguf_tools::Input::open(input);
  if (!opened) return opened.status();
  const gguf_tools::Input& in = **opened;
  const auto all = in.source().tensors();
  // The reader's helper tensors (act-order, activation scales) are not weights: the recipe's
  // rules (which count attn_v and ffn_down tensors) never see them.
  std::vector<TensorDesc> weights;
  for (const auto& t : all)
    if (!gguf_tools::is_reader_tensor(t.name)) weights.push_back(t);
  auto chooser = TypeChooser::create(o.recipe, ModelFacts::from(in.source().metadata(), weights), weights, o.types);
  if (!chooser) return chooser.status();

  QuantizeSummary sum;
  sum.notes = in.notes();
  std::vector<gguf_tools::Target> targets(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const TensorDesc& t = all[i];
    targets[i].type = t.type;
    if (gguf_tools::is_reader_tensor(t.name)) continue;
    const StorageType to = chooser->next(t);
    if (to != t.type && !is_float(t.type) && !o.allow_requantize)
      return error::invalid_argument("tensor '" + t.name + "' is already " + std::string(storage_type_name(t.type)) +
                                     "; quantizing it again compounds the error. Start from an F32, F16 or BF16 "
                                     "model, or pass --allow-requantize");
    targets[i].type = to;
  }
  if (auto st = gguf_tools::fold_reader_tensors(in, targets, sum.notes); !st) return st;
  if (o.imatrix) {
    int64_t missing = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!targets[i].keep || targets[i].type == all[i].type || is_float(targets[i].type)) continue;
      const auto it = o.imatrix->entries.find(all[i].name);
      if (it == o.imatrix->entries.end()) {
        ++missing;
        continue;
      }
      auto w = importance_weights(all[i], it->second);
      if (!w) return w.status();
      targets[i].importance = std::move(*w);
      ++sum.weighted;
    }
    if (missing > 0)
      sum.notes.push_back(std::to_string(missing) + " quantized tensors have no entry in the importance matrix and are "
                          "quantized unweighted (llama-imatrix leaves out output.weight, and views of fused tensors)");
  }
  sum.fallbacks = chooser->fallbacks();

  gguf_tools::MetaEntries md;
  for (const auto& kv : in.metadata())
    if (kv.first != "general.file_type" && kv.first != "general.quantization_version") md.push_back(kv);
  md.emplace_back("general.file_type", MetaValue(o.recipe.file_type));
  if (o.recipe.quantized()) md.emplace_back("general.quantization_version", MetaValue(uint32_t{2}));

  for (size_t i = 0; i < all.size(); ++i) {
    if (!targets[i].keep) continue;
    ++sum.tensors;
    sum.bytes_in += all[i].bytes;
    sum.bytes_out += gguf_tools::target_desc(in, i, targets[i]).bytes;
    sum.quantized += targets[i].type != all[i].type;
  }
  if (auto st = gguf_tools::write_gguf(in, md, targets, output, o.threads, progress); !st) return st;
  return sum;
}

}  // namespace sy::quant_tool
