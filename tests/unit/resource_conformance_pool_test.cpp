// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over pool_memory_resource: growing, bounded, and
// over cudaMallocAsync.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(Pool, ResourceConformance, pool_resource_factories, factory_names);

}  // namespace
}  // namespace rmm::test
