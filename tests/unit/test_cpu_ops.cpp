// CPU ops against formulas evaluated here in double precision, on odd sizes and on
// non-contiguous views (padded rows, transposes, broadcasts).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "ops.hpp"
#include "parallel_rows.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

std::vector<float> randn(size_t n, unsigned seed, float sd = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// A [ne0 x ne1] view whose rows are `pad` elements apart (pad >= ne0): not contiguous.
View padded(std::vector<float>& buf, int64_t ne0, int64_t ne1, int64_t pad) {
  buf.resize(static_cast<size_t>(pad * ne1 + ne0));
  View v;
  v.data = buf.data();
  v.ne[0] = ne0, v.ne[1] = ne1;
  v.st[0] = 1, v.st[1] = pad, v.st[2] = v.st[3] = pad * ne1;
  return v;
}

}  // namespace

TEST_CASE("rms_norm on padded rows of odd length", "[cpu][ops]") {
  std::vector<float> xb = randn(2000, 1), yb(2000, 0);
  const View x = padded(xb, 37, 9, 41), y = padded(yb, 37, 9, 50);
  REQUIRE(rms_norm(x, y, 1e-6f).is_ok());
  for (int64_t r = 0; r < 9; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < 37; ++i) ss += static_cast<double>(x.at(i, r)) * x.at(i, r);
    const double s = 1 / std::sqrt(ss / 37 + 1e-6);
    for (int64_t i = 0; i < 37; ++i) REQUIRE(y.at(i, r) == Approx(x.at(i, r) * s).epsilon(1e-6));
  }
}

TEST_CASE("softmax with scale and a broadcast causal mask", "[cpu][ops]") {
  const int64_t n = 13, rows = 6;
  auto xs = randn(static_cast<size_t>(n * rows), 2, 3.f);
  std::vector<float> ms(static_cast<size_t>(n * 3)), ys(xs.size());
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < n; ++i) ms[static_cast<size_t>(r * n + i)] = i > r + 5 ? -INFINITY : 0.f;
  const View x = View::contiguous(xs.data(), n, rows), m = View::contiguous(ms.data(), n, 3),
             y = View::contiguous(ys.data(), n, rows);
  REQUIRE(softmax(x, &m, 0.5f, y).is_ok());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, 0.5 * x.at(i, r) + m.at(i, r % 3));
    for (int64_t i = 0; i < n; ++i) sum += std::exp(0.5 * x.at(i, r) + m.at(i, r % 3) - mx);
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(0.5 * x.at(i, r) + m.at(i, r % 3) - mx) / sum;
      REQUIRE(y.at(i, r) == Approx(want).margin(1e-7).epsilon(1e-5));
    }
  }
  // A fully masked row is all zeros, not NaN.
  std::vector<float> all(static_cast<size_t>(n), -INFINITY), out(static_cast<size_t>(n), 1.f), z(static_cast<size_t>(n), 0.f);
  const View zx = View::contiguous(z.data(), n), zm = View::contiguous(all.data(), n), zy = View::contiguous(out.data(), n);
  REQUIRE(softmax(zx, &zm, 1.f, zy).is_ok());
  for (float v : out) CHECK(v == 0.f);
}

TEST_CASE("activations and SwiGLU on a transposed view", "[cpu][ops]") {
  auto g = randn(35, 3, 2.f), u = randn(35, 4), out(std::vector<float>(35));
  // Transposed: element (i, j) of a 5x7 view is buffer[i*7 + j].
  View gt;
  gt.data = g.data();
  gt.ne[0] = 5, gt.ne[1] = 7, gt.st[0] = 7, gt.st[1] = 1, gt.st[2] = gt.st[3] = 35;
  View ut = gt, ot = gt;
  ut.data = u.data();
  ot.data = out.data();
  REQUIRE(swiglu(gt, ut, ot).is_ok());
  for (size_t k = 0; k < 35; ++k) {
    const double s = g[k] / (1 + std::exp(-static_cast<double>(g[k])));
    REQUIRE(out[k] == Approx(s * u[k]).epsilon(1e-5).margin(1e-7));
  }
  for (auto f : {Activation::silu, Activation::gelu, Activation::sigmoid, Activation::softplus}) {
    REQUIRE(activate(f, gt, ot).is_ok());
    for (size_t k = 0; k < 35; ++k) {
      const double v = g[k];
      const double want = f == Activation::silu       ? v / (1 + std::exp(-v))
                          : f == Activation::sigmoid  ? 1 / (1 + std::exp(-v))
                          : f == Activation::softplus ? std::log(1 + std::exp(v))
                                                      : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      REQUIRE(out[k] == Approx(want).epsilon(1e-5).margin(1e-7));
    }
  }
}

TEST_CASE("add and mul broadcast rows and columns; bad shapes are refused", "[cpu][ops]") {
  auto a = randn(3 * 4 * 5, 5), row = randn(3, 6), col = randn(4, 7), out(std::vector<float>(60));
  const View va = View::contiguous(a.data(), 3, 4, 5), vy = View::contiguous(out.data(), 3, 4, 5);
  REQUIRE(binary(Binary::add, va, View::contiguous(row.data(), 3), vy).is_ok());
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 3; ++i) REQUIRE(vy.at(i, j, k) == va.at(i, j, k) + row[static_cast<size_t>(i)]);
  REQUIRE(binary(Binary::mul, va, View::contiguous(col.data(), 1, 4), vy).is_ok());
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 3; ++i) REQUIRE(vy.at(i, j, k) == va.at(i, j, k) * col[static_cast<size_t>(j)]);
  CHECK(binary(Binary::add, va, View::contiguous(col.data(), 2, 2), vy).message() ==
        "cpu: add/mul: dimension 0 of the second input is 2, neither 3 nor 1");
  REQUIRE(scale(va, -2.f, vy).is_ok());
  CHECK(out[7] == -2.f * a[7]);
}

