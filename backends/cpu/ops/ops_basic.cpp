// Row and elementwise ops: rms_norm, softmax, activations, SwiGLU, broadcast add/mul, scale.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops.hpp"

namespace sy::cpu {
namespace {

Status same(const View& a, const View& b, const char* op) {
  if (!a.same_shape(b))
    return error::invalid_argument(std::string("cpu: ") + op + ": input and output shapes differ");
  return Status::ok();
}

template <class F>
void for_each(const View& x, const View& y, F f) {
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* xr = x.row(r);
    float* yr = y.row(r);
    for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = f(xr[i * x.st[0]]);
  }
}

float silu(float v) { return v / (1.0f + std::exp(-v)); }

}  // namespace

Status rms_norm(const View& x, const View& y, float eps) {
  if (auto st = same(x, y, "rms_norm"); !st) return st;
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* xr = x.row(r);
    float* yr = y.row(r);
    double ss = 0;  // double: a long row of large values must not lose the small ones
    for (int64_t i = 0; i < x.ne[0]; ++i) ss += static_cast<double>(xr[i * x.st[0]]) * xr[i * x.st[0]];
    const float s = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(x.ne[0]) + eps));
    for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = xr[i * x.st[0]] * s;
  }
  return Status::ok();
}

Status softmax(const View& x, const View* mask, float sc, const View& y, OpScratch* scratch) {
  if (auto st = same(x, y, "softmax"); !st) return st;
  if (mask && mask->ne[0] != x.ne[0])
    return error::invalid_argument("cpu: softmax: the mask's rows must be as long as the input's");
  OpScratch local;
  float* buf = (scratch ? *scratch : local).floats(static_cast<size_t>(x.ne[0]));
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* xr = x.row(r);
    const float* mr = mask ? mask->row(r % mask->rows()) : nullptr;
    float mx = -INFINITY;
    for (int64_t i = 0; i < x.ne[0]; ++i) {
      buf[i] = xr[i * x.st[0]] * sc + (mr ? mr[i * mask->st[0]] : 0.0f);
      mx = std::max(mx, buf[i]);
    }
    float* yr = y.row(r);
    if (mx == -INFINITY) {  // everything masked: define the result as zeros, not NaN
      for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = 0;
      continue;
    }
    double sum = 0;
    for (int64_t i = 0; i < x.ne[0]; ++i) {
      buf[i] = std::exp(buf[i] - mx);
      sum += buf[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = buf[i] * inv;
  }
  return Status::ok();
}

Status activate(Activation f, const View& x, const View& y) {
  if (auto st = same(x, y, "activation"); !st) return st;
  switch (f) {
    case Activation::silu: for_each(x, y, silu); break;
    case Activation::sigmoid: for_each(x, y, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }); break;
    case Activation::gelu:
      // The tanh approximation, as GGML_OP_GELU and the models' configs use.
      for_each(x, y, [](float v) {
        constexpr float k = 0.7978845608028654f;  // sqrt(2/pi)
        return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
      });
      break;
  }
  return Status::ok();
}

Status swiglu(const View& gate, const View& up, const View& y) {
  if (auto st = same(gate, up, "swiglu"); !st) return st;
  if (auto st = same(gate, y, "swiglu"); !st) return st;
  for (int64_t r = 0; r < gate.rows(); ++r) {
    const float* g = gate.row(r);
    const float* u = up.row(r);
    float* o = y.row(r);
    for (int64_t i = 0; i < gate.ne[0]; ++i) o[i * y.st[0]] = silu(g[i * gate.st[0]]) * u[i * up.st[0]];
  }
  return Status::ok();
}

Status binary(Binary op, const View& a, const View& b, const View& y) {
  if (auto st = same(a, y, "add/mul"); !st) return st;
  for (int d = 0; d < 4; ++d)
    if (b.ne[d] != a.ne[d] && b.ne[d] != 1)
      return error::invalid_argument("cpu: add/mul: dimension " + std::to_string(d) + " of the second input is " +
                                     std::to_string(b.ne[d]) + ", neither " + std::to_string(a.ne[d]) + " nor 1");
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
          const float bv = b.at(b.ne[0] == 1 ? 0 : i0, b.ne[1] == 1 ? 0 : i1, b.ne[2] == 1 ? 0 : i2, b.ne[3] == 1 ? 0 : i3);
          const float av = a.at(i0, i1, i2, i3);
          y.at(i0, i1, i2, i3) = op == Binary::add ? av + bv : av * bv;
        }
  return Status::ok();
}

Status scale(const View& x, float s, const View& y) {
  if (auto st = same(x, y, "scale"); !st) return st;
  for_each(x, y, [s](float v) { return v * s; });
  return Status::ok();
}

}  // namespace sy::cpu
