// The samplers plugin through the registry, against hand-computed examples.
// For logits (3, 2, 1, 0): softmax = (0.6439, 0.2369, 0.0871, 0.0321).
#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("top_k on a large list with ties keeps exactly the full sort's prefix", "[samplers]") {
  // Logits from a fixed pattern with many ties; the reference orders the whole list.
  CandidateList c;
  for (int32_t i = 0; i < 5000; ++i) c.items.push_back({i, static_cast<float>((i * 7919) % 101), 0});
  auto ref = c.items;
  std::sort(ref.begin(), ref.end(), [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  ParamMap p;
  p.set("k", int64_t{40});
  REQUIRE(make("top_k", p)->apply(c, {}).is_ok());
  REQUIRE(c.items.size() == 40);
  for (size_t i = 0; i < 40; ++i) CHECK(c.items[i].id == ref[i].id);
  // Later samplers rely on the list being marked sorted.
  CHECK(c.sorted);
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

TEST_CASE("dist: the same seed gives the same tokens, frequencies follow softmax(logits / T)", "[samplers]") {
  ParamMap p;
  p.set("seed", int64_t{1234});
  ParamMap t;
  t.set("t", 0.7);
  auto temp = make("temperature", t);
  auto a = make("dist", p);
  auto b = make("dist", p);
  std::vector<int> counts(4, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    auto ca = sample_list();
    auto cb = sample_list();
    REQUIRE(temp->apply(ca, {}).is_ok());
    REQUIRE(temp->apply(cb, {}).is_ok());
    REQUIRE(a->apply(ca, {}).is_ok());
    REQUIRE(b->apply(cb, {}).is_ok());
    REQUIRE(ca.selected == cb.selected);
    ++counts[static_cast<size_t>(ca.selected)];
  }
  // Pearson chi-square against softmax((1, 2, 3, 0) / 0.7); 3 degrees of freedom,
  // p = 0.001 -> 16.27.
  const double logits[4] = {1, 2, 3, 0};
  double z = 0;
  for (double l : logits) z += std::exp(l / 0.7);
  double chi2 = 0;
  for (int i = 0; i < 4; ++i) {
    const double expected = n * std::exp(logits[i] / 0.7) / z;
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

TEST_CASE("typical_p keeps the tokens whose surprise is nearest the entropy", "[samplers]") {
  // H = 0.9475 nats; |-ln p - H| = 0.5073 (id 2), 0.4927 (id 1), 1.4927 (id 0), 2.4927 (id 3).
  ParamMap p;
  p.set("p", 0.5);
  auto c = sample_list();
  REQUIRE(make("typical_p", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{1, 2});  // 0.2369 < 0.5, then 0.2369 + 0.6439 > 0.5
}

TEST_CASE("presence and frequency penalties subtract per presence and per count", "[samplers]") {
  const std::vector<int32_t> history{2, 2, 0};
  SamplerContext ctx;
  ctx.output = history;
  ParamMap p;
  p.set("penalty", 0.5);
  auto c = sample_list();
  REQUIRE(make("presence_penalty", p)->apply(c, ctx).is_ok());
  CHECK(c.items[0].logit == Approx(0.5));  // id 0 seen once
  CHECK(c.items[1].logit == Approx(2.0));  // id 1 unseen
  CHECK(c.items[2].logit == Approx(2.5));  // id 2 seen twice: once 0.5
  c = sample_list();
  REQUIRE(make("frequency_penalty", p)->apply(c, ctx).is_ok());
  CHECK(c.items[0].logit == Approx(0.5));
  CHECK(c.items[2].logit == Approx(2.0));  // twice: 2 x 0.5
}

TEST_CASE("logit_bias adds its biases; -inf bans; malformed entries are refused clearly", "[samplers]") {
  ParamMap p;
  p.set("bias", std::vector<std::string>{"1:+2.5", "3:-inf"});
  auto c = sample_list();
  REQUIRE(make("logit_bias", p)->apply(c, {}).is_ok());
  CHECK(c.items[1].logit == Approx(4.5));
  CHECK(std::isinf(c.items[3].logit));
  REQUIRE(make("greedy")->apply(c, {}).is_ok());
  CHECK(c.selected == 1);
  ParamMap bad;
  bad.set("bias", std::vector<std::string>{"x:1"});
  const auto s = reg().create_sampler("logit_bias", bad);
  REQUIRE_FALSE(s.has_value());
  CHECK_THAT(s.status().message(), Catch::Contains("'x:1' is not TOKEN_ID:BIAS"));
  // 2^32 + 1 would wrap to token 1 as an int32.
  ParamMap wraps;
  wraps.set("bias", std::vector<std::string>{"4294967297:-inf"});
  const auto w = reg().create_sampler("logit_bias", wraps);
  REQUIRE_FALSE(w.has_value());
  CHECK_THAT(w.status().message(), Catch::Contains("'4294967297:-inf' is not TOKEN_ID:BIAS"));
}

TEST_CASE("xtc removes the top choices but the least likely of them", "[samplers]") {
  ParamMap p;
  p.set("probability", 1.0);
  p.set("threshold", 0.2);  // p = 0.6439 (id 2) and 0.2369 (id 1) are top choices
  p.set("seed", int64_t{7});
  auto c = sample_list();
  REQUIRE(make("xtc", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{1, 0, 3});
  p.set("threshold", 0.05);  // now id 0 (0.0871) too
  c = sample_list();
  REQUIRE(make("xtc", p)->apply(c, {}).is_ok());
  CHECK(ids(c) == std::vector<int32_t>{0, 3});
  p.set("probability", 0.0);  // never acts
  c = sample_list();
  REQUIRE(make("xtc", p)->apply(c, {}).is_ok());
  CHECK(c.items.size() == 4);
}

TEST_CASE("mirostat_v2 truncates above mu and steers mu toward tau", "[samplers]") {
  // tau 1 bit: mu starts at 2; surprises are 0.635 (id 2), 2.078 (id 1), 3.52, 4.96 bits.
  ParamMap p;
  p.set("tau", 1.0);
  p.set("eta", 0.1);
  p.set("seed", int64_t{3});
  auto m = make("mirostat_v2", p);
  std::vector<int32_t> picks;
  for (int i = 0; i < 3; ++i) {
    auto c = sample_list();
    REQUIRE(m->apply(c, {}).is_ok());
    picks.push_back(c.selected);
  }
  // Each pick of id 2 (surprise 0.635 < tau) raises mu by 0.0365: 2.0365, 2.073 - still
  // below 2.078, so only id 2 survives for three steps.
  CHECK(picks == std::vector<int32_t>{2, 2, 2});
  auto c = sample_list();
  REQUIRE(m->apply(c, {}).is_ok());  // mu = 2.1095 > 2.078: id 1 may now be drawn
  CHECK(c.items.size() == 2);
}

TEST_CASE("dry penalises the token that would extend a repeat, sequence breakers stop it", "[samplers]") {
  const std::vector<int32_t> history{5, 6, 7, 8, 5, 6, 7};  // "5 6 7" was followed by 8
  std::vector<std::string> pieces(10, "x");
  SamplerContext ctx;
  ctx.prompt = history;
  ctx.pieces = pieces;
  ParamMap p;
  p.set("multiplier", 1.0);
  p.set("base", 2.0);
  p.set("allowed_length", int64_t{2});
  CandidateList c;
  c.items = {{8, 1.f, 0}, {9, 1.f, 0}};
  REQUIRE(make("dry", p)->apply(c, ctx).is_ok());
  CHECK(c.items[0].logit == Approx(1.0 - 2.0));  // match length 3: 1 x 2^(3 - 2)
  CHECK(c.items[1].logit == Approx(1.0));
  pieces[6] = ":";  // token 6 is a breaker: the match is only "7", below allowed_length
  c.items = {{8, 1.f, 0}, {9, 1.f, 0}};
  REQUIRE(make("dry", p)->apply(c, ctx).is_ok());
  CHECK(c.items[0].logit == Approx(1.0));
}

TEST_CASE("chains compose in the pipeline's order", "[samplers]") {
  ParamMap bias;
  bias.set("bias", std::vector<std::string>{"0:+5"});
  ParamMap k1;
  k1.set("k", int64_t{1});
  // bias, then top_k 1: token 0 (1 + 5) is the best left.
  auto c = sample_list();
  auto bias_first = make("logit_bias", bias);
  auto then_k = make("top_k", k1);
  REQUIRE(bias_first->apply(c, {}).is_ok());
  REQUIRE(then_k->apply(c, {}).is_ok());
  REQUIRE(make("greedy")->apply(c, {}).is_ok());
  CHECK(c.selected == 0);
  // top_k 1 first keeps only token 2; the bias cannot bring token 0 back.
  c = sample_list();
  auto tk = make("top_k", k1);
  auto lb = make("logit_bias", bias);
  REQUIRE(tk->apply(c, {}).is_ok());
  REQUIRE(lb->apply(c, {}).is_ok());
  REQUIRE(make("greedy")->apply(c, {}).is_ok());
  CHECK(c.selected == 2);
}
