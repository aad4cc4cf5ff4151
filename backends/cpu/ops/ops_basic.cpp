// Row and elementwise ops: rms_norm, l2_norm, softmax, activations, SwiGLU, broadcast add/mul, scale.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops.hpp"
#include "parallel_rows.hpp"

namespace sy::cpu {
namespace {

Status same(const View& a, const View& b, const char* op) {
  if (!a.same_shape(b))
    return error::invalid_argument(std::string("cpu: ") + op + ": input and output shapes differ");
  return Status::ok();
}

// y = f(x) per element, rows over the pool; `cost` is the work of one element.
template <class F>
void for_each(const View& x, const View& y, F f, ThreadPool* pool, int64_t cost = 1) {
  pool = pool_for_rows(pool, y, {x});
  for_rows(pool, x.rows(), x.ne[0] * cost, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x.row(r);
      float* yr = y.row(r);
      if (x.st[0] == 1 && y.st[0] == 1)  // unit strides the compiler can vectorize
        for (int64_t i = 0; i < x.ne[0]; ++i) yr[i] = f(xr[i]);
      else
        for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = f(xr[i * x.st[0]]);
    }
  });
}

// exp costs about as much as a dozen multiply-adds.
constexpr int64_t kExpCost = 12;

float silu(float v) { return v / (1.0f + std::exp(-v)); }
float softplus(float v) { return v > 20.f ? v : std::log1p(std::exp(v)); }

}  // namespace

Status rms_norm(const View& x, const View& y, float eps, ThreadPool* pool) {
  if (auto st = same(x, y, "rms_norm"); !st) return st;
  pool = pool_for_rows(pool, y, {x});
  for_rows(pool, x.rows(), 2 * x.ne[0], [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x.row(r);
      float* yr = y.row(r);
      double ss = 0;  // double: a long row of large values must not lose the small ones
      for (int64_t i = 0; i < x.ne[0]; ++i) ss += static_cast<double>(xr[i * x.st[0]]) * xr[i * x.st[0]];
      const float s = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(x.ne[0]) + eps));
      if (x.st[0] == 1 && y.st[0] == 1)
        for (int64_t i = 0; i < x.ne[0]; ++i) yr[i] = xr[i] * s;
      else
        for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = xr[i * x.st[0]] * s;
    }
  });
  return Status::ok();
}

Status l2_norm(const View& x, const View& y, float eps, ThreadPool* pool) {
  if (auto st = same(x, y, "l2_norm"); !st) return st;
  pool = pool_for_rows(pool, y, {x});
  for_rows(pool, x.rows(), 2 * x.ne[0], [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x.row(r);
      float* yr = y.row(r);
      double ss = 0;
      for (int64_t i = 0; i < x.ne[0]; ++i) ss += static_cast<double>(xr[i * x.st[0]]) * xr[i * x.st[0]];
      const float inv = 1.0f / std::max(static_cast<float>(std::sqrt(ss)), eps);
      for (int64_t i = 0; i < x.ne[0]; ++i) yr[i * y.st[0]] = xr[i * x.st[0]] * inv;
    }
  });
  return Status::ok();
}

