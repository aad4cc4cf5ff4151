// Data movement and routing: copy (any layout, and conversions to and from the cache
// types), concat along each dimension, top_k and argsort (exact ids), expert_weights,
// moe_combine and gather_cols.
#include <string>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

std::string dims(const Dims& ne) {
  std::string s;
  for (int64_t n : ne) s += (s.empty() ? "" : "x") + std::to_string(n);
  return s;
}

std::string with_layout(const Dims& ne, Layout l, const char* what = "x") {
  return dims(ne) + (l == Layout::contiguous ? "" : std::string("; ") + what + " " + layout_name(l));
}

void copies(std::vector<Case>& out) {
  struct S {
    Dims ne;
    Layout l;
  };
  const S plain[] = {{{24, 10}, Layout::transposed}, {{16, 3, 5}, Layout::permuted}, {{37, 4}, Layout::strided}};
  for (const S& s : plain) {
    Builder b(OpKind::copy, StorageType::F32, "F32 -> F32", with_layout(s.ne, s.l));
    const int32_t x = b.f32(s.ne, s.l);
    out.push_back(b.finish({x}, b.dst(StorageType::F32, s.ne)));
  }
  {
    Builder b(OpKind::copy, StorageType::F32, "F32 -> F32", "24x10 into 240");  // the same bytes, reshaped
    const int32_t x = b.f32({24, 10});
    out.push_back(b.finish({x}, b.dst(StorageType::F32, {240})));
  }
  for (const StorageType t : case_types(OpKind::copy)) {
    if (t == StorageType::F32) continue;
    {
      Builder b(OpKind::copy, t, "F32 -> " + type_name(t), with_layout({64, 3}, Layout::strided));
      const int32_t x = b.f32({64, 3}, Layout::strided);
      out.push_back(b.finish({x}, b.dst(t, {64, 3})));
    }
    {
      Builder b(OpKind::copy, t, type_name(t) + " -> F32", dims({64, 3}));
      const int32_t x = b.typed(t, {64, 3}, 1.0, "x");
      out.push_back(b.finish({x}, b.dst(StorageType::F32, {64, 3})));
    }
  }
}

void concats(std::vector<Case>& out) {
  struct S {
    Dims a, b;
    Layout la;
    int dim;
  };
  const S cases[] = {
      {{10, 3}, {7, 3}, Layout::contiguous, 0},
      {{8, 2, 3}, {8, 4, 3}, Layout::permuted, 1},
      {{6, 2, 2}, {6, 2, 3}, Layout::strided, 2},
  };
  for (const S& s : cases) {
    Dims y = s.a;
    y[static_cast<size_t>(s.dim)] += s.b[static_cast<size_t>(s.dim)];
    Builder b(OpKind::concat, StorageType::F32, "F32",
              with_layout(s.a, s.la, "a") + " and " + dims(s.b) + ", dimension " + std::to_string(s.dim));
    const int32_t x = b.f32(s.a, s.la, 1.0, "a");
    const int32_t z = b.f32(s.b, Layout::contiguous, 1.0, "b");
    out.push_back(b.finish({x, z}, b.dst(StorageType::F32, y), {s.dim}));
  }
}

void selections(std::vector<Case>& out) {
  struct S {
    Dims ne;
    Layout l;
    int32_t k;
  };
  const S top[] = {{{37, 5}, Layout::contiguous, 4},
                   {{8, 3}, Layout::contiguous, 2},
                   {{20, 3, 2}, Layout::permuted, 5},
                   {{64}, Layout::contiguous, 8},
                   {{13, 2}, Layout::strided, 13}};
  for (const S& s : top) {
    Builder b(OpKind::top_k, StorageType::F32, "F32", with_layout(s.ne, s.l) + ", k " + std::to_string(s.k));
    const int32_t x = b.f32(s.ne, s.l);
    Dims d = s.ne;
    d[0] = s.k;
    out.push_back(b.finish({x}, b.dst(StorageType::I32, d), {s.k}));
  }
  const S sorts[] = {{{37, 3}, Layout::contiguous, 0}, {{8}, Layout::contiguous, 0}, {{16, 4}, Layout::strided, 0}};
  for (const S& s : sorts) {
    Builder b(OpKind::argsort, StorageType::F32, "F32", with_layout(s.ne, s.l));
    const int32_t x = b.f32(s.ne, s.l);
    out.push_back(b.finish({x}, b.dst(StorageType::I32, s.ne)));
  }
}

