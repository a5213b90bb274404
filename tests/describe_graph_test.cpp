// The graph rules' wording: kernels are named as people read them.
#include <doctest/doctest.h>

#include "rules/rule.h"

using capguard::rules::kernel_name;

TEST_CASE("kernel_name: demangled; a long library kernel's name without its template arguments") {
  CHECK(kernel_name("_Z4bumpPi") == "bump(int*)");  // short: as it is, parameters and all
  CHECK(kernel_name("") == "a kernel");
  CHECK(kernel_name("not_mangled") == "not_mangled");
  // cuBLAS's scal kernel, 114 characters demangled.
  CHECK(kernel_name("_Z11scal_kernelIffLi1ELb1ELi6ELi5ELi5ELi3EEv21cublasTransposeParamsIT0_EPKT_"
                    "PS3_PKS1_") == "scal_kernel<…>");
}
