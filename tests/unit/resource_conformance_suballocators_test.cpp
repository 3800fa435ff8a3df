// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the other sub-allocators: fixed_size,
// binning, arena and callback.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(Suballocators, ResourceConformance, other_suballocator_factories, factory_names);

}  // namespace
}  // namespace rmm::test
