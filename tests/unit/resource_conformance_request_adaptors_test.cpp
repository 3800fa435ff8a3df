// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the adaptors that change requests on their
// way to the upstream: limiting, aligned (above a threshold, and for every size).

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(RequestAdaptors, ResourceConformance, request_adaptor_factories, factory_names);

}  // namespace
}  // namespace rmm::test
