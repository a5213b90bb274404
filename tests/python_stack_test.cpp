// The Python-first view of stacks (report/python_stack.*): names for reading, libraries, what
// is folded and what is left out.
#include "report/python_stack.h"

#include <doctest/doctest.h>

#include "model/frame_owner.h"
#include "model/framework_calls.h"

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
  CHECK(
      short_function_name("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::X<int>, "
                          "c10::Scalar>::call(c10::OperatorKernel*, at::Tensor const&)") ==
      "c10::impl::wrap_kernel_functor_unboxed_<…>::call(c10::OperatorKernel*, at::Tensor const&)");
  CHECK(short_function_name("at::native::_local_scalar_dense_cuda(at::Tensor const&)::{lambda()#1}"
                            "::operator()() const [clone .isra.0]",
                            true) == "at::native::_local_scalar_dense_cuda::{lambda}::operator()");
  CHECK(short_function_name("std::vector<int>::operator<(std::vector<int> const&)", true) ==
        "std::vector<…>::operator<");
  CHECK(short_function_name("main") == "main");
  // An anonymous namespace is no parameter list: kept, or dropped with its "::".
  CHECK(short_function_name("a::(anonymous namespace)::f(int)") ==
        "a::(anonymous namespace)::f(int)");
  CHECK(short_function_name("a::(anonymous namespace)::f(int)", true) == "a::f");
}

TEST_CASE("short kernel names: no return type, template arguments or parameters") {
  CHECK(short_kernel_name("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
                          "at::native::(anonymous namespace)::TensorListMetadata<2>, int>("
                          "at::native::(anonymous namespace)::TensorListMetadata<2>, int)") ==
        "at::native::multi_tensor_apply_kernel<…>");
  CHECK(short_kernel_name("void at::native::reduce_kernel<512, 1>(int)") ==
        "at::native::reduce_kernel<…>");
  CHECK(short_kernel_name("bump(int*)") == "bump");
}

TEST_CASE("brief C++ names for a via line: no return type, parameters or namespaces") {
  CHECK(brief_function_name("at::cuda::CUDAGraph::capture_begin(at::cuda::MempoolId_t)") ==
        "CUDAGraph::capture_begin");
  CHECK(
      brief_function_name("void at::native::gpu_kernel_impl_nocast<at::native::X>(at::Tensor&)") ==
      "gpu_kernel_impl_nocast<…>");
  CHECK(brief_function_name("torch::autograd::THPVariable_add_(_object*, _object*)") ==
        "THPVariable_add_");
  CHECK(brief_function_name("pybind11::cpp_function::dispatcher(_object*)") ==
        "cpp_function::dispatcher");
  CHECK(brief_function_name("") == "");
  CHECK(brief_function_name("__pyx_pw_4cupy_4cuda_6stream_11_BaseStream_19synchronize") ==
        "_BaseStream.synchronize");
  CHECK(brief_function_name(
            "__pyx_f_13cupy_backends_4cuda_3api_7runtime_streamSynchronize(long, int)") ==
        "runtime.streamSynchronize");
}

TEST_CASE("paths as a Python user reads them: from the package, or from the source root") {
  CHECK(display_path("/opt/v/lib/python3.12/site-packages/torch/_inductor/utils.py", "", "") ==
        "torch/_inductor/utils.py");
  CHECK(display_path("/usr/lib/python3.12/unittest/case.py", "", "") == "unittest/case.py");
  CHECK(display_path("/src/app/train.py", "/src", "/src/app") == "app/train.py");
  CHECK(display_path("/work/main/testcases/python/common.py", "/elsewhere",
                     "/work/main/testcases/python") == "common.py");
  CHECK(display_path("/other/x.py", "/src", "/work") == "/other/x.py");
  Location l;
  l.frames = {python("f", "/work/t/common.py", 3), python("<module>", "/work/t/main.py", 9)};
  CHECK(script_dir_of(l) == "/work/t");
}

