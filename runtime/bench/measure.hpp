// One repetition of one bench row, in this process: what the child process that `bench`
// starts for each repetition runs (a fresh process, so every repetition pays the load and
// the cold caches llama-bench's users expect). It mirrors llama-bench's tests: prompt
// processing of p tokens on top of d cached ones, and generation of n tokens at depth d
// with no prompt before it.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/rows.hpp"
#include "engine/runtime_setup.hpp"
#include "pipeline/pipeline.hpp"

namespace sy::bench {

/// The context a row needs: the warmup prefill, the depth plus the prompt, and the depth
/// plus the generated tokens.
int64_t row_context(const RowSpec& row);

/// The engine path (`bench --path engine`): brings the pipeline up (timed: load_ms), warms
/// up (one prefill of p tokens when p > 0, one 1-token decode), then times the row through
/// the engine's decode calls alone. Returns one JSON object: path, load_ms, prompt_ms,
/// ttft_ms (prefill and the argmax of its logits), gen_ms, and row_info()'s fields.
/// Token ids are a fixed sequence within the vocabulary (token_ids.hpp); generation feeds a
/// fresh one per step, as llama-bench does, with no sampler.
Result<nlohmann::ordered_json> measure_row(const pipeline::Pipeline& p, const RowSpec& row);

/// The serving path (`bench --path serve`, the default): the same row through what `run`
/// and `serve` use, the scheduler with its sampler chain, stop matching and detokenizer on
/// its own thread, events handed to this one (serving::LocalSession). The prompt test is one
/// request of p ids generating one token (prompt_ms: admitted to first token); the
/// generation test one request of a single id generating n, each step fed a fresh id by
/// teacher forcing (gen_ms: admitted to finished, n decode steps, as llama-bench's tg).
/// A row with depth goes the engine path (the scheduler cannot fill a context without
/// timing it); its JSON says "path": "engine".
Result<nlohmann::ordered_json> measure_row_serving(const pipeline::Pipeline& p, const RowSpec& row);

/// What the parent needs besides the times, for bytes per token and the table: model,
/// arch, model_bytes, file_bytes, n_params, kv_type, the decode_bytes breakdown, devices.
Result<nlohmann::ordered_json> row_info(engine::Runtime& rt, const pipeline::Pipeline& p, const RowSpec& row);

}  // namespace sy::bench
