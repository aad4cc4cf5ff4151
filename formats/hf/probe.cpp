#include "probe.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "checkpoint.hpp"
#include "config.hpp"
#include "safetensors.hpp"

namespace sy::hf {
namespace fs = std::filesystem;
namespace {

// A safetensors file starts with a header length that fits the file, then '{'.
bool looks_like_safetensors(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  unsigned char head[9] = {};
  if (!in || !in.read(reinterpret_cast<char*>(head), 9)) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  return !ec && n <= kMaxHeaderBytes && n + 8 <= size && head[8] == '{';
}

}  // namespace

std::optional<std::optional<std::string>> probe_checkpoint(const fs::path& path) noexcept {
  try {
    std::error_code ec;
    const bool is_dir = fs::is_directory(path, ec);
    const fs::path dir = is_dir ? path : path.parent_path();
    if (!is_dir && (path.extension() != ".safetensors" || !looks_like_safetensors(path))) return std::nullopt;
    if (is_dir && !fs::exists(dir / kIndexFile, ec) && !looks_like_safetensors(dir / kSingleFile)) return std::nullopt;
    const fs::path cfg = dir / "config.json";
    if (!fs::exists(cfg, ec)) return std::nullopt;
    auto text = read_text_file(cfg, 16ull << 20);
    if (!text) return std::nullopt;
    const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return quantized_by(j);
  } catch (...) {
    return std::nullopt;
  }
}

int probe_path(const fs::path& path) noexcept {
  const auto c = probe_checkpoint(path);
  if (!c) return 0;
  return *c ? kProbeQuantized : kProbeUnquantized;
}

}  // namespace sy::hf
