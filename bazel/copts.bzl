"""Compiler options shared by every ringsim target."""

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
