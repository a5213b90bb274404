// The Python frame walker inside a real CPython: each libpython found (pyenv's 3.12 and 3.13,
// or CAPGUARD_TEST_LIBPYTHON) is loaded into a forked child, which runs a small script whose
// innermost function calls back into C++. There the walker records the frames three ways:
// GIL held, GIL released (how PyTorch calls CUDA), and through the stable C API. The parent
// reads the trace and checks file, function and line of every frame. No libpython: no test.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "interposer/python_frames.h"
#include "tests/trace_recording_sink.h"
#include "trace/writer.h"

namespace capguard::interposer {
namespace {

using trace::testing::TempDir;

constexpr char kScript[] = R"(import sys
def probe_twice():
    probe()  # line 3
class Model:
    def forward(self):
        probe_twice()  # line 6
def generator():
    yield Model().forward()  # line 8
list(generator())
class Graph:
    def __enter__(self):
        return self
    def __exit__(self, *args):
        probe_exception()  # line 14: while the exception propagates
def capture():
    with Graph():
        raise RuntimeError("no copy during capture\nsecond line")  # line 17
try:
    capture()
except RuntimeError:
    pass
probe_exception()  # line 22: nothing handled
)";

struct Child {
  trace::TraceWriter writer;
  void* (*save_thread)() = nullptr;
  void (*restore_thread)(void*) = nullptr;
  void* none = nullptr;
  int calls = 0;
  int exception_calls = 0;
};
Child* g_child = nullptr;

void record(uint32_t stack_id, bool handled_exception = false) {
  uint32_t ids[64];
  const size_t depth = capture_python_frames(ids, 64, g_child->writer, 1, handled_exception);
  trace::ApiEvent e;
  e.api = "probe";
  e.seq = stack_id;
  e.stack = stack_id;
  if (depth == 0) e.stack = 0;
  g_child->writer.write_event(e, nullptr, 0, ids, depth);
}

// probe(): GIL held, then released, then the stable API with the GIL held and released.
void* probe(void*, void*) {
  const uint32_t base = static_cast<uint32_t>(++g_child->calls) * 10;
  record(base + 1);
  void* state = g_child->save_thread();
  record(base + 2);
  g_child->restore_thread(state);
  reattach_python_for_testing(true);
  record(base + 3);
  state = g_child->save_thread();
  record(base + 4);
  g_child->restore_thread(state);
  reattach_python_for_testing(false);
  return g_child->none;
}

// probe_exception(): as a call that ends a capture, GIL held, then released.
void* probe_exception(void*, void*) {
  const uint32_t base = 100 * static_cast<uint32_t>(++g_child->exception_calls);
  record(base + 1, true);
  void* state = g_child->save_thread();
  record(base + 2, true);
  g_child->restore_thread(state);
  return g_child->none;
}

struct MethodDef {  // PyMethodDef
  const char* name;
  void* (*method)(void*, void*);
  int flags;
  const char* doc;
};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

[[noreturn]] void run_child(const std::string& libpython, const std::string& home,
                            const std::string& trace_dir, const std::string& script) {
  setenv("PYTHONHOME", home.c_str(), 1);
  void* lib = dlopen(libpython.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) _exit(10);
  Child child;
  g_child = &child;
  if (!child.writer.open(trace_dir.c_str(), static_cast<uint32_t>(getpid()), 1, 0)) _exit(11);
  symbol<void (*)()>(lib, "Py_Initialize")();
  reattach_python_for_testing(false);
  if (!python_frames_available()) _exit(12);
  child.save_thread = symbol<void* (*)()>(lib, "PyEval_SaveThread");
  child.restore_thread = symbol<void (*)(void*)>(lib, "PyEval_RestoreThread");
  child.none = dlsym(lib, "_Py_NoneStruct");
  symbol<void (*)(void*)>(lib, "Py_IncRef")(child.none);  // probe()'s return value
  static MethodDef def = {"probe", probe, 0x0004 /* METH_NOARGS */, nullptr};
  void* fn =
      symbol<void* (*)(MethodDef*, void*, void*)>(lib, "PyCFunction_NewEx")(&def, nullptr, nullptr);
  void* builtins = symbol<void* (*)(const char*)>(lib, "PyImport_ImportModule")("builtins");
  if (fn == nullptr || builtins == nullptr) _exit(13);
  symbol<int (*)(void*, const char*, void*)>(lib, "PyObject_SetAttrString")(builtins, "probe", fn);
  static MethodDef exception_def = {"probe_exception", probe_exception, 0x0004, nullptr};
  void* exception_fn = symbol<void* (*)(MethodDef*, void*, void*)>(lib, "PyCFunction_NewEx")(
      &exception_def, nullptr, nullptr);
  if (exception_fn == nullptr) _exit(13);
  symbol<int (*)(void*, const char*, void*)>(lib, "PyObject_SetAttrString")(
      builtins, "probe_exception", exception_fn);
  const std::string run = "import runpy; runpy.run_path(" + std::string("'") + script + "')";
  if (symbol<int (*)(const char*)>(lib, "PyRun_SimpleString")(run.c_str()) != 0) _exit(14);
  _exit(child.calls == 1 && child.exception_calls == 2 ? 0 : 15);
}

struct Frames : trace::testing::RecordingSink {
  struct PyFrame {
    std::string file, function;
    uint32_t line;
  };
  std::map<uint32_t, PyFrame> frames;
  std::map<uint32_t, std::vector<PyFrame>> python_stacks;
  void on_python_frame(const trace::PythonFrameRecord& f) override {
    frames[f.id] = {std::string(f.file), std::string(f.function), f.line};
  }
  void on_stack(const trace::StackRecord& s) override {
    for (uint32_t id : s.python_frames) python_stacks[s.id].push_back(frames.at(id));
  }
};

// The ELF machine of a file (0 when unreadable): a libpython built for another architecture
// (pyenv's x86-64 ones, seen by this test built for aarch64 and run under qemu) cannot load.
uint16_t elf_machine(const std::string& path) {
  unsigned char header[20] = {};
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(header), sizeof header);
  if (header[0] != 0x7f || header[1] != 'E') return 0;
  return static_cast<uint16_t>(header[18] | header[19] << 8);  // e_machine, little-endian
}

