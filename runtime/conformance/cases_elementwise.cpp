// Row and elementwise ops (F32 only): norms, softmax, activations, scale, add/mul with
// broadcasting, swiglu, fp8_qdq. They read any layout on the CPU, so every one gets strided,
// permuted and transposed sources besides contiguous ones, a single row, and odd widths.
#include <string>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

struct Shape {
  Dims ne;
  Layout layout;
};

std::string describe(const Dims& ne, Layout l, const char* what = "x") {
  std::string s;
  for (int64_t n : ne) s += (s.empty() ? "" : "x") + std::to_string(n);
  if (l != Layout::contiguous) s += std::string("; ") + what + " " + layout_name(l);
  return s;
}

const Shape kUnaryShapes[] = {
    {{37, 5}, Layout::contiguous},  {{53}, Layout::contiguous},     {{40, 3, 2}, Layout::permuted},
    {{37, 4}, Layout::strided},     {{24, 6}, Layout::transposed},
};

void unary(std::vector<Case>& out, OpKind op, std::initializer_list<float> f, double sigma) {
  for (const auto& s : kUnaryShapes) {
    Builder b(op, StorageType::F32, "F32", describe(s.ne, s.layout));
    const int32_t x = b.f32(s.ne, s.layout, sigma);
    const int32_t y = b.dst(StorageType::F32, s.ne);
    out.push_back(b.finish({x}, y, {}, f));
  }
}

void binary(std::vector<Case>& out, OpKind op) {
  struct Pair {
    Dims a, b;
    Layout la, lb;
    const char* what;
  };
  const Pair pairs[] = {
      {{37, 5}, {37, 5}, Layout::contiguous, Layout::contiguous, "same shape"},
      {{37, 4, 2}, {37}, Layout::contiguous, Layout::contiguous, "b one row, broadcast over rows"},
      {{37, 5}, {1, 5}, Layout::contiguous, Layout::contiguous, "b one column, broadcast along rows"},
      {{24, 3, 2}, {24, 3, 2}, Layout::strided, Layout::permuted, "a strided, b permuted"},
      {{53}, {53}, Layout::contiguous, Layout::contiguous, "one row"},
      {{16, 6}, {16, 1}, Layout::transposed, Layout::contiguous, "a transposed, b broadcast over rows"},
  };
  for (const auto& p : pairs) {
    Builder b(op, StorageType::F32, "F32", describe(p.a, Layout::contiguous) + " and " + describe(p.b, Layout::contiguous) +
                                              "; " + p.what);
    const int32_t x = b.f32(p.a, p.la, 1.0, "a");
    const int32_t y = b.f32(p.b, p.lb, 1.0, "b");
    const int32_t d = b.dst(StorageType::F32, p.a);
    out.push_back(b.finish({x, y}, d));
  }
}

void swiglu(std::vector<Case>& out) {
  struct S {
    Dims ne;
    Layout l;
  };
  // Strided: the gate and up halves of one fused gate_up product are such views.
  const S shapes[] = {S{{37, 5}, Layout::contiguous}, S{{32, 2, 3}, Layout::strided}, S{{53}, Layout::contiguous}};
  for (const S& s : shapes) {
    Builder b(OpKind::swiglu, StorageType::F32, "F32", describe(s.ne, s.l, "gate and up"));
    const int32_t g = b.f32(s.ne, s.l, 2.0, "gate");
    const int32_t u = b.f32(s.ne, s.l, 1.0, "up");
    const int32_t d = b.dst(StorageType::F32, s.ne);
    out.push_back(b.finish({g, u}, d));
  }
}

// A static FP8 activation scale: one scale, and the per-expert scales of an MoE layer (the
// op takes the largest). Scales near max|x| / 448 (a calibrated one) and smaller ones, so
// that values saturate at +-448, land among the subnormals and on every binade between.
void fp8_qdq(std::vector<Case>& out) {
  struct S {
    Dims ne;
    Layout l;
    std::vector<float> scales;
  };
  const S shapes[] = {S{{37, 5}, Layout::contiguous, {0.01f}}, S{{40, 3, 2}, Layout::permuted, {0.03f}},
                      S{{24, 6}, Layout::transposed, {1e-3f, 4e-3f, 2.5e-3f, 3e-3f}},
                      S{{53}, Layout::strided, {0.0123f}}};
  for (const S& s : shapes) {
    Builder b(OpKind::fp8_qdq, StorageType::F32, "F32", describe(s.ne, s.l) + "; " + std::to_string(s.scales.size()) +
                                                            " scale" + (s.scales.size() > 1 ? "s" : ""));
    const int32_t x = b.f32(s.ne, s.l, 3.0);
    const int32_t sc = b.f32_values(s.scales, {static_cast<int64_t>(s.scales.size())}, "scale");
    const int32_t d = b.dst(StorageType::F32, s.ne);
    out.push_back(b.finish({x, sc}, d));
  }
}

}  // namespace

void add_elementwise_cases(std::vector<Case>& out) {
  unary(out, OpKind::rms_norm, {1e-6f}, 1.0);
  unary(out, OpKind::l2_norm, {1e-6f}, 1.0);
  unary(out, OpKind::softmax, {}, 3.0);  // sigma 3: rows with a dominant entry and many tiny ones
  unary(out, OpKind::silu, {}, 3.0);
  unary(out, OpKind::gelu, {}, 3.0);
  unary(out, OpKind::sigmoid, {}, 3.0);
  unary(out, OpKind::softplus, {}, 8.0);  // both sides of the x > 20 shortcut
  unary(out, OpKind::scale, {0.37f}, 1.0);
  binary(out, OpKind::add);
  binary(out, OpKind::mul);
  swiglu(out);
  fp8_qdq(out);
}

}  // namespace sy::conformance::detail
