// One repetition of one bench row, in this process: what the child process that `bench`
// starts for each repetition runs (a fresh process, so every repetition pays the load and
// the cold caches llama-bench's users expect). It mirrors llama-bench's tests: prompt
// processing of p tokens on top of d cached ones, and generation of n tokens at depth d
// with no prompt before it.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/rows.hpp"
#include "pipeline/pipeline.hpp"

namespace sy::bench {

/// The context a row needs: the warmup prefill, the depth plus the prompt, and the depth
/// plus the generated tokens.
int64_t row_context(const RowSpec& row);

/// Brings the pipeline up (timed: load_ms), warms up (one prefill of p tokens when p > 0,
/// one 1-token decode), then times the row. Returns one JSON object: load_ms, prompt_ms,
/// ttft_ms (prefill and the argmax of its logits), gen_ms, and what the parent needs for
/// bytes per token and the table (model_bytes, n_params, the decode_bytes breakdown).
/// Token ids are a fixed sequence within the vocabulary; generation feeds the argmax of
/// the last logits (no sampler, as llama-bench).
Result<nlohmann::ordered_json> measure_row(const pipeline::Pipeline& p, const RowSpec& row);

}  // namespace sy::bench