TEST_CASE("rope: normal and NEOX match the rotation formula; the tail passes through", "[cpu][ops]") {
  const int64_t hd = 10, heads = 3, tokens = 4, n_dims = 8;
  for (auto mode : {RopeMode::normal, RopeMode::neox}) {
    auto x = randn(static_cast<size_t>(hd * heads * tokens), 8);
    const auto orig = x;
    const std::vector<int32_t> pos{0, 3, 17, 1000};
    RopeParams p;
    p.mode = mode;
    p.n_dims = n_dims;
    p.freq_base = 10000.f;
    REQUIRE(rope(View::contiguous(x.data(), hd, heads, tokens), pos, p).is_ok());
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t h = 0; h < heads; ++h) {
        const size_t base = static_cast<size_t>((t * heads + h) * hd);
        for (int64_t i = 0; i < n_dims / 2; ++i) {
          const double th = pos[static_cast<size_t>(t)] * std::pow(10000.0, -2.0 * i / n_dims);
          const size_t a = base + static_cast<size_t>(mode == RopeMode::normal ? 2 * i : i);
          const size_t b = base + static_cast<size_t>(mode == RopeMode::normal ? 2 * i + 1 : i + n_dims / 2);
          REQUIRE(x[a] == Approx(orig[a] * std::cos(th) - orig[b] * std::sin(th)).margin(1e-4));
          REQUIRE(x[b] == Approx(orig[a] * std::sin(th) + orig[b] * std::cos(th)).margin(1e-4));
        }
        for (int64_t i = n_dims; i < hd; ++i) REQUIRE(x[base + static_cast<size_t>(i)] == orig[base + static_cast<size_t>(i)]);
      }
  }
}

TEST_CASE("rope: multi-section with equal position components equals NEOX (text)", "[cpu][ops]") {
  const int64_t hd = 64, heads = 2, tokens = 3;
  auto a = randn(static_cast<size_t>(hd * heads * tokens), 9), b = a;
  RopeParams p;
  p.mode = RopeMode::neox;
  p.n_dims = 16;  // Qwen3.5/3.6: rope.dimension_count is a quarter of the head size
  p.freq_base = 1e7f;
  REQUIRE(rope(View::contiguous(a.data(), hd, heads, tokens), std::vector<int32_t>{5, 6, 7}, p).is_ok());
  p.mode = RopeMode::multi;
  p.sections[0] = 3, p.sections[1] = 3, p.sections[2] = 2, p.sections[3] = 0;
  const std::vector<int32_t> pos4{5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 7};
  REQUIRE(rope(View::contiguous(b.data(), hd, heads, tokens), pos4, p).is_ok());
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == b[i]);
  // Different components (an image position) change the sectioned frequencies.
  auto c = randn(static_cast<size_t>(hd * heads * tokens), 9);
  const std::vector<int32_t> img{5, 6, 7, 9, 9, 9, 2, 2, 2, 0, 0, 0};
  REQUIRE(rope(View::contiguous(c.data(), hd, heads, tokens), img, p).is_ok());
  CHECK(c != a);
}

TEST_CASE("rope: frequency factors divide each pair's angle (normal, NEOX, multi)", "[cpu][ops]") {
  // ggml's rope with freq_factors (what llama.cpp passes for rope_freqs.weight): pair i of a
  // token at position p turns by p * freq_scale * base^(-2i/n_dims) / factor_i. The
  // reference below evaluates that in double, independently of the op's loop.
  const int64_t hd = 12, heads = 2, tokens = 4, n_dims = 10;
  const std::vector<float> ff{1.0f, 2.5f, 0.75f, 8.0f, 32.0f};
  const std::vector<int32_t> pos{0, 2, 31, 4097};
  const double base = 5e5, fscale = 0.5;
  for (auto mode : {RopeMode::normal, RopeMode::neox}) {
    DYNAMIC_SECTION((mode == RopeMode::normal ? "normal" : "neox")) {
      auto x = randn(static_cast<size_t>(hd * heads * tokens), 12);
      const auto orig = x;
      RopeParams p;
      p.mode = mode;
      p.n_dims = n_dims;
      p.freq_base = static_cast<float>(base);
      p.freq_scale = static_cast<float>(fscale);
      p.freq_factors = ff;
      REQUIRE(rope(View::contiguous(x.data(), hd, heads, tokens), pos, p).is_ok());
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t h = 0; h < heads; ++h) {
          const size_t row = static_cast<size_t>((t * heads + h) * hd);
          for (int64_t i = 0; i < n_dims / 2; ++i) {
            const double th = pos[static_cast<size_t>(t)] * fscale * std::pow(base, -2.0 * static_cast<double>(i) / n_dims) /
                              ff[static_cast<size_t>(i)];
            const size_t a = row + static_cast<size_t>(mode == RopeMode::normal ? 2 * i : i);
            const size_t b = row + static_cast<size_t>(mode == RopeMode::normal ? 2 * i + 1 : i + n_dims / 2);
            INFO("token " << t << " head " << h << " pair " << i);
            REQUIRE(x[a] == Approx(orig[a] * std::cos(th) - orig[b] * std::sin(th)).margin(1e-5));
            REQUIRE(x[b] == Approx(orig[a] * std::sin(th) + orig[b] * std::cos(th)).margin(1e-5));
          }
          for (int64_t i = n_dims; i < hd; ++i) REQUIRE(x[row + static_cast<size_t>(i)] == orig[row + static_cast<size_t>(i)]);
        }
      // Factors of exactly 1 are the plain rotation, bit for bit (theta / 1 is theta).
      auto plain = orig, ones = orig;
      p.freq_factors = {};
      REQUIRE(rope(View::contiguous(plain.data(), hd, heads, tokens), pos, p).is_ok());
      const std::vector<float> one(static_cast<size_t>(n_dims / 2), 1.0f);
      p.freq_factors = one;
      REQUIRE(rope(View::contiguous(ones.data(), hd, heads, tokens), pos, p).is_ok());
      CHECK(plain == ones);
      CHECK(plain != x);
    }
  }
  SECTION("multi-section with equal components equals NEOX with the same factors") {
    auto a = randn(static_cast<size_t>(hd * heads * tokens), 13), b = a;
    RopeParams p;
    p.mode = RopeMode::neox;
    p.n_dims = n_dims;
    p.freq_base = static_cast<float>(base);
    p.freq_factors = ff;
    REQUIRE(rope(View::contiguous(a.data(), hd, heads, tokens), pos, p).is_ok());
    p.mode = RopeMode::multi;
    p.sections[0] = 2, p.sections[1] = 2, p.sections[2] = 1;
    std::vector<int32_t> pos4;
    for (int c = 0; c < 4; ++c) pos4.insert(pos4.end(), pos.begin(), pos.end());
    REQUIRE(rope(View::contiguous(b.data(), hd, heads, tokens), pos4, p).is_ok());
    CHECK(a == b);
  }
  SECTION("a factor count other than n_dims / 2 is refused") {
    auto x = randn(static_cast<size_t>(hd * heads * tokens), 14);
    RopeParams p;
    p.n_dims = n_dims;
    const std::vector<float> six(6, 1.0f);
    p.freq_factors = six;
    CHECK(rope(View::contiguous(x.data(), hd, heads, tokens), pos, p).message() ==
          "cpu: rope: 6 frequency factors given, 5 (n_dims / 2) needed");
  }
}

