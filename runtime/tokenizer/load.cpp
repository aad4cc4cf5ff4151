// Loading tokenizers: GGUF metadata (tokenizer.ggml.*) or Hugging Face tokenizer.json.
#include <algorithm>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

#include "switchyard/utf8.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode.hpp"
#include "util/read_file.hpp"

namespace sy::tok {
namespace {

const MetaArray* array(const Metadata& md, std::string_view key) {
  const MetaValue* v = md.find(key);
  return v && std::holds_alternative<MetaArray>(*v) ? &std::get<MetaArray>(*v) : nullptr;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const Metadata& md, std::string_view source) {
  const std::string src(source);
  auto t = std::unique_ptr<Tokenizer>(new Tokenizer());
  const auto model = md.get_string("tokenizer.ggml.model");
  if (!model) return error::not_found(src + " has no tokenizer (tokenizer.ggml.model is missing); pass --tokenizer tokenizer.json");
  if (*model == "none" || *model == "no_vocab")
    return error::not_found(src + " has no vocabulary (tokenizer.ggml.model is '" + *model +
                            "'): it runs on token ids; pass --tokenizer tokenizer.json to give it text");
  if (*model == "llama") {
    t->kind_ = Kind::spm;
  } else if (*model == "gpt2") {
    t->kind_ = Kind::bpe;
  } else {
    return error::unsupported(src + ": tokenizer.ggml.model '" + escape_invalid_utf8(*model) + "' is not supported; this build reads llama (SentencePiece) and gpt2 (byte-level BPE)");
  }
  const MetaArray* tokens = array(md, "tokenizer.ggml.tokens");
  if (!tokens || tokens->items.empty()) return error::invalid_argument(src + ": tokenizer.ggml.tokens is missing or empty");
  for (const auto& v : tokens->items) {
    if (!std::holds_alternative<std::string>(v)) return error::invalid_argument(src + ": tokenizer.ggml.tokens must hold strings");
    t->tokens_.push_back(std::get<std::string>(v));
  }
  const size_t n = t->tokens_.size();
  t->scores_.assign(n, 0.f);
  t->types_.assign(n, 1);
  if (const MetaArray* s = array(md, "tokenizer.ggml.scores"); s && s->items.size() == n)
    for (size_t i = 0; i < n; ++i)
      if (std::holds_alternative<float>(s->items[i])) t->scores_[i] = std::get<float>(s->items[i]);
  if (const MetaArray* ty = array(md, "tokenizer.ggml.token_type"); ty && ty->items.size() == n)
    for (size_t i = 0; i < n; ++i) t->types_[i] = static_cast<int32_t>(meta_as_int(ty->items[i]).value_or(1));
  if (const MetaArray* m = array(md, "tokenizer.ggml.merges"))
    for (size_t i = 0; i < m->items.size(); ++i)
      if (std::holds_alternative<std::string>(m->items[i])) t->merges_.emplace(std::get<std::string>(m->items[i]), static_cast<int32_t>(i));
  // An id outside the vocabulary counts as absent, as llama.cpp does ("bad special token").
  auto id = [&](const char* key) -> int32_t {
    const int64_t v = md.get_int(key).value_or(-1);
    return v >= 0 && v < static_cast<int64_t>(n) ? static_cast<int32_t>(v) : -1;
  };
  t->bos_ = id("tokenizer.ggml.bos_token_id");
  t->eos_ = id("tokenizer.ggml.eos_token_id");
  t->unk_ = id("tokenizer.ggml.unknown_token_id");
  for (const char* k : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (const int32_t e = id(k); e >= 0) t->eog_.push_back(e);
  const bool spm = t->kind_ == Kind::spm;
  // SentencePiece decodes byte tokens by their name, so each must be spelled <0xXX>.
  if (spm)
    for (size_t i = 0; i < n; ++i)
      if (t->types_[i] == 6 && !byte_token_value(t->tokens_[i]))
        return error::corrupt(src + ": token " + std::to_string(i) + " ('" + escape_invalid_utf8(t->tokens_[i]) +
                              "') has token type 6 (byte), but a byte token must be written <0xXX> with two hex "
                              "digits; the vocabulary is damaged, re-convert the model");
  t->nfc_ = md.get_string("tokenizer.switchyard.normalizer").value_or("") == "NFC";
  t->add_bos_ = md.get_bool("tokenizer.ggml.add_bos_token").value_or(spm);
  t->add_eos_ = md.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  t->add_space_prefix_ = md.get_bool("tokenizer.ggml.add_space_prefix").value_or(spm);
  if (!spm) {
    const std::string pre = md.get_string("tokenizer.ggml.pre").value_or("default");
    auto pats = PreTokenizer::patterns_for(pre);
    if (!pats) return Status(pats.status().code(), src + ": " + pats.status().message());
    auto p = PreTokenizer::create(*pats);
    if (!p) return Status(p.status().code(), src + ": " + p.status().message());
    t->pre_ = std::move(*p);
    t->pre_name_ = pre;
    t->ignore_merges_ = pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3";
  }
  // Control and unknown tokens count only with parse_special; user-defined ones always.
  for (size_t i = 0; i < n; ++i) {
    const int32_t ty = t->types_[i];
    if ((ty == 2 || ty == 3 || ty == 4) && !t->tokens_[i].empty())
      t->added_.push_back({t->tokens_[i], static_cast<int32_t>(i), ty != 4});
  }
  t->finish();
  return t;
}

namespace {

// Recursion limit for pre-tokenizer Sequences: real files nest one or two deep, and a
// hostile one must not exhaust the stack.
constexpr int kMaxPreTokenizerDepth = 16;

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_hf(const std::filesystem::path& path) {
  auto json = util::read_file(path, "the tokenizer file");
  if (!json) return json.status();
  const auto cfg_path = path.parent_path() / "tokenizer_config.json";
  auto cfg = util::read_optional_file(cfg_path, "the tokenizer config");
  if (!cfg) return cfg.status();
  return from_hf_text(*json, *cfg ? std::optional<std::string_view>(**cfg) : std::nullopt, path.string(),
                      cfg_path.string());
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_hf_text(std::string_view tokenizer_json,
                                                           std::optional<std::string_view> config_json,
                                                           const std::string& name, const std::string& config_name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(tokenizer_json);
  } catch (const std::exception& e) {
    return error::corrupt(name + " is not valid JSON: " + escape_invalid_utf8(e.what()));
  }
  auto t = std::unique_ptr<Tokenizer>(new Tokenizer());
  try {
    const auto& model = j.at("model");
    if (model.value("type", "BPE") != "BPE")
      return error::unsupported(name + ": model type " + escape_invalid_utf8(model.value("type", "")) +
                                " is not supported (BPE only)");
    t->kind_ = Kind::bpe;
    t->ignore_merges_ = model.value("ignore_merges", false);
    const auto& vocab = model.at("vocab");
    if (!vocab.is_object() || vocab.empty())
      return error::corrupt(name + ": model.vocab must be a non-empty object mapping each token to its id");
    const auto added = j.value("added_tokens", nlohmann::json::array());
    if (!added.is_array()) return error::corrupt(name + ": added_tokens must be an array");
    // Ids index the token table, so each must be an integer below the number of entries:
    // that bounds the table by the file, whatever the ids claim.
    const size_t limit = vocab.size() + added.size();
    auto id_of = [&](const nlohmann::json& v, const std::string& where) -> Result<size_t> {
      if (v.is_number_unsigned() && v.get<uint64_t>() < limit) return static_cast<size_t>(v.get<uint64_t>());
      if (v.is_number_integer() && v.get<int64_t>() >= 0 && static_cast<uint64_t>(v.get<int64_t>()) < limit)
        return static_cast<size_t>(v.get<int64_t>());
      return error::corrupt(name + ": " + where + " has id " + v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                            ", but ids must be whole numbers from 0 to " + std::to_string(limit - 1) +
                            " (one per vocab and added-token entry)");
    };
    t->tokens_.assign(limit, std::string());
    size_t n = 0;
    for (const auto& [tok, idv] : vocab.items()) {
      auto id = id_of(idv, "vocab token '" + escape_invalid_utf8(tok) + "'");
      if (!id) return id.status();
      t->tokens_[*id] = tok;
      n = std::max(n, *id + 1);
    }
    std::vector<std::pair<size_t, const nlohmann::json*>> added_ids;
    for (const auto& a : added) {
      auto id = id_of(a.at("id"), "an added token");
      if (!id) return id.status();
      added_ids.emplace_back(*id, &a);
      n = std::max(n, *id + 1);
    }
    t->tokens_.resize(n);
    t->scores_.assign(t->tokens_.size(), 0.f);
    t->types_.assign(t->tokens_.size(), 1);
    int32_t rank = 0;
    for (const auto& m : model.at("merges")) {
      // Either "a b" (older files) or ["a", "b"] (newer ones).
      const std::string key = m.is_string() ? m.get<std::string>() : m.at(0).get<std::string>() + " " + m.at(1).get<std::string>();
      t->merges_.emplace(key, rank++);
    }
    for (const auto& [id, a] : added_ids) {
      t->tokens_[id] = a->at("content").get<std::string>();
      const bool special = a->value("special", false);
      t->types_[id] = special ? 3 : 4;
      t->added_.push_back({t->tokens_[id], static_cast<int32_t>(id), special});
    }
    const auto& norm = j.value("normalizer", nlohmann::json());
    t->nfc_ = norm.is_object() && norm.value("type", "") == "NFC";
    // The Split regexes of the pre-tokenizer (a single one or a Sequence).
    std::vector<std::string> patterns;
    Status deep = Status::ok();
    std::function<void(const nlohmann::json&, int)> collect = [&](const nlohmann::json& p, int depth) {
      if (!p.is_object()) return;
      if (depth > kMaxPreTokenizerDepth) {
        deep = error::corrupt(name + ": the pre_tokenizer nests Sequences more than " +
                              std::to_string(kMaxPreTokenizerDepth) + " deep");
        return;
      }
      const std::string type = p.value("type", "");
      if (type == "Sequence")
        for (const auto& q : p.at("pretokenizers")) collect(q, depth + 1);
      else if (type == "Split" && p.at("pattern").contains("Regex"))
        patterns.push_back(p.at("pattern").at("Regex").get<std::string>());
      else if (type == "ByteLevel" && p.value("use_regex", true))
        patterns.push_back(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
    };
    collect(j.value("pre_tokenizer", nlohmann::json()), 0);
    if (!deep) return deep;
    auto p = PreTokenizer::create(patterns);
    if (!p) return Status(p.status().code(), name + ": " + p.status().message());
    t->pre_ = std::move(*p);
    t->pre_name_ = PreTokenizer::name_for(patterns);
  } catch (const std::exception& e) {
    return error::corrupt(name + " is not a tokenizer.json this build understands: " + escape_invalid_utf8(e.what()));
  }
  // tokenizer_config.json beside it: BOS/EOS.
  if (config_json) {
    try {
      const auto cfg = nlohmann::json::parse(*config_json);
      auto token_of = [&](const char* key) -> int32_t {
        if (!cfg.contains(key) || cfg[key].is_null()) return -1;
        const std::string s = cfg[key].is_string() ? cfg[key].get<std::string>() : cfg[key].value("content", "");
        return t->find(s);
      };
      t->index_.clear();
      for (size_t i = 0; i < t->tokens_.size(); ++i) t->index_.emplace(t->tokens_[i], static_cast<int32_t>(i));
      t->bos_ = token_of("bos_token");
      t->eos_ = token_of("eos_token");
      t->add_bos_ = cfg.value("add_bos_token", false) && t->bos_ >= 0;
      t->add_eos_ = cfg.value("add_eos_token", false) && t->eos_ >= 0;
      if (t->eos_ >= 0) t->eog_.push_back(t->eos_);
    } catch (const std::exception& e) {
      return error::corrupt(config_name + " is not a tokenizer_config.json this build understands: " +
                            escape_invalid_utf8(e.what()));
    }
  }
  t->finish();
  return t;
}

void Tokenizer::finish() {
  index_.clear();
  index_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) index_.emplace(tokens_[i], static_cast<int32_t>(i));
  // An empty added token would match everywhere and never advance the text.
  std::erase_if(added_, [](const Added& a) { return a.text.empty(); });
  // Longest first, so "<|im_start|>" wins over any shorter token it contains.
  std::stable_sort(added_.begin(), added_.end(), [](const Added& a, const Added& b) { return a.text.size() > b.text.size(); });
  verbatim_.assign(tokens_.size(), false);
  for (size_t i = 0; i < tokens_.size(); ++i) verbatim_[i] = types_[i] == 3 || types_[i] == 4;
  for (const auto& a : added_) verbatim_[static_cast<size_t>(a.id)] = true;
  id_merges_.clear();
  id_merges_.reserve(merges_.size());
  for (const auto& [pair, rank] : merges_) {
    const size_t sp = pair.find(' ', 1);  // the left part is never empty
    if (sp == std::string::npos) continue;
    const int32_t l = find(std::string_view(pair).substr(0, sp)), r = find(std::string_view(pair).substr(sp + 1));
    const int32_t m = find(pair.substr(0, sp) + pair.substr(sp + 1));
    if (l < 0 || r < 0 || m < 0) continue;  // a merge whose result is no token can never apply
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
    const auto [it, fresh] = id_merges_.emplace(key, std::make_pair(rank, m));
    if (!fresh && rank < it->second.first) it->second = {rank, m};
  }
  for (size_t i = 0; i < tokens_.size(); ++i)  // end-of-turn markers named like it
    if (types_[i] == 3 && (tokens_[i] == "<|eot_id|>" || tokens_[i] == "<|im_end|>" || tokens_[i] == "<|end|>" ||
                           tokens_[i] == "<end_of_turn>" || tokens_[i] == "<|endoftext|>"))
      eog_.push_back(static_cast<int32_t>(i));
}

}  // namespace sy::tok
