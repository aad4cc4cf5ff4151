// The template interpreter on hand-written cases: Python semantics spot checks (each
// expected string is what Python's Jinja2 prints), errors with positions, and limits that
// stop hostile templates.
#include <catch2/catch.hpp>

#include "chat/template.hpp"

using namespace sy::chat;

namespace {

std::string render(const std::string& src, const std::string& ctx_json = "{}", RenderOptions o = {}) {
  auto t = Template::parse(src, "t.jinja");
  if (!t) return "PARSE: " + t.status().message();
  auto out = t->render(from_json(nlohmann::ordered_json::parse(ctx_json)), o);
  return out ? *out : "ERROR: " + out.status().message();
}

}  // namespace

TEST_CASE("templates: Python values print as Python prints them", "[templates]") {
  CHECK(render("{{ x }}|{{ y }}|{{ z }}|{{ n }}", R"({"x": 450.0, "y": 22.5, "z": 1e20, "n": null})") == "450.0|22.5|1e+20|None");
  CHECK(render("{{ d }}", R"({"d": {"type": "text", "ok": true, "v": [1, "it's"]}})") ==
        R"({'type': 'text', 'ok': True, 'v': [1, "it's"]})");
  CHECK(render("{{ d | tojson }}", R"({"d": {"a": "é\n", "b": [1, 2.0, null]}})") == R"({"a": "é\n", "b": [1, 2.0, null]})");
  CHECK(render("{{ d | tojson(indent=2) }}", R"({"d": {"a": [1], "b": {}}})") == "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
  CHECK(render("{{ 'é' | tojson(ensure_ascii=true) }}") == "\"\\u00e9\"");
  CHECK(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }}") == "3 -4 2 3.5");
}

TEST_CASE("templates: strings, slices, tests and scoping follow Jinja2", "[templates]") {
  CHECK(render("{{ 'a,b,,c'.split(',') }} {{ '  x y '.split() }} {{ 'xxhixx'.strip('x') }}") ==
        "['a', 'b', '', 'c'] ['x', 'y'] hi");
  CHECK(render("{{ 'abcdef'[1:-1] }} {{ 'abc'[::-1] }} {{ [1,2,3][-1] }} {{ 'жёлтый'|length }}") == "bcde cba 3 6");
  CHECK(render("{% set x = 1 %}{% for i in [1,2] %}{% set x = 5 %}{% endfor %}{{ x }}") == "1");
  CHECK(render("{% set ns = namespace(x=1) %}{% for i in [1,2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}") == "4");
  // The body of a {% call %} runs where the call stands, so its own `caller` is the outer one
  // (none here): Jinja2 3.1 renders "<[none]>". It used to recurse until the stack overflowed.
  CHECK(render("{% macro m() %}<{{ caller() }}>{% endmacro %}"
               "{% call m() %}[{{ caller() if caller is defined else 'none' }}]{% endcall %}") == "<[none]>");
  // A namespace that holds itself is legal Jinja (Python's collector frees the cycle); the
  // sanitizer run of this test fails if the render leaks it.
  CHECK(render("{% set ns = namespace(a=1) %}{% set ns.self = ns %}{% set ns.l = [ns] %}{{ ns.self.self.a }}{{ ns.l[0].a }}") ==
        "11");
  // A caller() kept in a namespace and set in the loop scope it keeps is a cycle through a
  // scope; the render empties such scopes at the end (the sanitizer run catches a leak).
  CHECK(render("{% set ns = namespace() %}{% macro m() %}{% set ns.c = caller %}{{ caller() }}{% endmacro %}{% for i in range(3) %}{% call m() %}{{ i }}{% endcall %}{% set c = ns.c %}{% endfor %}{{ c is defined }}") == "012False");
  CHECK(render("{% for a, b in d|items %}{{ a }}={{ b }};{% endfor %}", R"({"d": {"k": 1, "j": 2}})") == "k=1;j=2;");
  CHECK(render("{% for x in [1,2,3] if x != 2 %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}") ==
        "11,23");
  CHECK(render("{{ undefined_thing is defined }} {{ none is none }} {{ 'a' is string }} {{ false is false }}") ==
        "False True True True");
  CHECK(render("{% macro m(a, b='z') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(2, b=3) }}") == "[1z][23]");
  CHECK(render("  {% if true %}\n  x\n  {% endif %}\n") == "  x\n");  // trim_blocks + lstrip_blocks
  CHECK(render("a  {{- ' b ' -}}  c") == "a b c");
  CHECK(render("{{ 'x' + 'y'|upper }}") == "xY");  // filters bind tighter than +
  CHECK(render("{{ ('<'|safe) + '<' }}") == "<&lt;");  // Markup + str escapes the plain side
}

TEST_CASE("templates: errors name the template line and column", "[templates]") {
  CHECK(render("x\n{% if a %}") == "PARSE: t.jinja:2:1: this {% if %} is never closed with {% endif %}");
  CHECK(render("ab\n {{ 1 +  }}") == "PARSE: t.jinja:2:2: this tag ends before its expression is complete");
  CHECK(render("{{ 1 2 }}") == "PARSE: t.jinja:1:6: unexpected '2' at the end of this tag");
  CHECK(render("ok\n  {{ raise_exception('bad role') }}") == "ERROR: t.jinja:2:6: bad role");
  CHECK(render("{{ 'a' + none }}") == "ERROR: t.jinja:1:8: unsupported operand type(s) for +: 'str' and 'NoneType'");
  CHECK(render("{{ [1].append(2) }}").find("is unsafe") != std::string::npos);  // the immutable sandbox
  CHECK(render("{{ x.y.z }}").find("'x' is undefined") != std::string::npos);
  // do_items raises TypeError("Can only get item pairs from a mapping.").
  CHECK(render("{{ m | items }}", R"({"m": "text"})").find("Can only get item pairs from a mapping.") != std::string::npos);
}

TEST_CASE("templates: limits stop hostile templates", "[templates]") {
  RenderOptions o;
  o.max_steps = 100000;
  o.max_output = 1 << 20;
  o.max_depth = 50;
  // An endless amount of work: nested loops far beyond the step budget.
  CHECK(render("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", "{}", o)
            .find("more than 100000 steps") != std::string::npos);
  // Output bombs: repetition and loops.
  CHECK(render("{{ 'x' * 100000000 }}", "{}", o).find("output limit") != std::string::npos);
  CHECK(render("{% for a in range(30000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}", "{}", o).find("output grew past") !=
        std::string::npos);
  // Unbounded recursion.
  CHECK(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "{}", o).find("nested more than 50 deep") != std::string::npos);
  // Deeply nested expressions are refused at parse time instead of exhausting the stack.
  CHECK(render("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}", "{}", o).find("nested too deeply") !=
        std::string::npos);
}
