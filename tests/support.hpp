// Helpers shared by the tests: temporary directories and file writing.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace sy::test {

/// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("sytest-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Copies a plugin library and (if present) its manifest into `dir`.
inline void copy_plugin(const std::filesystem::path& lib, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  fs::copy_file(lib, dir / lib.filename(), fs::copy_options::overwrite_existing);
  const fs::path manifest = lib.string() + ".json";
  if (fs::exists(manifest))
    fs::copy_file(manifest, dir / manifest.filename(), fs::copy_options::overwrite_existing);
}

}  // namespace sy::test
