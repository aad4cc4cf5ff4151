// A strided 4-D view of f32 data, innermost dimension first (GGUF/ggml order). Strides
// are in elements, so slices, transposes and broadcasts are views, not copies.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct View {
  float* data = nullptr;
  int64_t ne[4] = {1, 1, 1, 1};  ///< sizes
  int64_t st[4] = {1, 1, 1, 1};  ///< strides in elements

  /// A contiguous view of `data` with sizes ne0..ne3.
  static View contiguous(float* d, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1) {
    View v;
    v.data = d;
    v.ne[0] = ne0, v.ne[1] = ne1, v.ne[2] = ne2, v.ne[3] = ne3;
    v.st[0] = 1, v.st[1] = ne0, v.st[2] = ne0 * ne1, v.st[3] = ne0 * ne1 * ne2;
    return v;
  }
  [[nodiscard]] int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  /// Element (i0, i1, i2, i3).
  [[nodiscard]] float& at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return data[i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3]];
  }
  /// First element of row r (rows enumerate dims 1..3, dim 1 fastest).
  [[nodiscard]] float* row(int64_t r) const {
    const int64_t i1 = r % ne[1], i2 = (r / ne[1]) % ne[2], i3 = r / (ne[1] * ne[2]);
    return data + i1 * st[1] + i2 * st[2] + i3 * st[3];
  }
  [[nodiscard]] bool same_shape(const View& o) const {
    return ne[0] == o.ne[0] && ne[1] == o.ne[1] && ne[2] == o.ne[2] && ne[3] == o.ne[3];
  }
};

}  // namespace sy::cpu