TEST_CASE("library Python frames fold into one named step: torch.compile, nn.Module") {
  const std::string sp = "/v/lib/python3.12/site-packages/";
  Location l;
  l.frames = {
      native("cudaStreamBeginCapture", "/usr/local/cuda/lib64/libcudart.so.13"),          // 0
      native("at::cuda::CUDAGraph::capture_begin()", sp + "torch/lib/libtorch_cuda.so"),  // 1
      python("CUDAGraph.capture_begin", sp + "torch/cuda/graphs.py", 115),                // 2
      python("graph.__enter__", sp + "torch/cuda/graphs.py", 257),                        // 3
      python("CUDAGraphNode._record", sp + "torch/_inductor/cudagraph_trees.py", 1),      // 4
      python("Module._call_impl", sp + "torch/nn/modules/module.py", 1790),               // 5
      python("OptimizedModule.__call__", sp + "torch/_dynamo/eval_frame.py", 472),        // 6
      python("<module>", "/work/t.py", 36)};                                              // 7
  l.user_frame = 7;
  const PythonStackView view = python_stack_view(l, 1, l.frames.size());
  CHECK(view.via ==
        "torch.compile (3 frames) → graph.__enter__ → CUDAGraph.capture_begin → torch: "
        "CUDAGraph::capture_begin");
  CHECK(view.folded_python == 3u);
  CHECK(python_group_of(l.frames[5]) == "nn.Module");
  CHECK(python_group_of(l.frames[3]).empty());

  Location unnamed;  // a native run without names is named by its library, never empty
  unnamed.frames = {native("cudaLaunchKernel", "/usr/local/cuda/lib64/libcudart.so.13"),
                    native("", "/home/u/.triton/cache/x/__triton_launcher.so"),
                    python("<module>", "/work/t.py", 3)};
  unnamed.user_frame = 2;
  CHECK(python_stack_view(unnamed, 1, 3).via == "triton (1 frame)");
}

TEST_CASE("Inductor's code in a cache folder of the user's choice is torch.compile's") {
  // TORCHINDUCTOR_CACHE_DIR=/data/cache: no "torchinductor_" in the path, only the file's name.
  const std::string generated =
      "/data/cache/wb/cwbzyxu6a4lhyfosnynr6lvfattup6ejgrzbfzxxwzzp7wbrbh74.py";
  Location l;
  l.frames = {native("cudaEventQuery", "/usr/local/cuda/lib64/libcudart.so.13"),
              python("call", generated, 116),
              python("OptimizedModule.__call__",
                     "/v/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", 472),
              python("<module>", "/work/serve.py", 18)};
  CHECK(choose_user_frame(l.frames) == 3);
  l.user_frame = 3;
  CHECK(python_group_of(l.frames[1]) == "torch.compile");
  CHECK(framework_of(l) == Framework::TorchCompile);
  CHECK(python_stack_view(l, 1, l.frames.size()).via.starts_with("torch.compile (2 frames)"));
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
  l.frames = {native("cudaStreamSynchronize", "/usr/local/cuda/lib64/libcudart.so.13"),      // 0
              native("at::native::item(at::Tensor const&)", torch),                          // 1
              native("torch::autograd::THPVariable_item(_object*, _object*)", torch),        // 2
              native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),                     // 3
              python("Tensor.item", "/v/lib/python3.12/site-packages/torch/_tensor.py", 9),  // 4
              python("step", "/work/train.py", 13),                                          // 5
              native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),                     // 6
              native("pybind11::cpp_function::dispatcher", torch),                           // 7
              python("<module>", "/work/train.py", 20)};                                     // 8
  l.user_frame = 5;
  const PythonStackView view = python_stack_view(l, 1, l.frames.size());
  CHECK(view.user == 5u);
  CHECK(view.via == "Tensor.item → torch: THPVariable_item → item (2 frames)");
  REQUIRE(view.callers.size() == 1u);  // the interpreter left out, torch glue folded
  CHECK(view.callers[0].frame == 8u);
  CHECK(view.callers[0].count == 0u);
  CHECK(view.interpreter == 2u);
  CHECK(view.folded_native == 3u);
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

TEST_CASE("a first use closest to the user wins over the library call it makes") {
  const std::string torch = "/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
  Location l;
  l.frames = {native("cudaFree", "/usr/local/cuda/lib64/libcudart.so.13"),
              native("cublasCreate_v2", "/v/site-packages/nvidia/cu13/lib/libcublas.so.13"),
              native("at::cuda::getCurrentCUDABlasHandle()", torch),
              python("<module>", "/work/train.py", 20)};
  l.user_frame = 3;
  REQUIRE(framework_call_of(l) != nullptr);
  CHECK(framework_call_of(l)->words == "cuBLAS handle and workspace creation on first use");
  l.user_frame = -1;  // on a thread without a user frame: from the outermost frame in
  l.frames.pop_back();
  CHECK(framework_call_of(l)->words == "cuBLAS handle and workspace creation on first use");
}

