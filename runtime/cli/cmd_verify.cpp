// switchyard verify: a model's structure through its format's reader, and its files'
// SHA-256 against a manifest or the .sha256 files published beside them (verify/verify.hpp).
// Exit 0 when everything checked is right, 1 otherwise.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "verify/verify.hpp"

namespace sy::cli {
// A named namespace: unity builds put this file beside others with their own helpers.
namespace verify_cmd {

struct VerifyArgs {
  std::string path, manifest;
  bool all = false, json = false;
};

int run_verify(const VerifyArgs& a) {
  verify::Options o;
  if (!a.manifest.empty()) o.manifest = a.manifest;
  o.hash_all = a.all;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto progress = [tty](const std::filesystem::path& f, uint64_t done, uint64_t total) {
    if (!tty || total == 0) return;
    std::fprintf(stderr, "\rhashing %-50.50s %3d%%", f.filename().string().c_str(), static_cast<int>(100 * done / total));
    if (done == total) std::fprintf(stderr, "\r%80s\r", "");
  };
  auto r = verify::verify_model(a.path, o, progress);
  if (!r) {
    std::cerr << "switchyard verify: " << r.status().message() << "\n";
    return 1;
  }
  if (a.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : r->files)
      files.push_back({{"path", f.path.string()},
                       {"bytes", f.bytes},
                       {"sha256", f.actual},
                       {"expected", f.expected},
                       {"expected_from", f.expected_from},
                       {"missing", f.missing},
                       {"ok", f.ok()}});
    std::cout << nlohmann::json{{"format", r->format}, {"structure", r->structure}, {"files", files}, {"ok", r->ok()}}.dump()
              << "\n";
    return r->ok() ? 0 : 1;
  }
  std::cout << "structure: " << r->format << ", " << r->structure << "\n";
  size_t checked = 0, failed = 0;
  for (const auto& f : r->files) {
    const std::string name = f.path.string();
    if (f.missing) {
      std::cout << "MISSING  " << name << " (listed in " << f.expected_from << ")\n";
      ++failed;
    } else if (!f.expected.empty()) {
      ++checked;
      if (f.ok()) {
        std::cout << "OK       " << name << " (sha256 as " << f.expected_from << " says)\n";
      } else {
        std::cout << "FAILED   " << name << ": sha256 " << f.actual << ", but " << f.expected_from << " says "
                  << f.expected << "; download it again\n";
        ++failed;
      }
    } else if (!f.actual.empty()) {
      std::cout << f.actual << "  " << name << "\n";  // sha256sum's format: --all writes a manifest
    } else {
      std::cout << "unchecked " << name << " (no published digest; --sha256 FILE or --all)\n";
    }
  }
  std::cout << (failed ? "verify: " + std::to_string(failed) + " problem(s)" : "verify: all good") << " ("
            << checked << " of " << r->files.size() << " files checked against published digests)\n";
  return failed ? 1 : 0;
}

}  // namespace verify_cmd

void add_verify_command(CLI::App& app, Dispatch& d) {
  using namespace verify_cmd;
  auto a = std::make_shared<VerifyArgs>();
  auto* cmd = app.add_subcommand("verify", "Check a model's files: complete shards, tensors inside their files, SHA-256 digests");
  cmd->add_option("path", a->path, "A GGUF file (any shard of a split model), a Hugging Face folder or a .safetensors file")
      ->required();
  cmd->add_option("--sha256", a->manifest, "A manifest in sha256sum's format (HEX  FILE per line) to check the files against");
  cmd->add_flag("--all", a->all, "Digest every file, not only those with a published digest (prints sha256sum lines)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([&d, a] { d.run = [a] { return run_verify(*a); }; });
}

}  // namespace sy::cli
