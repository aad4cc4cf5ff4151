// Tokenization throughput (Google Benchmark; not a test): MB/s of encode over 10 MB of
// mixed-language text built from the shared Qwen3 cases, for the Qwen3 byte-level BPE
// tokenizer (tokenizer.json) and SentencePiece (llama-spm vocab GGUF).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

std::filesystem::path shared() {
  const char* env = std::getenv("SWITCHYARD_SHARED_DIR");
  return env ? env : SY_SHARED_DIR;
}

const std::string& corpus() {
  static const std::string text = [] {
    std::vector<std::string> pieces;
    std::ifstream in(shared() / "tokenizers/qwen3/cases.jsonl");
    for (std::string line; std::getline(in, line);) pieces.push_back(nlohmann::json::parse(line)["text"]);
    std::string t;
    for (size_t i = 0; !pieces.empty() && t.size() < (10u << 20); ++i) (t += pieces[i % pieces.size()]) += "\n";
    return t;
  }();
  return text;
}

void run(benchmark::State& state, const sy::tok::Tokenizer& t) {
  const std::string& text = corpus();
  size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = t.encode(text, false, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_qwen3_bpe(benchmark::State& state) {
  static auto t = sy::tok::Tokenizer::from_hf(shared() / "tokenizers/qwen3/tokenizer.json");
  if (!t) {
    state.SkipWithError(t.status().message().c_str());
    return;
  }
  run(state, **t);
}

void BM_llama_spm(benchmark::State& state) {
  static auto m = sy::gguf::Model::open(shared() / "vocab/ggml-vocab-llama-spm.gguf");
  static auto t = m ? sy::tok::Tokenizer::from_gguf((*m)->metadata()) : sy::Result<std::unique_ptr<sy::tok::Tokenizer>>(m.status());
  if (!t) {
    state.SkipWithError(t.status().message().c_str());
    return;
  }
  run(state, **t);
}

}  // namespace

BENCHMARK(BM_qwen3_bpe)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_llama_spm)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_MAIN();