TEST_CASE("a rule's fix in the framework's words; CUDA's for a C++ program") {
  const std::string sp = "/v/lib/python3.12/site-packages/";
  Finding f;
  f.rule = "unjoined-fork";
  f.message = "stream 0x2 was never joined. Fix: record an event";
  f.location.frames = {
      native("cudaStreamEndCapture", "/usr/local/cuda/lib64/libcudart.so.13"),
      native("at::cuda::CUDAGraph::capture_end()", sp + "torch/lib/libtorch_cuda.so"),
      python("graph.__exit__", sp + "torch/cuda/graphs.py", 265),
      python("<module>", "/work/t.py", 12)};
  f.location.user_frame = 3;
  CHECK(framework_of(f.location) == Framework::PyTorch);
  Report report;
  report.findings.push_back(f);
  Finding cxx = f;
  cxx.location.frames = {f.location.frames[0], native("main", "/work/app")};
  cxx.location.user_frame = 1;
  CHECK(framework_of(cxx.location) == Framework::None);
  report.findings.push_back(cxx);
  name_framework_calls(report);
  CHECK(report.findings[0].framework_fix.find("torch.cuda.current_stream().wait_stream(side)") !=
        std::string::npos);
  CHECK_FALSE(report.findings[0].framework_headline.empty());
  CHECK(report.findings[0].message == "stream 0x2 was never joined");  // CUDA's fix gives way
  CHECK(report.findings[1].framework_fix.empty());
  CHECK(report.findings[1].message == f.message);
  // torch.compile's own words, else PyTorch's.
  CHECK(framework_fix(Framework::TorchCompile, "graph-specialization-growth")
            ->fix.find("cudagraph_skip_dynamic_graphs") != std::string_view::npos);
  CHECK(framework_fix(Framework::TorchCompile, "unjoined-fork") ==
        framework_fix(Framework::PyTorch, "unjoined-fork"));
  for (const FrameworkFix& fix : framework_fixes()) {  // no fix says "eagerly"
    CAPTURE(fix.fix);
    CHECK(fix.fix.find("eager") == std::string_view::npos);
  }
  for (const FrameworkCall& call : framework_calls())
    CHECK(call.fix.find("eager") == std::string_view::npos);
}

TEST_CASE("a framework's thread is named, and keeps the user line that started its work") {
  const std::string torch = "/v/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so";
  Finding f;
  f.rule = "unsafe-call-during-capture";
  f.location.frames = {
      native("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13"),
      native("torch::autograd::Engine::thread_main(std::shared_ptr<X> const&)", torch)};
  Related start;
  start.role = "started-by";
  start.location.frames = {python("<module>", "/work/train.py", 21)};
  start.location.user_frame = 0;
  f.related.push_back(start);
  Finding main_thread = f;  // a finding with a user frame drops the guess
  main_thread.location.frames.push_back(python("<module>", "/work/train.py", 20));
  main_thread.location.user_frame = 2;
  Report report;
  report.findings = {f, main_thread};
  name_framework_calls(report);
  CHECK(report.findings[0].thread_name == "PyTorch autograd thread");
  CHECK(report.findings[0].related.size() == 1u);
  CHECK(report.findings[1].thread_name.empty());
  CHECK(report.findings[1].related.empty());
}

#include "rules/capture_ended_by_exception.h"
#include "trace/format.h"

TEST_CASE("a capture ended while Python handled an exception is a finding, not \"ok\"") {
  Report report;
  CaptureInfo capture;
  capture.id = 1;
  capture.pid = 7;
  capture.status = CaptureState::Ok;
  capture.nodes = 3;
  Location end;
  end.frames = {
      native("cudaStreamEndCapture", "/usr/local/cuda/lib64/libcudart.so.13"),
      python("RuntimeError: Cannot copy between CPU and CUDA tensors", trace::kPythonExceptionFile,
             25),
      python("graph.__exit__", "/v/lib/python3.12/site-packages/torch/cuda/graphs.py", 265),
      python("capture", "/work/t/first_call.py", 22)};
  end.user_frame = choose_user_frame(end.frames);
  CHECK(end.user_frame == 3);  // the pseudo frame is nobody's code
  CHECK(is_python_exception_frame(end.frames[1]));
  capture.end = end;
  report.captures.push_back(capture);
  CaptureInfo failed = capture;  // a capture CUDA failed has its own finding
  failed.id = 2;
  failed.status = CaptureState::Invalidated;
  report.captures.push_back(failed);
  CaptureInfo clean = capture;
  clean.id = 3;
  clean.end->frames.erase(clean.end->frames.begin() + 1);
  report.captures.push_back(clean);
  rules::find_captures_ended_by_exception(report);
  REQUIRE(report.findings.size() == 1u);
  const Finding& f = report.findings[0];
  CHECK(f.rule == "capture-ended-by-exception");
  CHECK(f.severity == Severity::Error);
  CHECK(f.capture == 1u);
  CHECK(f.message.find("an exception (RuntimeError: Cannot copy between CPU and CUDA tensors)") !=
        std::string::npos);
  CHECK(f.message.find("3 nodes") != std::string::npos);
  // The culprit is the line that raised, the `with` line's end beside it.
  REQUIRE(f.location.user() != nullptr);
  CHECK(f.location.user()->file == "/work/t/first_call.py");
  CHECK(f.location.user()->line == 25);
  CHECK(f.location.frames.size() == 2u);  // the end's frames inside it are the end's
  CHECK(is_python_exception_frame(f.location.frames[0]));  // kept, never shown
  REQUIRE(f.related.size() == 1u);
  CHECK(f.related[0].role == "capture-end");
  CHECK(f.related[0].location.user()->line == 22);
  const PythonStackView view =
      python_stack_view(f.related[0].location, 1, f.related[0].location.frames.size());
  CHECK(view.via == "graph.__exit__");  // the pseudo frame is not a step
  // What raised, and its fix (framework_calls.def, Raised): not torch.compile's warm-up.
  name_framework_calls(report);
  CHECK(report.findings[0].framework_call ==
        "a pageable CPU tensor copied to or from the GPU inside the capture");
  CHECK(report.findings[0].framework_fix.starts_with("pin the CPU tensor"));
  CHECK(report.findings[0].framework_fix.find("torch.compile") == std::string::npos);
}

