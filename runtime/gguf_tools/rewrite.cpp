#include "gguf_tools/rewrite.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "switchyard/quant.hpp"

namespace sy::gguf_tools {
namespace {

std::string type_name(StorageType t) { return std::string(storage_type_name(t)); }

// Rows [0, rows) of one tensor from `from` into `to`, in contiguous ranges per thread.
Status convert_rows(StorageType from, const Target& t, int64_t row_len, int64_t rows, const std::byte* src,
                    std::byte* dst, int threads) {
  const uint64_t in_row = *storage_row_bytes(from, static_cast<uint64_t>(row_len));
  const uint64_t out_row = *storage_row_bytes(t.type, static_cast<uint64_t>(row_len));
  if (from == t.type && t.column_order.empty() && t.importance.empty()) {
    std::memcpy(dst, src, static_cast<size_t>(in_row * static_cast<uint64_t>(rows)));
    return {};
  }
  std::atomic<bool> failed{false};
  std::mutex why_mutex;
  std::string why;
  auto work = [&](int64_t first, int64_t last) {
    std::vector<float> buf(static_cast<size_t>(row_len)), ordered;
    if (!t.column_order.empty()) ordered.resize(buf.size());
    for (int64_t r = first; r < last && !failed; ++r) {
      Status st = dequantize_row(from, src + static_cast<uint64_t>(r) * in_row, buf.data(), row_len);
      float* row = buf.data();
      if (st && !t.column_order.empty()) {
        for (size_t p = 0; p < buf.size(); ++p) ordered[static_cast<size_t>(t.column_order[p])] = buf[p];
        row = ordered.data();
      }
      if (st) {
        std::byte* out = dst + static_cast<uint64_t>(r) * out_row;
        if (t.importance.empty()) {
          st = quantize_row(t.type, row, out, row_len);
        } else {
          const auto n_mat = static_cast<int64_t>(t.importance.size()) / row_len;
          const int64_t mat = r / (rows / n_mat);
          st = quantize_row_weighted(t.type, row, out, row_len, t.importance.data() + mat * row_len);
        }
      }
      if (!st && !failed.exchange(true)) {
        std::lock_guard lock(why_mutex);
        why = st.message();
      }
    }
  };
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, rows));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < n; ++i) pool.emplace_back(work, rows * i / n, rows * (i + 1) / n);
  work(0, rows / n);
  for (auto& th : pool) th.join();
  if (failed) return error::internal(why);
  return {};
}

int thread_count(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

TensorDesc target_desc(const Input& in, size_t index, const Target& t) {
  TensorDesc d = in.source().tensors()[index];
  d.type = t.type;
  d.bytes = tensor_bytes(t.type, d.shape).value_or(0);
  return d;
}

Status check_targets(const Input& in, std::span<const Target> targets) {
  const auto tensors = in.source().tensors();
  if (targets.size() != tensors.size()) return error::internal("one target per source tensor is needed");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Target& t = targets[i];
    const TensorDesc& s = tensors[i];
    if (!t.keep) continue;
    const auto* info = storage_type_info(static_cast<uint32_t>(t.type));
    if (!info || !info->in_gguf)
      return error::unsupported("tensor '" + s.name + "' would be written as " + type_name(t.type) +
                                ", which GGUF cannot store");
    const bool changes = t.type != s.type || !t.column_order.empty() || !t.importance.empty();
    if (changes && !can_dequantize(s.type))
      return error::unsupported("tensor '" + s.name + "' has type " + type_name(s.type) +
                                ", which has no reference dequantizer to read it with");
    if (changes && !can_quantize(t.type))
      return error::unsupported("no quantizer writes " + type_name(t.type) + " (tensor '" + s.name + "')");
    const int64_t row = s.shape.empty() ? 1 : s.shape[0];
    if (!t.column_order.empty() && static_cast<int64_t>(t.column_order.size()) != row)
      return error::corrupt("tensor '" + s.name + "' has " + std::to_string(row) + " columns but its input order has " +
                            std::to_string(t.column_order.size()) + " entries");
    std::vector<bool> seen(t.column_order.size());
    for (int32_t c : t.column_order) {
      if (c < 0 || c >= row || seen[static_cast<size_t>(c)])
        return error::corrupt("tensor '" + s.name + "': its input order names column " + std::to_string(c) +
                              (c < 0 || c >= row ? ", outside its " + std::to_string(row) + " columns" : " twice"));
      seen[static_cast<size_t>(c)] = true;
    }
    if (!t.importance.empty()) {
      const int64_t rows = row == 0 ? 0 : static_cast<int64_t>(s.elements() / static_cast<uint64_t>(row));
      const int64_t n_mat = static_cast<int64_t>(t.importance.size()) / std::max<int64_t>(row, 1);
      if (!can_quantize_weighted(t.type))
        return error::unsupported("no weighted quantizer writes " + type_name(t.type) + " (tensor '" + s.name +
                                  "'); quantize it without --imatrix");
      if (n_mat < 1 || static_cast<int64_t>(t.importance.size()) != n_mat * row || rows % n_mat != 0)
        return error::invalid_argument("tensor '" + s.name + "' has rows of " + std::to_string(row) + " values in " +
                                       std::to_string(rows) + " rows, which its importance data (" +
                                       std::to_string(t.importance.size()) + " values) does not divide into matrices");
    }
    if (!tensor_bytes(t.type, s.shape))
      return error::invalid_argument("tensor '" + s.name + "' cannot be written as " + type_name(t.type) + ": its rows of " +
                                     std::to_string(row) + " are not whole blocks of that type");
  }
  return Status::ok();
}

