// `verify` and its SHA-256: the digest against FIPS 180-2's published test vectors, the
// manifest format of sha256sum, and whole-model checks on GGUF files written here (one file
// and a split set): digests that match, differ, or name a file that is not there, .sha256
// files beside the model, and a split set with a shard missing.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/sha256.hpp"
#include "verify/verify.hpp"
#include "writer.hpp"

namespace verify_test {

namespace fs = std::filesystem;

std::string sha_of(const std::string& s) {
  sy::util::Sha256 h;
  h.update(std::as_bytes(std::span(s.data(), s.size())));
  return h.hex();
}

struct VerifyDir {
  fs::path path;
  explicit VerifyDir(const std::string& name) : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~VerifyDir() { fs::remove_all(path); }
};

// A small GGUF: `n` F32 tensors of 64 values, with extra metadata keys.
void write_gguf(const fs::path& p, int first, int n, const std::vector<std::pair<std::string, sy::MetaValue>>& kv) {
  sy::gguf::Writer w;
  w.add("general.architecture", sy::MetaValue(std::string("llama")));
  for (const auto& [k, v] : kv) w.add(k, v);
  static const std::vector<float> data(64, 0.5f);
  for (int i = first; i < first + n; ++i) {
    sy::TensorDesc d;
    d.name = "t" + std::to_string(i) + ".weight";
    d.shape = {64};
    d.type = sy::StorageType::F32;
    d.bytes = 256;
    w.add_tensor(d, std::as_bytes(std::span(data)));
  }
  REQUIRE(w.write(p));
}

std::string file_digest(const fs::path& p) {
  auto h = sy::util::sha256_file(p);
  REQUIRE(h);
  return *h;
}

}  // namespace verify_test

using namespace verify_test;

TEST_CASE("sha256: FIPS 180-2 test vectors, fed whole and in pieces", "[verify]") {
  CHECK(sha_of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(sha_of(two) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  sy::util::Sha256 h;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(std::as_bytes(std::span(a.data(), a.size())));
  CHECK(h.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Pieces that straddle the 64-byte blocks give the same digest.
  sy::util::Sha256 p;
  for (size_t at = 0; at < two.size(); at += 7)
    p.update(std::as_bytes(std::span(two.data() + at, std::min<size_t>(7, two.size() - at))));
  CHECK(p.hex() == sha_of(two));
}

TEST_CASE("verify: a manifest in sha256sum's format", "[verify]") {
  VerifyDir dir("sy-verify-manifest");
  const auto m = dir.path / "SHA256SUMS";
  std::ofstream(m) << "# comment\n"
                   << std::string(64, 'A') << "  model.gguf\r\n"
                   << std::string(64, 'b') << " *sub/other.bin\n\n";
  auto r = sy::verify::read_manifest(m);
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].first == dir.path / "model.gguf");
  CHECK((*r)[0].second == std::string(64, 'a'));  // digests compare in lower case
  CHECK((*r)[1].first == dir.path / "sub/other.bin");
  std::ofstream(m) << "not a digest  model.gguf\n";
  auto bad = sy::verify::read_manifest(m);
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.status().message(), Catch::Contains("line 1") && Catch::Contains("sha256sum"));
}

TEST_CASE("verify: a GGUF file against its digests", "[verify]") {
  VerifyDir dir("sy-verify-gguf");
  const auto f = dir.path / "m.gguf";
  write_gguf(f, 0, 3, {});
  const std::string good = file_digest(f);

  sy::verify::Options o;
  auto plain = sy::verify::verify_model(f, o);
  REQUIRE(plain);
  CHECK(plain->format == "gguf");
  CHECK_THAT(plain->structure, Catch::Contains("3 tensors in 1 file"));
  REQUIRE(plain->files.size() == 1);
  CHECK(plain->files[0].actual.empty());  // nothing published, nothing hashed
  CHECK(plain->ok());

  const auto m = dir.path / "SHA256SUMS";
  std::ofstream(m) << good << "  m.gguf\n";
  o.manifest = m;
  auto r = sy::verify::verify_model(f, o);
  REQUIRE(r);
  CHECK(r->files[0].actual == good);
  CHECK(r->ok());

  std::ofstream(m) << std::string(64, '0') << "  m.gguf\n" << good << "  gone.gguf\n";
  auto bad = sy::verify::verify_model(f, o);
  REQUIRE(bad);
  CHECK_FALSE(bad->ok());
  REQUIRE(bad->files.size() == 2);
  CHECK_FALSE(bad->files[0].ok());  // the digest differs
  CHECK(bad->files[1].missing);     // listed, not there

  // A digest published beside the file, as Hugging Face and Ollama do.
  o.manifest.reset();
  std::ofstream(f.string() + ".sha256") << good << "  m.gguf\n";
  auto side = sy::verify::verify_model(f, o);
  REQUIRE(side);
  CHECK(side->files[0].expected_from == f.string() + ".sha256");
  CHECK(side->ok());
}

TEST_CASE("verify: every shard of a split GGUF, and a set with one missing", "[verify]") {
  VerifyDir dir("sy-verify-split");
  using sy::MetaValue;
  write_gguf(dir.path / "m-00001-of-00002.gguf", 0, 2,
             {{"split.no", MetaValue(uint16_t{0})}, {"split.count", MetaValue(uint16_t{2})},
              {"split.tensors.count", MetaValue(int32_t{3})}});
  write_gguf(dir.path / "m-00002-of-00002.gguf", 2, 1,
             {{"split.no", MetaValue(uint16_t{1})}, {"split.count", MetaValue(uint16_t{2})}});
  sy::verify::Options o;
  o.hash_all = true;
  auto r = sy::verify::verify_model(dir.path / "m-00002-of-00002.gguf", o);  // any shard names the set
  INFO(r.status().message());
  REQUIRE(r);
  CHECK_THAT(r->structure, Catch::Contains("3 tensors in 2 shards"));
  REQUIRE(r->files.size() == 2);
  CHECK(r->files[1].actual == file_digest(dir.path / "m-00002-of-00002.gguf"));
  fs::remove(dir.path / "m-00002-of-00002.gguf");
  auto missing = sy::verify::verify_model(dir.path / "m-00001-of-00002.gguf", o);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.status().message(), Catch::Contains("m-00002-of-00002.gguf"));
}
