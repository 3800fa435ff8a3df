// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the adaptors that act around each call:
// failure_callback, thread_safe, prefetch.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(CallAdaptors, ResourceConformance, call_adaptor_factories, factory_names);

}  // namespace
}  // namespace rmm::test