std::vector<std::pair<std::string, std::string>> interpreters() {
  std::vector<std::pair<std::string, std::string>> found;  // libpython, home
  const uint16_t machine = elf_machine("/proc/self/exe");
  if (const char* lib = std::getenv("CAPGUARD_TEST_LIBPYTHON")) {
    const char* home = std::getenv("CAPGUARD_TEST_PYTHONHOME");
    found.emplace_back(lib, home != nullptr ? home : "");
  }
  for (const char* version : {"3.12", "3.13", "3.11"}) {
    std::error_code ec;
    const std::filesystem::path root = "/root/.pyenv/versions";
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
      const auto lib = entry.path() / "lib" / (std::string("libpython") + version + ".so");
      if (entry.path().filename().string().starts_with(std::string(version) + ".") &&
          std::filesystem::exists(lib) && elf_machine(lib.string()) == machine) {
        found.emplace_back(lib.string(), entry.path().string());
      }
    }
  }
  return found;
}

TEST_CASE("python frames are read inside a real interpreter, GIL held or released") {
  const auto found = interpreters();
  if (found.empty()) {
    MESSAGE("no libpython found: set CAPGUARD_TEST_LIBPYTHON (and CAPGUARD_TEST_PYTHONHOME)");
    return;
  }
  for (const auto& [libpython, home] : found) {
    CAPTURE(libpython);
    TempDir dir;
    const std::string script = dir.path() + "/model_step.py";
    std::ofstream(script) << kScript;
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) run_child(libpython, home, dir.path(), script);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    Frames sink;
    std::string trace;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
      if (entry.path().extension() == ".trace") trace = entry.path().string();
    const auto error = trace::read_trace(trace, sink);
    REQUIRE_MESSAGE(!error, error->to_string());

    // Layout walk, GIL held (11) and released (12); stable API with the GIL held (13).
    for (uint32_t id : {11u, 12u, 13u}) {
      CAPTURE(id);
      const auto& stack = sink.python_stacks[id];
      REQUIRE(stack.size() >= 4);
      CHECK(stack[0].file == script);
      CHECK(stack[0].line == 3);
      CHECK(stack[1].function == "Model.forward");
      CHECK(stack[1].line == 6);
      CHECK(stack[2].function == "generator");
      CHECK(stack[2].line == 8);
      CHECK(stack[3].function == "<module>");
      CHECK(stack[3].line == 9);
      CHECK(stack.back().file.find("runpy") == std::string::npos);  // PyRun_SimpleString's
      bool saw_runpy = false;
      for (const auto& frame : stack) saw_runpy |= frame.file.find("runpy") != std::string::npos;
      CHECK(saw_runpy);
    }
    CHECK(sink.python_stacks[11].size() == sink.python_stacks[12].size());

    // Ending a capture while an exception propagates through a `with`: a pseudo
    // frame first, naming it and the line it came through; none once it was handled.
    for (uint32_t id : {101u, 102u}) {
      CAPTURE(id);
      const auto& stack = sink.python_stacks[id];
      REQUIRE(stack.size() >= 3);
      CHECK(stack[0].file == trace::kPythonExceptionFile);
      CHECK(stack[0].function == "RuntimeError: no copy during capture");
      CHECK(stack[0].line == 17);
      CHECK(stack[1].function == "Graph.__exit__");
      CHECK(stack[1].line == 14);
      CHECK(stack[2].function == "capture");
    }
    for (uint32_t id : {201u, 202u}) {
      CAPTURE(id);
      const auto& stack = sink.python_stacks[id];
      REQUIRE(!stack.empty());
      CHECK(stack[0].file == script);
      CHECK(stack[0].line == 22);
    }
    // The stable API is never used without the GIL: no frames, no stack.
    CHECK(sink.python_stacks.count(14) == 0);
    bool unstacked = false;
    for (const auto& e : sink.events) unstacked |= e.seq == 14 && e.stack == 0;
    CHECK(unstacked);
  }
}

}  // namespace
}  // namespace capguard::interposer
