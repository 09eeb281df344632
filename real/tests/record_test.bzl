"""record_test: a test that runs the recorder binary.

A ringsim_cc_test with the recorder's path as its first argument, main()
from //real/testing:record_test_main (which also runs the tests' CPU
workload), frame pointers (perf unwinds that workload) and
tags = ["local"]: perf events, mounts and capabilities need root, outside
the sandbox.
"""

load("//bazel:ringsim.bzl", "ringsim_cc_test")

def record_test(name, srcs, deps = [], data = [], size = "medium"):
    ringsim_cc_test(
        name = name,
        size = size,
        srcs = srcs,
        args = ["$(location //real:record)"],
        copts = ["-fno-omit-frame-pointer"],
        data = ["//real:record"] + data,
        tags = ["local"],
        deps = deps + [
            "//real:recorder",
            "//real/testing:record_test_main",
            "//real/testing:record_testing",
            "@system//:gtest",
        ],
    )
