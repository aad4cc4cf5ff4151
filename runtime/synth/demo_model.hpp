// A small model the project writes itself: the built-in default for `scripts/demo` and for
// tests that must not depend on downloaded files. Its shape is a scaled-down Qwen3.6-35B-A3B
// (gated delta-net + gated full attention, routed and shared experts); its weights are
// deterministic random numbers, scaled so activations stay well-conditioned. Its 512-token
// SentencePiece vocabulary (control tokens, all 256 byte tokens, common English pieces)
// and a ChatML-style template make `run --prompt` and `chat` work on it; the text it
// writes is as random as its weights.
#pragma once

#include <filesystem>
#include <string>

#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"

namespace sy::synth {

struct DemoModelOptions {
  StorageType type = StorageType::Q8_0;  ///< matrices; norms and small vectors stay F32
  uint64_t seed = 42;
  std::string arch = "qwen35moe";        ///< "qwen35moe" or "llama"
  bool tokenizer = true;                 ///< write a small SentencePiece vocabulary and a chat template
};

/// Writes the model to `path` (atomically).
Status write_demo_model(const std::filesystem::path& path, const DemoModelOptions& o);

}  // namespace sy::synth