TEST_CASE("get_rows dequantizes the chosen rows of any type", "[cpu][ops]") {
  const int64_t cols = 64, rows = 5;
  auto w = randn(static_cast<size_t>(cols * rows), 10);
  for (auto t : {StorageType::F32, StorageType::F16, StorageType::Q8_0, StorageType::Q4_0}) {
    const size_t rb = *storage_row_bytes(t, cols);
    std::vector<uint8_t> q(rb * rows);
    for (int64_t r = 0; r < rows; ++r) REQUIRE(quantize_row(t, w.data() + r * cols, q.data() + r * rb, cols).is_ok());
    const std::vector<int32_t> ids{4, 0, 4, 2};
    std::vector<float> outb;
    const View out = padded(outb, cols, 4, cols + 3);
    REQUIRE(get_rows(q.data(), t, cols, rows, ids, out).is_ok());
    std::vector<float> want(static_cast<size_t>(cols));
    for (size_t i = 0; i < ids.size(); ++i) {
      REQUIRE(dequantize_row(t, q.data() + static_cast<size_t>(ids[i]) * rb, want.data(), cols).is_ok());
      for (int64_t j = 0; j < cols; ++j) REQUIRE(out.at(j, static_cast<int64_t>(i)) == want[static_cast<size_t>(j)]);
    }
    CHECK(get_rows(q.data(), t, cols, rows, std::vector<int32_t>{5}, View::contiguous(want.data(), cols)).message() ==
          "cpu: get_rows: row id 5 is outside 0..4");
  }
}

TEST_CASE("argsort and top_k: descending, ties by index", "[cpu][ops]") {
  std::vector<float> x{0.5f, 2.f, -1.f, 2.f, 7.f, 0.5f, 3.f, 1.f, 1.f, 1.f};
  const View v = View::contiguous(x.data(), 5, 2);
  std::vector<int32_t> order(10), top(4);
  REQUIRE(argsort_desc(v, order).is_ok());
  CHECK(std::vector<int32_t>(order.begin(), order.begin() + 5) == std::vector<int32_t>{4, 1, 3, 0, 2});
  CHECK(std::vector<int32_t>(order.begin() + 5, order.end()) == std::vector<int32_t>{1, 2, 3, 4, 0});
  REQUIRE(top_k(v, 2, top).is_ok());
  CHECK(top == std::vector<int32_t>{4, 1, 1, 2});
  CHECK(top_k(v, 6, top).message() == "cpu: top_k: k = 6 must be between 1 and the row length 5");
}

TEST_CASE("concat along each dimension", "[cpu][ops]") {
  auto a = randn(2 * 3 * 2, 11), b = randn(2 * 3 * 2, 12);
  for (int dim = 0; dim < 3; ++dim) {
    int64_t ne[3] = {2, 3, 2};
    ne[dim] *= 2;
    std::vector<float> y(static_cast<size_t>(ne[0] * ne[1] * ne[2]));
    const View va = View::contiguous(a.data(), 2, 3, 2), vb = View::contiguous(b.data(), 2, 3, 2),
               vy = View::contiguous(y.data(), ne[0], ne[1], ne[2]);
    REQUIRE(concat(va, vb, dim, vy).is_ok());
    for (int64_t k = 0; k < ne[2]; ++k)
      for (int64_t j = 0; j < ne[1]; ++j)
        for (int64_t i = 0; i < ne[0]; ++i) {
          const int64_t a_ne[3] = {2, 3, 2};
          int64_t idx[3] = {i, j, k};
          const bool second = idx[dim] >= a_ne[dim];
          if (second) idx[dim] -= a_ne[dim];
          REQUIRE(vy.at(i, j, k) == (second ? vb : va).at(idx[0], idx[1], idx[2]));
        }
  }
}

