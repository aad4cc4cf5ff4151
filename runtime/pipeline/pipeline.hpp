// A validated pipeline: which plugins to load and how to wire them. Every field has its
// default filled in; docs/pipelines.md documents each key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/diagnostics.hpp"
#include "switchyard/params.hpp"

namespace sy::pipeline {

/// A layer count that may also be "all" (or, for gpu_layers, "auto").
struct LayerCount {
  enum class Mode { automatic, all, count };
  Mode mode = Mode::automatic;
  int64_t n = 0;
};

/// A memory amount given as a fraction ("10%") or in bytes ("2GiB").
struct MemoryAmount {
  double fraction = 0;  ///< of the device budget; 0 when given in bytes
  uint64_t bytes = 0;
};

struct ModelConfig {
  std::filesystem::path path;        ///< resolved against the file that named it
  std::string format;                ///< component name; empty: chosen by probing
  std::filesystem::path tokenizer;   ///< optional tokenizer.json
  std::filesystem::path chat_template;  ///< optional template file overriding the model's
  bool mmap = true;
  bool mlock = false;
};

/// How weights a device has no kernel for are converted at load (convert/plan.hpp), and
/// whether an FP8 checkpoint's static activation scales are applied.
struct FormatConfig {
  std::string convert_to;  ///< "q8_0", "q4_k", "f16" or empty (no requantization)
  std::string fp8_activations = "weight_only";  ///< "weight_only" or "static" (docs/pipelines.md)
};

/// A plugin component with its validated parameters.
struct ComponentConfig {
  std::string name;
  ParamMap params;
  Location loc;
  /// An item of the built-in default sampling chain whose value no one set: a model's
  /// recommended sampling may replace it (engine/recommended_sampling.hpp).
  bool builtin = false;
};

struct BackendConfig {
  std::string plugin;
  std::vector<int64_t> devices;  ///< empty: every device of the backend
  ParamMap params;
  Location loc;
};

struct OverrideRule {
  std::string pattern;  ///< regular expression over canonical tensor names
  std::string device;   ///< "cpu", "cuda0", "vulkan1", ...
  Location loc;
};

struct PlacementConfig {
  LayerCount gpu_layers{LayerCount::Mode::automatic, 0};
  LayerCount cpu_moe{LayerCount::Mode::count, 0};
  std::vector<OverrideRule> overrides;
  MemoryAmount headroom{0.10, 0};
  MemoryAmount min_headroom{0, 1ull << 30};
};

struct ContextConfig {
  int64_t length = 4096;
  std::string kv_type = "f16";
  std::string flash_attention = "auto";  ///< "auto", "true" or "false"
  int64_t batch = 2048;
  int64_t ubatch = 512;
  int64_t parallel = 1;
  /// KV positions in the pool all sequences share; 0: length x parallel (every sequence
  /// at full length).
  int64_t kv_tokens = 0;
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int64_t port = 8080;
  int64_t slots = 4;
  bool batch_queue = false;
  int64_t max_queue = 256;
  int64_t max_step_ms = 300;              ///< a step with prompt chunks beside streams; 0: context.batch only
  int64_t request_timeout = 600;
  std::string api_key;
  std::vector<std::string> api_keys;      ///< any of these (or api_key) is accepted
  int64_t max_tokens = 0;                 ///< the most a request may generate; 0: the context length
  int64_t max_body = 8 << 20;             ///< request body bytes
  std::vector<std::string> cors_origins;  ///< origins allowed to call from a browser ("*": any); empty: no CORS
  std::string model_alias;                ///< the model id clients use; empty: the model file's name
};

struct Pipeline {
  std::filesystem::path source;  ///< the file it was loaded from
  std::vector<std::filesystem::path> plugin_path;
  bool strict = false;
  ModelConfig model;
  FormatConfig format;
  std::vector<BackendConfig> backends;
  PlacementConfig placement;
  ContextConfig context;
  std::vector<ComponentConfig> sampling;
  ServerConfig server;
  /// Where each key path validate() read was written, spelled as in messages:
  /// "context.length", "sampling[2].logit_bias.bias[1]", "placement.overrides[0]". Checks
  /// that run later (against the model header) point their errors here.
  std::map<std::string, Location, std::less<>> locations;

  /// The location of `path`, or of its longest recorded prefix ("sampling[2].top_k" falls
  /// back to "sampling[2]", then "sampling"); the source file without a position when none.
  [[nodiscard]] Location where(std::string_view path) const {
    while (!path.empty()) {
      if (auto it = locations.find(path); it != locations.end()) return it->second;
      const size_t cut = path.find_last_of(".[");
      path = path.substr(0, cut == std::string_view::npos ? 0 : cut);
    }
    return Location{source.string(), 0, 0};
  }
};

}  // namespace sy::pipeline
