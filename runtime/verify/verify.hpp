// `switchyard verify`: is a downloaded model whole and what its publisher published?
//  - structure: the format's own reader opens it (GGUF: every shard of a split model present
//    and agreeing, every tensor's bytes inside its file; a Hugging Face folder: every shard
//    the index names present, every tensor of the index in its shard and inside the file);
//  - digests: each file's SHA-256 against a manifest in sha256sum's format (`--sha256 FILE`)
//    or against the `FILE.sha256` beside it (the digest first on its first line), as Hugging
//    Face and Ollama publish them; a file the manifest lists that is absent is a failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::verify {

struct FileCheck {
  std::filesystem::path path;
  uint64_t bytes = 0;
  std::string expected;       ///< the published digest; empty: none known
  std::string expected_from;  ///< where it came from (the manifest or the sidecar file)
  std::string actual;         ///< the computed digest; empty: not computed
  bool missing = false;
  [[nodiscard]] bool ok() const { return !missing && (expected.empty() || expected == actual); }
};

struct Report {
  std::string format;        ///< "gguf" or "safetensors"
  std::string structure;     ///< what the reader found: tensors, shards
  std::vector<FileCheck> files;
  [[nodiscard]] bool ok() const;
};

struct Options {
  std::optional<std::filesystem::path> manifest;  ///< --sha256 FILE
  bool hash_all = false;                          ///< digest every file, not only those with a published one
};

/// Checks the model at `path` (a GGUF file or any shard of one, a Hugging Face folder, or a
/// .safetensors file in one). A structural problem is the error; digest results are in the
/// report. `progress` gets (file, bytes hashed, file size).
Result<Report> verify_model(const std::filesystem::path& path, const Options& o,
                            const std::function<void(const std::filesystem::path&, uint64_t, uint64_t)>& progress = {});

/// The entries of a sha256sum-format manifest ("HEX  NAME" or "HEX *NAME" per line), names
/// resolved against the manifest's folder. Errors name the line.
Result<std::vector<std::pair<std::filesystem::path, std::string>>> read_manifest(const std::filesystem::path& manifest);

}  // namespace sy::verify