TEST_CASE("convert f32 <-> storage types through views", "[cpu][ops]") {
  auto x = randn(64 * 3, 13);
  std::vector<uint8_t> h(64 * 3 * 2);
  REQUIRE(convert_from_f32(View::contiguous(x.data(), 64, 3), StorageType::F16, h.data()).is_ok());
  std::vector<float> back(64 * 3);
  REQUIRE(convert_to_f32(h.data(), StorageType::F16, View::contiguous(back.data(), 64, 3)).is_ok());
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(back[i] == fp16_to_fp32(fp32_to_fp16(x[i])));
}

#include "seq_ops.hpp"

TEST_CASE("conv1d: causal taps over the carried state; chunked equals whole", "[cpu][ops]") {
  const int64_t C = 5, T = 7, K = 4;
  auto x = randn(static_cast<size_t>(C * T), 20), w = randn(static_cast<size_t>(C * K), 21);
  const auto init = randn(static_cast<size_t>((K - 1) * C), 22);
  std::vector<float> state = init, y(x.size());
  REQUIRE(conv1d_causal(View::contiguous(x.data(), C, T), w.data(), K, state.data(), View::contiguous(y.data(), C, T)).is_ok());
  // Formula over the concatenation [init; x].
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t tau = t - (K - 1) + k;
        const double in = tau < 0 ? init[static_cast<size_t>((K - 1 + tau) * C + c)] : x[static_cast<size_t>(tau * C + c)];
        s += w[static_cast<size_t>(c * K + k)] * in;
      }
      REQUIRE(y[static_cast<size_t>(t * C + c)] == Approx(s).margin(1e-5));
    }
  for (int64_t r = 0; r < K - 1; ++r)
    for (int64_t c = 0; c < C; ++c) REQUIRE(state[static_cast<size_t>(r * C + c)] == x[static_cast<size_t>((T - (K - 1) + r) * C + c)]);
  // The same input one token at a time (decode) gives the same outputs.
  std::vector<float> st2 = init, y2(x.size());
  for (int64_t t = 0; t < T; ++t)
    REQUIRE(conv1d_causal(View::contiguous(x.data() + t * C, C, 1), w.data(), K, st2.data(),
                          View::contiguous(y2.data() + t * C, C, 1)).is_ok());
  for (size_t i = 0; i < y.size(); ++i) REQUIRE(y2[i] == Approx(y[i]).margin(1e-6));
}

TEST_CASE("delta_net: the gated delta rule, value heads sharing key heads", "[cpu][ops]") {
  const int64_t dk = 4, dv = 3, hk = 2, hv = 4, T = 5;
  auto q = randn(static_cast<size_t>(dk * hk * T), 30), k = randn(static_cast<size_t>(dk * hk * T), 31);
  auto v = randn(static_cast<size_t>(dv * hv * T), 32), g = randn(static_cast<size_t>(hv * T), 33, 0.3f);
  auto beta = randn(static_cast<size_t>(hv * T), 34);
  for (auto& x : g) x = -std::fabs(x);
  for (auto& b : beta) b = 1 / (1 + std::exp(-b));
  std::vector<float> state(static_cast<size_t>(hv * dk * dv), 0.f), out(static_cast<size_t>(dv * hv * T));
  DeltaNetArgs a{View::contiguous(q.data(), dk, hk, T), View::contiguous(k.data(), dk, hk, T),
                 View::contiguous(v.data(), dv, hv, T), View::contiguous(g.data(), hv, T),
                 View::contiguous(beta.data(), hv, T), state.data(), View::contiguous(out.data(), dv, hv, T)};
  REQUIRE(delta_net(a).is_ok());
  // The recurrence in double, written out from its definition.
  for (int64_t h = 0; h < hv; ++h) {
    std::vector<double> S(static_cast<size_t>(dk * dv), 0.0);
    const int64_t kh = h % hk;
    for (int64_t t = 0; t < T; ++t) {
      const double decay = std::exp(static_cast<double>(g[static_cast<size_t>(t * hv + h)]));
      for (auto& s : S) s *= decay;
      auto K_ = [&](int64_t i) { return static_cast<double>(k[static_cast<size_t>((t * hk + kh) * dk + i)]); };
      auto Q_ = [&](int64_t i) { return static_cast<double>(q[static_cast<size_t>((t * hk + kh) * dk + i)]); };
      std::vector<double> delta(static_cast<size_t>(dv));
      for (int64_t j = 0; j < dv; ++j) {
        double kvj = 0;
        for (int64_t i = 0; i < dk; ++i) kvj += S[static_cast<size_t>(i * dv + j)] * K_(i);
        delta[static_cast<size_t>(j)] = beta[static_cast<size_t>(t * hv + h)] * (v[static_cast<size_t>((t * hv + h) * dv + j)] - kvj);
      }
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) S[static_cast<size_t>(i * dv + j)] += K_(i) * delta[static_cast<size_t>(j)];
      for (int64_t j = 0; j < dv; ++j) {
        double o = 0;
        for (int64_t i = 0; i < dk; ++i) o += S[static_cast<size_t>(i * dv + j)] * Q_(i);
        REQUIRE(out[static_cast<size_t>((t * hv + h) * dv + j)] == Approx(o).margin(1e-4));
      }
    }
    for (size_t i = 0; i < S.size(); ++i) REQUIRE(state[static_cast<size_t>(h * dk * dv) + i] == Approx(S[i]).margin(1e-4));
  }
}

