"""The rules every ringsim target is built with: shared compiler options and
the layering between packages (see docs/architecture.md, "Layering").

ringsim_cc_library, ringsim_cc_binary and ringsim_cc_test are cc_library,
cc_binary and cc_test with RINGSIM_COPTS prepended to the target's copts;
ringsim_cc_test also compiles the test's own source at -O0 under the
sanitizer configurations and at -O1 otherwise, unless keep_optimized
(below). The fuzz targets
(fuzz.bzl) are cc_tests of their own and keep -O1: a burst's executions
per second are its coverage.
Visibility is set per package (package(default_visibility = ...)) from the
package groups in //bazel:BUILD, so a dependency that breaks the layering
fails the build.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

RINGSIM_COPTS = [
    "-std=c++20",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wnon-virtual-dtor",
    "-Wno-missing-field-initializers",
    # Assertions stay on in every build, whatever -c says.
    "-UNDEBUG",
]

def ringsim_cc_library(name, copts = [], **kwargs):
    cc_library(name = name, copts = RINGSIM_COPTS + copts, **kwargs)

def ringsim_cc_binary(name, copts = [], **kwargs):
    cc_binary(name = name, copts = RINGSIM_COPTS + copts, **kwargs)

# Under the sanitizer configurations a test's own source (its drivers and
# assertions; not the libraries it tests, which keep the configuration's
# -O1) is compiled without optimization: the test sources were 433 of the
# 719 compile CPU-seconds of `bazel test --config=fuzz //...` (2026-12-02),
# and -O0 compiles one 31-55% faster. _FORTIFY_SOURCE needs optimization.
# Otherwise (-c opt: -O2) at -O1: the 60 test sources took 619 compile
# CPU-s at -O2, 466 at -O1, with the same test times (2026-12-02); -O1
# keeps gcc's -Wmaybe-uninitialized, which -O0 turns off.
_TEST_COPTS = select({
    "//bazel:sanitized": ["-O0", "-U_FORTIFY_SOURCE"],
    "//conditions:default": ["-O1"],
})

# keep_optimized: a test whose own source holds its hot loop (templates
# instantiated there: RapidCheck's generators, the parameter table's
# walks) keeps the configuration's optimization (-O2, or -O1 under the
# sanitizers); params_test took 4.7 s at -O1
# and 25.1 at -O0 under --config=fuzz, determinism_prop_test 6.1 and 14.5.
def ringsim_cc_test(name, copts = [], keep_optimized = False, **kwargs):
    extra = [] if keep_optimized else _TEST_COPTS
    cc_test(name = name, copts = RINGSIM_COPTS + copts + extra, **kwargs)
