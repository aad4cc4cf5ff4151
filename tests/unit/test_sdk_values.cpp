// Status/Result, typed metadata and parameter maps.
#include <catch2/catch.hpp>

#include "switchyard/backend.hpp"
#include "switchyard/metadata.hpp"
#include "switchyard/params.hpp"
#include "switchyard/status.hpp"

TEST_CASE("Result holds a value or a status", "[sdk]") {
  sy::Result<int> ok = 5;
  REQUIRE(ok.has_value());
  CHECK(*ok == 5);
  CHECK(ok.status().is_ok());
  sy::Result<int> bad = sy::error::not_found("no such tensor 'x'");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.status().code() == sy::StatusCode::not_found);
  CHECK(bad.status().message() == "no such tensor 'x'");
  // An ok Status without a value is a bug, reported as such rather than silently "ok".
  sy::Result<int> odd = sy::Status::ok();
  CHECK(odd.status().code() == sy::StatusCode::internal);
  CHECK(std::string(sy::status_code_name(sy::StatusCode::out_of_memory)) == "out_of_memory");
}

TEST_CASE("metadata accessors accept any integer width and per-layer arrays", "[sdk]") {
  sy::Metadata m;
  m.set("a.u32", uint32_t{7});
  m.set("a.u64big", uint64_t{1} << 63);
  m.set("a.f32", 0.5f);
  m.set("a.str", std::string("llama"));
  m.set("a.flag", true);
  sy::MetaArray per_layer;
  per_layer.type = sy::MetaType::i32;
  for (int32_t v : {4, 8, 4}) per_layer.items.emplace_back(v);
  m.set("a.kv", per_layer);
  CHECK(m.get_int("a.u32") == 7);
  CHECK_FALSE(m.get_int("a.u64big").has_value());  // does not fit int64
  CHECK(m.get_float("a.f32") == 0.5);
  CHECK(m.get_float("a.u32") == 7.0);
  CHECK(m.get_string("a.str") == "llama");
  CHECK_FALSE(m.get_string("a.u32").has_value());
  CHECK(m.get_bool("a.flag") == true);
  CHECK(m.get_per_layer_int("a.kv", 1) == 8);
  CHECK_FALSE(m.get_per_layer_int("a.kv", 3).has_value());
  CHECK(m.get_per_layer_int("a.u32", 40) == 7);  // a scalar applies to every layer
  CHECK_FALSE(m.get_int("missing").has_value());
}

TEST_CASE("parameter maps are typed", "[sdk]") {
  sy::ParamMap p;
  p.set("k", int64_t{40});
  p.set("p", 0.95);
  p.set("mode", std::string("auto"));
  p.set("devices", std::vector<int64_t>{0, 1});
  CHECK(p.get_int("k") == 40);
  CHECK(p.get_number("k") == 40.0);
  CHECK(p.get_number("p") == 0.95);
  CHECK_FALSE(p.get_int("p").has_value());
  CHECK(p.get_string("mode") == "auto");
  CHECK(p.get_int_list("devices") == std::vector<int64_t>{0, 1});
  CHECK(sy::param_value_to_string(sy::ParamValue(std::vector<int64_t>{0, 1})) == "[0, 1]");
  CHECK(sy::param_type_from_name("integer list") == sy::ParamType::integer_list);
}

TEST_CASE("select_devices: all by default, the listed ones in order, a clear error otherwise", "[sdk]") {
  sy::ParamMap p;
  CHECK(sy::select_devices(p, 3, "x").value() == std::vector<size_t>{0, 1, 2});
  p.set("devices", std::vector<int64_t>{2, 0});
  CHECK(sy::select_devices(p, 3, "x").value() == std::vector<size_t>{2, 0});
  p.set("devices", std::vector<int64_t>{3});
  CHECK(sy::select_devices(p, 3, "vulkan").status().message() == "vulkan: device 3 does not exist (this machine has 3)");
  CHECK(sy::select_devices(p, 0, "cuda").status().message() == "cuda: device 3 does not exist (this machine has 0)");
}
