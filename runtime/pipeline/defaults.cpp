#include "pipeline/defaults.hpp"

namespace sy::pipeline {
namespace {

Node scalar(const std::string& text, const Location& where, bool builtin = false) {
  Node n;
  n.kind = Node::Kind::scalar;
  n.scalar = text;
  n.loc = where;
  n.builtin = builtin;
  return n;
}

}  // namespace

const std::vector<DefaultSampler>& default_sampling_chain() {
  static const std::vector<DefaultSampler> chain{
      {"top_k", "40"}, {"top_p", "0.95"}, {"min_p", "0.05"}, {"temperature", "0.8"}, {"dist", ""}};
  return chain;
}

Node default_sampling_node(const Location& where) {
  Node list;
  list.kind = Node::Kind::list;
  list.loc = where;
  for (const auto& d : default_sampling_chain()) {
    // Marked built-in, so that a model's recommended values can replace those no one sets.
    if (d.value.empty()) {
      list.items.push_back(scalar(d.name, where, true));
      continue;
    }
    Node item;
    item.kind = Node::Kind::map;
    item.loc = where;
    item.entries.push_back({d.name, where, scalar(d.value, where, true)});
    list.items.push_back(std::move(item));
  }
  return list;
}

Node default_backends_node(const Location& where) {
  Node cpu;
  cpu.kind = Node::Kind::map;
  cpu.loc = where;
  cpu.entries.push_back({"plugin", where, scalar("cpu", where)});
  Node list;
  list.kind = Node::Kind::list;
  list.loc = where;
  list.items.push_back(std::move(cpu));
  return list;
}

}  // namespace sy::pipeline
