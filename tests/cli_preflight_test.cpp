// run's check before the start (cli/preflight.h): what it finds with probes pointed at files
// this machine has or lacks, and the one line it makes of that.
#include <doctest/doctest.h>

#include "cli/preflight.h"

namespace capguard::cli {
namespace {

PreflightProbe probe_with(bool driver, bool device, bool cupti) {
  PreflightProbe probe;
  probe.driver_library = driver ? "libc.so.6" : "libcapguard-no-such-driver.so.1";
  probe.device_globs = {device ? "/dev/nul[l]" : "/dev/capguard-no-such-device*"};
  probe.cupti_libraries = {cupti ? "libm.so.6" : "libcapguard-no-such-cupti.so.13"};
  probe.cupti_roots = {"/nonexistent-capguard-root"};
  return probe;
}

TEST_CASE("preflight: everything found, nothing said") {
  const PreflightResult result = check_gpu_prerequisites(probe_with(true, true, true));
  CHECK(result.gpu_usable());
  CHECK(result.cupti == "libm.so.6");
  CHECK(preflight_message(result, true, true).empty());
}

TEST_CASE("preflight: no driver, no device: said, and what happens next") {
  const PreflightResult result = check_gpu_prerequisites(probe_with(false, false, true));
  CHECK_FALSE(result.gpu_usable());
  CHECK(result.driver_error.find("cannot open shared object file") != std::string::npos);
  const std::string runs = preflight_message(result, true, true);
  CHECK(runs.starts_with("warning: before starting the program: no CUDA driver ("));
  CHECK(runs.find("no GPU device") != std::string::npos);
  CHECK(runs.ends_with("the program runs anyway, and capguard will exit 3 after it"));
  CHECK(preflight_message(result, false, true).ends_with("not started (--fail-fast)"));
  CHECK(preflight_message(result, true, false).ends_with("(--no-require-attach)"));
}

TEST_CASE("preflight: a GPU without a CUPTI runs, saying a program may bring its own") {
  const PreflightResult result = check_gpu_prerequisites(probe_with(true, true, false));
  CHECK(result.gpu_usable());
  CHECK(result.cupti.empty());
  const std::string message = preflight_message(result, true, true);
  CHECK(message.find("no CUPTI (libcupti.so.12 or .13") != std::string::npos);
  CHECK(message.ends_with("the program runs now"));
}

}  // namespace
}  // namespace capguard::cli
