// Bringing a validated pipeline up: the registry, its backends and devices, the model and
// the engine, in the order they must be torn down in reverse.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "convert/plan.hpp"
#include "engine/engine.hpp"
#include "pipeline/pipeline.hpp"
#include "placement/device_names.hpp"
#include "registry/registry.hpp"
#include "registry/search_path.hpp"
#include "tokenizer/tokenizer.hpp"

namespace sy::engine {

struct Runtime {
  std::unique_ptr<registry::Registry> registry;
  std::vector<registry::Owned<Backend>> backends;
  std::vector<Device*> devices;  ///< in pipeline order
  int host_device = 0;           ///< the cpu backend's device (host memory, the file's mapping)
  std::vector<placement::NamedDevice> names;  ///< per device: gpuN / cpu and the backend's own name
  std::vector<convert::DeviceTypes> device_types;  ///< per device: what its backend computes natively
  std::unique_ptr<model::Model> model;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<tok::Tokenizer> tokenizer;  ///< null when the model has none
  std::string tokenizer_note;                 ///< why it is null
  std::vector<std::string> notes;  ///< backends skipped and why
};

/// The storage type of a `context.kv_type` name, or an error naming the supported ones.
Result<StorageType> kv_storage_type(const std::string& name);

/// Starts the pipeline's backends into rt.devices (rt.registry must be set): a GPU backend
/// that cannot start is skipped with a note (an error under strict); the cpu backend is required.
Status start_backends(const pipeline::Pipeline& p, Runtime& rt);

/// Creates everything the pipeline names. `search` (optional) replaces the default
/// plugin search path; routing_stats makes the engine count expert choices;
/// state_checkpoints adds recurrent-state slots for a prefix cache (hybrid models only).
Result<std::unique_ptr<Runtime>> bring_up(const pipeline::Pipeline& p,
                                          const std::vector<registry::SearchDir>* search = nullptr,
                                          bool routing_stats = false, int64_t state_checkpoints = 0);

}  // namespace sy::engine
