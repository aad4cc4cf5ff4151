// The quality measurements (runtime/quality) against their definitions: log-softmax,
// perplexity and its standard error, the reference-file records, KL divergence against a
// directly computed one, percentiles, the chunk plan, the reference file round trip and
// its refusals, and outputs that are never left half written.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quality/kld.hpp"
#include "quality/log_probs.hpp"
#include "quality/logit_file.hpp"
#include "quality/perplexity.hpp"
#include "util/atomic_file.hpp"

namespace quality_test {

namespace q = sy::quality;

// A fresh empty folder under the system's temporary directory (named per process: two suites
// may run at once on one machine), removed at the end.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  [[nodiscard]] size_t entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
  }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Logits whose softmax is p (log p plus a constant).
std::vector<float> logits_of(const std::vector<double>& p, double shift) {
  std::vector<float> l;
  for (double v : p) l.push_back(static_cast<float>(std::log(v) + shift));
  return l;
}

}  // namespace quality_test

using namespace quality_test;

TEST_CASE("quality: log-softmax of logits with a known distribution", "[quality]") {
  const std::vector<double> p = {0.125, 0.5, 0.25, 0.125};
  const auto l = logits_of(p, 3.0);
  const q::RowSoftmax s = q::row_softmax(l);
  CHECK(s.argmax == 1);
  for (size_t i = 0; i < p.size(); ++i) CHECK(s.log_prob(l[i]) == Approx(std::log(p[i])).margin(1e-6));
  // Equal largest logits: the first one.
  const std::vector<float> ties = {1.f, 4.f, 4.f, 2.f};
  CHECK(q::row_softmax(ties).argmax == 1);
}

TEST_CASE("quality: perplexity and its error from the negative log-likelihoods", "[quality]") {
  q::NllSums n;
  for (double v : {1.0, 2.0, 3.0}) n.add(v);
  CHECK(n.perplexity() == Approx(std::exp(2.0)));
  // var = mean(x^2) - mean^2 = 14/3 - 4 = 2/3; error = ppl * sqrt(var / (n - 1)).
  CHECK(n.perplexity_error() == Approx(std::exp(2.0) * std::sqrt((2.0 / 3.0) / 2.0)));
  q::NllSums one;
  one.add(1.5);
  CHECK(one.perplexity_error() == 0);
}

TEST_CASE("quality: a reference record keeps the log-probabilities within 16 of the top", "[quality]") {
  std::vector<float> l;
  for (int i = 0; i < 301; ++i) l.push_back(static_cast<float>(-30.0 + 0.1 * i));  // 30 nats wide
  const q::RowSoftmax s = q::row_softmax(l);
  std::vector<uint16_t> rec(q::record_words(301));
  CHECK(rec.size() == 306);  // 4 words for the two floats, the vocabulary rounded up to even
  q::encode_record(l, s, rec);
  const q::RecordView v = q::view_record(rec, 301);
  CHECK(v.scale == Approx(16.0 / 65535.0));
  for (int i = 0; i < 301; ++i) {
    INFO("logit " << l[static_cast<size_t>(i)]);
    const double exact = s.log_prob(l[static_cast<size_t>(i)]);
    if (l[static_cast<size_t>(i)] > s.max - 16.0f)
      CHECK(std::fabs(v.log_prob(i) - exact) <= v.scale / 2 + 1e-5);
    else
      CHECK(v.levels[i] == 0);  // below the kept range: the floor
  }
}

TEST_CASE("quality: KL divergence, top-1 agreement and Δp against direct formulas", "[quality]") {
  const std::vector<double> base = {0.6, 0.2, 0.1, 0.05, 0.05};
  const std::vector<double> run = {0.3, 0.4, 0.15, 0.1, 0.05};
  double kl = 0;
  for (size_t i = 0; i < base.size(); ++i) kl += base[i] * std::log(base[i] / run[i]);
  const auto lb = logits_of(base, 1.0), lr = logits_of(run, -2.0);
  std::vector<uint16_t> rec(q::record_words(5));
  q::encode_record(lb, q::row_softmax(lb), rec);
  q::KldAccumulator acc;
  const int32_t target = 2;
  for (int k = 0; k < 12; ++k) acc.add(lr, q::row_softmax(lr), q::view_record(rec, 5), target);
  const q::KldSummary s = acc.summary();
  CHECK(s.count == 12);
  CHECK(s.kld.mean == Approx(kl).margin(2e-4));
  CHECK(s.kld_median == Approx(kl).margin(2e-4));
  CHECK(s.same_top == 0);  // the base's top is 0, the run's is 1
  CHECK(s.p_diff.mean == Approx(run[target] - base[target]).margin(1e-4));
  CHECK(s.ppl.mean == Approx(1 / run[target]).epsilon(1e-5));
  CHECK(s.ppl_base.mean == Approx(1 / base[target]).epsilon(1e-3));
  CHECK(s.ppl_ratio == Approx(base[target] / run[target]).epsilon(1e-3));

  // The same distribution on both sides: nothing diverges, every top agrees.
  q::KldAccumulator same;
  for (int k = 0; k < 12; ++k) same.add(lb, q::row_softmax(lb), q::view_record(rec, 5), target);
  CHECK(same.summary().kld.mean == Approx(0).margin(1e-4));
  CHECK(same.summary().same_top == 1);
}

