// SPDX-License-Identifier: Apache-2.0
// The logging adaptor example of the RMM README (../shared/seeds/rmm-readme.txt), as written
// there, with checks of the log it writes. The example's relative path "logs/test1.csv" is
// resolved in a scratch directory made current for the test.

#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(fs::path const& file)
{
  std::ifstream in{file};
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) { lines.push_back(line); }
  return lines;
}

class SeedReadmeLogging : public ::testing::Test {
 protected:
  void SetUp() override
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    previous_dir_ = fs::current_path();
    scratch_      = fs::temp_directory_path() / ("rmm_seed_logging_" + std::to_string(::getpid()));
    fs::create_directories(scratch_ / "logs");
    fs::current_path(scratch_);
    if (char const* value = std::getenv("RMM_LOG_FILE")) { previous_log_file_ = value; }
  }
  void TearDown() override
  {
    if (previous_log_file_) {
      ::setenv("RMM_LOG_FILE", previous_log_file_->c_str(), 1);
    } else {
      ::unsetenv("RMM_LOG_FILE");
    }
    fs::current_path(previous_dir_);
    fs::remove_all(scratch_);
  }

  fs::path previous_dir_;
  fs::path scratch_;
  std::optional<std::string> previous_log_file_;
};

TEST_F(SeedReadmeLogging, LoggingResourceAdaptorWritesTheCsv)
{
  void* logged_pointer = nullptr;
  {
    std::string filename{"logs/test1.csv"};
    rmm::mr::cuda_memory_resource upstream;
    rmm::mr::logging_resource_adaptor log_mr{upstream, filename};

    rmm::cuda_stream stream;
    {
      rmm::device_buffer buffer{1000, stream, log_mr};
      logged_pointer = buffer.data();
    }
    log_mr.flush();
  }
  auto const lines = lines_of(scratch_ / "logs" / "test1.csv");
  ASSERT_EQ(lines.size(), 3U) << "header, allocate, free";
  EXPECT_EQ(lines[0], "Thread,Time,Action,Pointer,Size,Stream");
  std::ostringstream pointer;
  pointer << logged_pointer;
  EXPECT_NE(lines[1].find(",allocate,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(",1000,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(pointer.str()), std::string::npos) << lines[1] << " should name " << pointer.str();
  EXPECT_NE(lines[2].find(",free,"), std::string::npos) << lines[2];
}

// "If a file name is not specified, the environment variable RMM_LOG_FILE is queried for the file
// name. If RMM_LOG_FILE is not set, then an exception is thrown by the logging_resource_adaptor
// constructor."
TEST_F(SeedReadmeLogging, FileNameFromRmmLogFile)
{
  rmm::mr::cuda_memory_resource upstream;
  ::unsetenv("RMM_LOG_FILE");
  EXPECT_THROW(rmm::mr::logging_resource_adaptor{upstream}, rmm::logic_error);

  ::setenv("RMM_LOG_FILE", "logs/from_env.csv", 1);
  {
    rmm::mr::logging_resource_adaptor log_mr{upstream};
    void* p = log_mr.allocate(rmm::cuda_stream_default, 64);
    log_mr.deallocate(rmm::cuda_stream_default, p, 64);
  }
  auto const lines = lines_of(scratch_ / "logs" / "from_env.csv");
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "Thread,Time,Action,Pointer,Size,Stream");
}

}  // namespace
