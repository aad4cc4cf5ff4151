// How well the hf reader fits a path, without opening any weights: a folder holding
// config.json and safetensors (or a .safetensors file) scores high, a quantized checkpoint
// low (its own plugin should win; if none is installed, open() says which one to get).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace sy::hf {

inline constexpr int kProbeUnquantized = 90;
inline constexpr int kProbeQuantized = 5;
/// What a quantized-checkpoint plugin scores on a checkpoint of its own method.
inline constexpr int kProbeQuantReader = 95;

/// nullopt when `path` is not a Hugging Face checkpoint; else quantized_by() of its config.json
/// (itself nullopt when the checkpoint is unquantized). Never throws.
std::optional<std::optional<std::string>> probe_checkpoint(const std::filesystem::path& path) noexcept;

/// 0 .. 100; reads at most config.json and the first bytes of one file. Never throws.
int probe_path(const std::filesystem::path& path) noexcept;

}  // namespace sy::hf