namespace {
// The delta rule in float exactly as first written (heads inside tokens, one pass per
// step): threaded and vectorized versions must add the same terms in the same order.
void delta_net_plain(const DeltaNetArgs& a) {
  const int64_t dk = a.q.ne[0], hk = a.q.ne[1], T = a.q.ne[2], dv = a.v.ne[0], hv = a.v.ne[1];
  std::vector<float> kv(static_cast<size_t>(dv));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < hv; ++h) {
      float* S = a.state + h * dk * dv;
      const float decay = std::exp(a.g.at(h, t)), beta = a.beta.at(h, t);
      for (int64_t i = 0; i < dk * dv; ++i) S[i] *= decay;
      for (int64_t j = 0; j < dv; ++j) {
        float s = 0;
        for (int64_t i = 0; i < dk; ++i) s += S[i * dv + j] * a.k.at(i, h % hk, t);
        kv[static_cast<size_t>(j)] = beta * (a.v.at(j, h, t) - s);
      }
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += a.k.at(i, h % hk, t) * kv[static_cast<size_t>(j)];
      for (int64_t j = 0; j < dv; ++j) {
        float o = 0;
        for (int64_t i = 0; i < dk; ++i) o += S[i * dv + j] * a.q.at(i, h % hk, t);
        a.out.at(j, h, t) = o;
      }
    }
}
}  // namespace

TEST_CASE("delta_net on 1 and 3 threads, scalar and best ISA, equals the plain loops bit for bit (strided q/k/v)", "[cpu][ops]") {
  // Odd sizes (vector tails), 6 value heads over 3 key heads, q/k/v interleaved in one
  // buffer as the conv output is split, and enough work that the pool is used.
  const int64_t dk = 19, dv = 13, hk = 3, hv = 6, T = 17, row = 2 * dk * hk + dv * hv;
  auto qkv = randn(static_cast<size_t>(row * T), 35), g = randn(static_cast<size_t>(hv * T), 36, 0.3f);
  auto beta = randn(static_cast<size_t>(hv * T), 37);
  for (auto& x : g) x = -std::fabs(x);
  for (auto& b : beta) b = 1 / (1 + std::exp(-b));
  auto split = [&](int64_t off, int64_t d, int64_t h) {
    View v = View::contiguous(qkv.data() + off, d, h, T);
    v.st[2] = row;
    return v;
  };
  const auto init = randn(static_cast<size_t>(hv * dk * dv), 38, 0.1f);
  std::vector<float> want_state = init, want(static_cast<size_t>(dv * hv * T));
  DeltaNetArgs a{split(0, dk, hk), split(dk * hk, dk, hk), split(2 * dk * hk, dv, hv), View::contiguous(g.data(), hv, T),
                 View::contiguous(beta.data(), hv, T), want_state.data(), View::contiguous(want.data(), dv, hv, T)};
  delta_net_plain(a);
  for (int threads : {1, 3})
    for (Isa isa : {Isa::scalar, detect_isa()}) {
      ThreadPool pool(threads);
      OpScratch scratch;
      std::vector<float> state = init, out(want.size());
      a.state = state.data();
      a.out = View::contiguous(out.data(), dv, hv, T);
      REQUIRE(delta_net(a, &scratch, &pool, isa).is_ok());
      INFO(threads << " threads, " << isa_name(isa));
      CHECK(std::memcmp(out.data(), want.data(), out.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(state.data(), want_state.data(), state.size() * sizeof(float)) == 0);
    }
}

#include "attention.hpp"

TEST_CASE("attention: flash tiling equals the full-softmax reference for every KV type", "[cpu][ops]") {
  const int64_t hd = 64, n_heads = 6, n_kv = 2, n_ctx = 150, n_q = 5;
  auto qv = randn(static_cast<size_t>(hd * n_heads * n_q), 40);
  auto kf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 41), vf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 42);
  const std::vector<int32_t> pos{0, 63, 64, 100, 149};  // tile edges and the last position
  for (auto t : {StorageType::F32, StorageType::F16, StorageType::BF16, StorageType::Q8_0, StorageType::Q4_0}) {
    const size_t rb = *storage_row_bytes(t, hd);
    std::vector<uint8_t> kq(rb * static_cast<size_t>(n_kv * n_ctx)), vq(kq.size());
    for (int64_t r = 0; r < n_kv * n_ctx; ++r) {
      REQUIRE(quantize_row(t, kf.data() + r * hd, kq.data() + r * rb, hd).is_ok());
      REQUIRE(quantize_row(t, vf.data() + r * hd, vq.data() + r * rb, hd).is_ok());
    }
    std::vector<float> ref(static_cast<size_t>(hd * n_heads * n_q)), got(ref.size());
    AttentionArgs a{View::contiguous(qv.data(), hd, n_heads, n_q), {kq.data(), t, hd, n_kv, n_ctx},
                    {vq.data(), t, hd, n_kv, n_ctx}, pos, 1.0f / 8.0f, View::contiguous(ref.data(), hd, n_heads, n_q)};
    REQUIRE(attention_reference(a).is_ok());
    ThreadPool pool(2);
    a.out = View::contiguous(got.data(), hd, n_heads, n_q);
    REQUIRE(attention(a, detect_isa(), pool).is_ok());
    for (size_t i = 0; i < ref.size(); ++i) {
      INFO(storage_type_name(t) << " element " << i);
      REQUIRE(got[i] == Approx(ref[i]).margin(1e-5).epsilon(1e-4));
    }
    if (t == StorageType::F32) {
      // With f32 K/V the reference itself must equal the textbook formula in double.
      for (int64_t qi = 0; qi < n_q; ++qi)
        for (int64_t h = 0; h < n_heads; ++h) {
          const int64_t kvh = h / (n_heads / n_kv), n = pos[static_cast<size_t>(qi)] + 1;
          std::vector<double> w(static_cast<size_t>(n));
          double mx = -INFINITY, sum = 0;
          for (int64_t p = 0; p < n; ++p) {
            double d = 0;
            for (int64_t i = 0; i < hd; ++i)
              d += static_cast<double>(qv[static_cast<size_t>((qi * n_heads + h) * hd + i)]) * kf[static_cast<size_t>((p * n_kv + kvh) * hd + i)];
            w[static_cast<size_t>(p)] = d / 8.0;
            mx = std::max(mx, w[static_cast<size_t>(p)]);
          }
          for (auto& x : w) sum += x = std::exp(x - mx);
          for (int64_t j = 0; j < hd; j += 7) {
            double o = 0;
            for (int64_t p = 0; p < n; ++p) o += w[static_cast<size_t>(p)] / sum * vf[static_cast<size_t>((p * n_kv + kvh) * hd + j)];
            REQUIRE(ref[static_cast<size_t>((qi * n_heads + h) * hd + j)] == Approx(o).margin(1e-5));
          }
        }
    }
  }
}

