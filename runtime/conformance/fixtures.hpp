// The shared fixtures (shared/fixtures, see its README): synthetic models of every
// architecture with llama.cpp's logits and greedy ids. Reading the references, decoding
// teacher-forced or greedily, and measuring how far logits are from a reference run; used
// by `switchyard conformance --fixtures` and by tests/conformance/test_engine_fixtures.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "switchyard/status.hpp"

namespace sy::conformance {

/// Every `*.ref.json` of a fixtures folder, sorted by name.
std::vector<std::filesystem::path> fixture_references(const std::filesystem::path& dir);

/// Reads a reference file; errors name the file.
Result<nlohmann::json> read_reference(const std::filesystem::path& file);

/// The model a reference describes: `model_file` next to it, or `model_location`
/// ("shared/models/...") relative to the shared folder above the fixtures folder.
std::filesystem::path fixture_model(const nlohmann::json& ref, const std::filesystem::path& fixtures_dir);

/// Index of the largest value (ties: the lower index, as the references break them).
int32_t argmax(const float* l, int64_t n);
/// Largest minus second largest value.
double margin(const float* l, int64_t n);

/// Decodes `prompt` as one batch (logits for its last position), then each of `forced` one
/// at a time: forced.size() + 1 logit vectors. Adds the sequence if it is not there.
Result<std::vector<std::vector<float>>> teacher_forced(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt,
                                                       const std::vector<int32_t>& forced);

/// Free-running greedy continuation of n tokens, with the margin of every choice.
struct Greedy {
  std::vector<int32_t> ids;
  std::vector<double> margins;
};
Result<Greedy> greedy(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt, int64_t n);

/// How far teacher-forced logits are from a reference run (`steps` and `full_logits` of the
/// main reference or of ref_llamacpp_defaults).
struct LogitDiff {
  double max_abs = 0;         ///< over every step's top-10 and the full vectors
  double rms = 0;             ///< worst full vector
  size_t argmax_misses = 0;   ///< steps whose margin exceeds `argmax_margin` but whose argmax differs
  /// Top-10 differences at the file's documented rounding-flip steps, held to that step's
  /// own bound instead of max_abs (see check_teacher_forced); the largest, and how many steps.
  double flip_max_abs = 0;
  size_t flip_steps = 0;
};
LogitDiff compare_logits(const std::vector<std::vector<float>>& got, const nlohmann::json& run, double argmax_margin,
                         const std::vector<double>& flip_bound = {});

/// The teacher-forced check of a file: top-10 and full logits within `tolerance.max_abs_logit_diff`,
/// full vectors' rms within `rms_logit_diff`, and the argmax at every step the file requires.
/// One exception the file documents: at a step where its own independent emulation of
/// llama.cpp's activation rounding (independent_check.with_activation_emulation) differs
/// from llama.cpp by more than max_abs_logit_diff — a rounding flip of a near-tied expert,
/// which an exact emulation reproduces — the top-10 bound of that step is 1.5 x that
/// emulation's difference, the README's own per-step convention.
struct TeacherForced {
  LogitDiff diff;
  size_t required_argmax_misses = 0;  ///< among `steps_where_argmax_is_required`
  double max_abs_tolerance = 0, rms_tolerance = 0;
  [[nodiscard]] bool ok() const {
    return diff.max_abs <= max_abs_tolerance && diff.rms <= rms_tolerance && required_argmax_misses == 0;
  }
};
TeacherForced check_teacher_forced(const std::vector<std::vector<float>>& got, const nlohmann::json& ref);

/// Ids that must agree between two greedy runs: up to the first step whose margin in the
/// reference run is at most `near_tie` (or all of them).
size_t greedy_required(const Greedy& reference, double near_tie);

/// Length of the common prefix.
size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace sy::conformance
