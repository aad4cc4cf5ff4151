// Tokenizers against the shared references: every Qwen3 case (ids and decoded text, from
// Hugging Face's tokenizers), and llama.cpp's test vectors for each vocab-only GGUF.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace fs = std::filesystem;
using sy::tok::Tokenizer;

namespace {

const fs::path kShared = SY_SHARED_DIR;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<Tokenizer> gguf_tokenizer(const fs::path& p) {
  auto m = sy::gguf::Model::open(p);
  REQUIRE(m.has_value());
  auto t = Tokenizer::from_gguf(m.value()->metadata());
  INFO(p.filename().string() << ": " << (t ? "" : t.status().message()));
  REQUIRE(t.has_value());
  return std::move(*t);
}

// Whether s is complete, valid UTF-8 (no truncated or stray sequences).
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

std::string show(const std::vector<int32_t>& v) {
  std::string s;
  for (auto x : v) s += std::to_string(x) + " ";
  return s;
}

}  // namespace

TEST_CASE("tokenizer: every Qwen3 case encodes and decodes like Hugging Face", "[tokenizer]") {
  auto t = Tokenizer::from_hf(kShared / "tokenizers/qwen3/tokenizer.json");
  REQUIRE(t.has_value());
  std::ifstream in(kShared / "tokenizers/qwen3/cases.jsonl");
  std::string line;
  int n = 0, failed = 0;
  while (std::getline(in, line)) {
    const auto c = nlohmann::json::parse(line);
    const std::string text = c["text"];
    const auto want = c["ids"].get<std::vector<int32_t>>();
    const auto got = (*t)->encode(text, c["add_special_tokens"], c["parse_special"]);
    const std::string decoded = (*t)->decode(want);
    if (got != want || decoded != c["decoded"].get<std::string>()) {
      ++failed;
      std::cout << "[" << c["category"].get<std::string>() << "] " << nlohmann::json(text).dump() << "\n  want " << show(want)
                << "\n  got  " << show(got) << "\n  decoded " << nlohmann::json(decoded).dump() << "\n";
    }
    // Token by token, joined as bytes, gives the same text.
    std::string joined;
    for (int32_t id : want) joined += (*t)->piece(id);
    CHECK(joined == decoded);
    // Streaming: every chunk is whole UTF-8, and the chunks add up to the text.
    sy::tok::StreamDecoder stream(**t);
    std::string streamed;
    for (int32_t id : want) {
      const std::string chunk = stream.push(id);
      if (valid_utf8(decoded)) CHECK(valid_utf8(chunk));
      streamed += chunk;
    }
    streamed += stream.flush();
    CHECK(streamed == decoded);
    ++n;
  }
  CHECK(n == 268);
  CHECK(failed == 0);
}

TEST_CASE("tokenizer: stories260K's prompt and greedy text as llama.cpp has them", "[tokenizer]") {
  auto t = gguf_tokenizer(kShared / "models/stories260K.gguf");
  std::ifstream in(kShared / "fixtures/stories260K.ref.json");
  const auto ref = nlohmann::json::parse(in);
  CHECK(t->encode("Once upon a time", true, true) == ref["prompt_ids"].get<std::vector<int32_t>>());
  CHECK(t->decode(ref["greedy_ids"].get<std::vector<int32_t>>(), false) == ref["greedy_text"].get<std::string>());
  CHECK(t->bos() == 1);
  CHECK(t->eos() == 2);
  CHECK(t->is_end_of_generation(2));
}

TEST_CASE("tokenizer: llama.cpp's vectors for every vocab GGUF", "[tokenizer]") {
  int files = 0;
  for (const auto& e : fs::directory_iterator(kShared / "vocab")) {
    if (e.path().extension() != ".gguf") continue;
    DYNAMIC_SECTION(e.path().filename().string()) {
      auto t = gguf_tokenizer(e.path());
      CHECK(t->n_vocab() > 30000);
      const fs::path inp = e.path().string() + ".inp", out = e.path().string() + ".out";
      if (fs::exists(inp)) {
        ++files;
        const std::string all = read_all(inp);
        const std::string sep = "\n__ggml_vocab_test__\n";
        std::vector<std::string> inputs;
        for (size_t at = 0, next; (next = all.find(sep, at)) != std::string::npos; at = next + sep.size())
          inputs.push_back(all.substr(at, next - at));
        std::ifstream o(out);
        std::string line;
        size_t i = 0, failed = 0;
        while (std::getline(o, line) && i < inputs.size()) {
          std::vector<int32_t> want;
          std::istringstream ls(line);
          for (int32_t v; ls >> v;) want.push_back(v);
          const auto got = t->encode(inputs[i], false, false);
          if (got != want) {
            ++failed;
            std::cout << e.path().filename().string() << " " << nlohmann::json(inputs[i]).dump() << "\n  want " << show(want)
                      << "\n  got  " << show(got) << "\n";
          }
          ++i;
        }
        CHECK(i == 46);
        CHECK(failed == 0);
      }
    }
  }
}