TEST_CASE("softmax, rope, argsort and concat give the same results on non-contiguous views", "[cpu][ops]") {
  // Each op runs on a contiguous tensor and on a copy laid out with padded rows (and, for
  // rope, heads interleaved differently); results must match element for element.
  const int64_t n = 19, rows = 7, pad = 23;
  auto x = randn(static_cast<size_t>(n * rows), 50, 2.f);
  std::vector<float> xb(static_cast<size_t>(pad * rows), 0.f), yb(static_cast<size_t>(pad * rows), 0.f);
  View xp;
  xp.data = xb.data();
  xp.ne[0] = n, xp.ne[1] = rows, xp.st[1] = pad, xp.st[2] = xp.st[3] = pad * rows;
  View yp = xp;
  yp.data = yb.data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) xp.at(i, r) = x[static_cast<size_t>(r * n + i)];
  std::vector<float> y(x.size());
  const View xc = View::contiguous(x.data(), n, rows), yc = View::contiguous(y.data(), n, rows);

  REQUIRE(softmax(xc, nullptr, 0.7f, yc).is_ok());
  REQUIRE(softmax(xp, nullptr, 0.7f, yp).is_ok());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) REQUIRE(yp.at(i, r) == yc.at(i, r));

  std::vector<int32_t> oc(static_cast<size_t>(n * rows)), op(oc.size());
  REQUIRE(argsort_desc(xc, oc).is_ok());
  REQUIRE(argsort_desc(xp, op).is_ok());
  CHECK(oc == op);

  std::vector<float> cc(static_cast<size_t>(n * rows * 2)), cp(cc.size());
  REQUIRE(concat(xc, xc, 1, View::contiguous(cc.data(), n, 2 * rows)).is_ok());
  REQUIRE(concat(xp, xp, 1, View::contiguous(cp.data(), n, 2 * rows)).is_ok());
  CHECK(cc == cp);

  // rope on [head_dim, heads, tokens] stored token-major vs head-major.
  const int64_t hd = 8, heads = 3, tokens = 5;
  auto r0 = randn(static_cast<size_t>(hd * heads * tokens), 51);
  std::vector<float> r1(r0.size());
  View hv;  // same logical tensor, heads outermost in memory
  hv.data = r1.data();
  hv.ne[0] = hd, hv.ne[1] = heads, hv.ne[2] = tokens;
  hv.st[0] = 1, hv.st[1] = hd * tokens, hv.st[2] = hd, hv.st[3] = hd * heads * tokens;
  const View tv = View::contiguous(r0.data(), hd, heads, tokens);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd; ++i) hv.at(i, h, t) = tv.at(i, h, t);
  RopeParams p;
  p.mode = RopeMode::neox;
  p.n_dims = 6;
  const std::vector<int32_t> pos{1, 2, 3, 50, 9};
  REQUIRE(rope(tv, pos, p).is_ok());
  REQUIRE(rope(hv, pos, p).is_ok());
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd; ++i) REQUIRE(hv.at(i, h, t) == tv.at(i, h, t));
}

