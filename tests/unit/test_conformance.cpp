// The conformance suite's own pieces (runtime/conformance): the case list covers what it
// promises, it is the same every time, and the tolerances of the ops whose CPU reference
// quantizes its activations are checked against an independent exact (f64) evaluation: an
// exact device must pass them, and they must not be far looser than the effect they allow.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "conformance/cases.hpp"
#include "conformance/run_op.hpp"
#include "conformance/suite_internal.hpp"
#include "conformance/tolerance.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::conformance;

namespace {

const std::vector<Case>& all_cases() {
  static const std::vector<Case> c = make_cases();
  return c;
}

bool contiguous(const GraphTensor& t) {
  const auto& info = storage_type_info(t.type);
  int64_t expect = info.block_bytes;
  if (t.ne[0] > 1 && t.nb[0] != expect) return false;
  expect = static_cast<int64_t>(*storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0])));
  for (int d = 1; d < 4; ++d) {
    if (t.ne[d] > 1 && t.nb[d] != expect) return false;
    expect *= t.ne[d];
  }
  return t.offset == 0;
}

// Rows of a tensor of any type as f64, row r = (i1, i2, i3) flattened.
std::vector<double> row(const CaseTensor& ct, int64_t r) {
  const GraphTensor& t = ct.t;
  const int64_t i1 = r % t.ne[1], i2 = (r / t.ne[1]) % t.ne[2], i3 = r / (t.ne[1] * t.ne[2]);
  std::vector<float> f(static_cast<size_t>(t.ne[0]));
  const auto* p = ct.bytes.data() + t.offset + static_cast<size_t>(i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
  REQUIRE(dequantize_row(t.type, p, f.data(), t.ne[0]).is_ok());
  return {f.begin(), f.end()};
}

std::vector<int32_t> ints(const CaseTensor& ct) {
  std::vector<int32_t> v(static_cast<size_t>(ct.t.elements()));
  std::memcpy(v.data(), ct.bytes.data(), v.size() * 4);
  return v;
}

const CaseTensor& src(const Case& c, int s) { return c.tensors[static_cast<size_t>(c.node.src[s])]; }

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// matmul and matmul_id in f64 on the dequantized weights and the f32 activations as given.
std::vector<double> exact_matmul(const Case& c) {
  const CaseTensor& w = src(c, 0);
  const CaseTensor& x = src(c, 1);
  std::vector<double> y;
  if (c.op == OpKind::matmul) {
    for (int64_t m = 0; m < x.t.ne[1] * x.t.ne[2] * x.t.ne[3]; ++m) {
      const auto xr = row(x, m);
      for (int64_t r = 0; r < w.t.ne[1]; ++r) y.push_back(dot(row(w, r), xr));
    }
    return y;
  }
  const auto ids = ints(src(c, 2));
  const int64_t used = src(c, 2).t.ne[0], tokens = src(c, 2).t.ne[1];
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < used; ++j) {
      const auto xr = row(x, (x.t.ne[1] == 1 ? 0 : j) + t * x.t.ne[1]);
      const int32_t e = ids[static_cast<size_t>(j + t * used)];
      for (int64_t r = 0; r < w.t.ne[1]; ++r) y.push_back(dot(row(w, r + e * w.t.ne[1]), xr));
    }
  return y;
}

// Paged causal attention in f64 with a full softmax, from the op table's definition.
std::vector<double> exact_attention(const Case& c) {
  const CaseTensor& q = src(c, 0);
  const CaseTensor& k = src(c, 1);
  const CaseTensor& v = src(c, 2);
  const auto pos = ints(src(c, 3)), seq = ints(src(c, 4)), tables = ints(src(c, 5));
  const int64_t blocks = src(c, 5).t.ne[0], block = c.node.i[0];
  const int64_t heads = q.t.ne[1], kvh = k.t.ne[1], tokens = q.t.ne[2], dv = v.t.ne[0];
  std::vector<double> out(static_cast<size_t>(dv * heads * tokens));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t g = h / (heads / kvh);
      const auto qr = row(q, h + t * heads);
      std::vector<double> s;
      std::vector<int64_t> cells;
      for (int64_t p = 0; p <= pos[static_cast<size_t>(t)]; ++p) {
        const int64_t cell = tables[static_cast<size_t>(seq[static_cast<size_t>(t)] * blocks + p / block)] * block + p % block;
        cells.push_back(cell);
        s.push_back(dot(qr, row(k, g + cell * kvh)) * c.node.f[0]);
      }
      const double mx = *std::max_element(s.begin(), s.end());
      double sum = 0;
      for (auto& e : s) sum += e = std::exp(e - mx);
      for (size_t j = 0; j < s.size(); ++j) {
        const auto vr = row(v, g + cells[j] * kvh);
        for (int64_t i = 0; i < dv; ++i) out[static_cast<size_t>(i + dv * (h + heads * t))] += s[j] / sum * vr[static_cast<size_t>(i)];
      }
    }
  return out;
}

}  // namespace

TEST_CASE("conformance cases: every op, in every storage type it takes", "[conformance]") {
  std::map<OpKind, std::set<StorageType>> seen;
  std::set<std::string> names;
  for (const Case& c : all_cases()) {
    seen[c.op].insert(c.type);
    CHECK(names.insert(c.name()).second);  // names identify cases in reports
    CHECK(tolerance(c).why.size() > 10);
  }
  for (const OpKind op : all_ops()) {
    INFO(op_name(op));
    const auto want = case_types(op);
    CHECK(seen[op] == std::set<StorageType>(want.begin(), want.end()));
  }
  CHECK(seen[OpKind::matmul].size() == 15);
}

