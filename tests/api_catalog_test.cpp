#include "model/api_catalog.h"

#include <doctest/doctest.h>

using capguard::ApiKind;
using capguard::classify_api;
using capguard::trace::ApiDomain;

TEST_CASE("api catalog: runtime names, with and without per-thread suffixes") {
  CHECK(classify_api("cudaMemcpyAsync").kind == ApiKind::Enqueue);
  CHECK(classify_api("cudaMemcpyAsync").takes_stream);
  CHECK_FALSE(classify_api("cudaMemcpyAsync").per_thread);
  CHECK(classify_api("cudaMemcpyAsync_ptsz").kind == ApiKind::Enqueue);
  CHECK(classify_api("cudaMemcpyAsync_ptsz").per_thread);
  CHECK(classify_api("cudaStreamBeginCapture_ptsz").kind == ApiKind::BeginCapture);
  CHECK(classify_api("cudaMemcpy").kind == ApiKind::SyncCopy);
  CHECK(classify_api("cudaMemcpy_ptds").per_thread);
  CHECK(classify_api("cudaMemcpy2DArrayToArray_ptds").kind == ApiKind::SyncCopy);
  CHECK(classify_api("cudaLaunchKernelExC_ptsz").kind == ApiKind::Enqueue);
  CHECK(classify_api("cudaMallocAsync").kind == ApiKind::Enqueue);
  CHECK(classify_api("cudaMalloc").kind == ApiKind::Unsafe);
  CHECK(classify_api("cudaHostRegister").kind == ApiKind::Unsafe);
  CHECK(classify_api("cudaStreamAddCallback").kind == ApiKind::Unsupported);
  CHECK(classify_api("cudaStreamGetCaptureInfo_v2_ptsz").kind == ApiKind::CaptureQuery);
  CHECK(classify_api("cudaThreadExchangeStreamCaptureMode").kind == ApiKind::ExchangeMode);
  CHECK(classify_api("cudaEventQuery").kind == ApiKind::EventSync);
  CHECK(classify_api("cudaGraphLaunch").kind == ApiKind::GraphLaunch);
  CHECK(classify_api("cudaMemcpyAsync").domain == ApiDomain::Runtime);
}

TEST_CASE("api catalog: driver names with version suffixes") {
  CHECK(classify_api("cuMemcpyHtoD_v2").kind == ApiKind::SyncCopy);
  CHECK(classify_api("cuMemcpyHtoD_v2").domain == ApiDomain::Driver);
  CHECK(classify_api("cuMemcpyHtoDAsync_v2_ptsz").kind == ApiKind::Enqueue);
  CHECK(classify_api("cuMemcpyHtoDAsync_v2_ptsz").per_thread);
  CHECK(classify_api("cuStreamBeginCapture_v2").kind == ApiKind::BeginCapture);
  CHECK(classify_api("cuLaunchKernel_ptsz").kind == ApiKind::Enqueue);
  CHECK(classify_api("cuCtxSynchronize").kind == ApiKind::DeviceSync);
  CHECK(classify_api("cuMemAlloc_v2").kind == ApiKind::Unsafe);
  CHECK(classify_api("cuMemsetD8_v2_ptds").kind == ApiKind::SyncCopy);
  CHECK(classify_api("cuStreamGetCaptureInfo_v3").kind == ApiKind::CaptureQuery);
  CHECK(classify_api("cuStreamAttachMemAsync").kind == ApiKind::Unsupported);
  CHECK(classify_api("cuStreamDestroy_v2").kind == ApiKind::StreamDestroy);
}

TEST_CASE("api catalog: unknown names are Other, and a name is not guessed from a prefix") {
  CHECK(classify_api("cudaGetDeviceCount").kind == ApiKind::Other);
  CHECK(classify_api("cudaMemcpyAsyncFoo").kind == ApiKind::Other);
  CHECK(classify_api("").kind == ApiKind::Other);
  CHECK(classify_api("_v2").kind == ApiKind::Other);
  CHECK(classify_api("cudaMalloc_v").kind == ApiKind::Other);
}
