// The few CUDA driver functions the interposer calls itself, as a seam: in the program they
// come from the libcuda.so.1 already loaded (dlsym, no link-time dependency); in unit tests
// they are fakes. None of them synchronizes, allocates or touches the runtime's error state.
#pragma once

#include <cstddef>
#include <cstdint>

namespace capguard::interposer {

struct DriverApi {
  // cuStreamGetCaptureInfo (CUDA 13 signature; the trailing outputs are optional).
  int (*stream_get_capture_info)(void* stream, int* status, unsigned long long* id, void* graph_out,
                                 void* dependencies_out, void* edge_data_out,
                                 size_t* num_dependencies_out) = nullptr;
  int (*stream_get_flags)(void* stream, unsigned int* flags) = nullptr;
  int (*graph_get_nodes)(void* graph, void* nodes, size_t* num_nodes) = nullptr;
};

// Fills the pointers from the loaded libcuda.so.1 (never loads it). Returns false if it is not
// loaded; pointers it cannot find stay null and the callers do without.
bool load_driver_api(DriverApi& api);

}  // namespace capguard::interposer
