// Checks of a validated pipeline against its model's header, before any weight is read or
// any per-context memory is allocated: token ids the pipeline names are in the vocabulary,
// a separate tokenizer fits the model, the context's memory fits the machine, and the
// context is within the trained length. `validate -m` and bring_up (run, chat) share them,
// so both report the same message at the same file:line:column.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "planner/model_desc.hpp"
#include "registry/registry.hpp"

namespace sy::engine {

/// KV cache cells are addressed by int32 in the engine: at most 2^31 of them in all
/// (context.length rounded up to whole blocks, times context.parallel).
inline constexpr uint64_t kMaxKvCells = uint64_t{1} << 31;

/// Bytes the machine can give a new allocation now: MemAvailable of /proc/meminfo, or 0
/// when it cannot be read (the memory check is then skipped).
uint64_t available_memory();

/// What the context of a pipeline costs in host memory, by component, as the planner
/// counts it (docs/tuning.md gives the formulas).
struct ContextMemory {
  uint64_t kv = 0;            ///< K and V of every full-attention layer, all cells
  uint64_t kv_per_position = 0;  ///< kv / cells: bytes one position of one sequence costs
  uint64_t recurrent = 0;     ///< linear-attention state of every sequence
  uint64_t compute = 0;       ///< the compute arena of one ubatch, plus the logits
  uint64_t weights = 0;       ///< weights that are read into memory (model.mmap false); 0 when mapped
  uint64_t overhead = 0;      ///< the process, plugins and tables
  [[nodiscard]] uint64_t total() const { return kv + recurrent + compute + weights + overhead; }
};

/// The memory plan of `p`'s context for model `m`, everything on the host. Its KV cells
/// (planner::kv_cells) must not exceed kMaxKvCells, which keeps the byte counts inside 64
/// bits; preflight checks that first.
ContextMemory context_memory(const pipeline::Pipeline& p, const planner::ModelDesc& m);

/// The longest context.length (a whole number of KV blocks) whose plan fits in `available`
/// bytes with `p`'s other settings; 0 when not even one block does.
int64_t longest_fitting_context(const pipeline::Pipeline& p, const planner::ModelDesc& m, uint64_t available);

struct PreflightOptions {
  /// Host bytes available; nullopt: available_memory().
  std::optional<uint64_t> available;
};

/// The checks against a model described from its header (planner::describe_file). `reg`
/// supplies the sampler manifests (which parameters name token ids). Errors and warnings
/// carry the position of the key they are about (Pipeline::where).
std::vector<pipeline::Diagnostic> preflight(const pipeline::Pipeline& p, const planner::ModelDesc& m,
                                            const registry::Registry& reg, const PreflightOptions& o = {});

}  // namespace sy::engine
