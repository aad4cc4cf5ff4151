// What the API handlers share once the model is up: the runtime, the scheduler, the chat
// template, the sampling defaults and the server's settings. Built once at start-up and
// read-only afterwards (the scheduler and metrics are thread-safe).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/template.hpp"
#include "engine/runtime_setup.hpp"
#include "pipeline/pipeline.hpp"
#include "server/openai/sampling.hpp"
#include "serving/metrics.hpp"
#include "serving/scheduler.hpp"

namespace sy::server {

struct ServerSettings {
  std::string model_id;       ///< what /v1/models lists and requests name
  std::string pipeline_name;  ///< the pipeline file, or "built-in"
  std::vector<std::string> api_keys;
  std::vector<std::string> cors_origins;
  int64_t max_tokens = 0;     ///< cap per request; 0: the context length
  int64_t request_timeout_s = 600;
  bool batch_queue = false;
};

struct ServeContext {
  engine::Runtime* runtime = nullptr;
  serving::Scheduler* scheduler = nullptr;
  serving::Metrics* metrics = nullptr;
  std::optional<chat::Template> chat_template;  ///< none: chat completions answer 400
  std::string template_source;                  ///< its text (which tool-call syntax it teaches)
  std::string template_note;                    ///< why there is none
  std::vector<pipeline::ComponentConfig> sampling;  ///< the pipeline's chain (model defaults applied)
  openai::SamplerSchemas schemas;
  ServerSettings settings;
  int64_t n_ctx = 0;
  std::atomic<uint64_t> next_id{1};
};

}  // namespace sy::server
