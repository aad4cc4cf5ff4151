#include "synth/demo_model.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "writer.hpp"
#include "switchyard/quant.hpp"
#include "switchyard/rng.hpp"

namespace sy::synth {
namespace {

// Normal deviates by Box-Muller over SplitMix64: the same numbers on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  double uniform() { return (static_cast<double>(g_.next() >> 11) + 0.5) * 0x1.0p-53; }  // never 0: log() below
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  SplitMix64 g_;
};

uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

struct Builder {
  gguf::Writer w;
  uint64_t seed;
  StorageType type;
  std::vector<std::unique_ptr<std::vector<std::byte>>> data;

  // kind: 'w' linear (std 1/sqrt(fan_in) * scale), 'n' norm (1 + N(0, 0.1)), 'b' N(0, scale), 'c' constant scale
  void tensor(const std::string& name, std::vector<uint64_t> shape, char kind, double scale = 1.0) {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    Rng rng(seed ^ name_hash(name));
    std::vector<float> f(n);
    for (auto& x : f) {
      switch (kind) {
        case 'w': x = static_cast<float>(rng.normal() * scale / std::sqrt(static_cast<double>(shape[0]))); break;
        case 'n': x = static_cast<float>(1.0 + 0.1 * rng.normal()); break;
        case 'b': x = static_cast<float>(rng.normal() * scale); break;
        default: x = static_cast<float>(scale); break;
      }
    }
    const bool matrix = shape.size() >= 2 && kind == 'w' && shape[0] % static_cast<uint64_t>(storage_type_info(type).block_size) == 0;
    const StorageType t = matrix ? type : StorageType::F32;
    const uint64_t row = *storage_row_bytes(t, shape[0]);
    auto bytes = std::make_unique<std::vector<std::byte>>(row * (n / shape[0]));
    for (uint64_t r = 0; r < n / shape[0]; ++r)
      (void)quantize_row(t, f.data() + r * shape[0], bytes->data() + r * row, static_cast<int64_t>(shape[0]));
    TensorDesc d;
    d.name = name;
    d.shape.assign(shape.begin(), shape.end());
    d.type = t;
    d.bytes = bytes->size();
    w.add_tensor(d, *bytes);
    data.push_back(std::move(bytes));
  }
};

// A 512-token SentencePiece vocabulary: <unk> <s> </s>, the byte tokens, then pieces
// (earlier pieces score higher, so they merge first).
void add_tokenizer(gguf::Writer& w, uint64_t n_vocab) {
  const std::string sp = "\xE2\x96\x81";  // ▁, SentencePiece's space
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types{2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.emplace_back(name);
    types.push_back(6);
  }
  std::vector<std::string> pieces{sp};
  for (const char* word : {"the", "and", "to", "of", "a", "in", "is", "it", "you", "that", "he", "she", "was", "for", "on",
                           "with", "as", "I", "they", "be", "at", "one", "have", "this", "from", "but", "what", "we",
                           "can", "there", "when", "up", "your", "how", "said", "day", "time", "Once", "upon", "little"})
    pieces.push_back(sp + word);
  for (char c = 'a'; c <= 'z'; ++c) pieces.push_back(sp + c);
  for (const char* bigram : {"th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "es", "or", "te", "ed", "is",
                             "it", "al", "ar", "st", "to", "nt", "ng", "se", "ha", "ou", "le", "ve", "me", "de", "hi"})
    pieces.emplace_back(bigram);
  for (char c = 'a'; c <= 'z'; ++c) pieces.emplace_back(1, c);
  for (char c = 'A'; c <= 'Z'; ++c) pieces.emplace_back(1, c);
  for (char c = '0'; c <= '9'; ++c) pieces.emplace_back(1, c);
  for (const char* p : {".", ",", "!", "?", "'", "\"", ":", ";", "-", "(", ")", "\n"}) pieces.emplace_back(p);
  for (char a = 'a'; tokens.size() + pieces.size() < n_vocab && a <= 'z'; ++a)  // fill with "▁xy"
    for (char b = 'a'; tokens.size() + pieces.size() < n_vocab && b <= 'z'; ++b) pieces.push_back(sp + a + b);
  MetaArray toks{MetaType::string, {}}, scores{MetaType::f32, {}}, kinds{MetaType::i32, {}};
  for (size_t i = 0; i < tokens.size(); ++i) {
    toks.items.emplace_back(tokens[i]);
    scores.items.emplace_back(0.0f);
    kinds.items.emplace_back(types[i]);
  }
  for (size_t i = 0; i < pieces.size() && toks.items.size() < n_vocab; ++i) {
    toks.items.emplace_back(pieces[i]);
    scores.items.emplace_back(-static_cast<float>(i));
    kinds.items.emplace_back(int32_t{1});
  }
  w.add("tokenizer.ggml.model", std::string("llama"));
  w.add("tokenizer.ggml.tokens", std::move(toks));
  w.add("tokenizer.ggml.scores", std::move(scores));
  w.add("tokenizer.ggml.token_type", std::move(kinds));
  w.add("tokenizer.ggml.bos_token_id", uint32_t{1});
  w.add("tokenizer.ggml.eos_token_id", uint32_t{2});
  w.add("tokenizer.ggml.unknown_token_id", uint32_t{0});
  w.add("tokenizer.ggml.add_bos_token", true);
  w.add("tokenizer.chat_template",
        std::string("{%- for m in messages %}{{ '<|' + m.role + '|>\n' + m.content + eos_token + '\n' }}{%- endfor %}"
                    "{%- if add_generation_prompt %}{{ '<|assistant|>\n' }}{%- endif %}"));
}

}  // namespace

