#include "conformance/fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace sy::conformance {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<fs::path> fixture_references(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 9 && name.ends_with(".ref.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<json> read_reference(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return error::io_error("cannot read " + file.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    return error::corrupt(file.string() + " is not valid JSON: " + e.what());
  }
}

fs::path fixture_model(const json& ref, const fs::path& fixtures_dir) {
  if (ref.contains("model_location"))  // "shared/models/..."
    return fixtures_dir.parent_path() / fs::path(ref.at("model_location").get<std::string>()).lexically_relative("shared");
  return fixtures_dir / ref.at("model_file").get<std::string>();
}

int32_t argmax(const float* l, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (l[i] > l[best]) best = static_cast<int32_t>(i);
  return best;
}

double margin(const float* l, int64_t n) {
  const int32_t best = argmax(l, n);
  double second = -INFINITY;
  for (int64_t i = 0; i < n; ++i)
    if (i != best) second = std::max(second, static_cast<double>(l[i]));
  return static_cast<double>(l[best]) - second;
}

namespace {

Status ensure_sequence(engine::Engine& e, int32_t seq) {
  if (e.kv().length(seq) >= 0) return Status::ok();
  return e.kv().add(seq);
}

}  // namespace

Result<std::vector<std::vector<float>>> teacher_forced(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt,
                                                       const std::vector<int32_t>& forced) {
  if (auto st = ensure_sequence(e, seq); !st) return st;
  std::vector<std::vector<float>> out;
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({seq, prompt[i], i + 1 == prompt.size()});
  std::vector<float> l;
  if (auto st = e.decode(batch, l); !st) return st;
  out.push_back(l);
  for (int32_t t : forced) {
    const engine::BatchToken bt{seq, t, true};
    if (auto st = e.decode({&bt, 1}, l); !st) return st;
    out.push_back(l);
  }
  return out;
}

Result<Greedy> greedy(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt, int64_t n) {
  if (auto st = ensure_sequence(e, seq); !st) return st;
  Greedy g;
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({seq, prompt[i], i + 1 == prompt.size()});
  std::vector<float> l;
  for (int64_t k = 0; k < n; ++k) {
    if (auto st = e.decode(batch, l); !st) return st;
    g.ids.push_back(argmax(l.data(), e.n_vocab()));
    g.margins.push_back(margin(l.data(), e.n_vocab()));
    batch = {{seq, g.ids.back(), true}};
  }
  return g;
}

LogitDiff compare_logits(const std::vector<std::vector<float>>& got, const json& run, double argmax_margin,
                         const std::vector<double>& flip_bound) {
  LogitDiff d;
  for (const auto& s : run.at("steps")) {
    const auto k = s.at("step").get<size_t>();
    const auto& l = got.at(k);
    double step_max = 0;
    for (const auto& p : s.at("topk")) step_max = std::max(step_max, std::abs(l.at(p.at(0).get<size_t>()) - p.at(1).get<double>()));
    if (k < flip_bound.size() && flip_bound[k] > 0 && step_max <= flip_bound[k]) {
      d.flip_max_abs = std::max(d.flip_max_abs, step_max);
      ++d.flip_steps;
    } else {
      d.max_abs = std::max(d.max_abs, step_max);
    }
    if (s.at("margin").get<double>() > argmax_margin &&
        argmax(l.data(), static_cast<int64_t>(l.size())) != s.at("argmax").get<int32_t>())
      ++d.argmax_misses;
  }
  for (const auto& f : run.at("full_logits")) {
    const auto& l = got.at(f.at("step").get<size_t>());
    const auto r = f.at("logits").get<std::vector<double>>();
    double ss = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      d.max_abs = std::max(d.max_abs, std::abs(l.at(i) - r[i]));
      ss += (l.at(i) - r[i]) * (l.at(i) - r[i]);
    }
    d.rms = std::max(d.rms, std::sqrt(ss / static_cast<double>(r.size())));
  }
  return d;
}

TeacherForced check_teacher_forced(const std::vector<std::vector<float>>& got, const json& ref) {
  TeacherForced t;
  const auto& tol = ref.at("tolerance");
  t.max_abs_tolerance = tol.at("max_abs_logit_diff").get<double>();
  t.rms_tolerance = tol.at("rms_logit_diff").get<double>();
  // Documented rounding-flip steps (see the header) and their own bounds; 0 elsewhere.
  std::vector<double> flip;
  const auto ic = ref.find("independent_check");
  if (ic != ref.end() && ic->contains("with_activation_emulation")) {
    const auto& emu = ic->at("with_activation_emulation");
    if (emu.contains("max_abs_diff_of_top10_logits_per_step"))
      for (const auto& v : emu.at("max_abs_diff_of_top10_logits_per_step")) {
        const double e = v.get<double>();
        flip.push_back(e > t.max_abs_tolerance ? 1.5 * e : 0.0);
      }
  }
  // The file's own argmax rule replaces compare_logits' margin rule.
  t.diff = compare_logits(got, ref, INFINITY, flip);
  for (const auto& k : tol.at("steps_where_argmax_is_required")) {
    const auto& l = got.at(k.get<size_t>());
    if (argmax(l.data(), static_cast<int64_t>(l.size())) != ref.at("steps").at(k.get<size_t>()).at("argmax").get<int32_t>())
      ++t.required_argmax_misses;
  }
  return t;
}

size_t greedy_required(const Greedy& reference, double near_tie) {
  for (size_t k = 0; k < reference.margins.size(); ++k)
    if (reference.margins[k] <= near_tie) return k;
  return reference.ids.size();
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace sy::conformance
