// What released memory a live graph holds (framework_calls.def's Release rows): the innermost
// frame that names a release wins, and a more specific row before a general one.
#include <doctest/doctest.h>

#include <string>

#include "model/framework_calls.h"

namespace capguard {
namespace {

Location release_stack(std::initializer_list<const char*> functions) {
  Location l;
  for (const char* f : functions) {
    Frame frame;
    frame.function = f;
    l.frames.push_back(frame);
  }
  return l;
}

TEST_CASE("release calls: a graph's destruction, a workspace clear, a thread's exit") {
  const FrameworkCall* reset = release_call_of(release_stack(
      {"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free(c10::cuda::Block*)",
       "at::cuda::clearCublasWorkspacesForStream(CUstream_st*)", "at::cuda::CUDAGraph::reset()",
       "at::cuda::CUDAGraph::~CUDAGraph()"}));
  REQUIRE(reset != nullptr);
  CHECK(std::string(reset->words).starts_with("destroying a graph"));
  CHECK(std::string(reset->fix).find("stream of its own") != std::string::npos);
  const FrameworkCall* cleared =
      release_call_of(release_stack({"at::cuda::clearCublasWorkspaces()", "THPModule_clear"}));
  REQUIRE(cleared != nullptr);
  CHECK(std::string(cleared->words).starts_with("PyTorch cleared cuBLAS's workspaces"));
  const FrameworkCall* exited = release_call_of(release_stack({"free", "__call_tls_dtors"}));
  REQUIRE(exited != nullptr);
  CHECK(std::string(exited->words).starts_with("a thread exited"));
  CHECK(release_call_of(release_stack({"free", "main"})) == nullptr);
}

}  // namespace
}  // namespace capguard
