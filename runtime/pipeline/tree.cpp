#include "pipeline/tree.hpp"

#include "pipeline/defaults.hpp"

#include <algorithm>
#include <set>

#include <yaml-cpp/yaml.h>

#include "util/parse_number.hpp"
#include "util/read_file.hpp"

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

// yaml-cpp keeps an alias as a second reference to its anchor's node, so nine lines of
// lists of aliases (the "billion laughs") hold 9^9 leaves once expanded. The conversion
// expands them; the budget stops it at a size no pipeline comes near, with an error at the
// node where the budget ran out.
struct Budget {
  size_t nodes_left = kMaxDocumentNodes;
  size_t bytes_left = kMaxDocumentScalarBytes;
  bool exceeded = false;
};

class Converter {
 public:
  Converter(const std::string& file, std::vector<Diagnostic>& diags) : file_(file), diags_(diags) {}

  Node convert(const YAML::Node& y, int depth) {
    Node n;
    n.loc = at(y.Mark(), file_);
    if (budget_.exceeded) return n;
    if (depth > kMaxDocumentDepth) {
      diags_.push_back({n.loc, "document is nested more than " + std::to_string(kMaxDocumentDepth) + " levels deep",
                        false});
      budget_.exceeded = true;  // one message, not one per branch
      return n;
    }
    if (budget_.nodes_left == 0) return over_budget(n.loc, "nodes", kMaxDocumentNodes);
    --budget_.nodes_left;
    switch (y.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        n.kind = Node::Kind::null;
        break;
      case YAML::NodeType::Scalar:
        if (y.Scalar().size() > budget_.bytes_left) return over_budget(n.loc, "bytes of text", kMaxDocumentScalarBytes);
        budget_.bytes_left -= y.Scalar().size();
        n.kind = Node::Kind::scalar;
        n.scalar = y.Scalar();
        n.quoted = y.Tag() == "!";  // yaml-cpp tags quoted scalars "!" and plain ones "?"
        break;
      case YAML::NodeType::Sequence:
        n.kind = Node::Kind::list;
        for (const auto& item : y) {
          n.items.push_back(convert(item, depth + 1));
          if (budget_.exceeded) break;
        }
        break;
      case YAML::NodeType::Map:
        n.kind = Node::Kind::map;
        for (const auto& kv : y) {
          if (budget_.exceeded) break;
          map_entry(n, kv.first, kv.second, depth);
        }
        break;
    }
    return n;
  }

 private:
  void map_entry(Node& n, const YAML::Node& k, const YAML::Node& v, int depth) {
    const Location kloc = at(k.Mark(), file_);
    if (!k.IsScalar()) {
      diags_.push_back({kloc, "keys must be plain names, not a list or mapping", false});
      return;
    }
    const std::string key = k.Scalar();
    if (depth == 0) top_key_ = kloc;
    if (n.get(key)) {
      diags_.push_back({kloc, "duplicate key '" + key + "' (first given at line " +
                                  std::to_string(n.key_location(key).line) + ")", false});
      return;
    }
    n.entries.push_back({key, kloc, convert(v, depth + 1)});
  }

  // Reported at the top-level key being read: an expanded alias node carries its anchor's
  // position, which is not where the repetition is.
  Node over_budget(const Location& loc, const char* what, size_t limit) {
    budget_.exceeded = true;
    diags_.push_back({top_key_.line > 0 ? top_key_ : loc, "the document expands to more than " + std::to_string(limit) + " " + what +
                               " (aliases such as *name repeat what their anchor holds); a pipeline needs far "
                               "fewer, so remove the repetition",
                      false});
    Node n;
    n.loc = loc;
    return n;
  }

  const std::string& file_;
  std::vector<Diagnostic>& diags_;
  Budget budget_;
  Location top_key_;
};

}  // namespace

Node parse_yaml(const std::string& text, const std::string& file, std::vector<Diagnostic>& diags) {
  try {
    const YAML::Node y = YAML::Load(text);
    Converter c(file, diags);
    return c.convert(y, 0);
  } catch (const YAML::Exception& e) {
    diags.push_back({at(e.mark, file), "YAML syntax error: " + e.msg, false});
    return {};
  }
}