TEST_CASE("attention over a paged KV cache equals the contiguous one", "[cpu][ops]") {
  const int64_t hd = 32, n_heads = 4, n_kv = 2, n_ctx = 45, n_q = 3, bs = 16;
  auto qv = randn(static_cast<size_t>(hd * n_heads * n_q), 60);
  auto kf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 61), vf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 62);
  const auto t = StorageType::Q8_0;
  const size_t rb = *storage_row_bytes(t, hd);
  std::vector<uint8_t> kc(rb * static_cast<size_t>(n_kv * n_ctx)), vc(kc.size());
  for (int64_t r = 0; r < n_kv * n_ctx; ++r) {
    REQUIRE(quantize_row(t, kf.data() + r * hd, kc.data() + r * rb, hd).is_ok());
    REQUIRE(quantize_row(t, vf.data() + r * hd, vc.data() + r * rb, hd).is_ok());
  }
  // Scatter the 3 logical blocks into physical blocks 4, 0, 2 of a 5-block pool.
  const std::vector<int32_t> table{4, 0, 2};
  const size_t block_bytes = rb * static_cast<size_t>(n_kv * bs);
  std::vector<uint8_t> kp(block_bytes * 5, 0xee), vp(kp.size(), 0xee);
  for (int64_t p = 0; p < n_ctx; ++p) {
    const int64_t slot = table[static_cast<size_t>(p / bs)] * bs + p % bs;
    std::copy_n(kc.begin() + static_cast<ptrdiff_t>(p * n_kv * static_cast<int64_t>(rb)), n_kv * static_cast<int64_t>(rb),
                kp.begin() + static_cast<ptrdiff_t>(slot * n_kv * static_cast<int64_t>(rb)));
    std::copy_n(vc.begin() + static_cast<ptrdiff_t>(p * n_kv * static_cast<int64_t>(rb)), n_kv * static_cast<int64_t>(rb),
                vp.begin() + static_cast<ptrdiff_t>(slot * n_kv * static_cast<int64_t>(rb)));
  }
  const std::vector<int32_t> pos{10, 30, 44};
  std::vector<float> want(static_cast<size_t>(hd * n_heads * n_q)), got(want.size());
  AttentionArgs a{View::contiguous(qv.data(), hd, n_heads, n_q), {kc.data(), t, hd, n_kv, n_ctx},
                  {vc.data(), t, hd, n_kv, n_ctx}, pos, 0.2f, View::contiguous(want.data(), hd, n_heads, n_q)};
  ThreadPool pool(2);
  REQUIRE(attention(a, detect_isa(), pool).is_ok());
  a.k = {kp.data(), t, hd, n_kv, n_ctx, table, bs};
  a.v = {vp.data(), t, hd, n_kv, n_ctx, table, bs};
  a.out = View::contiguous(got.data(), hd, n_heads, n_q);
  REQUIRE(attention(a, detect_isa(), pool).is_ok());
  CHECK(got == want);
  a.k.block_table = std::span<const int32_t>(table.data(), 2);  // covers 32 of 45 positions
  CHECK(attention(a, detect_isa(), pool).message() == "cpu: attention: the block table does not cover all 45 positions");
}

TEST_CASE("attention: 1 and 3 threads, whole prefill or one query at a time, give the same bits", "[cpu][ops]") {
  // 16 query heads over 2 KV heads (a group of 8, as Qwen3.6-A3B), 21 queries (query blocks
  // of 8 and a partial one), the last 21 positions of a 150-key context (tile edges).
  const int64_t hd = 64, n_heads = 16, n_kv = 2, n_ctx = 150, n_q = 21;
  auto qv = randn(static_cast<size_t>(hd * n_heads * n_q), 43);
  auto kf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 44), vf = randn(static_cast<size_t>(hd * n_kv * n_ctx), 45);
  std::vector<int32_t> pos(static_cast<size_t>(n_q));
  std::iota(pos.begin(), pos.end(), static_cast<int32_t>(n_ctx - n_q));
  for (auto t : {StorageType::F32, StorageType::F16, StorageType::Q8_0}) {
    const size_t rb = *storage_row_bytes(t, hd);
    std::vector<uint8_t> kq(rb * static_cast<size_t>(n_kv * n_ctx)), vq(kq.size());
    for (int64_t r = 0; r < n_kv * n_ctx; ++r) {
      REQUIRE(quantize_row(t, kf.data() + r * hd, kq.data() + r * rb, hd).is_ok());
      REQUIRE(quantize_row(t, vf.data() + r * hd, vq.data() + r * rb, hd).is_ok());
    }
    const size_t n_out = static_cast<size_t>(hd * n_heads * n_q);
    std::vector<float> ref(n_out), one(n_out), three(n_out), each(n_out);
    AttentionArgs a{View::contiguous(qv.data(), hd, n_heads, n_q), {kq.data(), t, hd, n_kv, n_ctx},
                    {vq.data(), t, hd, n_kv, n_ctx}, pos, 0.125f, View::contiguous(ref.data(), hd, n_heads, n_q)};
    REQUIRE(attention_reference(a).is_ok());
    ThreadPool pool1(1), pool3(3);
    AttentionScratch scratch;  // reused across calls of different shapes
    a.out = View::contiguous(one.data(), hd, n_heads, n_q);
    REQUIRE(attention(a, detect_isa(), pool1, scratch).is_ok());
    a.out = View::contiguous(three.data(), hd, n_heads, n_q);
    REQUIRE(attention(a, detect_isa(), pool3, scratch).is_ok());
    for (int64_t qi = 0; qi < n_q; ++qi) {  // decode-shaped calls: heads split over threads
      AttentionArgs d = a;
      d.q = View::contiguous(qv.data() + qi * hd * n_heads, hd, n_heads, 1);
      d.q_pos = std::span<const int32_t>(pos).subspan(static_cast<size_t>(qi), 1);
      d.out = View::contiguous(each.data() + qi * hd * n_heads, hd, n_heads, 1);
      REQUIRE(attention(d, detect_isa(), pool3, scratch).is_ok());
    }
    INFO(storage_type_name(t));
    CHECK(std::memcmp(one.data(), three.data(), n_out * sizeof(float)) == 0);
    CHECK(std::memcmp(one.data(), each.data(), n_out * sizeof(float)) == 0);
    for (size_t i = 0; i < n_out; ++i) REQUIRE(one[i] == Approx(ref[i]).margin(1e-5).epsilon(1e-4));
  }
}

#include "row_to_f32.hpp"

