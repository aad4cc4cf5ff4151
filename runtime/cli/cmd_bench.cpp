// switchyard bench: llama-bench's habits (comma lists for -p -n -t -d, -r repetitions, a
// markdown table) for our runtime, each repetition in a fresh process (this executable
// again, with a hidden --bench-child option carrying one row) so load time and peak RSS are
// a real process's. --compare runs llama.cpp's llama-bench on the same file and settings,
// alternating processes (ours, the peer's, ours, ...), so slow drifts of a noisy machine
// hit both sides alike. docs/cli.md lists the flags, docs/performance.md how to reproduce.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/measure.hpp"
#include "bench/depth_plot.hpp"
#include "bench/peer.hpp"
#include "bench/profile.hpp"
#include "bench/report.hpp"
#include "bench/rows.hpp"
#include "bench/spawn.hpp"
#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "cli/list_devices.hpp"
#include "cli/llama_flags.hpp"
#include "cli/number_arg.hpp"
#include "cli/one_of.hpp"
#include "engine/runtime_setup.hpp"
#include "log/log.hpp"
#include "pipeline/emit.hpp"
#include "util/parse_number.hpp"
#include "util/read_bandwidth.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

struct BenchArgs {
  PipelineFlags flags;
  std::vector<std::string> prompt, gen, threads, depth;
  int64_t reps = 5;
  std::string output = "md";
  bool json = false, csv = false, profile = false;
  std::string svg;  // --svg FILE
  std::string compare;
  std::string path = "serve";  // --path: serve (the scheduler run and serve use) or engine
  int64_t bandwidth_mib = 1024;
  std::string child;  // hidden: "p,n,t,d" of the one repetition this process runs
};

