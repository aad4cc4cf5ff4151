#include "gguf_tools/convert.hpp"

#include <array>
#include <map>

#include "switchyard/quant.hpp"

namespace sy::gguf_tools {
namespace {

constexpr std::array<std::pair<std::string_view, OutType>, 5> kOutTypes{{
    {"auto", OutType::automatic}, {"f32", OutType::f32}, {"f16", OutType::f16}, {"bf16", OutType::bf16}, {"q8_0", OutType::q8_0}}};

bool gguf_stores(StorageType t) {
  const auto* info = storage_type_info(static_cast<uint32_t>(t));
  return info && info->in_gguf;
}

bool is_fp8(StorageType t) {
  const std::string_view n = storage_type_name(t);
  return n.starts_with("FP8");
}

// Tensors llama.cpp computes only in F32 (its converter keeps them so whatever the outtype).
bool stays_f32(const TensorDesc& t) {
  if (t.shape.size() <= 1 || t.type == StorageType::F32) return true;
  const std::string& n = t.name;
  return n.ends_with("ffn_gate_inp.weight") || n.ends_with("ffn_gate_inp_shexp.weight") ||
         n.ends_with("ssm_conv1d.weight");
}

// llama.cpp's general.file_type for the mostly-used type of the file.
uint32_t file_type_of(StorageType t) {
  switch (t) {
    case StorageType::F32: return 0;
    case StorageType::F16: return 1;
    case StorageType::Q8_0: return 7;
    case StorageType::BF16: return 32;
    default: return 1;
  }
}

}  // namespace

std::optional<OutType> parse_outtype(std::string_view s) {
  for (const auto& [name, t] : kOutTypes)
    if (s == name) return t;
  return std::nullopt;
}

std::string outtype_names() {
  std::string s;
  for (const auto& [name, t] : kOutTypes) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

StorageType convert_type(const TensorDesc& t, OutType out) {
  if (stays_f32(t)) return StorageType::F32;
  switch (out) {
    case OutType::f32: return StorageType::F32;
    case OutType::f16: return StorageType::F16;
    case OutType::bf16: return StorageType::BF16;
    case OutType::q8_0: {
      const int64_t row = t.shape.empty() ? 1 : t.shape[0];
      return row % 32 == 0 ? StorageType::Q8_0 : StorageType::F16;
    }
    case OutType::automatic: break;
  }
  if (gguf_stores(t.type)) return t.type;
  return is_fp8(t.type) ? StorageType::BF16 : StorageType::F16;
}

Result<ConvertSummary> convert_folder(const std::filesystem::path& input, const std::filesystem::path& output,
                                      const ConvertOptions& o, const Progress& progress) {
  auto opened = Input::open(input);
  if (!opened) return opened.status();
  const Input& in = **opened;
  if (in.is_gguf())
    return error::invalid_argument(input.string() + " is already a GGUF file; `switchyard quantize` changes its types, "
                                   "`switchyard gguf split|merge` its files");
  ConvertSummary sum;
  sum.format = in.format();
  sum.notes = in.notes();
  const auto tensors = in.source().tensors();
  std::vector<Target> targets(tensors.size());
  std::map<StorageType, uint64_t> elements_by_type;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (is_reader_tensor(tensors[i].name)) continue;
    targets[i].type = convert_type(tensors[i], o.outtype);
    if (tensors[i].shape.size() >= 2) elements_by_type[targets[i].type] += tensors[i].elements();
  }
  if (auto st = fold_reader_tensors(in, targets, sum.notes); !st) return st;
  // A linear whose columns the checkpoint reorders is written in feature order, so its type
  // must be one the SDK can write (it always is: convert_type never keeps a reordered type).
  StorageType most = StorageType::F16;
  uint64_t best = 0;
  for (const auto& [t, n] : elements_by_type)
    if (n > best) best = n, most = t;

  MetaEntries md;
  for (const auto& kv : in.metadata())
    if (kv.first != "general.file_type" && kv.first != "general.quantization_version") md.push_back(kv);
  md.emplace_back("general.file_type", MetaValue(file_type_of(most)));
  md.emplace_back("general.quantization_version", MetaValue(uint32_t{2}));

  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!targets[i].keep) continue;
    ++sum.tensors;
    sum.bytes_in += tensors[i].bytes;
    sum.bytes_out += target_desc(in, i, targets[i]).bytes;
  }
  if (auto st = write_gguf(in, md, targets, output, o.threads, progress); !st) return st;
  return sum;
}

}  // namespace sy::gguf_tools
