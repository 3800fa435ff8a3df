// The conformance suite (resource_conformance.hpp) over the adaptors that change what passes through: limiting, aligned, failure_callback, thread_safe, prefetch.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(PolicyAdaptors, ResourceConformance, policy_adaptor_factories, factory_names);

}  // namespace
}  // namespace rmm::test
