// Writes the SARIF and JUnit renderings of tests/ci_gate_report.h into a directory, for the
// validators that check them the way CI tools read them (tests/validate_sarif.py,
// tests/validate_junit.py; registered in the root CMakeLists.txt).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "report/render.h"
#include "ci_gate_report.h"
#include "render_test_report.h"

namespace {

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) std::fprintf(stderr, "write_samples: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const capguard::Report report = capguard::testing::ci_gate_report();
  capguard::RenderOptions with_root;
  with_root.rules = capguard::all_rules();
  with_root.source_root = capguard::testing::kSourceRoot;
  const bool ok =
      write_file(dir / "sample.sarif", capguard::render_sarif(report, with_root)) &&
      write_file(dir / "sample-absolute.sarif",
                 capguard::render_sarif(report, capguard::testing::with_rules())) &&
      write_file(dir / "clean.sarif", capguard::render_sarif(capguard::Report{}, with_root)) &&
      write_file(dir / "sample.junit.xml", capguard::render_junit(report)) &&
      write_file(dir / "clean.junit.xml", capguard::render_junit(capguard::Report{}));
  return ok ? 0 : 1;
}
