// The reference file of a KL-divergence comparison (`perplexity --save-logits`), in the
// layout llama.cpp's llama-perplexity writes with --kl-divergence-base and reads with
// --kl-divergence, so a reference made by either tool serves both:
//
//   "_logits_"  u32 n_ctx  i32 n_vocab  i32 n_chunk  i32 tokens[n_chunk * n_ctx]
//   then per chunk, per scored position (n_ctx - 1 - n_ctx / 2 of them) one record of
//   record_words(n_vocab) u16 words: f32 scale, f32 min_log_prob, n_vocab u16 levels (padded
//   to an even count); log p(i) = scale * level(i) + min_log_prob for the logits within 16
//   of the largest, levels of 0 below that.
//
// The tokens are the chunks' text as tokenized (before the first of each chunk becomes BOS).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quality/log_probs.hpp"
#include "switchyard/status.hpp"
#include "util/atomic_file.hpp"

namespace sy::quality {

/// u16 words of one position's record.
size_t record_words(int32_t n_vocab);

/// Writes one position's record (record_words(n_vocab) words) from its logits.
void encode_record(std::span<const float> logits, const RowSoftmax& s, std::span<uint16_t> record);

/// A record as read back.
struct RecordView {
  float scale = 0, min_log_prob = 0;
  const uint16_t* levels = nullptr;
  int32_t n_vocab = 0;

  [[nodiscard]] float log_prob(int32_t i) const { return scale * static_cast<float>(levels[i]) + min_log_prob; }
};
RecordView view_record(std::span<const uint16_t> record, int32_t n_vocab);

struct LogitFileHeader {
  uint32_t n_ctx = 0;
  int32_t n_vocab = 0;
  int32_t n_chunk = 0;
  std::vector<int32_t> tokens;  ///< n_chunk * n_ctx

  [[nodiscard]] int64_t first() const { return n_ctx / 2; }
  /// Positions scored (and records stored) per chunk.
  [[nodiscard]] int64_t scored() const { return static_cast<int64_t>(n_ctx) - 1 - first(); }
};

/// Writes the file through a temporary, renamed into place by commit().
class LogitFileWriter {
 public:
  static Result<LogitFileWriter> create(const std::filesystem::path& path, const LogitFileHeader& h);
  /// One chunk's records: scored() * record_words(n_vocab) words.
  Status write_chunk(std::span<const uint16_t> records);
  Status commit();

 private:
  explicit LogitFileWriter(util::AtomicFile f) : file_(std::move(f)) {}
  util::AtomicFile file_;
};

/// Reads a reference file, checking its header against its size first.
class LogitFileReader {
 public:
  static Result<LogitFileReader> open(const std::filesystem::path& path);
  [[nodiscard]] const LogitFileHeader& header() const { return header_; }
  /// The next chunk's records into `out` (resized).
  Status read_chunk(std::vector<uint16_t>& out);

 private:
  LogitFileReader() = default;
  std::filesystem::path path_;
  std::unique_ptr<std::ifstream> in_;
  LogitFileHeader header_;
  int32_t chunks_read_ = 0;
};

}  // namespace sy::quality
