// The trust boundary of the source reader (docs/security.md): a trace names files, only files
// under the source root with a source-like name are ever shown, read without blocking and only
// up to the line wanted.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/source_lines.h"

namespace capguard {
namespace {

namespace fs = std::filesystem;

struct Tree {
  fs::path base = fs::temp_directory_path() / ("capguard-source-lines-" + std::to_string(::getpid()));
  fs::path root = base / "repo";
  fs::path outside = base / "outside";
  Tree() {
    fs::remove_all(base);
    fs::create_directories(root / "src");
    fs::create_directories(root / ".git");
    fs::create_directories(outside);
    write(root / "src" / "app.cu", 5);
    write(root / ".git" / "config.cu", 5);
    write(root / "src" / "notes.txt", 5);
    write(outside / "secret.cu", 5);
  }
  ~Tree() { fs::remove_all(base); }
  static void write(const fs::path& path, int lines) {
    std::ofstream out(path);
    for (int i = 1; i <= lines; ++i) out << "line " << i << " of " << path.filename().string() << '\n';
  }
};

}  // namespace

TEST_CASE("source lines: only regular source files under the root, never outside it") {
  Tree tree;
  SourceReader reader(tree.root.string());
  CHECK(reader.around((tree.root / "src" / "app.cu").string(), 2, 1).size() == 3);
  CHECK(reader.around("src/app.cu", 2, 0).at(0).text == "line 2 of app.cu");
  // Recorded elsewhere: found by its tail under the root.
  CHECK(reader.around("/home/ci/checkout/src/app.cu", 3, 0).at(0).text == "line 3 of app.cu");
  // Outside the root, by absolute name, by .., through a symlink: nothing.
  CHECK(reader.around((tree.outside / "secret.cu").string(), 1, 0).empty());
  CHECK(reader.around("src/../../outside/secret.cu", 1, 0).empty());
  fs::create_symlink(tree.outside / "secret.cu", tree.root / "src" / "link.cu");
  CHECK(reader.around("src/link.cu", 1, 0).empty());
  fs::create_symlink("/etc/hostname", tree.root / "src" / "hostname.cu");
  CHECK(reader.around("src/hostname.cu", 1, 0).empty());
  // A symlink that stays inside the root is followed.
  fs::create_symlink("app.cu", tree.root / "src" / "alias.cu");
  CHECK(reader.around("src/alias.cu", 1, 0).size() == 1);
  // Hidden directories, names that are no source, system files.
  CHECK(reader.around(".git/config.cu", 1, 0).empty());
  CHECK(reader.around("/elsewhere/.git/config.cu", 1, 0).empty());
  CHECK(reader.around("src/notes.txt", 1, 0).empty());
  CHECK(reader.around("/etc/passwd", 1, 0).empty());
  CHECK(reader.around("/proc/self/environ", 1, 0).empty());
  CHECK(reader.around(std::string("src/app.cu\0.txt", 15), 1, 0).empty());
  // The default root is the current directory, so an absolute path elsewhere is refused.
  SourceReader cwd_reader;
  CHECK(cwd_reader.around((tree.root / "src" / "app.cu").string(), 1, 0).empty());
}

TEST_CASE("source lines: a FIFO is refused without blocking, big files are refused") {
  Tree tree;
  REQUIRE(mkfifo((tree.root / "src" / "fifo.cu").c_str(), 0600) == 0);
  SourceReader reader(tree.root.string());
  CHECK(reader.around("src/fifo.cu", 1, 0).empty());  // would block forever if opened blocking
  {
    std::ofstream big(tree.root / "src" / "big.cu");
    big << "first\n";
  }
  fs::resize_file(tree.root / "src" / "big.cu", kMaxSourceFileBytes + 1);
  CHECK(reader.around("src/big.cu", 1, 0).empty());
}

TEST_CASE("source lines: read up to the line wanted, far lines through remembered offsets") {
  Tree tree;
  {
    std::ofstream out(tree.root / "src" / "long.cu");
    for (int i = 1; i <= 5000; ++i) out << "l" << i << (i % 7 == 0 ? "\r\n" : "\n");
    out << "last without newline";
  }
  SourceReader reader(tree.root.string());
  const auto far = reader.around("src/long.cu", 4000, 1);
  REQUIRE(far.size() == 3);
  CHECK(far[0].text == "l3999");
  CHECK(far[1].text == "l4000");
  CHECK(far[2].text == "l4001");
  const auto near = reader.around("src/long.cu", 7, 0);  // before the remembered offsets
  REQUIRE(near.size() == 1);
  CHECK(near[0].text == "l7");  // without its '\r'
  const auto end = reader.around("src/long.cu", 5001, 2);
  REQUIRE(end.size() == 3);
  CHECK(end[2].text == "last without newline");
  CHECK(reader.around("src/long.cu", 5002, 0).empty());
  CHECK(reader.around("src/long.cu", 2049, 0).at(0).text == "l2049");
}

TEST_CASE("source extensions") {
  CHECK(has_source_extension("a/b.cu"));
  CHECK(has_source_extension("x.CPP"));
  CHECK(has_source_extension("m.py"));
  CHECK_FALSE(has_source_extension("/etc/passwd"));
  CHECK_FALSE(has_source_extension("a.cu/b"));
  CHECK_FALSE(has_source_extension("dir/.cu"));
  CHECK_FALSE(has_source_extension("config"));
}

}  // namespace capguard
