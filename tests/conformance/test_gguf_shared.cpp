// Every GGUF in ../shared opens through the gguf plugin, and what it says matches the
// independent descriptions that ship with the data (llama.cpp's and gguf-py's view).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "model.hpp"
#include "registry/registry.hpp"
#include "support.hpp"
#include "writer.hpp"

using namespace sy;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kShared = SY_SHARED_DIR;

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

std::unique_ptr<ModelSource> open_via_plugin(const fs::path& p) {
  static auto fmt = reg().create_format("gguf", {});
  REQUIRE(fmt.has_value());
  auto src = fmt.value()->open(p);
  INFO(p.string());
  REQUIRE(src.has_value());
  return std::move(src.value());
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

size_t array_len(const Metadata& md, const char* key) {
  const auto* v = md.find(key);
  return v && std::holds_alternative<MetaArray>(*v) ? std::get<MetaArray>(*v).items.size() : 0;
}

}  // namespace

TEST_CASE("every shared .gguf opens, and the plugin is the chosen reader", "[conformance][gguf]") {
  size_t n = 0;
  for (const char* sub : {"models", "fixtures", "vocab"})
    for (const auto& e : fs::recursive_directory_iterator(kShared / sub)) {
      if (e.path().extension() != ".gguf") continue;
      INFO(e.path().string());
      auto choice = reg().choose_format(e.path());
      REQUIRE(choice.has_value());
      CHECK(reg().manifest(*choice->component).name == "gguf");
      auto src = open_via_plugin(e.path());
      CHECK(src->metadata().get_string("general.architecture").has_value());
      uint64_t sum = 0;
      for (size_t i = 0; i < src->tensors().size(); ++i) sum += src->view(i).value().size();
      CHECK(sum <= fs::file_size(e.path()));
      ++n;
    }
  CHECK(n >= 40);
}

TEST_CASE("stories260K: llama, 5 layers, n_embd 64, 512 tokens", "[conformance][gguf]") {
  auto src = open_via_plugin(kShared / "models/stories260K.gguf");
  const auto& md = src->metadata();
  CHECK(md.get_string("general.architecture") == "llama");
  CHECK(md.get_int("llama.block_count") == 5);
  CHECK(md.get_int("llama.embedding_length") == 64);
  CHECK(array_len(md, "tokenizer.ggml.tokens") == 512);
  CHECK(md.get_string("tokenizer.ggml.model") == "llama");
  CHECK(md.get_per_layer_int("llama.attention.head_count_kv", 4) == 4);
}

TEST_CASE("fixtures: architecture, hyper-parameters, vocabulary and tensor types match their references",
          "[conformance][gguf]") {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(kShared / "fixtures")) {
    const std::string fname = e.path().filename().string();
    if (fname.size() < 9 || fname.substr(fname.size() - 9) != ".ref.json" || fname == "stories260K.ref.json") continue;
    const json ref = read_json(e.path());
    const fs::path model = kShared / "fixtures" / ref["model_file"].get<std::string>();
    INFO(model.string());
    CHECK(fs::file_size(model) == ref["model_bytes"].get<uint64_t>());
    auto src = open_via_plugin(model);
    const auto& md = src->metadata();
    const std::string arch = ref["arch"];
    CHECK(md.get_string("general.architecture") == arch);
    for (const auto& [k, v] : ref["hparams"].items()) {
      INFO(k);
      const std::string key = arch + "." + k;
      if (v.is_array()) {
        const auto* mv = md.find(key);
        REQUIRE(mv != nullptr);
        const auto& items = std::get<MetaArray>(*mv).items;
        REQUIRE(items.size() == v.size());
        for (size_t i = 0; i < items.size(); ++i) CHECK(meta_as_int(items[i]) == v[i].get<int64_t>());
      } else if (v.is_boolean()) {
        CHECK(md.get_bool(key) == v.get<bool>());
      } else if (v.is_number_integer()) {
        CHECK(md.get_int(key) == v.get<int64_t>());
      } else {
        CHECK(md.get_float(key) == Approx(v.get<double>()).epsilon(1e-12));
      }
    }
    CHECK(array_len(md, "tokenizer.ggml.tokens") == ref["n_vocab"].get<size_t>());
    std::map<std::string, int> counts;
    for (const auto& t : src->tensors()) ++counts[std::string(storage_type_name(t.type))];
    std::map<std::string, int> expect;
    for (const auto& [k, v] : ref["tensor_type_counts"].items()) expect[k] = v.get<int>();
    CHECK(counts == expect);
    ++n;
  }
  CHECK(n >= 20);
}