namespace {

Result<std::string> read_pipeline_file(const fs::path& path) {
  return util::read_file(path, "pipeline file", kMaxPipelineFileBytes);
}

Node load_text(const fs::path& path, const Location& from, std::vector<Diagnostic>& diags, const TextReader& read) {
  auto text = read(path);
  if (!text) {
    diags.push_back({from, text.status().message(), false});
    return {};
  }
  return parse_yaml(*text, path.string(), diags);
}

}  // namespace

Node load_yaml_file(const fs::path& path, const Location& from, std::vector<Diagnostic>& diags) {
  return load_text(path, from, diags, read_pipeline_file);
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
                std::vector<Diagnostic>& diags, const TextReader& read) {
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
  Node doc = load_text(path, from, diags, read);
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
  Node base = load_chain(base_path, ext->loc, stack, diags, read);
  stack.pop_back();
  std::erase_if(doc.entries, [](const Node::Entry& e) { return e.key == "extends"; });
  if (base.kind != Node::Kind::map) return doc;
  // A child's `model: { chat_template: ... }` adds to a base's `model: file.gguf`.
  if (const Node* dm = doc.get("model"); dm && dm->kind == Node::Kind::map) expand_model_shorthand(base);
  merge_into(base, doc);
  base.loc = doc.loc;
  return base;
}

}  // namespace

Node load_with_extends(const fs::path& path, std::vector<Diagnostic>& diags, const TextReader& read) {
  std::vector<fs::path> stack;
  return load_chain(path, {path.string(), 0, 0}, stack, diags, read);
}

Node load_with_extends(const fs::path& path, std::vector<Diagnostic>& diags) {
  return load_with_extends(path, diags, read_pipeline_file);
}

std::string item_name(const Node& item) {
  if (item.kind == Node::Kind::scalar) return item.scalar;
  if (item.kind != Node::Kind::map) return "";
  if (const Node* p = item.get("plugin"); p && p->kind == Node::Kind::scalar) return p->scalar;
  if (item.entries.size() == 1) return item.entries.front().key;
  return "";
}

// `- cpu` in backends becomes { plugin: cpu }; `- dist` in sampling becomes { dist: null },
// so that a key can be set inside them.
Status expand_item(Node& item, const std::string& section, const std::string& walked) {
  Node name = item;
  item.kind = Node::Kind::map;
  item.scalar.clear();
  item.quoted = false;
  if (section == "backends") {
    item.entries.push_back({"plugin", name.loc, std::move(name)});
  } else if (section == "sampling") {
    Node empty;
    empty.loc = name.loc;
    item.entries.push_back({name.scalar, name.loc, std::move(empty)});
  } else {
    item = name;
    return error::invalid_argument("'" + walked + "': cannot set a key inside " + item.describe());
  }
  return {};
}

// `{ top_p: 0.9 }` becomes `{ top_p: { p: 0.9 } }`: the shorthand value is the sampler's
// main parameter, whose name only the sampler's manifest knows.
Status expand_primary(Node& value, const std::string& sampler, const std::string& walked, const PrimaryParam& primary) {
  const std::optional<std::string> name = primary ? primary(sampler) : std::nullopt;
  if (!name)
    return error::invalid_argument("'" + walked + "' is written in shorthand ({ " + sampler + ": " + value.scalar +
                                   " }) and sampler '" + sampler +
                                   "' declares no main parameter; write its parameters as a mapping");
  Node v = value;
  value.kind = Node::Kind::map;
  value.scalar.clear();
  value.quoted = false;
  value.entries.push_back({*name, v.loc, std::move(v)});
  return {};
}