TEST_CASE("capture-ended-by-exception: what raised picks the fix; the line unknown keeps the end") {
  auto finding_for = [](const std::string& exception, uint32_t line) {
    Report report;
    CaptureInfo capture;
    capture.id = 1;
    capture.status = CaptureState::Ok;
    Location end;
    end.frames = {
        native("cudaStreamEndCapture", "/usr/local/cuda/lib64/libcudart.so.13"),
        python(exception, trace::kPythonExceptionFile, static_cast<int>(line)),
        python("graph.__exit__", "/v/lib/python3.12/site-packages/torch/cuda/graphs.py", 265),
        python("capture", "/work/t/t.py", 22)};
    end.user_frame = 3;
    capture.end = end;
    report.captures.push_back(capture);
    rules::find_captures_ended_by_exception(report);
    name_framework_calls(report);
    REQUIRE(report.findings.size() == 1u);
    return report.findings[0];
  };
  const Finding compile = finding_for(
      "BackendCompilerFailed: backend='inductor' raised: Cannot copy between CPU and CUDA tensors "
      "during CUDA graph capture unless the CPU tensor is pinned",
      24);
  CHECK(compile.framework_call.starts_with("torch.compile compiling"));  // the first row wins
  CHECK(compile.framework_fix.starts_with("warm up"));
  CHECK(compile.location.user()->line == 24);
  const Finding other = finding_for("ValueError: shapes differ", 23);
  CHECK(other.framework_call.empty());  // nothing known of it: the rule's fix in PyTorch's words
  CHECK(other.framework_fix.starts_with("fix the line that raised"));
  CHECK(other.location.user()->line == 23);
  const Finding unknown_line = finding_for("ValueError: shapes differ", 0);
  CHECK(unknown_line.location.user()->line == 22);  // the `with` line, as before
  CHECK(unknown_line.related.empty());
}

// A library's set-up made inside a relaxed-mode capture: cuFFT's plan creation copies
// its tables with a synchronous cuMemcpyHtoD; the finding names the first use and says whether
// the replay is affected.
TEST_CASE("library first uses: cuFFT plans, cuSOLVER, cuSPARSE and cuDNN handles") {
  const std::string cuda = "/usr/local/cuda/lib64/libcuda.so.1";
  struct Case {
    const char* library_call;
    const char* words;
  };
  for (const Case& c :
       {Case{"cufftMakePlan1d", "cuFFT plan creation"}, Case{"cufftPlan2d", "cuFFT plan creation"},
        Case{"cufftPlanMany", "cuFFT plan creation"},
        Case{"cusolverDnCreate", "cuSOLVER handle creation"},
        Case{"cusparseCreate", "cuSPARSE handle creation"},
        Case{"cudnnCreate", "cuDNN handle creation"}}) {
    CAPTURE(c.library_call);
    Location l;
    l.frames = {native("cuMemcpyHtoD_v2", cuda), native("cufft_internal_copy_tables", "/l/lib.so"),
                native(c.library_call, "/l/lib.so"), native("main", "/work/app")};
    l.user_frame = 3;
    Report report;
    Finding f;
    f.rule = "escaped-sync-copy";
    f.location = l;
    report.findings.push_back(f);
    name_framework_calls(report);
    CHECK(report.findings[0].framework_call.starts_with(c.words));
    CHECK(report.findings[0].framework_fix.starts_with("the replay is not affected"));
  }
  Location exec;  // executing a plan is no first use
  exec.frames = {native("cuMemcpyHtoD_v2", cuda), native("cufftExecC2C", "/l/libcufft.so"),
                 native("main", "/work/app")};
  exec.user_frame = 2;
  CHECK(framework_call_of(exec) == nullptr);
}
