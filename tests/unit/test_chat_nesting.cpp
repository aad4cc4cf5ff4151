// How deeply template values nest. Python builds a 100 000-deep list happily and then fails
// to print it (RecursionError); the interpreter's printers, comparisons, JSON writer and
// destructors recurse once per level too, so a render refuses a value past 500 levels with
// a positioned limit error. Expected text below is what Jinja2 3.1.6 renders (checked with
// Jinja2 itself) for depths it can print.
#include <catch2/catch.hpp>

#include "chat/template.hpp"

using namespace sy::chat;

namespace {

std::string render(const std::string& src, const std::string& ctx_json = "{}") {
  auto t = Template::parse(src, "t.jinja");
  if (!t) return "PARSE: " + t.status().message();
  auto out = t->render(from_json(nlohmann::ordered_json::parse(ctx_json)));
  return out ? *out : "ERROR: " + out.status().message();
}

std::string nested(const std::string& open, const std::string& inner, const std::string& close, int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += open;
  s += inner;
  for (int k = 0; k < n; ++k) s += close;
  return s;
}

// `{% set ns.x = BUILD %}` `n` times, then `{{ SHOW }}`.
std::string grow(int n, const std::string& build, const std::string& show = "ns.x") {
  return "{% set ns = namespace(x=0, y=0) %}{% for i in range(" + std::to_string(n) + ") %}{% set ns.x = " + build +
         " %}{% endfor %}{{ " + show + " }}";
}

std::string limit_error(const std::string& src, const std::string& at) {
  return "ERROR: t.jinja:1:" + std::to_string(src.find(at) + 1) + ": values nested more than 500 levels deep (lists and dicts inside each other)";
}

}  // namespace

TEST_CASE("templates: a value nested past 500 levels is refused where it is built", "[templates]") {
  // The reviewer's example: a list 100 000 levels deep.
  const std::string deep = grow(100000, "[ns.x]");
  CHECK(render(deep) == limit_error(deep, "[ns.x]"));
  // Level 501 is the first one refused, by every way of building a container.
  CHECK(render(grow(501, "[ns.x]")) == limit_error(grow(501, "[ns.x]"), "[ns.x]"));
  const std::string dict = grow(1000, "{'k': ns.x}");
  CHECK(render(dict) == limit_error(dict, "{'k'"));
  const std::string tuple = grow(1000, "(ns.x, 1)");
  CHECK(render(tuple) == limit_error(tuple, "(ns.x"));
  const std::string call = grow(1000, "dict(k=ns.x)");
  CHECK(render(call) == limit_error(call, "dict("));
  const std::string plus = grow(1000, "[] + [ns.x]");
  CHECK(render(plus) == limit_error(plus, "[ns.x]"));
  const std::string batch = grow(1000, "[ns.x]|batch(1)");
  CHECK(render(batch) == limit_error(batch, "[ns.x]|batch"));
  // A bound method keeps its object alive, so it counts a level above it.
  const std::string method = grow(1000, "{'k': ns.x}.items");
  CHECK(render(method).find("values nested more than 500 levels deep") != std::string::npos);
}

TEST_CASE("templates: values 500 levels deep print, compare and serialise as in Python", "[templates]") {
  const std::string list500 = nested("[", "0", "]", 500);
  CHECK(render(grow(500, "[ns.x]")) == list500);
  CHECK(render(grow(500, "[ns.x]", "ns.x|tojson")) == list500);
  CHECK(render(grow(499, "{'k': ns.x}")) == nested("{'k': ", "0", "}", 499));
  // Two equal structures built apart compare item by item down to the bottom.
  CHECK(render("{% set ns = namespace(x=0, y=0) %}{% for i in range(500) %}{% set ns.x = [ns.x] %}{% set ns.y = [ns.y] %}"
               "{% endfor %}{{ ns.x == ns.y }} {{ ns.x[0] in [ns.y[0]] }} {{ ns.x < ns.y }} {{ ns.x <= ns.y }}") ==
        "True True False True");
}

TEST_CASE("templates: a context nested past 500 levels is refused before rendering", "[templates]") {
  const std::string ok = "{\"v\": " + nested("[", "1", "]", 500) + "}";
  CHECK(render("{{ v|tojson }}", ok) == nested("[", "1", "]", 500));
  CHECK(render("{{ 1 }}", "{\"v\": " + nested("[", "1", "]", 501) + "}") ==
        "ERROR: the template context's 'v' nests more than 500 levels deep; flatten it");
  CHECK(render("{{ 1 }}", "{\"v\": " + nested("{\"a\": ", "1", "}", 100000) + "}") ==
        "ERROR: the template context's 'v' nests more than 500 levels deep; flatten it");
}

TEST_CASE("templates: namespaces compare by identity and are not JSON", "[templates]") {
  // Jinja2's Namespace has no __eq__, and json.dumps refuses it.
  CHECK(render("{% set a = namespace(x=1) %}{% set b = namespace(x=1) %}{{ a == b }} {{ [a] == [b] }} {{ {'k': a} == {'k': a} }}") ==
        "False False True");
  CHECK(render("{% set ns = namespace(a=1) %}{% set ns.self = ns %}{{ [ns] == [ns] }} {{ ns == ns }} {{ ns.self == ns }}") ==
        "True True True");
  CHECK(render("{% set ns = namespace(a=[1]) %}{{ ns|tojson }}") == "ERROR: t.jinja:1:35: Object of type Namespace is not JSON serializable");
  // A chain of namespaces 100 000 long holds no deep container: it renders, and the render
  // frees it without recursing.
  CHECK(render("{% set h = namespace(v=0) %}{% for i in range(100000) %}{% set h.v = namespace(v=h.v) %}{% endfor %}"
               "{{ h.v.v.v.v is defined }}") == "True");
}