TEST_CASE("conformance cases: odd sizes, one token and several, non-contiguous sources", "[conformance]") {
  std::map<OpKind, bool> one, several, strided, odd;
  for (const Case& c : all_cases()) {
    // One token: some tensor of the case is a single row (the token's ids, positions,
    // activations or output); several: the output has more than one row.
    for (const auto& ct : c.tensors) one[c.op] = one[c.op] || ct.t.rows() == 1;
    several[c.op] = several[c.op] || c.tensors[static_cast<size_t>(c.node.dst)].t.rows() > 1;
    for (int s = 0; s < kMaxSources && c.node.src[s] >= 0; ++s) {
      strided[c.op] = strided[c.op] || !contiguous(src(c, s).t);
      odd[c.op] = odd[c.op] || src(c, s).t.ne[0] % 32 != 0;
    }
  }
  for (const OpKind op : all_ops()) {
    INFO(op_name(op));
    CHECK(several[op]);
    // Every op but the weight-bound ones reads any layout on the CPU, so gets such a source.
    if (op != OpKind::matmul && op != OpKind::matmul_id && op != OpKind::get_rows && op != OpKind::expert_weights)
      CHECK(strided[op]);
  }
  for (const OpKind op : {OpKind::matmul, OpKind::matmul_id, OpKind::get_rows, OpKind::rms_norm, OpKind::rope,
                          OpKind::attention, OpKind::delta_net, OpKind::conv1d, OpKind::set_rows, OpKind::add}) {
    INFO(op_name(op));
    CHECK(one[op]);
  }
  for (const OpKind op : {OpKind::matmul, OpKind::get_rows, OpKind::rms_norm, OpKind::softmax, OpKind::attention,
                          OpKind::conv1d, OpKind::add})
    CHECK(odd[op]);
}

TEST_CASE("conformance cases: the same bytes on every run, filters select", "[conformance]") {
  const auto again = make_cases();
  REQUIRE(again.size() == all_cases().size());
  for (size_t i = 0; i < again.size(); ++i) {
    REQUIRE(again[i].tensors.size() == all_cases()[i].tensors.size());
    for (size_t t = 0; t < again[i].tensors.size(); ++t) CHECK(again[i].tensors[t].bytes == all_cases()[i].tensors[t].bytes);
  }
  CaseFilter f;
  f.ops = {OpKind::matmul, OpKind::rope};
  f.types = {StorageType::Q4_K, StorageType::F32};
  const auto some = make_cases(f);
  CHECK(some.size() == 4 + 4 + 6);  // matmul in two types x 4 shapes, every rope case (F32)
  for (const Case& c : some) CHECK((c.op == OpKind::matmul || c.op == OpKind::rope));
}

TEST_CASE("conformance tolerance: the relative error, and NaN as an unwritten output", "[conformance]") {
  CHECK(measure({1, 2, 3}, {1, 2, 3}).rel == 0);
  const Diff d = measure({1, 2.5, -4}, {1, 2, -5});
  CHECK(d.rel == Approx(0.2));
  CHECK(d.index == 2);
  CHECK(std::isinf(measure({1, NAN}, {1, 2}).rel));
  CHECK(std::isinf(measure({1, 2}, {1, NAN}).rel));
  CHECK(std::isinf(measure({1}, {1, 2}).rel));
  CHECK(measure({0.5}, {0}).rel == 0.5);  // an all-zero reference: the absolute difference
}

TEST_CASE("conformance tolerance: an exact device passes matmul and attention, and the bounds are not loose",
          "[conformance]") {
  registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto cpu = open_scalar_cpu(reg);
  REQUIRE(cpu.has_value());
  std::map<StorageType, double> worst_matmul, worst_attention;
  for (const Case& c : all_cases()) {
    if (c.op != OpKind::matmul && c.op != OpKind::matmul_id && c.op != OpKind::attention) continue;
    INFO(c.name());
    auto ref = run_case(*cpu->device, c);
    REQUIRE(ref.has_value());
    const auto exact = c.op == OpKind::attention ? exact_attention(c) : exact_matmul(c);
    const double e = measure(exact, ref->values.at(0)).rel;
    CHECK(e <= tolerance(c).max_rel);
    auto& w = (c.op == OpKind::attention ? worst_attention : worst_matmul)[c.type];
    w = std::max(w, e);
  }
  // Where the CPU rounds activations (quantized, BF16 weights; quantized, BF16 caches), the
  // bound allows at most ~10x the difference that rounding makes on these cases.
  for (const auto& [type, e] : worst_matmul) {
    INFO("matmul " << storage_type_name(type) << ": exact vs scalar CPU " << e);
    Case probe;
    probe.op = OpKind::matmul;
    probe.type = type;
    if (type != StorageType::F32 && type != StorageType::F16) CHECK(e >= tolerance(probe).max_rel / 10);
  }
  for (const auto& [type, e] : worst_attention) {
    INFO("attention " << storage_type_name(type) << ": exact vs scalar CPU " << e);
    Case probe;
    probe.op = OpKind::attention;
    probe.type = type;
    if (type != StorageType::F32 && type != StorageType::F16) CHECK(e >= tolerance(probe).max_rel / 10);
  }
}
