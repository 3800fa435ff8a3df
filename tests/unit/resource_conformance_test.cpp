// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the CUDA runtime's own allocators:
// cudaMalloc, managed, pinned host and system memory.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(Runtime, ResourceConformance, runtime_resource_factories, factory_names);

}  // namespace
}  // namespace rmm::test
