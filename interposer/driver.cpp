#include "interposer/driver.h"

#include <dlfcn.h>

namespace capguard::interposer {
namespace {

template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

bool load_driver_api(DriverApi& api) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  // The versioned names are what cuda.h maps the plain names to in CUDA 13.
  resolve(lib, "cuStreamGetCaptureInfo_v3", api.stream_get_capture_info);
  resolve(lib, "cuStreamGetFlags", api.stream_get_flags);
  resolve(lib, "cuGraphGetNodes", api.graph_get_nodes);
  dlclose(lib);  // drops only the reference taken above; the library stays loaded
  return true;
}

}  // namespace capguard::interposer
