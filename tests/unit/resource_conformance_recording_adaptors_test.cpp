// SPDX-License-Identifier: Apache-2.0
// The conformance suite (resource_conformance.hpp) over the adaptors that record what passes
// through: logging, statistics, tracking.

#include "resource_conformance.hpp"

namespace rmm::test {
namespace {

INSTANTIATE_TYPED_TEST_SUITE_P(RecordingAdaptors, ResourceConformance, recording_adaptor_factories, factory_names);

}  // namespace
}  // namespace rmm::test
