#include "engine/preflight.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <fstream>

#include "engine/runtime_setup.hpp"
#include "model/static_scales.hpp"
#include "planner/planner.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/bytes.hpp"

namespace sy::engine {
namespace {

using pipeline::Diagnostic;
using util::human_bytes;

// Storage type of context.kv_type; an unknown name is reported by kv_check, and the
// memory figures are then those of the default.
StorageType kv_type_of(const pipeline::Pipeline& p) {
  auto t = kv_storage_type(p.context.kv_type);
  return t ? *t : StorageType::F16;
}

planner::Request request_of(const pipeline::Pipeline& p, int64_t ctx) {
  planner::Request r;
  r.ctx = ctx;
  r.parallel = p.context.parallel;
  r.kv_tokens = p.context.kv_tokens;
  r.kv_type = kv_type_of(p);
  r.ubatch = p.context.ubatch;
  return r;
}

ContextMemory memory_for(const pipeline::Pipeline& p, const planner::ModelDesc& m, int64_t ctx) {
  // Weights, cache and compute all live in RAM until GPU placement lands (bring_up).
  const std::vector<planner::DeviceSpec> host{{"cpu", false, 0, 0, ""}};
  planner::Assignment a;
  a.tensor_device.assign(m.tensors.size(), 0);
  a.layer_device.assign(static_cast<size_t>(std::max<int64_t>(m.hp.n_layer, 0)), 0);
  const planner::Request r = request_of(p, ctx);
  const auto u = planner::account(m, a, host, r).front();
  ContextMemory c;
  c.kv = u.kv;
  c.kv_per_position = planner::kv_bytes_per_token(m.hp, r.kv_type);
  c.recurrent = u.recurrent;
  c.compute = u.compute;
  // Mapped weights are page cache the kernel can drop and read again; weights read into
  // memory are not.
  c.weights = p.model.mmap ? 0 : u.weights;
  c.overhead = u.overhead;
  return c;
}

// The token id at the start of a token_ids parameter's value: "150000" or "150000:+2.5".
// nullopt when it does not start with a number (the static checks report the syntax).
std::optional<int64_t> leading_id(std::string_view s) {
  const size_t end = std::min(s.find(':'), s.size());
  int64_t id = 0;
  const auto* first = s.data();
  const auto [ptr, ec] = std::from_chars(first, first + end, id);
  if (ec != std::errc() || ptr != first + end) return std::nullopt;
  return id;
}

void check_token_ids(const pipeline::Pipeline& p, const planner::ModelDesc& m, const registry::Registry& reg,
                     std::vector<Diagnostic>& out) {
  const int64_t n_vocab = m.hp.n_vocab;
  for (size_t i = 0; i < p.sampling.size(); ++i) {
    const auto& s = p.sampling[i];
    const auto* rec = reg.find(ComponentKind::sampler, s.name);
    if (!rec) continue;
    for (const ParamSpec& spec : reg.manifest(*rec).params) {
      if (!spec.token_ids) continue;
      const ParamValue* v = s.params.find(spec.name);
      if (!v) continue;
      const std::string key = "sampling[" + std::to_string(i) + "]." + s.name + "." + spec.name;
      auto check = [&](std::optional<int64_t> id, const std::string& path) {
        if (!id || (*id >= 0 && *id < n_vocab)) return;
        out.push_back({p.where(path),
                       "token " + std::to_string(*id) + " is outside the model's vocabulary (0.." +
                           std::to_string(n_vocab - 1) + "); `switchyard tokenize -m MODEL --text TEXT` shows this model's ids",
                       false});
      };
      if (const auto* list = std::get_if<std::vector<std::string>>(v)) {
        for (size_t j = 0; j < list->size(); ++j) check(leading_id((*list)[j]), key + "[" + std::to_string(j) + "]");
      } else if (const auto* ints = std::get_if<std::vector<int64_t>>(v)) {
        for (size_t j = 0; j < ints->size(); ++j) check((*ints)[j], key + "[" + std::to_string(j) + "]");
      } else if (const auto* one = std::get_if<int64_t>(v)) {
        check(*one, key);
      } else if (const auto* str = std::get_if<std::string>(v)) {
        check(leading_id(*str), key);
      }
    }
  }
}

void check_tokenizer(const pipeline::Pipeline& p, const planner::ModelDesc& m, std::vector<Diagnostic>& out) {
  if (p.model.tokenizer.empty()) return;
  const auto loc = p.where("model.tokenizer");
  auto t = tok::Tokenizer::from_hf(p.model.tokenizer);
  if (!t) {
    out.push_back({loc, t.status().message(), false});
    return;
  }
  const int64_t n = (*t)->n_vocab();
  if (n <= m.hp.n_vocab) return;
  out.push_back({loc,
                 "the tokenizer " + p.model.tokenizer.string() + " has " + std::to_string(n) + " tokens (ids 0.." +
                     std::to_string(n - 1) + "), but the model has " + std::to_string(m.hp.n_vocab) +
                     " rows of embeddings and logits (ids 0.." + std::to_string(m.hp.n_vocab - 1) +
                     "); use the tokenizer.json that came with this model, or remove model.tokenizer to use the one in "
                     "the model file",
                 false});
}

// An unknown kv_type, or a quantized one whose blocks do not divide the head size (the
// KV cache would refuse both after loading the weights).
bool check_kv_type(const pipeline::Pipeline& p, const planner::ModelDesc& m, std::vector<Diagnostic>& out) {
  const auto loc = p.where("context.kv_type");
  auto t = kv_storage_type(p.context.kv_type);
  if (!t) {
    out.push_back({loc, t.status().message(), false});
    return false;
  }
  const auto block = static_cast<int64_t>(storage_type_info(*t).block_size);
  for (int64_t hd : {m.hp.head_dim_k, m.hp.head_dim_v})
    if (block > 1 && hd % block != 0) {
      out.push_back({loc,
                     "context.kv_type " + p.context.kv_type + " stores heads in blocks of " + std::to_string(block) +
                         " values, but this model's head size is " + std::to_string(hd) + "; use kv_type f16 for it",
                     false});
      return false;
    }
  return true;
}

void check_memory(const pipeline::Pipeline& p, const planner::ModelDesc& m, uint64_t available,
                  std::vector<Diagnostic>& out) {
  const auto& c = p.context;
  const auto loc = p.where("context.length");
  const uint64_t cells = planner::kv_cells(request_of(p, c.length));
  if (cells > kMaxKvCells) {
    out.push_back({loc,
                   "context.length " + std::to_string(c.length) + " x context.parallel " + std::to_string(c.parallel) +
                       " is " + std::to_string(cells) + " KV cache positions, more than the " +
                       std::to_string(kMaxKvCells) + " the engine can address; lower context.length or context.parallel",
                   false});
    return;
  }
  if (available == 0) return;  // unknown: nothing to compare with
  const ContextMemory need = memory_for(p, m, c.length);
  if (need.total() <= available) return;
  // Positions as allocated: the length rounded up to whole KV blocks.
  std::string parts = "KV cache " + human_bytes(need.kv) + " (" + p.context.kv_type + ", " +
                      std::to_string(need.kv_per_position) + " bytes per position x " +
                      (c.kv_tokens > 0 ? std::to_string(cells) + " pool positions, context.kv_tokens)"
                                       : std::to_string(cells / static_cast<uint64_t>(c.parallel)) + " positions x " +
                                             std::to_string(c.parallel) + (c.parallel == 1 ? " sequence)" : " sequences)"));
  if (need.recurrent) parts += ", recurrent state " + human_bytes(need.recurrent);
  parts += ", compute arena " + human_bytes(need.compute) + " (ubatch " + std::to_string(c.ubatch) + ")";
  parts += need.weights ? ", weights " + human_bytes(need.weights) + " (model.mmap false)"
                        : std::string(", weights memory-mapped (not counted)");
  parts += ", runtime " + human_bytes(need.overhead);
  std::string advice;
  if (const int64_t longest = longest_fitting_context(p, m, available); longest >= 16) {
    advice = "the longest context that fits is " + std::to_string(longest) + "; lower context.length";
    if (c.parallel > 1) advice += " or context.parallel";
    if (p.context.kv_type == "f16" || p.context.kv_type == "bf16" || p.context.kv_type == "f32")
      advice += ", or use context.kv_type q8_0";
  } else {
    advice = "no context fits: the rest of the plan alone needs " +
             human_bytes(need.recurrent + need.compute + need.weights + need.overhead);
    if (need.weights) advice += "; set model.mmap true to map the weights instead of reading them";
    else advice += "; lower context.ubatch or context.parallel, or free memory";
  }
  out.push_back({loc,
                 "context.length " + std::to_string(c.length) + " needs " + human_bytes(need.total()) +
                     " of memory but " + human_bytes(available) + " is available: " + parts + "; " + advice,
                 false});
}

void check_trained_length(const pipeline::Pipeline& p, const planner::ModelDesc& m, std::vector<Diagnostic>& out) {
  if (m.hp.n_ctx_train <= 0 || p.context.length <= m.hp.n_ctx_train) return;
  out.push_back({p.where("context.length"),
                 "context.length " + std::to_string(p.context.length) + " is longer than the " +
                     std::to_string(m.hp.n_ctx_train) + " positions the model was trained on (" + m.hp.arch +
                     ".context_length); output past position " + std::to_string(m.hp.n_ctx_train) + " may degrade",
                 true});
}

// format.fp8_activations: static needs the checkpoint's scales; any other model (a GGUF, an
// unquantized or dynamic-scheme checkpoint) would otherwise run weight-only without a word.
void check_fp8_activations(const pipeline::Pipeline& p, const planner::ModelDesc& m, std::vector<Diagnostic>& out) {
  if (p.format.fp8_activations != "static") return;
  if (auto st = model::check_static_scales(m.tensors); !st)
    out.push_back({p.where("format.fp8_activations"), m.name + ": " + st.message(), false});
}

}  // namespace

uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    std::getline(in, unit);  // the rest of the line: " kB"
  }
  return 0;
}

