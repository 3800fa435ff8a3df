// SPDX-License-Identifier: Apache-2.0
// The right-hand column of docs/api.md's table for code written against the older RMM spelling:
// each translation compiles and does what the table says.

#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

TEST(ApiMigration, TheTranslationsInTheTableCompileAndWork)
{
  rmm::cuda_stream stream;
  rmm::mr::cuda_memory_resource upstream;
  rmm::mr::pool_memory_resource pool{upstream, 1 << 20};
  rmm::mr::pool_memory_resource pool_over_ref{rmm::device_async_resource_ref{upstream}, 1 << 20};

  auto const previous               = rmm::mr::set_current_device_resource(pool);
  rmm::device_async_resource_ref mr = rmm::mr::get_current_device_resource_ref();
  EXPECT_TRUE(mr == rmm::device_async_resource_ref{pool});

  void* p = mr.allocate(stream, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_NE(p, nullptr);
  mr.deallocate(stream, p, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  void* q = pool.allocate_sync(4096);
  pool.deallocate_sync(q, 4096);

  rmm::device_buffer buffer{4096, stream, pool_over_ref};
  EXPECT_EQ(buffer.size(), 4096U);
  EXPECT_TRUE(buffer.memory_resource() == rmm::device_async_resource_ref{pool_over_ref});

  std::string const log = ::testing::TempDir() + "api_migration_log.csv";
  {
    rmm::mr::logging_resource_adaptor logged{pool, log};
    rmm::device_buffer logged_buffer{256, stream, logged};
    stream.synchronize();
  }
  std::remove(log.c_str());

  rmm::mr::set_current_device_resource_ref(upstream);
  stream.synchronize();
  rmm::mr::set_current_device_resource(previous);
}

}  // namespace
