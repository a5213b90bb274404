// Which CUDA runtime the program runs, found before CUPTI is loaded so that the CUPTI
// of the same major is: a libcudart.so.N among the loaded objects (shared cudart, and Python
// programs, which load it before their first cuInit), else the toolkit the main executable's
// device code was built with (static cudart: its cubins' ELF header carries the toolkit
// version), else nothing (driver API only). No allocation, fixed buffers.
#pragma once

#include <cstddef>

namespace capguard::interposer {

enum class RuntimeLinkage { unknown, shared, static_ };

// Added to major * 1000 when the minor is unknown (a soname alone): 12999 reads "12.x".
inline constexpr int kMinorUnknown = 999;

struct CudaVersions {
  int runtime = 0;  // CUDA_VERSION style (12040 = 12.4), 0 unknown, major*1000+kMinorUnknown
  RuntimeLinkage linkage = RuntimeLinkage::unknown;
  char runtime_path[512] = {};  // the libcudart that was found, or the executable
  int other_runtime = 0;        // a second runtime of another major in the same process
  int driver = 0;               // cuDriverGetVersion, 0 unknown
  int cupti_major = 0;          // the libcupti.so.N that attached
  unsigned cupti_api = 0;       // cuptiGetVersion
  char cupti_path[512] = {};
};

// Fills runtime, linkage, runtime_path, other_runtime and driver from the process as it is now.
void probe_cuda_runtime(CudaVersions& versions);
// The libcudart.so.N loaded now alone (no file read, no driver call): for the process exit,
// where a runtime loaded after attach (a CUDA 12 library dlopened late) is named too.
void probe_loaded_runtimes(CudaVersions& versions);

// The CUDA version in a cubin's ELF header (e_version: 124 = 12.4), as CUDA_VERSION, or 0.
int toolkit_of_cubin_header(const unsigned char* elf_header, size_t size);

// The version of the PyPI wheel that installed a libcudart (site-packages/nvidia/cuda_runtime/lib/
// libcudart.so.12 beside site-packages/nvidia_cuda_runtime_cu12-12.9.79.dist-info: 12090), or 0.
int runtime_of_wheel(const char* library, int major);

// The CUDA_VERSION a libcudart file name says (libcudart.so.12.4.127: 12040; libcudart.so.12:
// 12000), or 0 when it is no libcudart; `minor_named`: whether the name says a minor (.13.0 does).
int runtime_of_library_name(const char* path, bool* minor_named = nullptr);

}  // namespace capguard::interposer
