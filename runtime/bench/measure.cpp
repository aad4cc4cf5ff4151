#include "bench/measure.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bench/decode_bytes.hpp"
#include "bench/token_ids.hpp"
#include "engine/runtime_setup.hpp"
#include "planner/describe.hpp"

namespace sy::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

class Runner {
 public:
  Runner(engine::Engine& eng, int64_t batch) : eng_(eng), batch_(std::max<int64_t>(batch, 1)), ids_{.n_vocab = eng.n_vocab()} {}

  // `count` fresh ids appended to sequence 0 in batches of context.batch, as llama-bench
  // feeds n_batch; logits only for the last one when asked.
  Status fill(int64_t count, bool logits) {
    for (int64_t done = 0; done < count;) {
      const int64_t k = std::min(batch_, count - done);
      tokens_.clear();
      for (int64_t i = 0; i < k; ++i) tokens_.push_back({0, ids_.next(), logits && done + i + 1 == count});
      if (auto st = eng_.decode(tokens_, logits_); !st) return st;
      done += k;
    }
    return {};
  }

  // n steps of one token each, every one a fresh id from the stream, as llama-bench feeds
  // a random token per step; each step's logits are computed.
  Status generate(int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const engine::BatchToken t{0, ids_.next(), true};
      if (auto st = eng_.decode({&t, 1}, logits_); !st) return st;
    }
    return {};
  }

  // Removing and re-adding the sequence frees its blocks and zeroes its recurrent state.
  Status clear() {
    if (auto st = eng_.kv().remove(0); !st) return st;
    return eng_.kv().add(0);
  }

  [[nodiscard]] const std::vector<float>& logits() const { return logits_; }

 private:
  engine::Engine& eng_;
  int64_t batch_;
  TokenIds ids_;
  std::vector<engine::BatchToken> tokens_;
  std::vector<float> logits_;
};

}  // namespace

int64_t row_context(const RowSpec& row) {
  // 16: the smallest context.length a pipeline accepts.
  return std::max({row.prompt + 1, row.depth + row.prompt, row.depth + row.gen, int64_t{16}});
}

Result<nlohmann::ordered_json> measure_row(const pipeline::Pipeline& p, const RowSpec& row) {
  const auto t_load = Clock::now();
  auto rt = engine::bring_up(p);
  if (!rt) return rt.status();
  const double load_ms = ms_since(t_load);
  auto& eng = *(*rt)->engine;
  if (auto st = eng.kv().add(0); !st) return st;
  Runner r(eng, p.context.batch);

  // Warmup, as llama-bench's: a prefill of p tokens and one decode step, then a clear cache.
  if (row.prompt > 0)
    if (auto st = r.fill(row.prompt, true); !st) return st;
  if (auto st = r.generate(1); !st) return st;
  if (auto st = r.clear(); !st) return st;

  if (row.depth > 0)
    if (auto st = r.fill(row.depth, false); !st) return st;
  double prompt_ms = 0, ttft_ms = 0, gen_ms = 0;
  if (row.prompt > 0) {
    const auto t0 = Clock::now();
    if (auto st = r.fill(row.prompt, true); !st) return st;
    prompt_ms = ms_since(t0);
    volatile int32_t first = argmax(r.logits());
    (void)first;
    ttft_ms = ms_since(t0);
  }
  if (row.gen > 0) {
    // llama-bench's tg test has no prompt before it: the cache holds only the depth.
    if (row.prompt > 0) {
      if (auto st = r.clear(); !st) return st;
      if (row.depth > 0)
        if (auto st = r.fill(row.depth, false); !st) return st;
    }
    const auto t0 = Clock::now();
    if (auto st = r.generate(row.gen); !st) return st;
    gen_ms = ms_since(t0);
  }

  auto j = row_info(**rt, p, row);
  if (!j) return j.status();
  (*j)["path"] = "engine";
  (*j)["load_ms"] = load_ms;
  (*j)["prompt_ms"] = prompt_ms;
  (*j)["ttft_ms"] = ttft_ms;
  (*j)["gen_ms"] = gen_ms;
  return j;
}

Result<nlohmann::ordered_json> row_info(engine::Runtime& rt, const pipeline::Pipeline& p, const RowSpec& row) {
  auto& eng = *rt.engine;
  // Bytes per generated token, from the file's tensor table and this engine's cache.
  // From the source the runtime opened: opening it again would decode a quantized folder twice.
  auto desc = planner::describe_source(rt.model->source(), p.model.path);
  if (!desc) return desc.status();
  const auto& kv = eng.kv_cache();
  uint64_t state = 0;
  for (auto b : kv.state_bytes()) state += b;
  state /= static_cast<uint64_t>(std::max<int64_t>(kv.config().n_seq_max, 1));
  const DecodeBytes db = decode_bytes(*desc, kv.bytes_per_token(), state, mean_generation_context(row.depth, row.gen));
  uint64_t params = 0;
  for (const auto& t : desc->tensors) params += t.elements();
  std::error_code ec;
  uint64_t file_bytes = 0;
  if (std::filesystem::is_directory(p.model.path, ec)) {
    // A Hugging Face folder: its weights are the safetensors files.
    for (const auto& e : std::filesystem::directory_iterator(p.model.path, ec))
      if (e.path().extension() == ".safetensors" && e.is_regular_file(ec)) file_bytes += e.file_size(ec);
  } else {
    file_bytes = std::filesystem::file_size(p.model.path, ec);
  }

  nlohmann::ordered_json j;
  j["model"] = desc->name;
  j["arch"] = desc->hp.arch;
  j["model_bytes"] = rt.model->weights().bytes();
  j["file_bytes"] = ec ? 0 : file_bytes;
  j["n_params"] = params;
  j["kv_type"] = p.context.kv_type;
  j["bytes_per_token"] = {{"total", db.total()}, {"dense", db.dense},   {"experts", db.experts}, {"head", db.head},
                          {"embd_row", db.embd_row}, {"other", db.other}, {"kv", db.kv},         {"state", db.state}};
  std::string backends;
  for (const auto& n : rt.names) backends += (backends.empty() ? "" : ",") + n.portable;
  j["devices"] = backends;
  return j;
}

}  // namespace sy::bench