bool is_reader_tensor(const std::string& name) {
  return name.ends_with(".input_order") || name.ends_with(".input_scale");
}

Status fold_reader_tensors(const Input& in, std::vector<Target>& targets, std::vector<std::string>& notes) {
  const auto tensors = in.source().tensors();
  int64_t scales = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string& name = tensors[i].name;
    if (name.ends_with(".input_scale")) {
      targets[i].keep = false;
      ++scales;
      continue;
    }
    if (!name.ends_with(".input_order")) continue;
    targets[i].keep = false;
    const std::string weight = name.substr(0, name.size() - std::string(".input_order").size()) + ".weight";
    auto w = std::find_if(tensors.begin(), tensors.end(), [&](const TensorDesc& d) { return d.name == weight; });
    if (w == tensors.end()) return error::corrupt("'" + name + "' has no tensor '" + weight + "' to reorder");
    if (tensors[i].type != StorageType::I32) return error::corrupt("'" + name + "' is not I32");
    std::vector<std::byte> scratch;
    auto bytes = in.bytes(i, scratch);
    if (!bytes) return bytes.status();
    std::vector<int32_t> order(bytes->size() / sizeof(int32_t));
    std::memcpy(order.data(), bytes->data(), order.size() * sizeof(int32_t));
    targets[static_cast<size_t>(w - tensors.begin())].column_order = std::move(order);
  }
  if (scales > 0)
    notes.push_back(std::to_string(scales) + " static FP8 activation scales (.input_scale) are not written: GGUF has "
                    "no place for them, and the weights do not need them");
  return Status::ok();
}

Status add_metadata(gguf::Writer& w, const MetaEntries& md) {
  for (const auto& [key, value] : md) {
    if (key == "general.alignment") {
      if (auto a = meta_as_int(value))
        if (auto st = w.set_alignment(static_cast<uint32_t>(*a)); !st) return st;
      continue;
    }
    w.add(key, value);
  }
  return Status::ok();
}

void add_tensor(gguf::Writer& w, const Input& in, size_t index, const Target& t, int threads, std::function<void()> report) {
  const TensorDesc d = target_desc(in, index, t);
  const StorageType from = in.source().tensors()[index].type;
  w.add_tensor(d, [&in, index, t, d, from, threads = thread_count(threads),
                   report = std::move(report)](std::span<std::byte> out) -> Status {
    std::vector<std::byte> scratch;
    auto src = in.bytes(index, scratch);
    if (!src) return src.status();
    const int64_t row = d.shape.empty() ? 1 : d.shape[0];
    const int64_t rows = row == 0 ? 0 : static_cast<int64_t>(d.elements() / static_cast<uint64_t>(row));
    if (auto st = convert_rows(from, t, row, rows, src->data(), out.data(), threads); !st)
      return Status(st.code(), "tensor '" + d.name + "': " + st.message());
    if (report) report();
    return {};
  });
}

Status write_gguf(const Input& in, const MetaEntries& md, std::span<const Target> targets,
                  const std::filesystem::path& output, int threads, const Progress& progress) {
  if (auto st = check_targets(in, targets); !st) return st;
  gguf::Writer w;
  if (auto st = add_metadata(w, md); !st) return st;
  const auto tensors = in.source().tensors();
  const size_t count = static_cast<size_t>(std::count_if(targets.begin(), targets.end(), [](const Target& t) { return t.keep; }));
  size_t written = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!targets[i].keep) continue;
    std::function<void()> report;
    if (progress)
      report = [&progress, &in, &targets, i, n = written++, count] {
        const TensorDesc& s = in.source().tensors()[i];
        progress({n, count, s.name, s.type, targets[i].type, s.bytes, target_desc(in, i, targets[i]).bytes});
      };
    add_tensor(w, in, i, targets[i], threads, std::move(report));
  }
  return w.write(output);
}

}  // namespace sy::gguf_tools
