#include "report/default_suppressions.h"
#include "rules/rule_table.h"

#include <doctest/doctest.h>

#include "report/suppressions.h"

namespace capguard {
namespace {

// The stack recorded on the H100 under torch.cuda.graph (libc10_cuda.so), innermost first.
Finding finding_from(const char* rule, const char* function) {
  Finding finding;
  finding.rule = rule;
  Frame frame;
  frame.function = function;
  frame.module = "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so";
  finding.location.frames.push_back(frame);
  finding.location.user_frame = 0;
  return finding;
}

constexpr const char* kTorchAllocator =
    "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::cudaMallocMaybeCapturing("
    "void**, unsigned long, c10::cuda::CUDACachingAllocator::Native::(anonymous "
    "namespace)::AllocParams&)";
constexpr const char* kTorchHostAllocator =
    "at::cuda::(anonymous namespace)::CUDACachingHostAllocatorImpl::allocate_host_memory_slowpath("
    "unsigned long, void**)";
constexpr const char* kCupyMalloc =
    "__pyx_f_13cupy_backends_4cuda_3api_7runtime_malloc(unsigned long, int)";

Suppressions built_in() {
  Suppressions suppressions;
  REQUIRE(parse_suppressions(default_suppressions_text(), "<built-in>", suppressions, all_rules()).empty());
  return suppressions;
}

}  // namespace

TEST_SUITE("default_suppressions") {
  TEST_CASE("framework allocators that allocate in Relaxed mode on purpose are not reported") {
    Report report;
    report.findings = {finding_from("relaxed-mode-unsafe-call", kTorchAllocator),
                       finding_from("relaxed-mode-unsafe-call", kTorchHostAllocator),
                       finding_from("relaxed-mode-unsafe-call", kCupyMalloc),
                       finding_from("relaxed-mode-unsafe-call", "main"),
                       finding_from("unsafe-call-during-capture", kTorchAllocator)};
    const SuppressionStats stats = apply_suppressions(report, built_in());
    CHECK(stats.removed == 3);
    REQUIRE(report.findings.size() == 2);
    // The user's own Relaxed allocation, and a real error inside the allocator, stay.
    CHECK(report.findings[0].location.frames[0].function == "main");
    CHECK(report.findings[1].rule == "unsafe-call-during-capture");
  }

  TEST_CASE("NCCL's Relaxed-mode allocations for captured collectives are not reported") {
    Report report;
    report.findings = {finding_from("relaxed-mode-unsafe-call", ""),
                       finding_from("relaxed-mode-unsafe-call", "ncclCudaCalloc<char>(...)"),
                       finding_from("unsafe-call-during-capture", "")};
    report.findings[0].location.frames[0].module =
        "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2";
    report.findings[2].location.frames[0].module = report.findings[0].location.frames[0].module;
    const SuppressionStats stats = apply_suppressions(report, built_in());
    CHECK(stats.removed == 2);
    REQUIRE(report.findings.size() == 1);
    CHECK(report.findings[0].rule == "unsafe-call-during-capture");  // errors stay
  }
}

}  // namespace capguard
