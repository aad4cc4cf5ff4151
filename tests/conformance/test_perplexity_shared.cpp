// Perplexity's chunk evaluation against a slow reference on the shared models: every chunk
// of a text, run as one of several parallel sequences in batches, must give the logits that
// feeding the same chunk one token at a time into a fresh sequence gives, and the
// perplexity computed from those reference logits in double. The hybrid fixture checks that
// each chunk starts from an empty recurrent state.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "engine_support.hpp"
#include "quality/log_probs.hpp"
#include "quality/perplexity.hpp"
#include "util/read_file.hpp"

namespace perplexity_shared_test {

// Reference: the chunk (first token BOS) teacher-forced from an empty sequence; the logits
// of positions first .. n_ctx - 2.
std::vector<std::vector<float>> reference_rows(sy::engine::Engine& e, std::vector<int32_t> chunk, int64_t first,
                                               int32_t bos) {
  const int32_t seq = 3;  // a sequence evaluate_chunks does not use in these tests
  if (e.kv().length(seq) >= 0) REQUIRE(e.kv().remove(seq));
  chunk[0] = bos;
  const std::vector<int32_t> prompt(chunk.begin(), chunk.begin() + first + 1);
  const std::vector<int32_t> forced(chunk.begin() + first + 1, chunk.end() - 1);
  auto rows = sy::test::teacher_forced(e, seq, prompt, forced);
  REQUIRE(e.kv().remove(seq));
  return rows;
}

void check_model(const std::filesystem::path& model, int64_t n_ctx, int64_t batch, float tolerance) {
  const std::filesystem::path shared = SY_SHARED_DIR;
  sy::test::EngineOptions o;
  o.ctx = n_ctx;
  o.parallel = 4;
  auto rt = sy::test::bring_up_model(model, o);
  REQUIRE(rt->tokenizer);
  auto text = sy::util::read_file(std::filesystem::path(SY_SOURCE_DIR) / "tests/data/quality/story.txt", "text");
  REQUIRE(text);
  const auto tokens = rt->tokenizer->encode(*text, true, false);
  auto plan = sy::quality::plan_chunks(static_cast<int64_t>(tokens.size()), n_ctx, 5, batch);
  REQUIRE(plan);
  REQUIRE(plan->n_seq == 3);  // two passes, the second with fewer sequences
  sy::engine::Engine& e = *rt->engine;
  const int64_t n_vocab = e.n_vocab();
  const int32_t bos = rt->tokenizer->bos();

  sy::quality::NllSums ours;
  double ref_nll = 0;
  int64_t ref_count = 0, chunks_seen = 0;
  auto on_chunk = [&](int64_t chunk, std::span<const int32_t> toks, std::span<const float> logits) -> sy::Status {
    CHECK(chunk == chunks_seen++);
    REQUIRE(static_cast<int64_t>(logits.size()) == plan->scored() * n_vocab);
    // The reference runs after all of this pass's chunks were evaluated; it uses its own
    // sequence, so the ones evaluate_chunks holds are not disturbed.
    const auto ref = reference_rows(e, std::vector<int32_t>(toks.begin(), toks.end()), plan->first(), bos);
    REQUIRE(static_cast<int64_t>(ref.size()) == plan->scored());
    float worst = 0;
    for (int64_t i = 0; i < plan->scored(); ++i) {
      const auto row = logits.subspan(static_cast<size_t>(i * n_vocab), static_cast<size_t>(n_vocab));
      for (int64_t v = 0; v < n_vocab; ++v)
        worst = std::max(worst, std::fabs(row[static_cast<size_t>(v)] - ref[static_cast<size_t>(i)][static_cast<size_t>(v)]));
      const int32_t target = toks[static_cast<size_t>(plan->first() + i + 1)];
      const auto s = sy::quality::row_softmax(row);
      ours.add(-s.log_prob(row[static_cast<size_t>(target)]));
      // The reference's negative log-likelihood, in double from its own logits.
      const auto& r = ref[static_cast<size_t>(i)];
      double mx = r[0], sum = 0;
      for (float x : r) mx = std::max(mx, static_cast<double>(x));
      for (float x : r) sum += std::exp(static_cast<double>(x) - mx);
      ref_nll += mx + std::log(sum) - r[static_cast<size_t>(target)];
      ++ref_count;
    }
    INFO("chunk " << chunk << ": largest logit difference " << worst);
    CHECK(worst <= tolerance);
    return {};
  };
  REQUIRE(sy::quality::evaluate_chunks(e, tokens, *plan, bos, on_chunk));
  CHECK(chunks_seen == 5);
  CHECK(ours.count == ref_count);
  CHECK(ours.perplexity() == Approx(std::exp(ref_nll / static_cast<double>(ref_count))).epsilon(1e-4));
  for (int32_t s = 0; s < 3; ++s) CHECK(e.kv().length(s) < 0);  // the sequences are left empty
}

}  // namespace perplexity_shared_test

TEST_CASE("perplexity: chunks in parallel sequences give the token-by-token logits (stories260K)", "[perplexity]") {
  // Batched prefill and one-token decode add in other orders: last-bit differences.
  perplexity_shared_test::check_model(std::filesystem::path(SY_SHARED_DIR) / "models/stories260K.gguf", 32, 100, 1e-3f);
}

TEST_CASE("perplexity: each chunk starts from an empty recurrent state (qwen35moe hybrid)", "[perplexity]") {
  perplexity_shared_test::check_model(std::filesystem::path(SY_SHARED_DIR) / "fixtures/qwen35moe-e128-f32.gguf", 32, 100,
                                      2e-3f);
}
