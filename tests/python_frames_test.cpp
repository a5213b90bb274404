// Python frames on the analyzer side: a trace's 'y' records and mixed stacks become Frames,
// placed where the interpreter runs them, and the user frame of a Python program is its own
// innermost Python line, not libtorch and not torch/cuda/graphs.py.
#include <doctest/doctest.h>

#include <fstream>

#include "engine/analyzer.h"
#include "symbolize/symbolizer.h"
#include "tests/trace_recording_sink.h"

namespace capguard {
namespace {

Frame native(const std::string& module, const std::string& function = "") {
  Frame f;
  f.module = module;
  f.function = function;
  return f;
}
Frame python(const std::string& file, const std::string& function, int line) {
  Frame f;
  f.module = kPythonModule;
  f.file = file;
  f.function = function;
  f.line = line;
  return f;
}

const std::string kTorch = "/opt/torch/.venv/lib/python3.12/site-packages/torch/";

TEST_CASE("python frames go in front of the interpreter's first native frame") {
  std::vector<Frame> frames = {native("/usr/lib/x86_64-linux-gnu/libcudart.so.13"),
                               native(kTorch + "lib/libtorch_cuda.so"),
                               native(kTorch + "lib/libtorch_python.so"),
                               native("/usr/bin/python3.12", "_PyEval_EvalFrameDefault"),
                               native("/usr/bin/python3.12", "Py_RunMain"),
                               native("/usr/lib/x86_64-linux-gnu/libc.so.6")};
  interleave_python_frames(
      frames, {python("/work/step.py", "step", 12), python("/work/step.py", "<module>", 30)});
  REQUIRE(frames.size() == 8);
  CHECK(frames[2].module == kTorch + "lib/libtorch_python.so");
  CHECK(frames[3].function == "step");
  CHECK(frames[4].function == "<module>");
  CHECK(frames[5].function == "_PyEval_EvalFrameDefault");

  std::vector<Frame> libpython = {native("/x/libtorch.so"),
                                  native("/usr/lib/libpython3.11.so.1.0")};
  interleave_python_frames(libpython, {python("/work/a.py", "f", 1)});
  CHECK(libpython[1].function == "f");

  // No interpreter frame seen (unsymbolized, or clamped at 64 frames): Python goes outermost.
  std::vector<Frame> clamped = {native("/x/libtorch.so"), native("")};
  interleave_python_frames(clamped, {python("/work/a.py", "f", 1)});
  CHECK(clamped.back().function == "f");
}

TEST_CASE("the user frame of a python program is its own innermost python line") {
  const std::vector<Frame> frames = {
      native("/usr/lib/x86_64-linux-gnu/libcudart.so.13", "cudaStreamSynchronize"),
      native(kTorch + "lib/libc10_cuda.so", "c10::cuda::stream_synchronize"),
      python(kTorch + "cuda/streams.py", "Stream.synchronize", 90),
      python("/usr/lib/python3.12/contextlib.py", "_GeneratorContextManager.__exit__", 144),
      python("/work/tests/train_step.py", "Trainer.step", 41),
      python("/work/tests/train_step.py", "<module>", 60),
      native("/usr/bin/python3.12", "_PyEval_EvalFrameDefault")};
  CHECK(choose_user_frame(frames) == 4);
  CHECK_FALSE(is_python_user_frame(frames[2]));
  CHECK_FALSE(is_python_user_frame(frames[3]));
  CHECK(is_python_user_frame(frames[4]));
  CHECK_FALSE(is_python_user_frame(python("<frozen runpy>", "_run_code", 88)));
  CHECK_FALSE(is_python_user_frame(
      python("/usr/local/lib/python3.12/dist-packages/jax/_src/api.py", "cache_miss", 1)));
  CHECK_FALSE(is_python_user_frame(
      python("/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py", "Thread.run", 1010)));
  CHECK_FALSE(is_python_user_frame(native("/work/app", "main")));
  // Any installed package is a library's (frame_owner_test: --user-code names the user's own).
  CHECK_FALSE(
      is_python_user_frame(python("/venv/lib/python3.12/site-packages/mymodel/net.py", "f", 3)));

  // Only framework and stdlib Python frames: the native choice stands (here: none).
  const std::vector<Frame> framework_only = {frames[0], frames[2], frames[3], frames[6]};
  CHECK(choose_user_frame(framework_only) == 3);  // the interpreter's frame is a program frame
}

TEST_CASE("a recorded python stack reaches the report as frames with the user's line") {
  trace::testing::TempDir dir;
  const std::string path = dir.path() + "/capguard.64.trace";
  std::ofstream(path) << "v 0.1.0 2\np 40 1 0\nc python3%20step.py\n"
                         "m 0 400000 500000 /usr/bin/python3.12\n"
                         "m 7f0000000000 7f0000000000 7f0000100000 " +
                             kTorch +
                             "lib/libtorch_cuda.so\n"
                             "y 1 29 " +
                             kTorch +
                             "cuda/graphs.py CUDAGraph.capture_begin\n"
                             "y 2 c /work/step%20one.py main\n"
                             "y 3 e /work/step%20one.py <module>\n"
                             "s 1 7f0000000100 400100 y 1 2 3\n"
                             "e 1 1 a cudaStreamBeginCapture 0 1 st=10 sb=0 sa=1 ci=1 md=0 dm=0\n"
                             "z 5 0\n";
  Analysis analysis;
  analyze_trace(path, analysis);
  REQUIRE_MESSAGE(analysis.errors.empty(), analysis.errors[0].to_string());
  REQUIRE(analysis.report.captures.size() == 1);
  symbolize(analysis.report, analysis.modules);
  const Location& begin = analysis.report.captures[0].begin;
  REQUIRE(begin.frames.size() == 5);
  CHECK(begin.frames[0].module == kTorch + "lib/libtorch_cuda.so");
  CHECK(begin.frames[1].function == "CUDAGraph.capture_begin");
  CHECK(begin.frames[1].line == 0x29);
  CHECK(begin.frames[2].file == "/work/step one.py");
  CHECK(begin.frames[2].function == "main");
  CHECK(begin.frames[3].function == "<module>");
  CHECK(begin.frames[4].module == "/usr/bin/python3.12");
  CHECK(begin.user_frame == 2);
}

}  // namespace
}  // namespace capguard