Status softmax(const View& x, const View* mask, float sc, const View& y, OpScratch* scratch, ThreadPool* pool) {
  if (auto st = same(x, y, "softmax"); !st) return st;
  if (mask && mask->ne[0] != x.ne[0])
    return error::invalid_argument("cpu: softmax: the mask's rows must be as long as the input's");
  pool = mask ? pool_for_rows(pool, y, {x, *mask}) : pool_for_rows(pool, y, {x});
  const int64_t row_work = x.ne[0] * kExpCost, stride = (x.ne[0] + 15) / 16 * 16;
  OpScratch local;
  float* bufs = (scratch ? *scratch : local).floats(static_cast<size_t>(stride * row_threads(pool, x.rows(), row_work)));
  for_rows(pool, x.rows(), row_work, [&](int64_t r0, int64_t r1, int thread) {
    float* buf = bufs + thread * stride;
    for (int64_t r = r0; r < r1; ++r) {
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
  });
  return Status::ok();
}

Status activate(Activation f, const View& x, const View& y, ThreadPool* pool) {
  if (auto st = same(x, y, "activation"); !st) return st;
  switch (f) {
    case Activation::silu: for_each(x, y, [](float v) { return silu(v); }, pool, kExpCost); break;
    case Activation::sigmoid:
      for_each(x, y, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }, pool, kExpCost);
      break;
    case Activation::softplus: for_each(x, y, [](float v) { return softplus(v); }, pool, 2 * kExpCost); break;
    case Activation::gelu:
      // The tanh approximation, as GGML_OP_GELU and the models' configs use.
      for_each(
          x, y,
          [](float v) {
            constexpr float k = 0.7978845608028654f;  // sqrt(2/pi)
            return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
          },
          pool, kExpCost);
      break;
  }
  return Status::ok();
}

Status swiglu(const View& gate, const View& up, const View& y, ThreadPool* pool) {
  if (auto st = same(gate, up, "swiglu"); !st) return st;
  if (auto st = same(gate, y, "swiglu"); !st) return st;
  pool = pool_for_rows(pool, y, {gate, up});
  for_rows(pool, gate.rows(), gate.ne[0] * kExpCost, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* g = gate.row(r);
      const float* u = up.row(r);
      float* o = y.row(r);
      for (int64_t i = 0; i < gate.ne[0]; ++i) o[i * y.st[0]] = silu(g[i * gate.st[0]]) * u[i * up.st[0]];
    }
  });
  return Status::ok();
}

Status binary(Binary op, const View& a, const View& b, const View& y, ThreadPool* pool) {
  if (auto st = same(a, y, "add/mul"); !st) return st;
  for (int d = 0; d < 4; ++d)
    if (b.ne[d] != a.ne[d] && b.ne[d] != 1)
      return error::invalid_argument("cpu: add/mul: dimension " + std::to_string(d) + " of the second input is " +
                                     std::to_string(b.ne[d]) + ", neither " + std::to_string(a.ne[d]) + " nor 1");
  // A broadcast dimension reads b's element 0 there: stride 0.
  const int64_t bs0 = b.ne[0] == 1 ? 0 : b.st[0];
  pool = pool_for_rows(pool, y, {a, b});
  for_rows(pool, a.rows(), a.ne[0], [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i1 = r % a.ne[1], i2 = (r / a.ne[1]) % a.ne[2], i3 = r / (a.ne[1] * a.ne[2]);
      const float* ar = a.row(r);
      const float* br = &b.at(0, b.ne[1] == 1 ? 0 : i1, b.ne[2] == 1 ? 0 : i2, b.ne[3] == 1 ? 0 : i3);
      float* yr = y.row(r);
      const bool unit = a.st[0] == 1 && y.st[0] == 1 && bs0 == 1;  // the vectorizable case
      if (op == Binary::add) {
        if (unit)
          for (int64_t i = 0; i < a.ne[0]; ++i) yr[i] = ar[i] + br[i];
        else
          for (int64_t i = 0; i < a.ne[0]; ++i) yr[i * y.st[0]] = ar[i * a.st[0]] + br[i * bs0];
      } else {
        if (unit)
          for (int64_t i = 0; i < a.ne[0]; ++i) yr[i] = ar[i] * br[i];
        else
          for (int64_t i = 0; i < a.ne[0]; ++i) yr[i * y.st[0]] = ar[i * a.st[0]] * br[i * bs0];
      }
    }
  });
  return Status::ok();
}

Status scale(const View& x, float s, const View& y, ThreadPool* pool) {
  if (auto st = same(x, y, "scale"); !st) return st;
  for_each(x, y, [s](float v) { return v * s; }, pool);
  return Status::ok();
}

}  // namespace sy::cpu
