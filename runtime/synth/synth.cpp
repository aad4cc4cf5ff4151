#include "synth/synth.hpp"

#include "writer.hpp"
#include "model/hparams.hpp"
#include "synth/layout.hpp"
#include "synth/mix.hpp"
#include "synth/random_fill.hpp"
#include "synth/vocab.hpp"

namespace sy::synth {

Status write_synth_model(const std::filesystem::path& path, const Topology& t, const SynthOptions& o) {
  auto mix = parse_type_mix(o.type);
  if (!mix) return mix.status();
  Layout layout = model_layout(t);
  gguf::Writer w;
  for (auto& [k, v] : layout.metadata) w.add(k, std::move(v));
  if (o.tokenizer) {
    MetaEntries vocab;
    if (!o.tokenizer_json.empty()) {
      auto v = hf_vocab(o.tokenizer_json, t.n_vocab);
      if (!v) return v.status();
      vocab = std::move(*v);
    } else {
      vocab = synthetic_vocab(t.n_vocab);
    }
    for (auto& [k, v] : vocab) w.add(k, std::move(v));
  }
  const auto descs = assign_types(*mix, layout.tensors);
  auto filler = std::make_shared<TensorFiller>(o.seed, o.threads);
  auto specs = std::make_shared<std::vector<TensorSpec>>(std::move(layout.tensors));
  for (size_t i = 0; i < descs.size(); ++i) {
    if (descs[i].bytes == 0)
      return error::invalid_argument("tensor " + descs[i].name + " cannot be stored as " +
                                     std::string(storage_type_name(descs[i].type)));
    w.add_tensor(descs[i], [filler, specs, i, d = descs[i]](std::span<std::byte> out) {
      return filler->fill((*specs)[i], d, out);
    });
  }
  return w.write(path);
}

Result<planner::ModelDesc> describe(const Topology& t, const std::string& type) {
  auto mix = parse_type_mix(type);
  if (!mix) return mix.status();
  Layout layout = model_layout(t);
  Metadata md;
  for (auto& [k, v] : layout.metadata) md.set(k, std::move(v));
  planner::ModelDesc m;
  m.name = t.name + " (" + mix->name + ")";
  m.tensors = assign_types(*mix, layout.tensors);
  auto hp = model::read_hparams(md, m.tensors);
  if (!hp) return hp.status();
  m.hp = std::move(*hp);
  return m;
}

Status write_demo_model(const std::filesystem::path& path, const std::string& topology, const std::string& type,
                        bool tokenizer) {
  auto t = builtin_topology(topology);
  if (!t) return t.status();
  SynthOptions o;
  o.type = type;
  o.tokenizer = tokenizer;
  return write_synth_model(path, *t, o);
}

}  // namespace sy::synth