void routing(std::vector<Case>& out) {
  struct W {
    int64_t experts, used, tokens;
    int32_t renormalise;
    float scale;
  };
  const W weights[] = {{8, 2, 5, 1, 1.0f}, {8, 2, 5, 0, 2.5f}, {6, 3, 1, 1, 2.5f}, {8, 2, 3, 1, 0.0f}};
  for (const W& w : weights) {
    Builder b(OpKind::expert_weights, StorageType::F32, "F32",
              std::to_string(w.experts) + " experts, " + std::to_string(w.used) + " used, tokens " +
                  std::to_string(w.tokens) + ", renormalise " + std::to_string(w.renormalise) + ", scale " +
                  std::to_string(w.scale).substr(0, 3));
    std::vector<float> probs(static_cast<size_t>(w.experts * w.tokens));
    for (auto& p : probs) p = static_cast<float>(0.05 + 0.95 * b.rng().uniform());  // router outputs: positive
    const int32_t p = b.f32_values(probs, {w.experts, w.tokens}, "probs");
    const int32_t ids = b.ints(distinct_ids(b.rng(), w.used, w.experts, w.tokens), {w.used, w.tokens}, "ids");
    out.push_back(b.finish({p, ids}, b.dst(StorageType::F32, {w.used, w.tokens}), {w.renormalise}, {w.scale}));
  }
  struct C {
    Dims y;
    Layout l;
  };
  const C combines[] = {{{37, 2, 5}, Layout::contiguous}, {{20, 3, 1}, Layout::contiguous}, {{16, 2, 3}, Layout::permuted}};
  for (const C& c : combines) {
    Builder b(OpKind::moe_combine, StorageType::F32, "F32", with_layout(c.y, c.l, "y"));
    const int32_t y = b.f32(c.y, c.l, 1.0, "y");
    const int32_t w = b.f32({c.y[1], c.y[2]}, Layout::strided, 0.5, "w", 0.5);
    out.push_back(b.finish({y, w}, b.dst(StorageType::F32, {c.y[0], c.y[2]})));
  }
}

// gather_cols: an act-order linear's input order (a permutation), and ids that repeat or
// skip columns, over every layout.
void gathers(std::vector<Case>& out) {
  struct G {
    Dims x;
    Layout l;
    int64_t m;
    bool permutation;
  };
  const G cases[] = {{{64, 3}, Layout::contiguous, 64, true},
                     {{37, 4}, Layout::strided, 10, false},
                     {{32, 2, 3}, Layout::permuted, 32, true},
                     {{24, 5}, Layout::transposed, 30, false}};
  for (const G& c : cases) {
    Builder b(OpKind::gather_cols, StorageType::F32, "F32",
              with_layout(c.x, c.l) + "; " + std::to_string(c.m) + (c.permutation ? " ids, a permutation" : " ids"));
    std::vector<int32_t> ids(static_cast<size_t>(c.m));
    for (int64_t j = 0; j < c.m; ++j)
      ids[static_cast<size_t>(j)] = static_cast<int32_t>(c.permutation ? (j * 37 + 5) % c.x[0] : (j * 7 + 3) % c.x[0]);
    const int32_t x = b.f32(c.x, c.l);
    const int32_t id = b.ints(ids, {c.m}, "ids");
    Dims d = c.x;
    d[0] = c.m;
    out.push_back(b.finish({x, id}, b.dst(StorageType::F32, d)));
  }
}

}  // namespace

void add_data_cases(std::vector<Case>& out) {
  copies(out);
  concats(out);
  selections(out);
  routing(out);
  gathers(out);
}

}  // namespace sy::conformance::detail