int fail(const std::string& msg) {
  std::cerr << "switchyard bench: " << msg << "\n";
  return 1;
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

int hw_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The context a row needs, unless -c gave one (which must then be large enough).
Status set_context(PipelineFlags& f, const bench::RowSpec& row) {
  const int64_t need = bench::row_context(row);
  if (!f.ctx) {
    f.ctx = std::to_string(need);
    return {};
  }
  const auto c = util::parse_integer<int64_t>(*f.ctx, 0, kMaxTokens);
  if (c.ok() && c.value != 0 && c.value < need)
    return error::invalid_argument("-c " + *f.ctx + " is too small for -p " + std::to_string(row.prompt) + " -n " +
                                   std::to_string(row.gen) + " -d " + std::to_string(row.depth) + ", which needs " +
                                   std::to_string(need) + " positions; raise -c or leave it out (bench sizes the context)");
  return {};
}

// The child: one repetition of one row, one JSON line on stdout.
int run_child(BenchArgs a) {
  auto v = bench::parse_int_list("--bench-child", {a.child}, 0, kMaxTokens);
  if (!v || v->size() != 4) return fail("--bench-child takes p,n,t,d");
  const bench::RowSpec row{(*v)[0], (*v)[1], (*v)[3], static_cast<int>((*v)[2])};
  if (row.threads > 0) a.flags.threads = std::to_string(row.threads);
  if (auto st = set_context(a.flags, row); !st) return fail(st.message());
  auto p = load_with_flags("bench", a.flags);
  if (!p) return 1;
  auto j = a.path == "engine" ? bench::measure_row(*p, row) : bench::measure_row_serving(*p, row);
  if (!j) return fail(j.status().message());
  std::cout << json_text(*j) << "\n" << std::flush;
  return 0;
}

// The child's command line: ours as typed, with the row appended.
std::vector<std::string> child_argv(const bench::RowSpec& r) {
  auto argv = bench::self_cmdline();
  if (argv.empty()) argv.emplace_back("switchyard");
  // This very binary, even if it is rebuilt or replaced while a long bench runs (a path
  // would then name another program, or none).
  argv[0] = "/proc/self/exe";
  argv.push_back("--bench-child=" + std::to_string(r.prompt) + "," + std::to_string(r.gen) + "," +
                 std::to_string(r.threads) + "," + std::to_string(r.depth));
  return argv;
}

bench::PeerFlags peer_flags(const PipelineFlags& f) {
  bench::PeerFlags p;
  p.gpu_layers = f.gpu_layers.value_or("");
  p.n_cpu_moe = f.n_cpu_moe.value_or("");
  p.cpu_moe = f.cpu_moe;
  p.override_tensor = f.override_tensor;
  p.cache_type_k = f.cache_type_k.value_or("");
  p.cache_type_v = f.cache_type_v.value_or("");
  if (f.flash_attn) p.flash_attn = f.flash_attn->empty() ? "on" : *f.flash_attn;
  p.batch = f.batch.value_or("");
  p.ubatch = f.ubatch.value_or("");
  p.device = f.device.value_or("");
  p.no_mmap = f.no_mmap;
  p.mlock = f.mlock;
  return p;
}

std::string describe(const bench::RowSpec& r) {
  return "-p " + std::to_string(r.prompt) + " -n " + std::to_string(r.gen) + " -t " +
         (r.threads > 0 ? std::to_string(r.threads) : "auto") + " -d " + std::to_string(r.depth);
}

Result<nlohmann::ordered_json> run_ours(const bench::RowSpec& r) {
  auto pr = bench::run_process(child_argv(r));
  if (!pr) return pr.status();
  if (pr->exit_code != 0)
    return error::internal("the measuring process for " + describe(r) + " failed (exit status " +
                           std::to_string(pr->exit_code) + "; its message is above)");
  const auto last = pr->out.find_last_of('\n', pr->out.size() >= 2 ? pr->out.size() - 2 : 0);
  const std::string line = last == std::string::npos ? pr->out : pr->out.substr(last + 1);
  auto j = nlohmann::ordered_json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return error::internal("the measuring process for " + describe(r) + " printed no JSON line");
  j["peak_rss"] = pr->peak_rss;
  return j;
}

Result<bench::PeerSample> run_peer(const std::string& peer, const std::string& model, const bench::RowSpec& r,
                                   const bench::PeerFlags& f) {
  auto pr = bench::run_process(bench::peer_argv(peer, model, r, f));
  if (!pr) return pr.status();
  if (pr->exit_code != 0)
    return error::unavailable("the peer " + peer + " failed for " + describe(r) + " (exit status " +
                              std::to_string(pr->exit_code) + "; its messages are above)");
  auto run = bench::parse_peer_json(pr->out);
  if (!run) return error::corrupt("--compare " + peer + ": " + run.status().message());
  bench::PeerSample s;
  s.run = *run;
  s.peak_rss = pr->peak_rss;
  s.load_s = std::max(0.0, pr->wall_s - run->timed_s);
  return s;
}

// --profile's prompt: the first row's, or 512 when that row measures generation only.
int64_t profile_tokens(const bench::RowSpec& first) { return first.prompt > 0 ? first.prompt : 512; }

// --profile: one prefill of the first row's prompt length (512 when it has none) and one
// decode step, per op, in this process with the first row's threads.
Result<bench::StepProfiles> profile(const BenchArgs& a, const bench::RowSpec& first) {
  PipelineFlags f = a.flags;
  const int64_t tokens = profile_tokens(first);
  if (first.threads > 0) f.threads = std::to_string(first.threads);
  if (!f.ctx) f.ctx = std::to_string(bench::row_context({tokens, 1, 0, first.threads}));
  auto p = load_with_flags("bench", f);
  if (!p) return error::invalid_argument("the pipeline for --profile did not load (see above)");
  auto rt = engine::bring_up(*p);
  if (!rt) return rt.status();
  return bench::profile_steps(*(*rt)->engine, tokens);
}

int run_parent(BenchArgs a) {
  if (a.flags.list_devices) return list_devices(std::cout);
  auto p = bench::parse_int_list("-p", a.prompt.empty() ? std::vector<std::string>{"512"} : a.prompt, 0, kMaxTokens);
  if (!p) return fail(p.status().message());
  auto n = bench::parse_int_list("-n", a.gen.empty() ? std::vector<std::string>{"128"} : a.gen, 0, kMaxTokens);
  if (!n) return fail(n.status().message());
  auto t = bench::parse_int_list("-t", a.threads.empty() ? std::vector<std::string>{"0"} : a.threads, 0, 4096);
  if (!t) return fail(t.status().message());
  auto d = bench::parse_int_list("-d", a.depth.empty() ? std::vector<std::string>{"0"} : a.depth, 0, kMaxTokens);
  if (!d) return fail(d.status().message());
  const auto rows = bench::cross_rows(*p, *n, *t, *d);
  if (rows.empty()) return fail("-p 0 with -n 0 measures nothing; give a prompt length or a generation length");
  if (a.json && a.csv) return fail("give --json or --csv, not both");
  const std::string format = a.json ? "json" : a.csv ? "csv" : a.output;

  // The pipeline is checked here once, so a mistake is reported before any process starts.
  PipelineFlags checked = a.flags;
  if (!checked.ctx) checked.ctx = std::to_string(bench::row_context(rows.front()));
  auto pipe = load_with_flags("bench", checked);
  if (!pipe) return 1;
  if (a.flags.print_pipeline) {
    std::cout << pipeline::to_yaml(*pipe);
    return 0;
  }
  for (const auto& r : rows) {
    PipelineFlags f = a.flags;
    if (auto st = set_context(f, r); !st) return fail(st.message());
  }
  // The profile runs after every row: a context too small for it must stop the run now,
  // not after minutes of measurements.
  if (a.profile) {
    PipelineFlags f = a.flags;
    const bench::RowSpec pr{profile_tokens(rows.front()), 1, 0, rows.front().threads};
    if (auto st = set_context(f, pr); !st) return fail("--profile: " + st.message());
  }
  if (!a.compare.empty() && access(a.compare.c_str(), X_OK) != 0)
    return fail("--compare " + a.compare + ": no such executable; give the path of llama.cpp's llama-bench (built by "
                "../shared/tools/peer-llama-cpp into ~/.cache/switchyard-peers/llama.cpp/build/bin)");
  // Checked before minutes of measuring, so a typo in the path costs nothing.
  if (!a.svg.empty())
    if (auto st = util::check_output_path(a.svg, "--svg"); !st) return fail(st.message());
  const std::string model = pipe->model.path.string();
  const bench::PeerFlags pf = peer_flags(a.flags);
  auto logger = log::get("bench");

  bench::RunInfo info;
  info.version = SY_VERSION;
  info.cpu = cpu_name();
  info.hw_threads = hw_threads();
  info.peer = a.compare;
  std::vector<bench::RowResult> results;
  for (const auto& r : rows) {
    bench::RowResult res;
    res.spec = r;
    const int bw_threads = r.threads > 0 ? r.threads : info.hw_threads;
    if (a.bandwidth_mib > 0) {
      auto it = std::find_if(info.bandwidth.begin(), info.bandwidth.end(), [&](auto& b) { return b.first == bw_threads; });
      if (it == info.bandwidth.end()) {
        logger->info("measuring memory bandwidth with {} threads over {} MiB", bw_threads, a.bandwidth_mib);
        info.bandwidth.emplace_back(bw_threads, util::measure_read_bandwidth(static_cast<size_t>(a.bandwidth_mib) << 20,
                                                                              bw_threads));
        it = info.bandwidth.end() - 1;
      }
      res.bandwidth = it->second;
    }
    for (int64_t rep = 0; rep < a.reps; ++rep) {
      logger->info("{}: repetition {} of {}", describe(r), rep + 1, a.reps);
      auto j = run_ours(r);
      if (!j) return fail(j.status().message());
      res.ours.push_back({j->value("load_ms", 0.0), j->value("prompt_ms", 0.0), j->value("ttft_ms", 0.0),
                          j->value("gen_ms", 0.0), j->value("peak_rss", uint64_t{0})});
      if (rep == 0) res.info = *j;
      if (!a.compare.empty()) {
        auto s = run_peer(a.compare, model, r, pf);
        if (!s) return fail(s.status().message());
        res.peer.push_back(*s);
      }
    }
    results.push_back(std::move(res));
  }

  std::optional<bench::StepProfiles> prof;
  if (a.profile) {
    logger->info("profiling one prefill and one decode step");
    auto pr = profile(a, rows.front());
    if (!pr) return fail("--profile: " + pr.status().message());
    prof = std::move(*pr);
  }

  if (!a.svg.empty()) {
    std::ofstream out(a.svg, std::ios::trunc);
    out << bench::depth_svg(results, pipe->model.path.filename().string());
    if (!out) return fail("--svg: cannot write " + a.svg);
  }
  if (format == "json") {
    auto j = bench::json(info, results);
    if (prof) j["profile"] = bench::profile_json(*prof);
    std::cout << json_text(j) << "\n";
  } else if (format == "csv") {
    std::cout << bench::csv(results);
  } else {
    std::cout << bench::markdown(results);
    if (!info.bandwidth.empty()) {
      std::cout << "\nmemory bandwidth:";
      for (const auto& [th, bw] : info.bandwidth) std::cout << " " << bw / 1e9 << " GB/s (" << th << " threads)";
      std::cout << "; CPU: " << info.cpu << "\n";
    }
    std::cout << "\npath: " << (a.path == "engine" ? "engine (decode calls alone)" : "serve (the scheduler run and serve use)");
    if (a.path == "serve" && std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.depth > 0; }))
      std::cout << "; rows with -d > 0 through the engine";
    std::cout << "\n";
    if (!results.front().peer.empty()) {
      const auto& pr = results.front().peer.front().run;
      std::cout << "peer: " << a.compare << ", llama.cpp build " << pr.build_commit << " (" << pr.build_number
                << "), model type " << pr.model_type << "; its load time is its wall time less its timed samples\n";
    }
    if (prof) std::cout << "\n" << bench::profile_markdown(*prof);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Measure prompt and generation speed, llama-bench style (see docs/cli.md)");
  add_pipeline_flags(*cmd, a->flags, kSourceFlags | kModelFlags | kContextFlags | kDeviceFlags | kPlacementFlags);
  cmd->add_option("-p,--n-prompt", a->prompt, "Prompt lengths, a comma list or repeated (default 512)");
  cmd->add_option("-n,--n-gen", a->gen, "Generated tokens, a comma list or repeated (default 128)");
  cmd->add_option("-t,--threads", a->threads, "CPU threads, a comma list or repeated (default: the pipeline's)");
  cmd->add_option("-d,--n-depth", a->depth, "Tokens already in the context, a comma list or repeated (default 0)");
  cmd->add_option("-r,--repetitions", a->reps, "Repetitions of each row, each in a fresh process")
      ->capture_default_str()
      ->transform(integer_in(1, 1000));
  cmd->add_option("-o,--output", a->output, "Output format: md, csv or json")
      ->capture_default_str()
      ->transform(one_of({"md", "csv", "json"}, "output format"));
  cmd->add_flag("--json", a->json, "Print one JSON object: build, machine, rows with every figure and the samples");
  cmd->add_flag("--csv", a->csv, "Print CSV: a header and one line per row");
  cmd->add_option("--compare", a->compare,
                  "Path of llama.cpp's llama-bench: run it on the same file and rows, alternating processes");
  cmd->add_option("--path", a->path,
                  "What a row goes through: serve (default: the scheduler, sampler and detokenizer run and serve "
                  "use) or engine (the engine's decode calls alone)")
      ->transform(one_of({"serve", "engine"}, "path"));
  cmd->add_flag("--profile", a->profile,
                "Also time every op of one prefill (the first row's -p) and one decode step (tables; --json: \"profile\")");
  cmd->add_option("--svg", a->svg, "Also write a chart of generation t/s against -d (both runtimes with --compare) to FILE");
  cmd->add_option("--bandwidth-mib", a->bandwidth_mib, "Buffer read to measure memory bandwidth, MiB; 0 = skip")
      ->capture_default_str()
      ->transform(integer_in(0, 1 << 20));
  cmd->add_option("--bench-child", a->child)->group("");  // one repetition, for the parent
  cmd->callback([&d, a] {
    d.run = [a] { return a->child.empty() ? run_parent(*a) : run_child(*a); };
  });
}

}  // namespace sy::cli
