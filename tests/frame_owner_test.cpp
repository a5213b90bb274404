// Whose code a frame is, from paths: library code compiled into the program (Thrust, CUB,
// libstdc++ headers), shared libraries installed outside the user's tree (libtorch_cuda.so,
// cuBLAS, TensorRT) and Python packages are never the user frame; --user-code overrides.
#include "model/frame_owner.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace capguard {
namespace {

Frame at(const std::string& module, const std::string& function, const std::string& file = "",
         int line = 0) {
  Frame frame;
  frame.module = module;
  frame.function = function;
  frame.file = file;
  frame.line = line;
  return frame;
}

Frame python(const std::string& file, const std::string& function, int line) {
  return at(kPythonModule, function, file, line);
}

const std::string kApp = "/tmp/capguard-gpu-build/testcases/libs/thrust_reduce_in_capture";
const std::string kThrust = "/usr/local/cuda/include/cccl/thrust/system/cuda/detail/";

// thrust::reduce(thrust::cuda::par.on(s), ...) inside a Global capture: Thrust's header code is
// compiled into the program and calls the static cudart's cudaMalloc.
std::vector<Frame> thrust_stack() {
  return {at("/usr/local/nvidia/lib64/libcuda.so.1", ""),
          at(kApp, "cudaMalloc"),
          at(kApp, "thrust::cuda_cub::malloc(...)", kThrust + "malloc_and_free.h", 82),
          at(kApp, "thrust::cuda_cub::reduce_n(...)", kThrust + "reduce.h", 870),
          at(kApp, "thrust::reduce(...)",
             "/usr/local/cuda-13.0/targets/x86_64-linux/include/"
             "cccl/thrust/detail/reduce.inl",
             44),
          at(kApp, "main", "/work/main/testcases/libs/thrust_reduce_in_capture.cu", 21),
          at("/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main")};
}

TEST_CASE("toolkit headers compiled into the program are a library's, not the user frame") {
  const auto frames = thrust_stack();
  CHECK(owner_of(frames[1]) == FrameOwner::Cuda);
  CHECK(owner_of(frames[2]) == FrameOwner::Library);
  CHECK(owner_of(frames[4]) == FrameOwner::Library);
  CHECK(owner_of(frames[5]) == FrameOwner::Program);
  CHECK(choose_user_frame(frames) == 5);
  CHECK(first_frame_outside_cuda(frames) == 2);  // the report shows Thrust's frames, then main

  // libstdc++'s <functional>/<thread> wrappers and libcu++ (cuda::std) are headers too.
  CHECK(owner_of(at(kApp, "std::__invoke_impl<...>", "/usr/include/c++/13/bits/invoke.h", 61)) ==
        FrameOwner::Library);
  CHECK(owner_of(at(kApp, "cuda::std::__4::fill_n", "/usr/local/cuda/include/cccl/cuda/std/x.h",
                    5)) == FrameOwner::Library);
  CHECK(owner_of(at(kApp, "cub::DeviceReduce::Sum", "/opt/nvidia/hpc_sdk/cuda/include/cub/x.cuh",
                    9)) == FrameOwner::Library);
  // A CUDA 12 toolkit installed anywhere keeps CCCL as include/cub, include/thrust, include/cuda
  // (seen with CUDA 12.4 under /opt: the user's line was lost to util_allocator.cuh).
  CHECK(owner_of(at(kApp, "cub::CachingDeviceAllocator::DeviceAllocate",
                    "/opt/cuda-12.4/include/cub/util_allocator.cuh", 537)) == FrameOwner::Library);
  CHECK(owner_of(at(kApp, "thrust::reduce", "/sw/cuda/12.4/include/thrust/reduce.h", 85)) ==
        FrameOwner::Library);
  CHECK(owner_of(at(kApp, "cuda::std::fill_n", "/apps/cuda-12/include/cuda/std/__algorithm/x.h",
                    5)) == FrameOwner::Library);
  CHECK(owner_of(at(kApp, "main", "/home/me/project/src/train.cu", 21)) == FrameOwner::Program);
}

TEST_CASE("shared libraries installed outside the user's tree are libraries") {
  const std::string torch = "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/";
  CHECK(owner_of(at(torch + "libtorch_cuda.so", "at::native::foo")) == FrameOwner::Library);
  CHECK(owner_of(at("/x/site-packages/torch/lib/libtorch_cuda.so", "")) == FrameOwner::Library);
  CHECK(owner_of(at("/usr/local/cuda/lib64/libcublasLt.so.13", "")) == FrameOwner::Library);
  CHECK(owner_of(at("/usr/lib/x86_64-linux-gnu/libnvinfer.so.10", "")) == FrameOwner::Library);
  CHECK(owner_of(at("/home/me/miniconda3/envs/a/lib/libnccl.so.2", "")) == FrameOwner::Library);
  // Even with debug information naming the library's own sources.
  CHECK(owner_of(at(torch + "libc10_cuda.so", "c10::cuda::f", "/pytorch/c10/cuda/f.cpp", 3)) ==
        FrameOwner::Library);
  CHECK(
      owner_of(at("/root/.pyenv/versions/3.12.1/lib/python3.12/lib-dynload/_ctypes.cpython-312.so",
                  "")) == FrameOwner::Library);
  // A library the user built in their own tree, and the program itself, are the program's.
  CHECK(owner_of(at("/home/me/proj/build/libsolver.so", "solve")) == FrameOwner::Program);
  CHECK(owner_of(at("/usr/src/app/build/app", "main", "/usr/src/app/main.cu", 3)) ==
        FrameOwner::Program);
  // CUDA itself, capguard and the C runtime keep their own owners.
  CHECK(owner_of(at("/usr/lib/x86_64-linux-gnu/libcudart.so.13", "")) == FrameOwner::Cuda);
  CHECK(owner_of(at("/opt/capguard/lib/libcapguard.so", "")) == FrameOwner::Interposer);
  CHECK(owner_of(at("/lib/x86_64-linux-gnu/libc.so.6", "")) == FrameOwner::Runtime);

  // A cuBLAS call: cuBLAS's frames lie between CUDA and the user's cublasSgemm line.
  const std::vector<Frame> frames = {at("/usr/local/cuda/lib64/libcudart.so.13", "cudaMalloc"),
                                     at("/usr/local/cuda/lib64/libcublasLt.so.13", ""),
                                     at("/usr/local/cuda/lib64/libcublas.so.13", "cublasSgemm_v2"),
                                     at("/work/app", "step(cublasContext*)", "/work/app.cu", 40)};
  CHECK(choose_user_frame(frames) == 3);
  CHECK(first_frame_outside_cuda(frames) == 1);
}

TEST_CASE("python frames of site-packages and the standard library are libraries") {
  CHECK(owner_of(python("/venv/lib/python3.12/site-packages/transformers/a.py", "f", 1)) ==
        FrameOwner::Library);
  CHECK(owner_of(python("/usr/lib/python3.12/threading.py", "run", 1)) == FrameOwner::Library);
  CHECK(owner_of(python("<frozen runpy>", "_run_code", 88)) == FrameOwner::Library);
  CHECK(owner_of(python("/work/train.py", "step", 3)) == FrameOwner::Program);
  CHECK(owner_of(python("", "?", 0)) == FrameOwner::Unknown);
}

TEST_CASE("code that torch.compile and Triton generate is theirs, not the user's") {
  const std::vector<Frame> frames = {
      at("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "cuLaunchKernel"),
      at("/root/.triton/cache/5Q2X/__triton_launcher.so", "_launch"),
      python("/tmp/torchinductor_root/ab/cabcdef.py", "call", 40),
      python("/x/site-packages/torch/_inductor/output_code.py", "__call__", 460),
      python("/work/train.py", "step", 12)};
  CHECK(owner_of(frames[1]) == FrameOwner::Library);
  CHECK(owner_of(frames[2]) == FrameOwner::Library);
  CHECK(choose_user_frame(frames) == 4);
}

TEST_CASE("torch.compile's and Triton's code is theirs wherever their caches are") {
  // TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR elsewhere: Inductor's files by their names.
  const std::string inductor =
      "/cache/inductor/wb/cwbzyxu6a4lhyfosnynr6lvfattup6ejgrzbfzxxwzzp7wbrbh74.py";
  const std::vector<Frame> frames = {
      at("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "cuLaunchKernel"),
      at("/cache/triton/5Q2XJXKVGZ4LFQ7C2ZAXJ2JXBVKYGUCQ6E7J5WSRYHJHAC5NWHCQ/__triton_launcher.so",
         "_launch"),
      python(inductor, "call", 116),
      python("/x/site-packages/torch/_inductor/output_code.py", "__call__", 460),
      python("/work/serve.py", "step", 18)};
  CHECK(generated_by(inductor) == GeneratedBy::TorchCompile);
  CHECK(generated_by(frames[1].module) == GeneratedBy::Triton);
  CHECK(owner_of(frames[1]) == FrameOwner::Library);
  CHECK(owner_of(frames[2]) == FrameOwner::Library);
  CHECK(choose_user_frame(frames) == 4);
  // Inductor's C++ wrappers and their modules too.
  CHECK(generated_by("/c/ab/cabmd5bgbt2fqfsu3v4w4ypx3hgnjsa2mmzgg2z6zhgwz7zyrwaq.so") ==
        GeneratedBy::TorchCompile);
  CHECK(generated_by("/c/ab/cabmd5bgbt2fqfsu3v4w4ypx3hgnjsa2mmzgg2z6zhgwz7zyrwaq.cpp") ==
        GeneratedBy::TorchCompile);
  // Triton's driver helpers only in a cache key's folder: the name is common.
  CHECK(generated_by("/c/0f9c6bc3e3fa0a5e3c3a3e0a6b7a4e9c1d2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b/"
                     "cuda_utils.so") == GeneratedBy::Triton);
  CHECK(generated_by("/work/build/cuda_utils.so") == GeneratedBy::None);
  // Not Inductor's: a file of the user's that is nearly named like one.
  CHECK(generated_by("/work/cwbzyxu6a4lhyfosnynr6lvfattup6ejgrzbfzxxwzzp7wbrbh7.py") ==
        GeneratedBy::None);  // 51 letters after the c
  CHECK(generated_by("/work/cwbzyxu6a4lhyfosnynr6lvfattup6ejgrzbfzxxwzzp7wbrbh18.py") ==
        GeneratedBy::None);  // 1 and 8 are not base32
  CHECK(generated_by("/work/dwbzyxu6a4lhyfosnynr6lvfattup6ejgrzbfzxxwzzp7wbrbh74.py") ==
        GeneratedBy::None);
  CHECK(owner_of(python("/work/train.py", "step", 3)) == FrameOwner::Program);
  // torch.fx's generated forward (backend="cudagraphs", aot_eager): the caller is the user's line.
  const std::vector<Frame> fx = {
      python("<eval_with_key>.3 from /work/model.py:12 in forward", "forward", 5),
      python("/x/site-packages/torch/fx/graph_module.py", "__call__", 400),
      python("/work/model.py", "<module>", 30)};
  CHECK(generated_by(fx[0].file) == GeneratedBy::TorchCompile);
  CHECK(choose_user_frame(fx) == 2);
  CHECK(owner_of(python("<string>", "<module>", 1)) == FrameOwner::Program);  // python -c
}

TEST_CASE("libraries of GPU clusters' software stacks and NVIDIA's, wherever installed") {
  for (const char* module :
       {"/apps/cuda/12.4/lib64/libcublasLt.so.12", "/sw/nccl/2.21/lib/libnccl.so.2",
        "/home/u/modules/cudnn-9/lib/libcudnn_graph.so.9", "/opt/hpcx/ucx/lib/libucs.so.0",
        "/usr/local/mpi/lib/libmpi.so.40", "/opt/amazon/ofi-nccl/lib/libnccl-net.so",
        "/opt/cray/pe/mpich/8.1.28/gtl/lib/libmpi_gtl_cuda.so.0",
        "/home/u/spack/opt/spack/linux-x86_64/gcc-12/ucx-1.16/lib/libucp.so.0"}) {
    CAPTURE(module);
    CHECK(owner_of(at(module, "f")) == FrameOwner::Library);
  }
  // The program's own libraries stay the program's, under /opt too.
  CHECK(owner_of(at("/work/build/libmykernels.so", "f")) == FrameOwner::Program);
  CHECK(owner_of(at("/opt/myapp/lib/libmodel.so", "f")) == FrameOwner::Program);
}

TEST_CASE("--user-code says what the user's code is") {
  const auto frames = thrust_stack();
  // Someone debugging Thrust itself: its header is their code.
  const UserCode thrust({kThrust + "*"}, "/work/main");
  CHECK(thrust.matches(frames[2]));
  CHECK(choose_user_frame(frames, thrust) == 2);
  // Never CUDA itself, even when a glob matches its module.
  CHECK(choose_user_frame(frames, UserCode({kApp}, "/")) == 2);

  // A vendored library in the user's tree is not theirs: name the code that is.
  std::vector<Frame> vendored = {
      at("/usr/lib/x86_64-linux-gnu/libcuda.so.1", ""),
      at("/work/app", "vendor::alloc", "/work/main/third_party/vendor/alloc.cpp", 9),
      at("/work/app", "main", "/work/main/src/main.cu", 12)};
  CHECK(choose_user_frame(vendored) == 1);
  CHECK(choose_user_frame(vendored, UserCode({"src/*"}, "/work/main")) == 2);
  CHECK(choose_user_frame(vendored, UserCode({"/work/main/src"}, "")) == 2);  // a directory
  CHECK(choose_user_frame(vendored, UserCode({"main.cu"}, "")) == 2);         // a base name

  // An installed library the user wrote: name its module.
  std::vector<Frame> installed = {at("/usr/lib/x86_64-linux-gnu/libcudart.so.13", ""),
                                  at("/usr/local/lib/libmine.so.1", "mine::run"),
                                  at("/work/app", "main", "/work/main.cu", 3)};
  CHECK(choose_user_frame(installed) == 2);
  CHECK(choose_user_frame(installed, UserCode({"libmine.so*"}, "")) == 1);
  // A glob that matches nothing leaves the default choice.
  CHECK(choose_user_frame(installed, UserCode({"/nowhere/*"}, "")) == 2);

  // Python: a pip-installed package of the user's.
  std::vector<Frame> py = {at("/x/site-packages/torch/lib/libc10_cuda.so", ""),
                           python("/venv/lib/python3.12/site-packages/mymodel/net.py", "f", 3),
                           python("/work/train.py", "<module>", 9)};
  CHECK(choose_user_frame(py) == 2);
  CHECK(choose_user_frame(py, UserCode({"*/site-packages/mymodel/*"}, "")) == 1);
}

}  // namespace
}  // namespace capguard

namespace capguard {
namespace {

// capguard's CuPy pool hook (python/capguard_python_startup) calls libcapguard.so through
// ctypes from inside CuPy's free: its frame and the ctypes frames inside it are capguard's, and
// the user's line is the `del` that dropped the array.
TEST_CASE("capguard's Python start-up hook is capguard's code, with everything inside it") {
  const std::string hook = "/opt/capguard/lib/capguard/capguard_python_startup/sitecustomize.py";
  const std::vector<Frame> frames = {
      at("/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so",
         "_ctypes_callproc"),
      at("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", "_PyEval_EvalFrameDefault"),
      python(hook, "free_postprocess", 61),
      at("/v/lib/python3.12/site-packages/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so",
         "__pyx_f_4cupy_4cuda_6memory_12PooledMemory_free"),
      python("/work/app/train.py", "<module>", 20),
  };
  CHECK(owner_of(frames[2]) == FrameOwner::Interposer);
  CHECK(std::string(frame_kind(frames[2])) == "tool");
  CHECK(first_frame_outside_cuda(frames) == 3);  // CuPy's free, then the user's line
  CHECK(choose_user_frame(frames) == 4);
  // A user's own file of that name elsewhere stays theirs.
  CHECK(owner_of(python("/work/app/sitecustomize.py", "<module>", 1)) == FrameOwner::Program);
}

}  // namespace
}  // namespace capguard
