// The Python-first view of stacks (report/python_stack.*): names for reading, libraries, what
// is folded and what is left out.
#include <doctest/doctest.h>

#include "model/frame_owner.h"
#include "report/python_stack.h"

using namespace capguard;

namespace {

Frame native(std::string function, std::string module) {
  Frame f;
  f.address = 0x1000;
  f.function = std::move(function);
  f.module = std::move(module);
  return f;
}
Frame python(std::string function, std::string file, int line) {
  Frame f;
  f.function = std::move(function);
  f.file = std::move(file);
  f.line = line;
  f.module = "python";
  return f;
}

}  // namespace

TEST_CASE("short function names: templates, lambdas, parameters") {
  CHECK(short_function_name("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::X<int>, "
                            "c10::Scalar>::call(c10::OperatorKernel*, at::Tensor const&)") ==
        "c10::impl::wrap_kernel_functor_unboxed_<…>::call(c10::OperatorKernel*, at::Tensor const&)");
  CHECK(short_function_name("at::native::_local_scalar_dense_cuda(at::Tensor const&)::{lambda()#1}"
                            "::operator()() const [clone .isra.0]",
                            true) == "at::native::_local_scalar_dense_cuda::{lambda}::operator()");
  CHECK(short_function_name("std::vector<int>::operator<(std::vector<int> const&)", true) ==
        "std::vector<…>::operator<");
  CHECK(short_function_name("main") == "main");
}

TEST_CASE("library of a native frame: the package under site-packages, else the module") {
  CHECK(library_of(native("f", "/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so")) ==
        "torch");
  CHECK(library_of(native("f", "/v/lib/python3.12/site-packages/cupy/_core/core.cpython-312.so")) ==
        "cupy");
  CHECK(library_of(native("f", "/v/site-packages/nvidia/cu13/lib/libcublas.so.13")) == "cublas");
  CHECK(library_of(native("f", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9")) == "cudnn");
}

TEST_CASE("the Python-first view: user frame, one line to CUDA, callers; no interpreter") {
  Location l;
  const std::string torch = "/v/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so";
  l.frames = {native("cudaStreamSynchronize", "/usr/local/cuda/lib64/libcudart.so.13"),  // 0
              native("at::native::item(at::Tensor const&)", torch),                      // 1
              native("torch::autograd::THPVariable_item(_object*, _object*)", torch),    // 2
              native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),                 // 3
              python("Tensor.item", "/v/lib/python3.12/site-packages/torch/_tensor.py", 9),  // 4
              python("step", "/work/train.py", 13),                                      // 5
              native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),                 // 6
              native("pybind11::cpp_function::dispatcher", torch),                      // 7
              python("<module>", "/work/train.py", 20)};                                  // 8
  l.user_frame = 5;
  const PythonStackView view = python_stack_view(l, 1, l.frames.size());
  CHECK(view.user == 5u);
  CHECK(view.via ==
        "Tensor.item (_tensor.py:9) → torch: torch::autograd::THPVariable_item → at::native::item "
        "(2 frames)");
  CHECK(view.callers == std::vector<size_t>{8});  // the interpreter left out, torch glue folded
  CHECK(view.interpreter == 2u);
  CHECK(view.folded == 3u);
  CHECK(has_python_frames(l));
  CHECK(is_interpreter_frame(l.frames[3]));
  CHECK_FALSE(is_interpreter_frame(l.frames[5]));
}

#include "model/framework_calls.h"

TEST_CASE("framework calls: the entry point closest to the user, else a library's first use") {
  const std::string torch = "/v/lib/python3.12/site-packages/torch/lib/libtorch_python.so";
  Location item;
  item.frames = {native("cudaStreamSynchronize", "/usr/local/cuda/lib64/libcudart.so.13"),
                 native("at::native::_local_scalar_dense_cuda(at::Tensor const&)", torch),
                 native("torch::autograd::THPVariable_item(_object*, _object*)", torch),
                 python("step", "/work/train.py", 13)};
  item.user_frame = 3;
  const FrameworkCall* call = framework_call_of(item);
  REQUIRE(call != nullptr);
  CHECK(call->words == "Tensor.item()");

  Location cupy;
  cupy.frames = {native("__pyx_f_13cupy_backends_4cuda_3api_7runtime_streamSynchronize", "x.so"),
                 native("__pyx_pw_4cupy_4cuda_6stream_11_BaseStream_19synchronize", "y.so"),
                 python("<module>", "/work/t.py", 12)};
  cupy.user_frame = 2;
  REQUIRE(framework_call_of(cupy) != nullptr);
  CHECK(framework_call_of(cupy)->words == "cupy.cuda.Stream.synchronize()");

  Location autotune;  // Triton's autotuner synchronizes inside the user's capture
  autotune.frames = {native("cudaDeviceSynchronize", "/usr/local/cuda/lib64/libcudart.so.13"),
                     python("Autotuner.run", "/v/site-packages/triton/runtime/autotuner.py", 200),
                     python("step", "/work/train.py", 30)};
  autotune.user_frame = 2;
  REQUIRE(framework_call_of(autotune) != nullptr);
  CHECK(framework_call_of(autotune)->words.starts_with("Triton autotuning"));

  Location plain;  // a C++ program: nothing to name
  plain.frames = {native("cudaStreamSynchronize", "/usr/local/cuda/lib64/libcudart.so.13"),
                  native("main", "/work/app")};
  plain.user_frame = 1;
  CHECK(framework_call_of(plain) == nullptr);

  Report report;
  Finding f;
  f.location = item;
  report.findings.push_back(f);
  name_framework_calls(report);
  CHECK(report.findings[0].framework_call == "Tensor.item()");
  CHECK(report.findings[0].framework_fix.find("after replay()") != std::string::npos);
}
