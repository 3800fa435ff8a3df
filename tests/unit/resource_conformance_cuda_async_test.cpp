// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the resources over CUDA's stream-ordered
// allocator (cudaMallocAsync pools).

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(CudaAsync, ResourceConformance, cuda_async_resource_factories, factory_names);

}  // namespace
}  // namespace rmm::test
