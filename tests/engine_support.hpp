// Helpers for engine tests: bring a model up on the CPU through the real plugins of the
// build tree, then decode greedily or teacher-forced.
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/runtime_setup.hpp"
#include "pipeline/load.hpp"
#include "pipeline/validate.hpp"

namespace sy::test {

struct EngineOptions {
  std::string kv_type = "f32";
  int64_t ctx = 256;
  int64_t parallel = 1;
  int64_t ubatch = 512;
  bool routing_stats = false;
  int64_t kv_tokens = 0;  ///< context.kv_tokens (0: ctx x parallel)
  int64_t state_checkpoints = 0;  ///< recurrent-state checkpoint slots (hybrid models)
  std::string backends = "[ { plugin: cpu, threads: 2 } ]";  ///< the pipeline's backends list
  std::string placement;                                    ///< the pipeline's placement map, if any
  std::string format;                                       ///< the pipeline's format map, if any
  bool strict = false;  ///< `strict: true`: a node or weight a backend does not take fails the load
};

/// The runtime for `model` with the build tree's plugins; throws with the reason on failure.
inline std::unique_ptr<engine::Runtime> bring_up_model(const std::filesystem::path& model, const EngineOptions& o = {}) {
  const std::string yaml = std::string(o.strict ? "strict: true\n" : "") + "model: { path: " + nlohmann::json(model.string()).dump() +
                           " }\nbackends: " + o.backends + "\n" +
                           (o.placement.empty() ? std::string() : "placement: " + o.placement + "\n") +
                           (o.format.empty() ? std::string() : "format: " + o.format + "\n") +
                           "context: { length: " + std::to_string(o.ctx) +
                           ", kv_type: " + o.kv_type + ", parallel: " + std::to_string(o.parallel) +
                           ", ubatch: " + std::to_string(o.ubatch) +
                           ", kv_tokens: " + std::to_string(o.kv_tokens) + " }\nsampling: [ greedy ]\n";
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  pipeline::LoadOptions lo;
  lo.fixed_search_dirs = &dirs;
  auto lr = pipeline::load_pipeline_from_text(yaml, "test pipeline", lo);
  if (!lr.ok()) throw std::runtime_error(pipeline::format_diagnostic(lr.diagnostics.front()));
  const std::vector<registry::SearchDir> search{{SY_BUILD_PLUGIN_DIR, "build tree"}};
  auto rt = engine::bring_up(lr.pipeline, &search, o.routing_stats, o.state_checkpoints);
  if (!rt) throw std::runtime_error(rt.status().message());
  return std::move(*rt);
}

/// Index of the largest value (ties: the lower index, as the references break them).
inline int32_t argmax(const float* l, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (l[i] > l[best]) best = static_cast<int32_t>(i);
  return best;
}

/// Decodes the prompt (logits for its last position) and then each of `forced`, returning
/// the logits of every step: forced.size() + 1 vectors.
inline std::vector<std::vector<float>> teacher_forced(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt,
                                                      const std::vector<int32_t>& forced) {
  std::vector<std::vector<float>> out;
  if (e.kv().length(seq) < 0)
    if (auto st = e.kv().add(seq); !st) throw std::runtime_error(st.message());
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({seq, prompt[i], i + 1 == prompt.size()});
  std::vector<float> l;
  if (auto st = e.decode(batch, l); !st) throw std::runtime_error(st.message());
  out.push_back(l);
  for (int32_t t : forced) {
    const engine::BatchToken bt{seq, t, true};
    if (auto st = e.decode({&bt, 1}, l); !st) throw std::runtime_error(st.message());
    out.push_back(l);
  }
  return out;
}

/// Free-running greedy continuation of n tokens.
inline std::vector<int32_t> greedy(engine::Engine& e, int32_t seq, const std::vector<int32_t>& prompt, int64_t n) {
  std::vector<int32_t> ids;
  if (e.kv().length(seq) < 0)
    if (auto st = e.kv().add(seq); !st) throw std::runtime_error(st.message());
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({seq, prompt[i], i + 1 == prompt.size()});
  std::vector<float> l;
  for (int64_t k = 0; k < n; ++k) {
    if (auto st = e.decode(batch, l); !st) throw std::runtime_error(st.message());
    ids.push_back(argmax(l.data(), e.n_vocab()));
    batch = {{seq, ids.back(), true}};
  }
  return ids;
}

}  // namespace sy::test
