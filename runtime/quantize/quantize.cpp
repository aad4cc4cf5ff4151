#include "quantize/quantize.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "model.hpp"
#include "switchyard/quant.hpp"
#include "writer.hpp"

namespace sy::quant_tool {
namespace {

bool is_float(StorageType t) { return t == StorageType::F32 || t == StorageType::F16 || t == StorageType::BF16; }

// Rows [0, rows) of one tensor from `src` (type `from`) into `dst` (type `to`), split over
// threads in contiguous ranges; a row is independent of the others, so the result does not
// depend on the thread count.
Status convert_rows(StorageType from, StorageType to, int64_t row_len, int64_t rows, const std::byte* src,
                    std::byte* dst, int threads) {
  const uint64_t in_row = *storage_row_bytes(from, static_cast<uint64_t>(row_len));
  const uint64_t out_row = *storage_row_bytes(to, static_cast<uint64_t>(row_len));
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(in_row * static_cast<uint64_t>(rows)));
    return {};
  }
  std::atomic<bool> failed{false};
  std::string why;
  auto work = [&](int64_t first, int64_t last) {
    std::vector<float> buf(static_cast<size_t>(row_len));
    for (int64_t r = first; r < last && !failed; ++r) {
      Status st = dequantize_row(from, src + static_cast<uint64_t>(r) * in_row, buf.data(), row_len);
      if (st) st = quantize_row(to, buf.data(), dst + static_cast<uint64_t>(r) * out_row, row_len);
      if (!st && !failed.exchange(true)) why = st.message();
    }
  };
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, rows));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < n; ++i) pool.emplace_back(work, rows * i / n, rows * (i + 1) / n);
  work(0, rows / n);
  for (auto& t : pool) t.join();
  if (failed) return error::internal(why);
  return {};
}

}  // namespace

Result<QuantizeSummary> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                       const QuantizeOptions& o,
                                       const std::function<void(const TensorReport&)>& progress) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec))
    return error::invalid_argument("the output " + output.string() + " is the input; write to another file");
  auto opened = gguf::Model::open(input);
  if (!opened) return opened.status();
  const gguf::Model& model = **opened;
  const std::vector<TensorDesc> tensors(model.tensors().begin(), model.tensors().end());
  auto chooser = TypeChooser::create(o.recipe, ModelFacts::from(model.metadata(), tensors), tensors, o.types);
  if (!chooser) return chooser.status();

  QuantizeSummary sum;
  std::vector<StorageType> types;
  for (const auto& t : tensors) {
    const StorageType to = chooser->next(t);
    if (to != t.type && !is_float(t.type) && !o.allow_requantize)
      return error::invalid_argument("tensor '" + t.name + "' is already " + std::string(storage_type_name(t.type)) +
                                     "; quantizing it again compounds the error. Start from an F32, F16 or BF16 "
                                     "file, or pass --allow-requantize");
    if (to != t.type && !can_dequantize(t.type))
      return error::unsupported("tensor '" + t.name + "' has type " + std::string(storage_type_name(t.type)) +
                                ", which has no reference dequantizer to read it with");
    if (to != t.type && !can_quantize(to))
      return error::unsupported("no quantizer writes " + std::string(storage_type_name(to)) + " (tensor '" + t.name + "')");
    types.push_back(to);
  }
  sum.fallbacks = chooser->fallbacks();

  gguf::Writer w;
  for (const auto& [key, value] : model.ordered_metadata()) {
    if (key == "general.file_type" || key == "general.quantization_version") continue;
    if (key == "general.alignment") {
      if (auto a = meta_as_int(value))
        if (auto st = w.set_alignment(static_cast<uint32_t>(*a)); !st) return st;
      continue;
    }
    w.add(key, value);
  }
  w.add("general.file_type", MetaValue(o.recipe.file_type));
  if (o.recipe.quantized()) w.add("general.quantization_version", MetaValue(uint32_t{2}));

  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorDesc d = tensors[i];
    const StorageType from = d.type, to = types[i];
    d.type = to;
    d.bytes = tensor_bytes(to, d.shape).value_or(0);
    sum.bytes_in += tensors[i].bytes;
    sum.bytes_out += d.bytes;
    sum.quantized += to != from;
    w.add_tensor(d, [&model, &progress, i, from, to, d, bytes_in = tensors[i].bytes, count = tensors.size(),
                     threads](std::span<std::byte> out) -> Status {
      auto src = model.view(i);
      if (!src) return src.status();
      const int64_t row = d.shape.empty() ? 1 : d.shape[0];
      const int64_t rows = row == 0 ? 0 : static_cast<int64_t>(d.elements() / static_cast<uint64_t>(row));
      if (auto st = convert_rows(from, to, row, rows, src->data(), out.data(), threads); !st) return st;
      if (progress) progress({i, count, d.name, from, to, bytes_in, d.bytes});
      return {};
    });
  }
  sum.tensors = tensors.size();
  if (auto st = w.write(output); !st) return st;
  return sum;
}

}  // namespace sy::quant_tool
