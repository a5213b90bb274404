// The program's own CUPTI clients, as the trace's 'k' records tell them (interposer/
// cupti_share.h): who subscribed beside capguard, how capguard shared CUPTI with them, and
// whether capguard lost its own subscription. Names in words a user knows: a client is
// recorded by the subscriber name it gave or the library that subscribed, and the known ones
// are listed once here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace capguard {

struct CuptiClientInfo {
  std::string name;            // in words: "PyTorch's profiler (kineto) in libtorch_cpu.so"
  bool beside = false;         // CUPTI's multi-subscriber mode; else capguard forwarded to it
  uint32_t subscriptions = 0;  // kineto subscribes again after each teardown
  uint32_t finalizes = 0;      // cuptiFinalize calls capguard kept from ending its subscription
  uint32_t refused = 0;        // further subscribers, refused as CUPTI refuses them alone
};

// "PyTorch's profiler (kineto) in libtorch_cpu.so" for a recorded ".../libtorch_cpu.so"; a name
// that is no known library's is kept, cut to its file name when it is a path.
std::string describe_cupti_client(std::string_view recorded);

}  // namespace capguard
