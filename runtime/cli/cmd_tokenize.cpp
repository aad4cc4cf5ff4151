// switchyard tokenize / detokenize: a model's tokenizer (GGUF metadata) or a Hugging Face
// tokenizer.json, from the command line.
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "model/source.hpp"
#include "registry/registry.hpp"
#include "registry/search_path.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

struct TokArgs {
  std::string model, tokenizer, text, file, ids;
  bool text_given = false, parse_special = false, add_special = false, json = false;
};

int fail(const char* cmd, const std::string& msg) {
  std::cerr << "switchyard " << cmd << ": " << msg << "\n";
  return 1;
}

Result<std::unique_ptr<tok::Tokenizer>> load(const TokArgs& a) {
  if (!a.tokenizer.empty()) {
    if (auto st = util::check_input_file(a.tokenizer, "--tokenizer"); !st) return st;
    return tok::Tokenizer::from_hf(a.tokenizer);
  }
  if (a.model.empty()) return error::invalid_argument("give a model (-m FILE) or a tokenizer (--tokenizer tokenizer.json)");
  std::vector<std::string> warnings;
  registry::Registry reg(registry::default_search_path({}, warnings));
  auto opened = model::open_source(reg, a.model);
  if (!opened) return opened.status();
  return tok::Tokenizer::from_gguf(opened->source->metadata(), a.model);
}

int run_tokenize(const TokArgs& a) {
  std::string text;
  if (a.text_given) {
    text = a.text;
  } else if (!a.file.empty()) {
    auto read = util::read_file(a.file, "--file");
    if (!read) return fail("tokenize", read.status().message());
    text = std::move(*read);
  } else {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  }
  auto t = load(a);
  if (!t) return fail("tokenize", t.status().message());
  const auto ids = (*t)->encode(text, a.add_special, a.parse_special);
  if (a.json) {
    nlohmann::ordered_json j;
    j["ids"] = ids;
    j["pieces"] = nlohmann::json::array();
    for (int32_t id : ids) j["pieces"].push_back((*t)->piece(id));
    std::cout << json_text(j) << "\n";
  } else {
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << "\n";
  }
  return 0;
}

int run_detokenize(const TokArgs& a) {
  std::vector<int32_t> ids;
  std::stringstream ss(a.ids);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    const auto v = util::parse_integer<int32_t>(std::string_view(item).substr(b, e - b + 1), 0, INT32_MAX);
    if (!v.ok())
      return fail("detokenize", "--ids: '" + item + "' is not a token id (expected integers from 0 to " +
                                    std::to_string(INT32_MAX) + " separated by commas)");
    ids.push_back(v.value);
  }
  auto t = load(a);
  if (!t) return fail("detokenize", t.status().message());
  for (int32_t id : ids)
    if (id < 0 || id >= (*t)->n_vocab())
      return fail("detokenize", "token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                    std::to_string((*t)->n_vocab() - 1) + ")");
  const std::string text = (*t)->decode(ids);
  if (a.json) {
    std::cout << json_text(nlohmann::json{{"text", text}}) << "\n";
  } else {
    std::cout << text << std::flush;
  }
  return 0;
}

void common(CLI::App* cmd, TokArgs& a) {
  cmd->add_option("-m,--model", a.model, "Model file whose tokenizer to use");
  cmd->add_option("--tokenizer", a.tokenizer, "A Hugging Face tokenizer.json (tokenizer_config.json beside it is read too)");
  cmd->add_flag("--json", a.json, "Print JSON");
}

}  // namespace

void add_tokenize_commands(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<TokArgs>();
  auto* tok = app.add_subcommand("tokenize", "Text to token ids (text from --text, --file or stdin)");
  common(tok, *a);
  tok->add_option("--text", a->text, "The text");
  tok->add_option("--file", a->file, "Read the text from this file (raw bytes)");
  tok->add_flag("--parse-special", a->parse_special, "Special tokens written in the text become their ids");
  tok->add_flag("--add-special", a->add_special, "Add BOS/EOS as the tokenizer asks");
  tok->callback([&d, a, tok] {
    a->text_given = tok->count("--text") > 0;
    d.run = [a] { return run_tokenize(*a); };
  });
  auto b = std::make_shared<TokArgs>();
  auto* detok = app.add_subcommand("detokenize", "Token ids to text, printed exactly");
  common(detok, *b);
  detok->add_option("--ids", b->ids, "Token ids: 1,2,3")->required();
  detok->callback([&d, b] { d.run = [b] { return run_detokenize(*b); }; });
}

}  // namespace sy::cli
