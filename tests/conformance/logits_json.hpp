// A model's logits against a shared Hugging Face folder's logits.json (the reference that
// came with the checkpoint): all positions in one batch, then teacher-forced step by step.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine_support.hpp"

namespace sy::test {

inline double row_max(const std::vector<double>& r) {
  double m = 0;
  for (double v : r) m = std::max(m, std::abs(v));
  return m;
}

// All 28 positions in one batch, then teacher-forced one token per step after the prompt,
// each logit within relative * (1 + max |reference logit| of its row).
inline void check_logits(const std::filesystem::path& dir, const std::filesystem::path& run_path, double relative,
                         const EngineOptions& opts = {}) {
  std::ifstream in(dir / "logits.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  const auto ids = ref["ids"].get<std::vector<int32_t>>();
  const auto n_prompt = ref["n_prompt"].get<size_t>();
  const auto rows = ref["logits"].get<std::vector<std::vector<double>>>();
  REQUIRE(rows.size() == ids.size());
  const int64_t nv = static_cast<int64_t>(rows.front().size());
  auto rt = bring_up_model(run_path, opts);
  auto& e = *rt->engine;
  REQUIRE(e.n_vocab() == nv);
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<sy::engine::BatchToken> batch;
  for (int32_t t : ids) batch.push_back({0, t, true});
  std::vector<float> all;
  REQUIRE(e.decode(batch, all).is_ok());
  double worst = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double bound = relative * (1 + row_max(rows[i]));
    double d = 0;
    for (int64_t k = 0; k < nv; ++k)
      d = std::max(d, std::abs(all[i * static_cast<size_t>(nv) + static_cast<size_t>(k)] - rows[i][static_cast<size_t>(k)]));
    worst = std::max(worst, d / bound);
    INFO("position " << i << ": max |diff| " << d << ", bound " << bound);
    CHECK(d <= bound);
  }
  const std::vector<int32_t> prompt(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n_prompt));
  const std::vector<int32_t> forced(ids.begin() + static_cast<std::ptrdiff_t>(n_prompt), ids.end() - 1);
  REQUIRE(e.kv().remove(0).is_ok());
  const auto steps = teacher_forced(e, 0, prompt, forced);
  REQUIRE(steps.size() == ids.size() - n_prompt);
  for (size_t k = 0; k < steps.size(); ++k) {
    const size_t pos = n_prompt - 1 + k;
    const double bound = relative * (1 + row_max(rows[pos]));
    double d = 0;
    for (int64_t j = 0; j < nv; ++j) d = std::max(d, std::abs(steps[k][static_cast<size_t>(j)] - rows[pos][static_cast<size_t>(j)]));
    worst = std::max(worst, d / bound);
    INFO("teacher-forced position " << pos << ": max |diff| " << d << ", bound " << bound);
    CHECK(d <= bound);
  }
  std::cout << dir.parent_path().filename().string() << "/" << dir.filename().string() << ": worst logit diff "
            << worst << " of its bound (relative " << relative << ")\n";
}

}  // namespace sy::test
