#include "quantize/imatrix.hpp"

#include <cmath>
#include <cstring>

#include "model.hpp"
#include "writer.hpp"

namespace sy::quant_tool {

std::vector<float> ImatrixEntry::importance(int64_t mat) const {
  if (mat < 0 || mat >= n_mat() || counts[static_cast<size_t>(mat)] <= 0) return {};
  std::vector<float> out(static_cast<size_t>(cols));
  const double n = counts[static_cast<size_t>(mat)];
  for (int64_t j = 0; j < cols; ++j)
    out[static_cast<size_t>(j)] = static_cast<float>(sum2[static_cast<size_t>(mat * cols + j)] / n);
  return out;
}

Status ImatrixCollector::add(const engine::LinearInput& in) {
  const std::string name(in.weight);
  if (!(name.starts_with("blk.") || (output_ && name == "output.weight"))) return Status::ok();
  if (in.experts.empty() && in.rows < 16) return Status::ok();
  const int64_t n_mat = in.experts.empty() ? 1 : in.n_experts;
  ImatrixEntry& e = m_.entries[name];
  if (e.counts.empty()) {
    e.cols = in.cols;
    e.sum2.assign(static_cast<size_t>(n_mat * in.cols), 0.0);
    e.counts.assign(static_cast<size_t>(n_mat), 0.0);
  } else if (e.cols != in.cols || e.n_mat() != n_mat) {
    return error::internal("the input of " + name + " changed shape between steps");
  }
  for (int64_t r = 0; r < in.rows; ++r) {
    const int64_t mat = in.experts.empty() ? 0 : in.experts[static_cast<size_t>(r)];
    if (mat < 0 || mat >= n_mat) return error::internal(name + ": expert id " + std::to_string(mat) + " out of range");
    const float* x = in.x.data() + r * in.cols;
    double* acc = e.sum2.data() + mat * in.cols;
    for (int64_t j = 0; j < in.cols; ++j) {
      if (!std::isfinite(x[j]))
        return error::invalid_argument("the input of " + name + " holds a non-finite value; the model or the text "
                                       "overflows, so an importance matrix of it would be meaningless");
      acc[j] += static_cast<double>(x[j]) * x[j];
    }
    e.counts[static_cast<size_t>(mat)] += 1;
  }
  return Status::ok();
}

Status write_imatrix(const Imatrix& m, const std::filesystem::path& path) {
  gguf::Writer w;
  w.add("general.type", MetaValue(std::string("imatrix")));
  MetaArray ds{MetaType::string, {}};
  for (const auto& d : m.datasets) ds.items.emplace_back(d);
  w.add("imatrix.datasets", MetaValue(std::move(ds)));
  w.add("imatrix.chunk_count", MetaValue(static_cast<uint32_t>(m.chunk_count)));
  w.add("imatrix.chunk_size", MetaValue(static_cast<uint32_t>(m.chunk_size)));
  // Kept alive until write(): the writer holds the tensors' bytes by reference.
  std::vector<std::vector<float>> data;
  data.reserve(m.entries.size() * 2);
  for (const auto& [name, e] : m.entries) {  // sorted by name, as llama-imatrix writes them
    data.emplace_back(e.sum2.begin(), e.sum2.end());
    TensorDesc s;
    s.name = name + ".in_sum2";
    s.type = StorageType::F32;
    s.shape = {e.cols, e.n_mat()};
    s.bytes = data.back().size() * sizeof(float);
    w.add_tensor(s, std::as_bytes(std::span<const float>(data.back())));
    data.emplace_back(e.counts.begin(), e.counts.end());
    TensorDesc c;
    c.name = name + ".counts";
    c.type = StorageType::F32;
    c.shape = {1, e.n_mat()};
    c.bytes = data.back().size() * sizeof(float);
    w.add_tensor(c, std::as_bytes(std::span<const float>(data.back())));
  }
  return w.write(path);
}

Result<Imatrix> read_imatrix(const std::filesystem::path& path) {
  auto opened = gguf::Model::open(path);
  if (!opened) return opened.status();
  const gguf::Model& f = **opened;
  const std::string where = path.string();
  if (f.metadata().get_string("general.type") != "imatrix")
    return error::invalid_argument(where + " is not an importance matrix (general.type is not 'imatrix'); make one "
                                   "with `switchyard imatrix` or llama-imatrix (llama.cpp's legacy .dat files are not read)");
  Imatrix m;
  m.chunk_count = f.metadata().get_int("imatrix.chunk_count").value_or(0);
  m.chunk_size = f.metadata().get_int("imatrix.chunk_size").value_or(0);
  if (const auto* ds = f.metadata().find("imatrix.datasets"))
    if (const auto* a = std::get_if<MetaArray>(ds))
      for (const auto& v : a->items)
        if (const auto* s = std::get_if<std::string>(&v)) m.datasets.push_back(*s);
  const auto ts = f.tensors();
  auto floats = [&](size_t i) -> Result<std::vector<float>> {
    if (ts[i].type != StorageType::F32) return error::corrupt(where + ": tensor " + ts[i].name + " is not F32");
    auto v = f.view(i);
    if (!v) return v.status();
    std::vector<float> out(v->size() / sizeof(float));
    std::memcpy(out.data(), v->data(), out.size() * sizeof(float));
    return out;
  };
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string& n = ts[i].name;
    static constexpr std::string_view kSum = ".in_sum2";
    if (!n.ends_with(kSum)) continue;
    const std::string name = n.substr(0, n.size() - kSum.size());
    size_t c = ts.size();
    for (size_t j = 0; j < ts.size(); ++j)
      if (ts[j].name == name + ".counts") c = j;
    if (c == ts.size()) return error::corrupt(where + ": " + n + " has no " + name + ".counts beside it");
    auto sums = floats(i);
    if (!sums) return sums.status();
    auto counts = floats(c);
    if (!counts) return counts.status();
    if (counts->empty() || sums->size() % counts->size() != 0)
      return error::corrupt(where + ": " + name + " has " + std::to_string(sums->size()) + " sums for " +
                            std::to_string(counts->size()) + " matrices");
    ImatrixEntry e;
    e.cols = static_cast<int64_t>(sums->size() / counts->size());
    e.sum2.assign(sums->begin(), sums->end());
    e.counts.assign(counts->begin(), counts->end());
    m.entries[name] = std::move(e);
  }
  if (m.entries.empty()) return error::invalid_argument(where + " holds no importance data (no *.in_sum2 tensors)");
  return m;
}

}  // namespace sy::quant_tool
