#include "conformance/case_builder.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "switchyard/quant.hpp"

namespace sy::conformance::detail {
namespace {

constexpr int64_t kPad = 5;     // extra elements per row of a strided view
constexpr int64_t kOffset = 3;  // elements before the first one of a non-contiguous view

void contiguous_strides(GraphTensor& t) {
  const auto& info = storage_type_info(t.type);
  t.nb[0] = info.block_bytes;
  t.nb[1] = static_cast<int64_t>(storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0])).value_or(0));
  for (int d = 2; d < 4; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
}

GraphTensor shaped(StorageType type, const Dims& ne) {
  if (ne.size() < 1 || ne.size() > 4) throw std::logic_error("conformance case: a tensor has 1 to 4 dimensions");
  GraphTensor t;
  t.type = type;
  int d = 0;
  for (int64_t n : ne) t.ne[d++] = n;
  contiguous_strides(t);
  return t;
}

int64_t elements(const GraphTensor& t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }

}  // namespace

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "";
    case Layout::strided: return "strided";
    case Layout::permuted: return "permuted";
    case Layout::transposed: return "transposed";
  }
  return "?";
}

std::string type_name(StorageType t) { return std::string(storage_type_name(t)); }

Builder::Builder(OpKind op, StorageType type, std::string types, std::string shape)
    : rng_(synth::name_hash(std::string(op_name(op)) + "|" + types + "|" + shape)) {
  c_.op = op;
  c_.type = type;
  c_.types = std::move(types);
  c_.shape = std::move(shape);
}

int32_t Builder::add(CaseTensor t) {
  c_.tensors.push_back(std::move(t));
  return static_cast<int32_t>(c_.tensors.size() - 1);
}

int32_t Builder::f32(const Dims& ne, Layout layout, double sigma, const std::string& role,
                     double mean) {
  CaseTensor ct;
  ct.role = role;
  ct.t = shaped(StorageType::F32, ne);
  const int64_t* n = ct.t.ne;
  // The memory the view lives in, as a contiguous tensor of its own shape `s`.
  int64_t s[4] = {n[0], n[1], n[2], n[3]};
  int64_t offset = kOffset;
  switch (layout) {
    case Layout::contiguous: offset = 0; break;
    case Layout::strided: s[0] = n[0] + kPad; break;
    case Layout::permuted: std::swap(s[1], s[2]); break;
    case Layout::transposed: std::swap(s[0], s[1]); break;
  }
  const int64_t sb[4] = {4, 4 * s[0], 4 * s[0] * s[1], 4 * s[0] * s[1] * s[2]};
  switch (layout) {
    case Layout::contiguous:
    case Layout::strided: std::copy(sb, sb + 4, ct.t.nb); break;
    case Layout::permuted: ct.t.nb[0] = sb[0], ct.t.nb[1] = sb[2], ct.t.nb[2] = sb[1], ct.t.nb[3] = sb[3]; break;
    case Layout::transposed: ct.t.nb[0] = sb[1], ct.t.nb[1] = sb[0], ct.t.nb[2] = sb[2], ct.t.nb[3] = sb[3]; break;
  }
  ct.t.offset = static_cast<size_t>(offset * 4);
  const int64_t total = offset + s[0] * s[1] * s[2] * s[3];
  std::vector<float> v(static_cast<size_t>(total));
  for (auto& x : v) x = static_cast<float>(mean + sigma * rng_.normal());
  ct.bytes.resize(v.size() * 4);
  std::memcpy(ct.bytes.data(), v.data(), ct.bytes.size());
  return add(std::move(ct));
}

int32_t Builder::f32_values(const std::vector<float>& v, const Dims& ne, const std::string& role) {
  CaseTensor ct;
  ct.role = role;
  ct.t = shaped(StorageType::F32, ne);
  if (static_cast<int64_t>(v.size()) != elements(ct.t)) throw std::logic_error("conformance case: wrong value count");
  ct.bytes.resize(v.size() * 4);
  std::memcpy(ct.bytes.data(), v.data(), ct.bytes.size());
  return add(std::move(ct));
}

int32_t Builder::typed(StorageType type, const Dims& ne, double sigma, const std::string& role) {
  CaseTensor ct;
  ct.role = role;
  ct.t = shaped(type, ne);
  const int64_t k = ct.t.ne[0], rows = elements(ct.t) / k;
  const auto row_bytes = static_cast<size_t>(ct.t.nb[1]);
  ct.bytes.resize(row_bytes * static_cast<size_t>(rows));
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& x : row) x = static_cast<float>(sigma * rng_.normal());
    if (auto st = quantize_row(type, row.data(), ct.bytes.data() + static_cast<size_t>(r) * row_bytes, k); !st)
      throw std::logic_error("conformance case: " + st.message());
  }
  return add(std::move(ct));
}

int32_t Builder::ints(const std::vector<int32_t>& v, const Dims& ne, const std::string& role) {
  CaseTensor ct;
  ct.role = role;
  ct.t = shaped(StorageType::I32, ne);
  if (static_cast<int64_t>(v.size()) != elements(ct.t)) throw std::logic_error("conformance case: wrong id count");
  ct.bytes.resize(v.size() * 4);
  std::memcpy(ct.bytes.data(), v.data(), ct.bytes.size());
  return add(std::move(ct));
}

int32_t Builder::dst(StorageType type, const Dims& ne) {
  CaseTensor ct;
  ct.role = "dst";
  ct.t = shaped(type, ne);
  ct.output = true;
  ct.bytes.assign(static_cast<size_t>(ct.t.nb[3] * ct.t.ne[3]), std::byte{0xff});
  return add(std::move(ct));
}

void Builder::mark_output(int32_t t) { c_.tensors[static_cast<size_t>(t)].output = true; }

Case Builder::finish(std::initializer_list<int32_t> src, int32_t dst, std::initializer_list<int32_t> i,
                     std::initializer_list<float> f) {
  c_.node.op = c_.op;
  c_.node.dst = dst;
  int s = 0;
  for (int32_t v : src) c_.node.src[s++] = v;
  s = 0;
  for (int32_t v : i) c_.node.i[s++] = v;
  s = 0;
  for (float v : f) c_.node.f[s++] = v;
  c_.tensors[static_cast<size_t>(dst)].output = true;
  return std::move(c_);
}

std::vector<int32_t> distinct_ids(synth::NormalRng& rng, int64_t k, int64_t n, int64_t tokens) {
  std::vector<int32_t> out;
  std::vector<int32_t> all(static_cast<size_t>(n));
  for (int64_t t = 0; t < tokens; ++t) {
    std::iota(all.begin(), all.end(), 0);
    for (int64_t j = 0; j < k; ++j) {  // a partial Fisher-Yates shuffle
      const auto pick = static_cast<size_t>(j + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(n - j)));
      std::swap(all[static_cast<size_t>(j)], all[pick]);
      out.push_back(all[static_cast<size_t>(j)]);
    }
  }
  return out;
}

}  // namespace sy::conformance::detail
