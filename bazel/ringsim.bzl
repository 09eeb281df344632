"""The rules every ringsim target is built with: shared compiler options and
the layering between packages (see docs/architecture.md, "Layering").

ringsim_cc_library, ringsim_cc_binary and ringsim_cc_test are cc_library,
cc_binary and cc_test with RINGSIM_COPTS prepended to the target's copts.
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

def ringsim_cc_test(name, copts = [], **kwargs):
    cc_test(name = name, copts = RINGSIM_COPTS + copts, **kwargs)
