#include "interposer/driver.h"

#include <dlfcn.h>

namespace capguard::interposer {
namespace {

template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
}

// Drivers before CUDA 12.3 (the R525 and R535 branches) lack the _v3 entry point with edge data;
// their _v2 answers the same question when no edge data is asked for, which capguard never does.
using CaptureInfoV2 = int (*)(void* stream, int* status, unsigned long long* id, void* graph_out,
                              void* dependencies_out, size_t* num_dependencies_out);
CaptureInfoV2 g_capture_info_v2 = nullptr;

int capture_info_through_v2(void* stream, int* status, unsigned long long* id, void* graph_out,
                            void* dependencies_out, void* edge_data_out,
                            size_t* num_dependencies_out) {
  if (edge_data_out != nullptr) return 1;  // CUDA_ERROR_INVALID_VALUE: not on this driver
  return g_capture_info_v2(stream, status, id, graph_out, dependencies_out, num_dependencies_out);
}

}  // namespace

bool load_driver_api(DriverApi& api) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  // The versioned names are what cuda.h maps the plain names to in CUDA 13.
  resolve(lib, "cuStreamGetCaptureInfo_v3", api.stream_get_capture_info);
  if (api.stream_get_capture_info == nullptr) {
    resolve(lib, "cuStreamGetCaptureInfo_v2", g_capture_info_v2);
    if (g_capture_info_v2 != nullptr) api.stream_get_capture_info = &capture_info_through_v2;
  }
  resolve(lib, "cuStreamGetFlags", api.stream_get_flags);
  resolve(lib, "cuGraphGetNodes", api.graph_get_nodes);
  dlclose(lib);  // drops only the reference taken above; the library stays loaded
  return true;
}

}  // namespace capguard::interposer
