// The Python-first view of stacks (report/python_stack.*): names for reading, libraries, what
// is folded and what is left out.
#include <doctest/doctest.h>

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