Status write_demo_model(const std::filesystem::path& path, const DemoModelOptions& o) {
  if (!can_quantize(o.type)) return error::unsupported("synth cannot write " + std::string(storage_type_name(o.type)));
  const bool hybrid = o.arch == "qwen35moe";
  if (!hybrid && o.arch != "llama") return error::invalid_argument("the demo model is qwen35moe or llama, not " + o.arch);
  constexpr uint64_t kEmbd = 256, kLayers = 4, kHeads = 4, kKv = 2, kHd = 64, kVocab = 512, kExperts = 8, kFf = 256;
  constexpr uint64_t kState = 32, kGroups = 2, kVHeads = 4, kConv = 4;
  Builder b{gguf::Writer{}, o.seed, o.type, {}};
  const std::string a = o.arch + ".";
  b.w.add("general.architecture", o.arch);
  b.w.add("general.name", std::string("switchyard demo ") + o.arch);
  b.w.add(a + "context_length", uint32_t{4096});
  b.w.add(a + "embedding_length", uint32_t{kEmbd});
  b.w.add(a + "block_count", uint32_t{kLayers});
  b.w.add(a + "feed_forward_length", uint32_t{kFf});
  b.w.add(a + "attention.head_count", uint32_t{kHeads});
  b.w.add(a + "attention.head_count_kv", uint32_t{kKv});
  b.w.add(a + "attention.key_length", uint32_t{kHd});
  b.w.add(a + "attention.value_length", uint32_t{kHd});
  b.w.add(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  b.w.add(a + "rope.freq_base", hybrid ? 1e7f : 5e5f);
  b.w.add(a + "vocab_size", uint32_t{kVocab});
  if (hybrid) {
    b.w.add(a + "rope.dimension_count", uint32_t{16});
    b.w.add(a + "expert_count", uint32_t{kExperts});
    b.w.add(a + "expert_used_count", uint32_t{2});
    b.w.add(a + "expert_feed_forward_length", uint32_t{kFf / 2});
    b.w.add(a + "expert_shared_feed_forward_length", uint32_t{kFf / 2});
    b.w.add(a + "full_attention_interval", uint32_t{4});
    b.w.add(a + "ssm.conv_kernel", uint32_t{kConv});
    b.w.add(a + "ssm.state_size", uint32_t{kState});
    b.w.add(a + "ssm.group_count", uint32_t{kGroups});
    b.w.add(a + "ssm.time_step_rank", uint32_t{kVHeads});
    b.w.add(a + "ssm.inner_size", uint32_t{kState * kVHeads});
  }
  if (o.tokenizer) add_tokenizer(b.w, kVocab);
  b.tensor("token_embd.weight", {kEmbd, kVocab}, 'b', 1.0);
  b.tensor("output_norm.weight", {kEmbd}, 'n');
  b.tensor("output.weight", {kEmbd, kVocab}, 'w', 2.0);
  for (uint64_t il = 0; il < kLayers; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    b.tensor(p + "attn_norm.weight", {kEmbd}, 'n');
    b.tensor(p + (hybrid ? "post_attention_norm.weight" : "ffn_norm.weight"), {kEmbd}, 'n');
    if (!hybrid || (il + 1) % 4 == 0) {
      b.tensor(p + "attn_q.weight", {kEmbd, kHd * kHeads * (hybrid ? 2 : 1)}, 'w');
      b.tensor(p + "attn_k.weight", {kEmbd, kHd * kKv}, 'w');
      b.tensor(p + "attn_v.weight", {kEmbd, kHd * kKv}, 'w');
      b.tensor(p + "attn_output.weight", {kHd * kHeads, kEmbd}, 'w');
      if (hybrid) {
        b.tensor(p + "attn_q_norm.weight", {kHd}, 'n');
        b.tensor(p + "attn_k_norm.weight", {kHd}, 'n');
      }
    } else {
      const uint64_t ch = 2 * kGroups * kState + kVHeads * kState;
      b.tensor(p + "attn_qkv.weight", {kEmbd, ch}, 'w');
      b.tensor(p + "attn_gate.weight", {kEmbd, kVHeads * kState}, 'w');
      b.tensor(p + "ssm_conv1d.weight", {kConv, ch}, 'b', 0.5);
      b.tensor(p + "ssm_dt.bias", {kVHeads}, 'b', 0.5);
      b.tensor(p + "ssm_a", {kVHeads}, 'c', -0.5);
      b.tensor(p + "ssm_beta.weight", {kEmbd, kVHeads}, 'w');
      b.tensor(p + "ssm_alpha.weight", {kEmbd, kVHeads}, 'w');
      b.tensor(p + "ssm_norm.weight", {kState}, 'n');
      b.tensor(p + "ssm_out.weight", {kVHeads * kState, kEmbd}, 'w');
    }
    if (hybrid) {
      b.tensor(p + "ffn_gate_inp.weight", {kEmbd, kExperts}, 'w', 2.0);
      b.tensor(p + "ffn_gate_exps.weight", {kEmbd, kFf / 2, kExperts}, 'w');
      b.tensor(p + "ffn_up_exps.weight", {kEmbd, kFf / 2, kExperts}, 'w');
      b.tensor(p + "ffn_down_exps.weight", {kFf / 2, kEmbd, kExperts}, 'w');
      b.tensor(p + "ffn_gate_inp_shexp.weight", {kEmbd}, 'b', 1.0 / 16);
      b.tensor(p + "ffn_gate_shexp.weight", {kEmbd, kFf / 2}, 'w');
      b.tensor(p + "ffn_up_shexp.weight", {kEmbd, kFf / 2}, 'w');
      b.tensor(p + "ffn_down_shexp.weight", {kFf / 2, kEmbd}, 'w');
    } else {
      b.tensor(p + "ffn_gate.weight", {kEmbd, kFf}, 'w');
      b.tensor(p + "ffn_up.weight", {kEmbd, kFf}, 'w');
      b.tensor(p + "ffn_down.weight", {kFf, kEmbd}, 'w');
    }
  }
  return b.w.write(path);
}

}  // namespace sy::synth
