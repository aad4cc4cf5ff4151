// rope in each mode the architectures use: normal (llama), neox (qwen), neox over a part
// of the head (qwen35moe), multi-section with distinct position components, frequency
// factors with linear position scaling; strided and permuted inputs (the gated query is a
// strided view of its projection). Positions go up to ~600, not just 0..n.
#include <string>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

struct Rope {
  const char* what;
  int32_t mode;  // 0 normal, 1 neox, 2 multi
  int64_t head_dim, heads, tokens;
  int32_t n_dims;
  int32_t sections[4];
  float base, scale;
  bool factors;
  Layout layout;
};

void rope(std::vector<Case>& out, const Rope& r) {
  std::string shape = std::string(r.what) + ": head " + std::to_string(r.head_dim) + ", heads " +
                      std::to_string(r.heads) + ", tokens " + std::to_string(r.tokens) + ", rotated " +
                      std::to_string(r.n_dims);
  if (r.layout != Layout::contiguous) shape += std::string("; x ") + layout_name(r.layout);
  Builder b(OpKind::rope, StorageType::F32, "F32", shape);
  const int32_t x = b.f32({r.head_dim, r.heads, r.tokens}, r.layout);
  const int64_t components = r.mode == 2 ? 4 : 1;
  std::vector<int32_t> pos(static_cast<size_t>(components * r.tokens));
  for (auto& p : pos) p = static_cast<int32_t>(b.rng().next() % 600);
  const int32_t positions = b.ints(pos, {components * r.tokens}, "positions");
  const int32_t d = b.dst(StorageType::F32, {r.head_dim, r.heads, r.tokens});
  const std::initializer_list<int32_t> ip{r.mode, r.n_dims, r.sections[0], r.sections[1], r.sections[2], r.sections[3]};
  if (r.factors) {
    std::vector<float> ff(static_cast<size_t>(r.n_dims / 2));
    for (auto& f : ff) f = static_cast<float>(1.0 + 7.0 * b.rng().uniform());
    const int32_t factors = b.f32_values(ff, {r.n_dims / 2}, "factors");
    out.push_back(b.finish({x, positions, factors}, d, ip, {r.base, r.scale}));
  } else {
    out.push_back(b.finish({x, positions}, d, ip, {r.base, r.scale}));
  }
}

}  // namespace

void add_rope_cases(std::vector<Case>& out) {
  const Rope cases[] = {
      {"normal", 0, 16, 3, 5, 16, {0, 0, 0, 0}, 1e4f, 1.0f, false, Layout::contiguous},
      {"neox", 1, 32, 2, 1, 32, {0, 0, 0, 0}, 1e6f, 1.0f, false, Layout::contiguous},
      {"neox, partial", 1, 64, 2, 4, 16, {0, 0, 0, 0}, 1e7f, 1.0f, false, Layout::strided},
      {"multi-section", 2, 64, 2, 3, 16, {3, 3, 2, 0}, 1e7f, 1.0f, false, Layout::contiguous},
      {"normal, factors, scale 0.25", 0, 32, 2, 3, 32, {0, 0, 0, 0}, 5e5f, 0.25f, true, Layout::contiguous},
      {"neox, odd heads", 1, 48, 5, 3, 48, {0, 0, 0, 0}, 1e4f, 1.0f, false, Layout::permuted},
  };
  for (const Rope& r : cases) rope(out, r);
}

}  // namespace sy::conformance::detail