TEST_CASE("row_to_f32: every half and a sweep of bf16 convert as the SDK's scalar conversion does", "[cpu][ops]") {
  // All 65536 bit patterns: normals, subnormals, zeros, infinities and NaN payloads.
  // Twice the room: GCC bounds-checks the inlined f32 branch (4 bytes an element) too.
  const size_t n = 65536;
  std::vector<uint16_t> all(2 * n);
  std::iota(all.begin(), all.begin() + n, uint16_t{0});
  std::vector<float> got(n), want(n);
  for (auto t : {StorageType::F16, StorageType::BF16}) {
    row_to_f32(t, all.data(), got.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) want[i] = t == StorageType::F16 ? fp16_to_fp32(all[i]) : bf16_to_fp32(all[i]);
    INFO(storage_type_name(t));
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("row ops on 3 threads equal the single-thread path bit for bit (contiguous and padded rows)", "[cpu][ops]") {
  // 300 rows of 131: enough work that the pool is used; odd lengths leave vector tails.
  const int64_t n = 131, rows = 300, pad = 140;
  const auto x0 = randn(static_cast<size_t>(n * rows), 60, 3.f), x1 = randn(static_cast<size_t>(n * rows), 61);
  ThreadPool pool(3);
  for (bool padded_rows : {false, true}) {
    std::vector<float> ba, bb, b1, b3;
    View a = padded(ba, n, rows, padded_rows ? pad : n), b = padded(bb, n, rows, padded_rows ? pad : n);
    View y1 = padded(b1, n, rows, padded_rows ? pad : n), y3 = padded(b3, n, rows, padded_rows ? pad : n);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i) a.at(i, r) = x0[static_cast<size_t>(r * n + i)], b.at(i, r) = x1[static_cast<size_t>(r * n + i)];
    View col = b;  // one column, broadcast along rows
    col.ne[0] = 1;
    auto same_bits = [&](const char* what) {
      INFO(what << (padded_rows ? ", padded rows" : ", contiguous"));
      for (int64_t r = 0; r < rows; ++r) REQUIRE(std::memcmp(y1.row(r), y3.row(r), static_cast<size_t>(n) * sizeof(float)) == 0);
    };
    auto both = [&](const char* what, auto op) {
      std::fill(b1.begin(), b1.end(), 0.f), std::fill(b3.begin(), b3.end(), 0.f);
      REQUIRE(op(y1, nullptr).is_ok());
      REQUIRE(op(y3, &pool).is_ok());
      same_bits(what);
    };
    both("rms_norm", [&](const View& y, ThreadPool* p) { return rms_norm(a, y, 1e-6f, p); });
    both("l2_norm", [&](const View& y, ThreadPool* p) { return l2_norm(a, y, 1e-6f, p); });
    both("softmax", [&](const View& y, ThreadPool* p) { return softmax(a, &b, 0.3f, y, nullptr, p); });
    for (auto f : {Activation::silu, Activation::gelu, Activation::sigmoid, Activation::softplus})
      both("activation", [&](const View& y, ThreadPool* p) { return activate(f, a, y, p); });
    both("swiglu", [&](const View& y, ThreadPool* p) { return swiglu(a, b, y, p); });
    both("add", [&](const View& y, ThreadPool* p) { return binary(Binary::add, a, b, y, p); });
    both("mul by a broadcast column", [&](const View& y, ThreadPool* p) { return binary(Binary::mul, a, col, y, p); });
    both("scale", [&](const View& y, ThreadPool* p) { return scale(a, 0.7f, y, p); });
    // rope in place on [n_dims + tail, heads, tokens]: 6 heads of 50 tokens.
    RopeParams rp;
    rp.mode = RopeMode::neox;
    rp.n_dims = 128;
    std::vector<int32_t> pos(50);
    std::iota(pos.begin(), pos.end(), 7);
    both("rope", [&](const View& y, ThreadPool* p) {
      for (int64_t r = 0; r < rows; ++r) std::memcpy(y.row(r), a.row(r), static_cast<size_t>(n) * sizeof(float));
      View yr = y;
      yr.ne[1] = 6, yr.ne[2] = 50, yr.st[2] = 6 * y.st[1];
      OpScratch sc;
      return rope(yr, pos, rp, &sc, p);
    });
  }
}

TEST_CASE("conv1d on 3 threads equals one thread bit for bit, outputs and carried state", "[cpu][ops]") {
  const int64_t C = 301, T = 30, K = 4;  // C * T * K above the pool's threshold
  auto x = randn(static_cast<size_t>(C * T), 62), w = randn(static_cast<size_t>(C * K), 63);
  const auto init = randn(static_cast<size_t>((K - 1) * C), 64);
  std::vector<float> s1 = init, s3 = init, y1(x.size()), y3(x.size());
  ThreadPool pool(3);
  REQUIRE(conv1d_causal(View::contiguous(x.data(), C, T), w.data(), K, s1.data(), View::contiguous(y1.data(), C, T)).is_ok());
  REQUIRE(conv1d_causal(View::contiguous(x.data(), C, T), w.data(), K, s3.data(), View::contiguous(y3.data(), C, T), &pool).is_ok());
  CHECK(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(s1.data(), s3.data(), s1.size() * sizeof(float)) == 0);
}

TEST_CASE("row ops use the pool only when no input partially overlaps the output", "[cpu]") {
  ThreadPool pool(3);
  std::vector<float> buf(64 * 8 + 64);
  const View y = View::contiguous(buf.data(), 64, 8);
  // In place (each row reads only itself) and disjoint inputs are safe.
  CHECK(pool_for_rows(&pool, y, {y}) == &pool);
  CHECK(pool_for_rows(&pool, y, {View::contiguous(buf.data() + 64 * 8, 64, 1)}) == &pool);
  // Shifted by half a row: a thread's writes land in another thread's input rows.
  CHECK(pool_for_rows(&pool, y, {View::contiguous(buf.data() + 32, 64, 8)}) == nullptr);
  // A transposed view of the same memory is not the same layout.
  View t = y;
  t.ne[0] = 8, t.ne[1] = 64, t.st[0] = 64, t.st[1] = 1;
  CHECK(pool_for_rows(&pool, y, {t}) == nullptr);
}
