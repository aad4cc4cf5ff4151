// Hugging Face tensor names -> the canonical (GGUF / llama.cpp) names the engine reads, with
// what must happen to the data on the way (llama.cpp's convert_hf_to_gguf.py does the same).
#pragma once

#include <string>

#include "config.hpp"

namespace sy::hf {

enum class Action {
  copy,       ///< the bytes as they are: a zero-copy view
  to_f32,     ///< converted to F32: norms, biases and the router, which the engine reads as F32
  permute_q,  ///< llama's q rows reordered from half-split rotary pairs to adjacent pairs
  permute_k,  ///< the same for k (with the KV head count)
  expert,     ///< one expert's matrix, stacked with the others into one [E, ...] tensor
  skip,       ///< not part of the language model (vision tower, multi-token prediction)
  unknown,    ///< a tensor the mapping does not know
};

/// What becomes of the values on the way (computed in F32).
enum class Values {
  as_is,
  plus_one,  ///< Qwen3.5 norms store w - 1 (the model scales by 1 + w); llama.cpp's GGUF holds w
  neg_exp,   ///< Qwen3.5 A_log becomes ssm_a = -exp(A_log), as llama.cpp's converter writes it
};

/// Where a qwen35moe linear-attention tensor holds value heads that must be tiled
/// (qwen35.hpp): along its rows (or elements, for a vector), or along its columns.
enum class ValueHeads { none, rows, columns };

struct Mapped {
  Action action = Action::unknown;
  std::string name;     ///< canonical name (for skip: what was skipped, for the note)
  int64_t expert = -1;  ///< Action::expert: its index
  Values values = Values::as_is;
  ValueHeads heads = ValueHeads::none;
  int64_t heads_first = 0;     ///< rows: the first row of the value heads
  int64_t heads_per_head = 0;  ///< rows (or columns) per value head
  bool squeeze = false;        ///< unit dimensions dropped: [1, H] -> [H], conv1d [C, 1, K] -> [C, K]
};

/// Where an HF tensor goes. `c` gives the architecture and the text model's prefix.
Mapped map_name(const std::string& hf_name, const HfConfig& c);

}  // namespace sy::hf