ContextMemory context_memory(const pipeline::Pipeline& p, const planner::ModelDesc& m) {
  return memory_for(p, m, p.context.length);
}

int64_t longest_fitting_context(const pipeline::Pipeline& p, const planner::ModelDesc& m, uint64_t available) {
  const auto block = planner::kKvBlock;
  const ContextMemory one = memory_for(p, m, block);
  const uint64_t fixed = one.total() - one.kv;  // nothing else grows with the context
  if (fixed + one.kv > available) return 0;
  const auto parallel = static_cast<uint64_t>(std::max<int64_t>(p.context.parallel, 1));
  // The engine's limits: int32 cell indices, and context.length itself an int32.
  uint64_t blocks = std::min(kMaxKvCells / (block * parallel), static_cast<uint64_t>(INT32_MAX) / block);
  if (one.kv > 0) blocks = std::min(blocks, (available - fixed) / one.kv);
  return static_cast<int64_t>(blocks) * block;
}

std::vector<Diagnostic> preflight(const pipeline::Pipeline& p, const planner::ModelDesc& m, const registry::Registry& reg,
                                  const PreflightOptions& o) {
  std::vector<Diagnostic> out;
  check_token_ids(p, m, reg, out);
  check_tokenizer(p, m, out);
  if (check_kv_type(p, m, out)) check_memory(p, m, o.available ? *o.available : available_memory(), out);
  check_trained_length(p, m, out);
  check_fp8_activations(p, m, out);
  return out;
}

}  // namespace sy::engine
