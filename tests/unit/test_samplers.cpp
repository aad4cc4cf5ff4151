// The samplers plugin through the registry, against hand-computed examples.
// For logits (3, 2, 1, 0): softmax = (0.6439, 0.2369, 0.0871, 0.0321).
#include <catch2/catch.hpp>

#include <cmath>

#include "registry/registry.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

registry::Owned<Sampler> make(const std::string& name, ParamMap p = {}) {
  auto s = reg().create_sampler(name, p);
  REQUIRE(s.has_value());
  return std::move(s.value());
}

// ids 0..3 with logits 1, 2, 3, 0 (unsorted on purpose).
CandidateList sample_list() {
  CandidateList c;
  c.items = {{0, 1.f, 0}, {1, 2.f, 0}, {2, 3.f, 0}, {3, 0.f, 0}};
  return c;
}

std::vector<int32_t> ids(const CandidateList& c) {
  std::vector<int32_t> v;
  for (const auto& x : c.items) v.push_back(x.id);
  return v;
}

}  // namespace

TEST_CASE("greedy picks the highest logit", "[samplers]") {
  auto c = sample_list();
  REQUIRE(make("greedy")->apply(c, {}).is_ok());
  CHECK(c.selected == 2);
}

TEST_CASE("top_k keeps the k best", "[samplers]") {
  ParamMap p;
  p.set("k", int64_t{2});
  auto c = sample_list();
  REQUIRE(make("top_k", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2, 1});
}

TEST_CASE("top_p keeps the smallest prefix reaching p", "[samplers]") {
  ParamMap p;
  p.set("p", 0.8);  // 0.6439 < 0.8 <= 0.6439 + 0.2369
  auto c = sample_list();
  REQUIRE(make("top_p", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2, 1});
  p.set("p", 0.9);  // needs the third: 0.8808 < 0.9 <= 0.9679
  c = sample_list();
  REQUIRE(make("top_p", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2, 1, 0});
}

TEST_CASE("min_p drops tokens below p times the best probability", "[samplers]") {
  ParamMap p;
  p.set("p", 0.2);  // threshold 0.1288: keeps 0.6439 and 0.2369
  auto c = sample_list();
  REQUIRE(make("min_p", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2, 1});
  p.set("p", 0.1);  // threshold 0.0644: keeps 0.0871 too
  c = sample_list();
  REQUIRE(make("min_p", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2, 1, 0});
}

TEST_CASE("temperature divides logits, zero means greedy", "[samplers]") {
  ParamMap p;
  p.set("t", 2.0);
  auto c = sample_list();
  REQUIRE(make("temperature", p)->apply(c, {}).is_ok());
  CHECK(c.items[1].logit == Approx(1.0));
  CHECK(c.items[2].logit == Approx(1.5));
  p.set("t", 0.0);
  c = sample_list();
  REQUIRE(make("temperature", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{2});
}

TEST_CASE("repetition_penalty divides positive and multiplies negative logits of seen tokens", "[samplers]") {
  ParamMap p;
  p.set("penalty", 2.0);
  p.set("last_n", int64_t{2});
  CandidateList c;
  c.items = {{0, 1.f, 0}, {1, 2.f, 0}, {2, 3.f, 0}, {3, -1.f, 0}};
  const std::vector<int32_t> prompt{2, 0};  // token 2 is outside the 2-token window
  const std::vector<int32_t> output{3};
  REQUIRE(make("repetition_penalty", p)->apply(c, {prompt, output}).is_ok());
  CHECK(c.items[0].logit == Approx(0.5));
  CHECK(c.items[1].logit == Approx(2.0));
  CHECK(c.items[2].logit == Approx(3.0));
  CHECK(c.items[3].logit == Approx(-2.0));
}

TEST_CASE("dist: the same seed gives the same tokens, frequencies follow softmax", "[samplers]") {
  ParamMap p;
  p.set("seed", int64_t{1234});
  auto a = make("dist", p);
  auto b = make("dist", p);
  std::vector<int> counts(4, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    auto ca = sample_list();
    auto cb = sample_list();
    REQUIRE(a->apply(ca, {}).is_ok());
    REQUIRE(b->apply(cb, {}).is_ok());
    REQUIRE(ca.selected == cb.selected);
    ++counts[static_cast<size_t>(ca.selected)];
  }
  // Pearson chi-square against softmax(1, 2, 3, 0); 3 degrees of freedom, p = 0.001 -> 16.27.
  const double logits[4] = {1, 2, 3, 0};
  double z = 0;
  for (double l : logits) z += std::exp(l);
  double chi2 = 0;
  for (int i = 0; i < 4; ++i) {
    const double expected = n * std::exp(logits[i]) / z;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  CHECK(chi2 < 16.27);
}

TEST_CASE("NaN and +inf logits are reported, never sampled", "[samplers]") {
  auto c = sample_list();
  c.items[1].logit = NAN;
  const auto st = make("greedy")->apply(c, {});
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message() ==
        "greedy: the logit of token 1 is NaN; the model produced invalid values, so no token can be sampled");
  c = sample_list();
  c.items[0].logit = INFINITY;
  ParamMap p;
  p.set("seed", int64_t{1});
  CHECK_FALSE(make("dist", p)->apply(c, {}).is_ok());
}