void apply_set(Node& root, const std::string& assignment, std::vector<Diagnostic>& diags, const PrimaryParam& primary) {
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
  if (segs.empty()) {
    diags.push_back({where, "an override must name a key before '=' (e.g. context.length=8192)", false});
    return;
  }
  if (segs.size() > static_cast<size_t>(kMaxDocumentDepth)) {
    diags.push_back({where, "the key path has " + std::to_string(segs.size()) + " parts; a pipeline is at most " +
                                std::to_string(kMaxDocumentDepth) + " levels deep",
                     false});
    return;
  }

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
  const std::string section = segs.front();
  Node* node = &root;
  std::string walked;
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& s = segs[i];
    const bool last = i + 1 == segs.size();
    walked += (walked.empty() ? "" : ".") + s;
    if (node->kind == Node::Kind::list) {
      Node* item = nullptr;
      const bool numeric = std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (numeric) {
        const auto idx = util::parse_integer<size_t>(s);
        if (!idx.ok() || idx.value >= node->items.size()) {
          diags.push_back({where, "'" + walked + "': the list has " + std::to_string(node->items.size()) +
                                      " items, so '" + s + "' is not a valid index", false});
          return;
        }
        item = &node->items[idx.value];
      } else {
        for (auto& it : node->items)
          if (item_name(it) == s) {
            item = &it;
            break;
          }
        if (!item) {
          std::string names;
          for (const auto& it : node->items) names += (names.empty() ? "" : ", ") + item_name(it);
          diags.push_back({where, "'" + walked + "': no item of the list is named '" + s + "' (it holds: " +
                                      (names.empty() ? std::string("nothing") : names) +
                                      "); address items by name or by index, e.g. " +
                                      walked.substr(0, walked.size() - s.size()) + "0", false});
          return;
        }
      }
      // A scalar item is expanded to set a key inside it, and a sampler named by its bare
      // name (`- top_p`) also to take a value: `sampling.top_p=0.5` means `{ top_p: 0.5 }`.
      if (item->kind == Node::Kind::scalar && (!last || (!numeric && section == "sampling"))) {
        if (auto st = expand_item(*item, section, walked); !st) {
          diags.push_back({where, st.message(), false});
          return;
        }
      }
      node = item;
      // A sampler addressed by name stands for its one-key mapping's value:
      // sampling.top_p.p means sampling.N.top_p.p.
      if (!numeric && node->kind == Node::Kind::map && node->get(s) && !node->get("plugin")) {
        node = node->get(s);
        if (!last && node->kind == Node::Kind::scalar) {
          if (auto st = expand_primary(*node, s, walked, primary); !st) {
            diags.push_back({where, st.message(), false});
            return;
          }
        }
      }
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
      if (i == 0 && !last && (!next || next->kind == Node::Kind::null) && (s == "sampling" || s == "backends")) {
        // A key inside the default list: the defaults become explicit first, so that
        // `--set sampling.temperature.t=0.3` tunes the default chain.
        Node list = s == "sampling" ? default_sampling_node(where) : default_backends_node(where);
        if (next) {
          *next = std::move(list);
        } else {
          node->entries.push_back({s, where, std::move(list)});
          next = &node->entries.back().value;
        }
      }
      if (!next) {
        node->entries.push_back({s, where, Node{}});
        next = &node->entries.back().value;
        next->loc = where;
      }
      node = next;
      if (!last && node->kind == Node::Kind::scalar) {
        // Shorthand forms are expanded before a key is set inside them.
        Status st;
        if (i == 0 && s == "model")
          expand_model_shorthand(root);
        else if (section == "sampling" && i == 2)
          st = expand_primary(*node, s, walked, primary);
        else
          st = error::invalid_argument("'" + walked + "': cannot set a key inside " + node->describe());
        if (!st) {
          diags.push_back({where, st.message(), false});
          return;
        }
        if (i == 0) node = root.get("model");
      }
    }
    if (last) *node = value;
  }
}

void apply_set(Node& root, const std::string& assignment, std::vector<Diagnostic>& diags) {
  apply_set(root, assignment, diags, {});
}

void expand_model_shorthand(Node& root) {
  Node* m = root.kind == Node::Kind::map ? root.get("model") : nullptr;
  if (!m || m->kind != Node::Kind::scalar) return;
  Node path = *m;
  m->kind = Node::Kind::map;
  m->scalar.clear();
  m->quoted = false;
  m->entries.clear();
  m->entries.push_back({"path", path.loc, std::move(path)});
}

}  // namespace sy::pipeline
