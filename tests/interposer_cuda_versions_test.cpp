// Which CUDA runtime a program runs, as the interposer finds it before loading CUPTI:
// libcudart file names and the toolkit version in a cubin's ELF header (no GPU needed).
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <elf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "interposer/api_table.h"
#include "interposer/cuda_versions.h"

namespace capguard::interposer {
namespace {

TEST_CASE("a libcudart file name gives the runtime's version, a soname its major") {
  CHECK(runtime_of_library_name("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127") == 12040);
  CHECK(runtime_of_library_name("site-packages/nvidia/cuda_runtime/lib/libcudart.so.12") == 12000);
  CHECK(runtime_of_library_name("libcudart.so.13.0.96") == 13000);
  CHECK(runtime_of_library_name("/opt/cuda/lib64/libcudart.so.11.0") == 11000);
  CHECK(runtime_of_library_name("/usr/lib/libcudart.so") == 0);
  CHECK(runtime_of_library_name("/usr/lib/libcudart_static.a") == 0);
  bool minor_named = true;
  CHECK(runtime_of_library_name("libcudart.so.12", &minor_named) == 12000);
  CHECK_FALSE(minor_named);
  CHECK(runtime_of_library_name("libcudart.so.13.0.96", &minor_named) == 13000);
  CHECK(minor_named);
  CHECK(runtime_of_library_name("/usr/lib/libcupti.so.12") == 0);
  CHECK(runtime_of_library_name("libcudart.so.x") == 0);
}

Elf64_Ehdr cubin_header(uint16_t machine, uint32_t version) {
  Elf64_Ehdr eh{};
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_machine = machine;
  eh.e_version = version;
  return eh;
}

TEST_CASE("a cubin's ELF header carries the toolkit it was built with (e_version 124: 12.4)") {
  // As measured on nvcc 12.4's and 13.0's cubins (cuobjdump -elf: toolkit=124, 130).
  Elf64_Ehdr eh = cubin_header(190, 124);
  CHECK(toolkit_of_cubin_header(reinterpret_cast<unsigned char*>(&eh), sizeof(eh)) == 12040);
  eh = cubin_header(190, 130);
  CHECK(toolkit_of_cubin_header(reinterpret_cast<unsigned char*>(&eh), sizeof(eh)) == 13000);
  eh = cubin_header(62 /* x86-64 */, 124);
  CHECK(toolkit_of_cubin_header(reinterpret_cast<unsigned char*>(&eh), sizeof(eh)) == 0);
  eh = cubin_header(190, 1);  // an ordinary e_version: no toolkit
  CHECK(toolkit_of_cubin_header(reinterpret_cast<unsigned char*>(&eh), sizeof(eh)) == 0);
  CHECK(toolkit_of_cubin_header(reinterpret_cast<unsigned char*>(&eh), 10) == 0);
}

TEST_CASE("probing this test process finds no CUDA runtime and leaves the versions empty") {
  CudaVersions versions;
  probe_cuda_runtime(versions);
  CHECK(versions.runtime == 0);
  CHECK(versions.linkage == RuntimeLinkage::unknown);
  CHECK(versions.driver == 0);  // no libcuda.so.1 here
}

TEST_CASE("a loaded libcudart.so.13 soname link is resolved to its file's version, shared") {
  // What PyTorch's process looks like (a symlinked soname in a long site-packages path): the
  // probe resolves the link. A realpath buffer under PATH_MAX aborted here under
  // _FORTIFY_SOURCE (the hardened build killed every PyTorch program at cuInit).
  namespace fs = std::filesystem;
  Dl_info libm{};
  REQUIRE(dladdr(dlsym(RTLD_DEFAULT, "cos"), &libm) != 0);
  fs::path dir = fs::temp_directory_path() / ("capguard-cudart-" + std::to_string(getpid()));
  for (int i = 0; i < 12; ++i) dir /= "site-packages-nvidia-cuda_runtime-lib";  // a long path
  fs::create_directories(dir);
  fs::copy_file(libm.dli_fname, dir / "libcudart.so.13.0.96");
  fs::create_symlink("libcudart.so.13.0.96", dir / "libcudart.so.13");
  void* handle = dlopen((dir / "libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  CudaVersions versions;
  probe_loaded_runtimes(versions);
  CHECK(versions.runtime == 13000);
  CHECK(versions.linkage == RuntimeLinkage::shared);
  dlclose(handle);
  fs::remove_all(fs::temp_directory_path() / ("capguard-cudart-" + std::to_string(getpid())));
}

TEST_CASE("both majors' tables answer; the selected one decodes first") {
  CHECK(api_table_cuda12().major == 12);
  CHECK(api_table_cuda13().major == 13);
  select_api_major(12);
  CHECK(selected_api_major() == 12);
  select_api_major(13);
  CHECK(selected_api_major() == 13);
}

}  // namespace
}  // namespace capguard::interposer

namespace capguard::interposer {
namespace {

TEST_CASE("a runtime PyPI installed says its minor in the wheel's dist-info folder") {
  char root[] = "/tmp/capguard-wheel-XXXXXX";
  REQUIRE(mkdtemp(root) != nullptr);
  const std::string site = std::string(root) + "/site-packages";
  const std::string lib = site + "/nvidia/cuda_runtime/lib";
  REQUIRE(system(("mkdir -p " + lib + " " + site + "/nvidia_cuda_runtime_cu12-12.9.79.dist-info " +
                  site + "/nvidia_cuda_cupti_cu12-12.4.1.dist-info && touch " + lib +
                  "/libcudart.so.12")
                     .c_str()) == 0);
  CHECK(runtime_of_wheel((lib + "/libcudart.so.12").c_str(), 12) == 12090);
  CHECK(runtime_of_wheel((lib + "/libcudart.so.12").c_str(), 13) == 0);
  CHECK(runtime_of_wheel("/usr/local/cuda/lib64/libcudart.so.12", 12) == 0);
  CHECK(system((std::string("rm -rf ") + root).c_str()) == 0);
}

}  // namespace
}  // namespace capguard::interposer