TEST_CASE("quants: every listed tensor has llama.cpp's storage type and shape", "[conformance][gguf]") {
  const json refs = read_json(kShared / "fixtures/quants/refs.json");
  for (const auto& [type, entry] : refs.items()) {
    auto src = open_via_plugin(kShared / "fixtures/quants" / entry["file"].get<std::string>());
    std::map<std::string, const TensorDesc*> by_name;
    for (const auto& t : src->tensors()) by_name[t.name] = &t;
    for (const auto& [name, t] : entry["tensors"].items()) {
      INFO(type << " " << name);
      REQUIRE(by_name.count(name));
      CHECK(std::string(storage_type_name(by_name[name]->type)) == t["type"].get<std::string>());
      CHECK(by_name[name]->shape == t["ne"].get<std::vector<int64_t>>());
    }
  }
}

TEST_CASE("stories260K round-trips through the writer: equal metadata, byte-identical tensors",
          "[conformance][gguf]") {
  auto orig = gguf::Model::open(kShared / "models/stories260K.gguf");
  REQUIRE(orig.has_value());
  const auto& a = *orig.value();
  gguf::Writer w;
  REQUIRE(w.set_alignment(a.alignment()).is_ok());
  for (const auto& [k, v] : a.ordered_metadata()) w.add(k, v);
  for (size_t i = 0; i < a.tensors().size(); ++i) w.add_tensor(a.tensors()[i], a.view(i).value());
  sy::test::TempDir dir;
  REQUIRE(w.write(dir / "copy.gguf").is_ok());

  auto copy = gguf::Model::open(dir / "copy.gguf");
  REQUIRE(copy.has_value());
  const auto& b = *copy.value();
  REQUIRE(b.ordered_metadata().size() == a.ordered_metadata().size());
  for (size_t i = 0; i < a.ordered_metadata().size(); ++i) {
    INFO(a.ordered_metadata()[i].first);
    CHECK(b.ordered_metadata()[i].first == a.ordered_metadata()[i].first);
    CHECK(meta_type_of(b.ordered_metadata()[i].second) == meta_type_of(a.ordered_metadata()[i].second));
  }
  CHECK(b.metadata().entries().size() == a.metadata().entries().size());
  for (const auto& [k, v] : a.metadata().entries()) {
    INFO(k);
    const auto* bv = b.metadata().find(k);
    REQUIRE(bv != nullptr);
    if (const auto* arr = std::get_if<MetaArray>(&v)) {
      const auto& barr = std::get<MetaArray>(*bv);
      CHECK(barr.type == arr->type);
      REQUIRE(barr.items.size() == arr->items.size());
      for (size_t i = 0; i < arr->items.size(); ++i)
        if (arr->type == MetaType::string) CHECK(std::get<std::string>(barr.items[i]) == std::get<std::string>(arr->items[i]));
        else if (arr->type == MetaType::f32) CHECK(std::get<float>(barr.items[i]) == std::get<float>(arr->items[i]));
        else CHECK(meta_as_int(barr.items[i]) == meta_as_int(arr->items[i]));
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      CHECK(std::get<std::string>(*bv) == *s);
    } else if (const auto* f = std::get_if<float>(&v)) {
      CHECK(std::get<float>(*bv) == *f);
    } else {
      CHECK(meta_as_int(*bv) == meta_as_int(v));
    }
  }
  REQUIRE(b.tensors().size() == a.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    INFO(a.tensors()[i].name);
    CHECK(b.tensors()[i].name == a.tensors()[i].name);
    CHECK(b.tensors()[i].shape == a.tensors()[i].shape);
    CHECK(b.tensors()[i].type == a.tensors()[i].type);
    const auto va = a.view(i).value();
    const auto vb = b.view(i).value();
    CHECK(std::equal(va.begin(), va.end(), vb.begin(), vb.end()));
  }
}