TEST_CASE("quality: percentiles interpolate between sorted values", "[quality]") {
  const std::vector<float> v = {1, 2, 3, 4, 5};
  CHECK(q::percentile(v, 0.5) == Approx(3));
  CHECK(q::percentile(v, 0.9) == Approx(4.6));
  CHECK(q::percentile(v, 0) == 1);
  CHECK(q::percentile(v, 1) == 5);
}

TEST_CASE("quality: the chunk plan of llama-perplexity", "[quality]") {
  auto p = q::plan_chunks(1000, 128, -1, 2048);
  REQUIRE(p);
  CHECK(p->chunks == 7);  // whole chunks only
  CHECK(p->n_seq == 16);  // -b / -c chunks at once
  CHECK(p->first() == 64);
  CHECK(p->scored() == 63);
  auto limited = q::plan_chunks(1000, 128, 3, 100);
  REQUIRE(limited);
  CHECK(limited->chunks == 3);
  CHECK(limited->n_seq == 1);
  auto few = q::plan_chunks(200, 128, -1, 2048);
  REQUIRE_FALSE(few);
  CHECK_THAT(few.status().message(), Catch::Contains("200 tokens") && Catch::Contains("at least 256"));
}

TEST_CASE("quality: the reference file round trip, and files it refuses", "[quality]") {
  TempDir dir("sy-quality-file");
  const auto path = dir.path / "ref.bin";
  q::LogitFileHeader h;
  h.n_ctx = 8;
  h.n_vocab = 5;
  h.n_chunk = 2;
  for (int i = 0; i < 16; ++i) h.tokens.push_back(i % 5);
  const size_t words = q::record_words(5) * static_cast<size_t>(h.scored());
  std::vector<uint16_t> chunk0(words), chunk1(words);
  for (size_t i = 0; i < words; ++i) {
    chunk0[i] = static_cast<uint16_t>(i);
    chunk1[i] = static_cast<uint16_t>(1000 + i);
  }
  {
    auto w = q::LogitFileWriter::create(path, h);
    REQUIRE(w);
    REQUIRE(w->write_chunk(chunk0));
    REQUIRE(w->write_chunk(chunk1));
    CHECK_FALSE(std::filesystem::exists(path));  // nothing under the final name before commit
    REQUIRE(w->commit());
  }
  CHECK(dir.entries() == 1);  // no temporary left
  auto r = q::LogitFileReader::open(path);
  REQUIRE(r);
  CHECK(r->header().n_ctx == 8);
  CHECK(r->header().n_vocab == 5);
  CHECK(r->header().tokens == h.tokens);
  std::vector<uint16_t> got;
  REQUIRE(r->read_chunk(got));
  CHECK(got == chunk0);
  REQUIRE(r->read_chunk(got));
  CHECK(got == chunk1);
  CHECK_FALSE(r->read_chunk(got));

  // Truncated: the header's promise is checked against the size before anything is read.
  const std::string bytes = slurp(path);
  const auto cut = dir.path / "cut.bin";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  auto rc = q::LogitFileReader::open(cut);
  REQUIRE_FALSE(rc);
  CHECK_THAT(rc.status().message(), Catch::Contains("truncated") && Catch::Contains("cut.bin"));
  // Not a reference file at all.
  const auto other = dir.path / "other.bin";
  std::ofstream(other, std::ios::binary) << "GGUF and then some more bytes";
  auto ro = q::LogitFileReader::open(other);
  REQUIRE_FALSE(ro);
  CHECK_THAT(ro.status().message(), Catch::Contains("not a file of reference log-probabilities"));
  auto rm = q::LogitFileReader::open(dir.path / "missing.bin");
  REQUIRE_FALSE(rm);
  CHECK_THAT(rm.status().message(), Catch::Contains("missing.bin"));
}

TEST_CASE("quality: an output not committed leaves the old file and no temporary", "[quality]") {
  TempDir dir("sy-quality-atomic");
  const auto path = dir.path / "out.bin";
  std::ofstream(path) << "the user's earlier result";
  {
    auto f = sy::util::AtomicFile::create(path, "--test");
    REQUIRE(f);
    const std::string half = "half of a new result";
    REQUIRE(f->write(std::as_bytes(std::span(half))));
    CHECK(std::filesystem::exists(f->temp_path()));
    CHECK(f->temp_path().parent_path() == dir.path);
    // Dropped without commit(): an interrupted write.
  }
  CHECK(slurp(path) == "the user's earlier result");
  CHECK(dir.entries() == 1);
  auto bad = sy::util::AtomicFile::create(dir.path / "no-such-folder" / "x.bin", "--test");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.status().message(), Catch::Contains("no-such-folder") && Catch::Contains("does not exist"));
}
