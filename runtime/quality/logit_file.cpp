#include "quality/logit_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sy::quality {
namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
// The log-probabilities kept: within this many nats of the largest (smaller ones add under
// e^-16 each to a KL divergence).
constexpr float kRange = 16.0f;

std::string made_by() {
  return "; make it with `switchyard perplexity --save-logits FILE` (or llama-perplexity --kl-divergence-base FILE)";
}

}  // namespace

size_t record_words(int32_t n_vocab) { return 2 * ((static_cast<size_t>(n_vocab) + 1) / 2) + 4; }

void encode_record(std::span<const float> logits, const RowSoftmax& s, std::span<uint16_t> record) {
  float lo = logits[0];
  for (float l : logits) lo = std::min(lo, l);
  lo = std::max(lo, s.max - kRange);
  const auto log_sum = static_cast<float>(s.log_sum);
  const float min_log_prob = lo - s.max - log_sum;
  const float scale = (s.max - lo) / 65535.0f;
  std::memcpy(record.data(), &scale, 4);
  std::memcpy(record.data() + 2, &min_log_prob, 4);
  uint16_t* levels = record.data() + 4;
  std::fill(levels, record.data() + record.size(), uint16_t{0});
  if (scale == 0) return;
  const float inv = 1 / scale;
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] > lo) levels[i] = static_cast<uint16_t>(std::min(65535L, std::lrint(inv * (logits[i] - lo))));
}

RecordView view_record(std::span<const uint16_t> record, int32_t n_vocab) {
  RecordView v;
  std::memcpy(&v.scale, record.data(), 4);
  std::memcpy(&v.min_log_prob, record.data() + 2, 4);
  v.levels = record.data() + 4;
  v.n_vocab = n_vocab;
  return v;
}

Result<LogitFileWriter> LogitFileWriter::create(const std::filesystem::path& path, const LogitFileHeader& h) {
  auto f = util::AtomicFile::create(path, "--save-logits");
  if (!f) return f.status();
  LogitFileWriter w(std::move(f.value()));
  const int32_t head[3] = {static_cast<int32_t>(h.n_ctx), h.n_vocab, h.n_chunk};
  if (auto st = w.file_.write(std::as_bytes(std::span(kMagic))); !st) return st;
  if (auto st = w.file_.write_values(std::span<const int32_t>(head)); !st) return st;
  if (auto st = w.file_.write_values(std::span<const int32_t>(h.tokens)); !st) return st;
  return w;
}

Status LogitFileWriter::write_chunk(std::span<const uint16_t> records) { return file_.write_values(records); }

Status LogitFileWriter::commit() { return file_.commit(); }

Result<LogitFileReader> LogitFileReader::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return error::invalid_argument("--kl-divergence: " + name + " is a folder, not a reference file" + made_by());
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return error::not_found("--kl-divergence: cannot read " + name + " (" + ec.message() + ")" + made_by());
  LogitFileReader r;
  r.path_ = path;
  r.in_ = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*r.in_) return error::io_error("--kl-divergence: cannot open " + name);
  char magic[8] = {};
  int32_t head[3] = {};
  r.in_->read(magic, 8);
  r.in_->read(reinterpret_cast<char*>(head), sizeof head);
  if (!*r.in_ || std::memcmp(magic, kMagic, 8) != 0)
    return error::corrupt("--kl-divergence: " + name + " is not a file of reference log-probabilities" + made_by());
  LogitFileHeader& h = r.header_;
  h.n_ctx = static_cast<uint32_t>(head[0]);
  h.n_vocab = head[1];
  h.n_chunk = head[2];
  if (head[0] < 4 || head[0] > (1 << 24) || h.n_vocab <= 0 || h.n_vocab > (1 << 24) || h.n_chunk <= 0)
    return error::corrupt("--kl-divergence: " + name + " has an impossible header (n_ctx " + std::to_string(head[0]) +
                          ", n_vocab " + std::to_string(h.n_vocab) + ", chunks " + std::to_string(h.n_chunk) + ")");
  const uint64_t tokens = static_cast<uint64_t>(h.n_ctx) * static_cast<uint64_t>(h.n_chunk);
  const uint64_t chunk_bytes = static_cast<uint64_t>(h.scored()) * record_words(h.n_vocab) * 2;
  const uint64_t want = 20 + 4 * tokens + chunk_bytes * static_cast<uint64_t>(h.n_chunk);
  if (size < want)
    return error::corrupt("--kl-divergence: " + name + " is truncated: its header promises " +
                          std::to_string(h.n_chunk) + " chunks of " + std::to_string(h.n_ctx) + " tokens (" +
                          std::to_string(want) + " bytes) but the file has " + std::to_string(size) +
                          " bytes; write it again");
  h.tokens.resize(tokens);
  r.in_->read(reinterpret_cast<char*>(h.tokens.data()), static_cast<std::streamsize>(4 * tokens));
  if (!*r.in_) return error::io_error("--kl-divergence: reading the tokens of " + name + " failed");
  for (int32_t t : h.tokens)
    if (t < 0 || t >= h.n_vocab)
      return error::corrupt("--kl-divergence: " + name + " holds token id " + std::to_string(t) +
                            ", outside its vocabulary of " + std::to_string(h.n_vocab));
  return r;
}

Status LogitFileReader::read_chunk(std::vector<uint16_t>& out) {
  if (chunks_read_ >= header_.n_chunk) return error::out_of_range("--kl-divergence: no chunk left in " + path_.string());
  out.resize(static_cast<size_t>(header_.scored()) * record_words(header_.n_vocab));
  in_->read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * 2));
  if (!*in_)
    return error::io_error("--kl-divergence: reading chunk " + std::to_string(chunks_read_ + 1) + " of " +
                           path_.string() + " failed");
  ++chunks_read_;
  return {};
}

}  // namespace sy::quality
