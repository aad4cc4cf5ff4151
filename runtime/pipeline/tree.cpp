#include "pipeline/tree.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace sy::pipeline {
namespace fs = std::filesystem;

const Node* Node::get(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

Node* Node::get(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

Location Node::key_location(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return e.key_loc;
  return loc;
}

std::string Node::describe() const {
  switch (kind) {
    case Kind::null: return "nothing";
    case Kind::scalar: return "'" + scalar + "'";
    case Kind::list: return "a list";
    case Kind::map: return "a mapping";
  }
  return "?";
}

namespace {

Location at(const YAML::Mark& m, const std::string& file) {
  if (m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

Node convert(const YAML::Node& y, const std::string& file, std::vector<Diagnostic>& diags, int depth) {
  Node n;
  n.loc = at(y.Mark(), file);
  if (depth > 64) {
    diags.push_back({n.loc, "document is nested more than 64 levels deep", false});
    return n;
  }
  switch (y.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      n.kind = Node::Kind::null;
      break;
    case YAML::NodeType::Scalar:
      n.kind = Node::Kind::scalar;
      n.scalar = y.Scalar();
      n.quoted = y.Tag() == "!";  // yaml-cpp tags quoted scalars "!" and plain ones "?"
      break;
    case YAML::NodeType::Sequence:
      n.kind = Node::Kind::list;
      for (const auto& item : y) n.items.push_back(convert(item, file, diags, depth + 1));
      break;
    case YAML::NodeType::Map:
      n.kind = Node::Kind::map;
      for (const auto& kv : y) {
        const Location kloc = at(kv.first.Mark(), file);
        if (!kv.first.IsScalar()) {
          diags.push_back({kloc, "keys must be plain names, not a list or mapping", false});
          continue;
        }
        const std::string key = kv.first.Scalar();
        if (const Node* prev = n.get(key)) {
          (void)prev;
          diags.push_back({kloc, "duplicate key '" + key + "' (first given at line " +
                                     std::to_string(n.key_location(key).line) + ")", false});
          continue;
        }
        n.entries.push_back({key, kloc, convert(kv.second, file, diags, depth + 1)});
      }
      break;
  }
  return n;
}

}  // namespace

Node parse_yaml(const std::string& text, const std::string& file, std::vector<Diagnostic>& diags) {
  try {
    const YAML::Node y = YAML::Load(text);
    return convert(y, file, diags, 0);
  } catch (const YAML::Exception& e) {
    diags.push_back({at(e.mark, file), "YAML syntax error: " + e.msg, false});
    return {};
  }
}

Node load_yaml_file(const fs::path& path, const Location& from, std::vector<Diagnostic>& diags) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.push_back({from, "cannot read pipeline file '" + path.string() + "'", false});
    return {};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_yaml(ss.str(), path.string(), diags);
}

void merge_into(Node& base, const Node& over) {
  if (base.kind == Node::Kind::map && over.kind == Node::Kind::map) {
    for (const auto& e : over.entries) {
      if (Node* b = base.get(e.key)) {
        merge_into(*b, e.value);
      } else {
        base.entries.push_back(e);
      }
    }
    return;
  }
  base = over;
}

namespace {

Node load_chain(const fs::path& path, const Location& from, std::vector<fs::path>& stack,
                std::vector<Diagnostic>& diags) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(path, ec);
  for (const auto& p : stack)
    if (p == canon) {
      std::string chain;
      for (const auto& s : stack) chain += s.filename().string() + " -> ";
      diags.push_back({from, "'extends' forms a cycle: " + chain + canon.filename().string(), false});
      return {};
    }
  if (stack.size() >= 16) {
    diags.push_back({from, "'extends' chain is deeper than 16 files", false});
    return {};
  }
  Node doc = load_yaml_file(path, from, diags);
  if (doc.kind == Node::Kind::null) return doc;
  if (doc.kind != Node::Kind::map) {
    diags.push_back({doc.loc, "a pipeline must be a mapping of sections (model, backends, ...), got " + doc.describe(),
                     false});
    return {};
  }
  const Node* ext = doc.get("extends");
  if (!ext) return doc;
  if (ext->kind != Node::Kind::scalar) {
    diags.push_back({ext->loc, "'extends' must be a file path, got " + ext->describe(), false});
    return doc;
  }
  fs::path base_path = ext->scalar;
  if (base_path.is_relative()) base_path = path.parent_path() / base_path;
  stack.push_back(canon);
  Node base = load_chain(base_path, ext->loc, stack, diags);
  stack.pop_back();
  std::erase_if(doc.entries, [](const Node::Entry& e) { return e.key == "extends"; });
  if (base.kind != Node::Kind::map) return doc;
  merge_into(base, doc);
  base.loc = doc.loc;
  return base;
}

}  // namespace

Node load_with_extends(const fs::path& path, std::vector<Diagnostic>& diags) {
  std::vector<fs::path> stack;
  return load_chain(path, {path.string(), 0, 0}, stack, diags);
}

void apply_set(Node& root, const std::string& assignment, std::vector<Diagnostic>& diags) {
  const Location where{"--set " + assignment, 0, 0};
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    diags.push_back({where, "an override must look like key.path=value (e.g. context.length=8192)", false});
    return;
  }
  // Split "a.b[0].c" / "a.b.0.c" into segments.
  std::vector<std::string> segs;
  std::string cur;
  for (char c : assignment.substr(0, eq)) {
    if (c == '.' || c == '[' || c == ']') {
      if (!cur.empty()) segs.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) segs.push_back(cur);

  std::vector<Diagnostic> parse_diags;
  Node value = parse_yaml(assignment.substr(eq + 1), where.file, parse_diags);
  for (auto& d : parse_diags) {
    d.loc = where;
    diags.push_back(d);
  }
  if (!parse_diags.empty()) return;
  if (value.kind == Node::Kind::null && eq + 1 == assignment.size()) {
    value.kind = Node::Kind::scalar;  // "key=" sets an empty string, not null
    value.quoted = true;
  }
  auto relocate = [&](auto&& self, Node& n) -> void {
    n.loc = where;
    for (auto& i : n.items) self(self, i);
    for (auto& e : n.entries) {
      e.key_loc = where;
      self(self, e.value);
    }
  };
  relocate(relocate, value);

  if (root.kind == Node::Kind::null) root.kind = Node::Kind::map;
  Node* node = &root;
  std::string walked;
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& s = segs[i];
    const bool last = i + 1 == segs.size();
    walked += (walked.empty() ? "" : ".") + s;
    if (node->kind == Node::Kind::list) {
      const bool numeric = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      const size_t idx = numeric ? std::stoul(s) : SIZE_MAX;
      if (!numeric || idx >= node->items.size()) {
        diags.push_back({where, "'" + walked + "': the list has " + std::to_string(node->items.size()) +
                                    " items, so '" + s + "' is not a valid index", false});
        return;
      }
      node = &node->items[idx];
    } else {
      if (node->kind == Node::Kind::null) {
        node->kind = Node::Kind::map;
        node->loc = where;
      }
      if (node->kind != Node::Kind::map) {
        diags.push_back({where, "'" + walked + "': cannot set a key inside " + node->describe(), false});
        return;
      }
      Node* next = node->get(s);
      if (!next) {
        node->entries.push_back({s, where, Node{}});
        next = &node->entries.back().value;
        next->loc = where;
      }
      node = next;
    }
    if (last) *node = value;
  }
}

}  // namespace sy::pipeline
