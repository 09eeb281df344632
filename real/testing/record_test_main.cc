// main() of the tests that run the recorder binary: a workload when asked
// (record_testing.h), else the tests, with the recorder's path as the
// first argument.
#include <gtest/gtest.h>

#include <cstdio>

#include "real/testing/record_testing.h"

int main(int argc, char** argv) {
  if (ringsim::real::testing::run_workload_if_asked(argc, argv)) return 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RECORD_BINARY\n", argv[0]);
    return 2;
  }
  ringsim::real::testing::set_record_path(argv[1]);
  return RUN_ALL_TESTS();
}
