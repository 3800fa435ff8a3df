// SPDX-License-Identifier: Apache-2.0
// The configuration schema is the one list of resource and adaptor types: every type in it runs
// through the conformance suite, and every conformance factory is a variant of a type in it.

#include "../unit/resource_factories.hpp"

#include <rmm/config/schema.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

template <class... Factories>
void add_names(::testing::Types<Factories...>, std::vector<std::string>& names)
{
  (names.emplace_back(Factories::name), ...);
}

/// The factories of every group the conformance suite instantiates.
std::vector<std::string> conformance_factory_names()
{
  using namespace rmm::test;
  std::vector<std::string> names;
  add_names(runtime_resource_factories{}, names);
  add_names(cuda_async_resource_factories{}, names);
  add_names(pool_resource_factories{}, names);
  add_names(other_suballocator_factories{}, names);
  add_names(recording_adaptor_factories{}, names);
  add_names(request_adaptor_factories{}, names);
  add_names(call_adaptor_factories{}, names);
  return names;
}

TEST(Registry, EveryTypeOfTheSchemaRunsThroughTheConformanceSuite)
{
  auto const names = conformance_factory_names();
  std::set<std::string> const factories(names.begin(), names.end());
  for (auto const& layer : rmm::config::layer_schemas()) {
    EXPECT_TRUE(factories.contains(std::string{layer.type}))
      << "\"" << layer.type << "\" has no factory of that name in the conformance groups of "
      << "tests/unit/resource_factories.hpp";
  }
}

TEST(Registry, EveryConformanceFactoryIsATypeOfTheSchemaOrAVariantOfOne)
{
  for (auto const& name : conformance_factory_names()) {
    bool known = false;
    for (auto const& layer : rmm::config::layer_schemas()) {
      std::string const type{layer.type};
      known = known || name == type || name.starts_with(type + "_");
    }
    EXPECT_TRUE(known) << "the conformance factory \"" << name << "\" names no type of the configuration schema";
  }
}

}  // namespace
