// Every filter and every test on none, undefined, "", [] and {}, as Jinja2 3.1 does it in
// transformers' environment (ImmutableSandboxedEnvironment, default Undefined). Each row
// was reasoned from Jinja2 3.1.6's filters.py / tests.py and checked by rendering the same
// expression with Jinja2 3.1.6 itself. The table is held to the interpreter's registries:
// a filter or test added without a row fails the first check.
#include <catch2/catch.hpp>

#include <array>
#include <set>

#include "chat/template.hpp"

using namespace sy::chat;

namespace {

// "=text": renders exactly text; "!kind": fails with that RenderFailure kind.
struct Row {
  const char* name;
  const char* expr;
  std::array<const char*, 5> expect;  // none, undefined, "", [], {}
};

const char* const kContexts[5] = {R"({"x": null})", "{}", R"({"x": ""})", R"({"x": []})", R"({"x": {}})"};
const char* const kInputs[5] = {"none", "undefined", "\"\"", "[]", "{}"};

// Lazy filters (select, map, ...) return generators in Jinja2, so rows list() them.
const Row kFilters[] = {
    {"abs", R"(x|abs)", {"!type", "!type", "!type", "!type", "!type"}},
    // getattr(None/"", "a") finds nothing: undefined, printed empty. getattr on Undefined raises.
    {"attr", R"(x|attr('a'))", {"=", "!undefined", "=", "=", "="}},
    // do_batch iterates: `for item in None` raises; Undefined iterates as empty.
    {"batch", R"(x|batch(2)|list)", {"!type", "=[]", "=[]", "=[]", "=[]"}},
    // soft_str(s).capitalize(): str(None) is "None", str(Undefined) is "".
    {"capitalize", R"(x|capitalize)", {"=None", "=", "=", "=[]", "={}"}},
    // str.center(5) puts the odd space on the left when the width is odd: " None".
    {"center", R"(x|center(5))", {"= None", "=     ", "=     ", "=  [] ", "=  {} "}},
    // len(None) raises; Undefined has __len__ 0.
    {"count", R"(x|count)", {"!type", "=0", "=0", "=0", "=0"}},
    {"d", R"(x|d('D'))", {"=None", "=D", "=", "=[]", "={}"}},
    // boolean=true replaces every falsy value, none and the empty ones included.
    {"default", R"(x|default('D'))", {"=None", "=D", "=", "=[]", "={}"}},
    {"default", R"(x|default('D', true))", {"=D", "=D", "=D", "=D", "=D"}},
    // value.items(): only a mapping has it; on Undefined the attribute lookup raises.
    {"dictsort", R"(x|dictsort)", {"!type", "!undefined", "!type", "!type", "=[]"}},
    {"e", R"(x|e)", {"=None", "=", "=", "=[]", "={}"}},
    {"escape", R"(x|escape)", {"=None", "=", "=", "=[]", "={}"}},
    // next(iter(seq)): iter(None) raises; an empty sequence gives undefined (printed empty).
    {"first", R"(x|first)", {"!type", "=", "=", "=", "="}},
    // float(None) and float([]) raise TypeError, caught: 0.0. Undefined.__float__ raises UndefinedError.
    {"float", R"(x|float)", {"=0.0", "!undefined", "=0.0", "=0.0", "=0.0"}},
    // `s += "\n"` needs a str: none, [] and {} raise TypeError, Undefined raises UndefinedError.
    {"indent", R"(x|indent(2))", {"!type", "!undefined", "=", "!type", "!type"}},
    // int(None) raises TypeError, so does int(float(None)): the default 0. Undefined.__int__ raises.
    {"int", R"(x|int)", {"=0", "!undefined", "=0", "=0", "=0"}},
    // do_items returns nothing for Undefined, and refuses anything but a mapping.
    {"items", R"(x|items|list)", {"!type", "=[]", "!type", "!type", "=[]"}},
    {"join", R"(x|join(','))", {"!type", "=", "=", "=", "="}},
    // reversed(None) raises "not reversible"; reversed({}) works (dicts keep order).
    {"last", R"(x|last)", {"!type", "=", "=", "=", "="}},
    {"length", R"(x|length)", {"!type", "=0", "=0", "=0", "=0"}},
    {"list", R"(x|list)", {"!type", "=[]", "=[]", "=[]", "=[]"}},
    // soft_str(None).lower() is "none".
    {"lower", R"(x|lower)", {"=none", "=", "=", "=[]", "={}"}},
    // do_map starts with `if value:` so a falsy input, none included, yields nothing.
    {"map", R"(x|map('upper')|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    {"map", R"(x|map(attribute='a')|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    // an empty sequence gives undefined ("No aggregated item"), printed empty.
    {"max", R"(x|max)", {"!type", "=", "=", "=", "="}},
    {"min", R"(x|min)", {"!type", "=", "=", "=", "="}},
    // select_or_reject starts with `if value:`: none yields nothing instead of raising.
    {"reject", R"(x|reject|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    {"rejectattr", R"(x|rejectattr('a')|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    // str(s).replace(...): str(None) is "None"; str([]) is "[]".
    {"replace", R"(x|replace('a','b'))", {"=None", "=", "=", "=[]", "={}"}},
    // reversed(None) and list(None) both raise: FilterArgumentError. list(Undefined) is [].
    {"reverse", R"(x|reverse|list)", {"!type", "=[]", "=[]", "=[]", "=[]"}},
    // round(x, 0) needs __round__, which only numbers have (Undefined too raises TypeError).
    {"round", R"(x|round)", {"!type", "!type", "!type", "!type", "!type"}},
    {"safe", R"(x|safe)", {"=None", "=", "=", "=[]", "={}"}},
    {"select", R"(x|select|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    {"selectattr", R"(x|selectattr('a')|list)", {"=[]", "=[]", "=[]", "=[]", "=[]"}},
    {"sort", R"(x|sort)", {"!type", "=[]", "=[]", "=[]", "=[]"}},
    {"string", R"(x|string)", {"=None", "=", "=", "=[]", "={}"}},
    // sum(iterable, 0): iterating None raises; the others are empty, giving the start 0.
    {"sum", R"(x|sum)", {"!type", "=0", "=0", "=0", "=0"}},
    {"title", R"(x|title)", {"=None", "=", "=", "=[]", "={}"}},
    // json.dumps(Undefined) is not serializable.
    {"tojson", R"(x|tojson)", {"=null", "!type", "=\"\"", "=[]", "={}"}},
    {"trim", R"(x|trim)", {"=None", "=", "=", "=[]", "={}"}},
    // do_unique iterates: none raises.
    {"unique", R"(x|unique|list)", {"!type", "=[]", "=[]", "=[]", "=[]"}},
    // soft_str(None).upper() is "NONE".
    {"upper", R"(x|upper)", {"=NONE", "=", "=", "=[]", "={}"}},
    // len(re.findall(r"\w+", str(s))): "None" has one word, "[]" and "{}" none.
    {"wordcount", R"(x|wordcount)", {"=1", "=0", "=0", "=0", "=0"}},
};

// Tests named by symbols cannot follow `is`; select() reaches them by name.
const Row kTests[] = {
    {"defined", R"(x is defined)", {"=True", "=False", "=True", "=True", "=True"}},
    {"undefined", R"(x is undefined)", {"=False", "=True", "=False", "=False", "=False"}},
    {"none", R"(x is none)", {"=True", "=False", "=False", "=False", "=False"}},
    {"string", R"(x is string)", {"=False", "=False", "=True", "=False", "=False"}},
    {"mapping", R"(x is mapping)", {"=False", "=False", "=False", "=False", "=True"}},
    // iter(Undefined) works (empty), and len() and __getitem__ exist, so Undefined is a sequence too.
    {"iterable", R"(x is iterable)", {"=False", "=True", "=True", "=True", "=True"}},
    {"sequence", R"(x is sequence)", {"=False", "=True", "=True", "=True", "=True"}},
    {"number", R"(x is number)", {"=False", "=False", "=False", "=False", "=False"}},
    {"integer", R"(x is integer)", {"=False", "=False", "=False", "=False", "=False"}},
    // float(None) and float([]) raise TypeError, caught: 0.0. Undefined.__float__ raises UndefinedError.
    {"float", R"(x is float)", {"=False", "=False", "=False", "=False", "=False"}},
    {"boolean", R"(x is boolean)", {"=False", "=False", "=False", "=False", "=False"}},
    {"true", R"(x is true)", {"=False", "=False", "=False", "=False", "=False"}},
    {"false", R"(x is false)", {"=False", "=False", "=False", "=False", "=False"}},
    // Undefined defines __call__ (which raises), so callable() is true.
    {"callable", R"(x is callable)", {"=False", "=True", "=False", "=False", "=False"}},
    {"escaped", R"(x is escaped)", {"=False", "=False", "=False", "=False", "=False"}},
    {"equalto", R"(x is equalto(none))", {"=True", "=False", "=False", "=False", "=False"}},
    {"eq", R"(x is eq(''))", {"=False", "=False", "=True", "=False", "=False"}},
    {"==", R"([x]|select("==", [])|list)", {"=[]", "=[]", "=[]", "=[[]]", "=[]"}},
    {"sameas", R"(x is sameas(none))", {"=True", "=False", "=False", "=False", "=False"}},
    {"ne", R"(x is ne({}))", {"=True", "=True", "=True", "=True", "=False"}},
    // repr(Undefined) is "Undefined".
    {"!=", R"([x]|select("!=", none)|list)", {"=[]", "=[Undefined]", "=['']", "=[[]]", "=[{}]"}},
    // operator.gt(None, 1) raises TypeError; Undefined.__gt__ raises UndefinedError.
    {"gt", R"(x is gt(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"greaterthan", R"(x is greaterthan(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"lt", R"(x is lt(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"lessthan", R"(x is lessthan(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"ge", R"(x is ge(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"le", R"(x is le(1))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {">", R"([x]|select(">", 1)|list)", {"!type", "!undefined", "!type", "!type", "!type"}},
    {">=", R"([x]|select(">=", 1)|list)", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"<", R"([x]|select("<", 1)|list)", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"<=", R"([x]|select("<=", 1)|list)", {"!type", "!undefined", "!type", "!type", "!type"}},
    // value % 2: "" % 2 is string formatting, which raises TypeError; Undefined.__mod__ raises.
    {"divisibleby", R"(x is divisibleby(2))", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"odd", R"(x is odd)", {"!type", "!undefined", "!type", "!type", "!type"}},
    {"even", R"(x is even)", {"!type", "!undefined", "!type", "!type", "!type"}},
    // Undefined == x is false for anything but another Undefined.
    {"in", R"(x is in(['', none]))", {"=True", "=False", "=True", "=False", "=False"}},
    // str(value).islower() wants a cased character, all lower case: "None" has an upper one.
    {"lower", R"(x is lower)", {"=False", "=False", "=False", "=False", "=False"}},
    // soft_str(None).upper() is "NONE".
    {"upper", R"(x is upper)", {"=False", "=False", "=False", "=False", "=False"}},
    // `value in env.filters` hashes the value: a list or dict raises TypeError.
    {"filter", R"(x is filter)", {"=False", "=False", "=False", "!type", "!type"}},
    {"test", R"(x is test)", {"=False", "=False", "=False", "!type", "!type"}},
};

std::string kind_name(RenderFailure::Kind k) {
  switch (k) {
    case RenderFailure::Kind::raise_exception: return "raise_exception";
    case RenderFailure::Kind::sandbox: return "sandbox";
    case RenderFailure::Kind::undefined: return "undefined";
    case RenderFailure::Kind::type: return "type";
    case RenderFailure::Kind::limit: return "limit";
    case RenderFailure::Kind::syntax: return "syntax";
  }
  return "?";
}

std::string outcome(const std::string& expr, const char* ctx) {
  auto t = Template::parse("{{ " + expr + " }}", "t.jinja");
  if (!t) return "!syntax";
  RenderFailure why;
  auto out = t->render(from_json(nlohmann::ordered_json::parse(ctx)), {}, &why);
  return out ? "=" + *out : "!" + kind_name(why.kind);
}

template <size_t N>
std::set<std::string> names_of(const Row (&rows)[N]) {
  std::set<std::string> s;
  for (const auto& r : rows) s.insert(r.name);
  return s;
}

template <size_t N>
void check_rows(const Row (&rows)[N]) {
  for (const auto& r : rows)
    for (size_t k = 0; k < 5; ++k) {
      INFO(r.expr << " with x = " << kInputs[k]);
      CHECK(outcome(r.expr, kContexts[k]) == r.expect[k]);
    }
}

}  // namespace

TEST_CASE("templates: the tables cover every registered filter and test", "[templates]") {
  const auto filters = filter_names(), tests = test_names();
  CHECK(names_of(kFilters) == std::set<std::string>(filters.begin(), filters.end()));
  CHECK(names_of(kTests) == std::set<std::string>(tests.begin(), tests.end()));
}

TEST_CASE("templates: filters on none, undefined and empty values follow Jinja2", "[templates]") { check_rows(kFilters); }

TEST_CASE("templates: tests on none, undefined and empty values follow Jinja2", "[templates]") { check_rows(kTests); }
