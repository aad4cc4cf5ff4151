// The fixture part: each shared fixture through the pipeline a user would write for the
// backend (the backend first, the CPU for what it cannot run, every layer placed on it),
// teacher-forced against llama.cpp's logits within the file's own tolerance, and then
// free-running greedy against the CPU's scalar run.
#include <nlohmann/json.hpp>

#include "conformance/fixtures.hpp"
#include "conformance/suite_internal.hpp"
#include "engine/runtime_setup.hpp"
#include "pipeline/load.hpp"

namespace sy::conformance {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The f32 KV cache of the main reference; the context fits the longest fixture (100-token
// prompt + 24, or stories260K's 5 + 64).
std::string pipeline_text(const fs::path& model, const std::string& backend, int64_t device,
                          const std::string& cpu_moe = {}, bool strict = false) {
  std::string y = "model: { path: " + json(model.string()).dump() + " }\n";
  if (backend == "cpu") {
    y += "backends: [ { plugin: cpu } ]\n";
  } else {
    y += "backends: [ { plugin: " + backend + ", devices: [" + std::to_string(device) + "] }, { plugin: cpu } ]\n";
    y += "placement: { gpu_layers: all" + (cpu_moe.empty() ? std::string() : ", cpu_moe: " + cpu_moe) + " }\n";
  }
  if (strict) y += "strict: true\n";
  return y + "context: { length: 256, kv_type: f32, parallel: 1 }\nsampling: [ greedy ]\n";
}

Result<std::unique_ptr<engine::Runtime>> bring_up(const std::string& yaml, const registry::Registry& reg) {
  std::vector<fs::path> dirs;
  for (const auto& d : reg.search_path()) dirs.push_back(d.path);
  pipeline::LoadOptions lo;
  lo.fixed_search_dirs = &dirs;
  auto lr = pipeline::load_pipeline_from_text(yaml, "conformance pipeline", lo);
  if (!lr.ok()) return error::invalid_argument(pipeline::format_diagnostic(lr.diagnostics.front()));
  return engine::bring_up(lr.pipeline, &reg.search_path());
}

bool wanted(const fs::path& ref, const std::vector<std::string>& names) {
  if (names.empty()) return true;
  const std::string f = ref.filename().string();
  for (const auto& n : names)
    if (f.find(n) != std::string::npos) return true;
  return false;
}

// "llama-gqa-e64-f32" for .../llama-gqa-e64-f32.ref.json.
std::string fixture_name(const fs::path& ref_file) {
  std::string n = ref_file.filename().string();
  n.resize(n.size() - std::string(".ref.json").size());
  return n;
}

FixtureResult check_fixture(const Options& o, const registry::Registry& reg, const fs::path& ref_file) {
  FixtureResult r;
  r.name = fixture_name(ref_file);
  r.outcome = Outcome::error;
  auto ref = read_reference(ref_file);
  if (!ref) {
    r.detail = ref.status().message();
    return r;
  }
  const fs::path model = fixture_model(*ref, o.fixtures);
  const auto prompt = ref->at("prompt_ids").get<std::vector<int32_t>>();
  const auto forced = ref->at("greedy_ids").get<std::vector<int32_t>>();
  const auto n = static_cast<int64_t>(forced.size());

  auto rt = bring_up(pipeline_text(model, o.backend, o.device, o.cpu_moe, o.strict), reg);
  if (!rt) {
    r.detail = "bringing the pipeline up: " + rt.status().message();
    return r;
  }
  auto steps = teacher_forced(*(*rt)->engine, 0, prompt, forced);
  if (!steps) {
    r.detail = "teacher-forced decode: " + steps.status().message();
    return r;
  }
  const TeacherForced tf = check_teacher_forced(*steps, *ref);
  r.max_abs = tf.diff.max_abs;
  r.rms = tf.diff.rms;
  r.max_abs_tolerance = tf.max_abs_tolerance;
  r.rms_tolerance = tf.rms_tolerance;
  r.argmax_misses = tf.required_argmax_misses;
  r.flip_steps = tf.diff.flip_steps;
  r.flip_max_abs = tf.diff.flip_max_abs;
  if (auto st = (*rt)->engine->kv().remove(0); !st) {
    r.detail = st.message();
    return r;
  }
  auto got = greedy(*(*rt)->engine, 0, prompt, n);
  if (!got) {
    r.detail = "greedy decode: " + got.status().message();
    return r;
  }
  r.bytes_per_token = (*rt)->engine->stats().last_step_transfer_bytes;
  rt = Status(StatusCode::internal, "released");  // free the backend's memory before the CPU run

  Result<std::unique_ptr<engine::Runtime>> cpu = Status(StatusCode::internal, "not started");
  {
    const ScalarIsa scalar;
    cpu = bring_up(pipeline_text(model, "cpu", 0), reg);
  }
  if (!cpu) {
    r.detail = "bringing the CPU reference up: " + cpu.status().message();
    return r;
  }
  auto want = greedy(*(*cpu)->engine, 0, prompt, n);
  if (!want) {
    r.detail = "the CPU reference's greedy decode: " + want.status().message();
    return r;
  }
  // Each run is within the file's tolerance of llama.cpp, so the two may differ by twice
  // that on any logit and a margin up to four times it may flip.
  r.greedy_total = want->ids.size();
  r.greedy_required = greedy_required(*want, 4 * tf.max_abs_tolerance);
  r.greedy_same = common_prefix(got->ids, want->ids);
  r.outcome = tf.ok() && r.greedy_same >= r.greedy_required ? Outcome::pass : Outcome::fail;
  return r;
}

}  // namespace

void run_fixtures(const Options& o, const registry::Registry& reg, Report& report, std::ostream& progress) {
  const auto refs = fixture_references(o.fixtures);
  if (refs.empty()) report.notes.push_back("no *.ref.json in " + o.fixtures.string());
  for (const auto& ref : refs) {
    if (!wanted(ref, o.fixture_names)) continue;
    FixtureResult r;
    try {
      r = check_fixture(o, reg, ref);
    } catch (const std::exception& e) {  // a reference missing a key the schema promises
      r.name = fixture_name(ref);
      r.outcome = Outcome::error;
      r.detail = "the reference does not have the expected schema: " + std::string(e.what());
    }
    progress << "fixture " << r.name << ": " << outcome_name(r.outcome);
    if (r.outcome != Outcome::error)  // an error's sentence is in the report
      progress << ", max |logit diff| " << r.max_abs << " (tolerance " << r.max_abs_tolerance << "), greedy "
               << r.greedy_same << "/" << r.greedy_total << " as the CPU (" << r.greedy_required << " required), "
               << r.bytes_per_token << " bytes moved per decoded token";
    if (r.flip_steps > 0)
      progress << "; " << r.flip_steps << " documented rounding-flip step(s) within 1.5x the file's emulation (max "
               << r.flip_max_abs << ")";
    progress << "\n" << std::flush;
    report.fixtures.push_back(std::move(r));
  }
}

}  // namespace sy::conformance
