"""ringsim_fuzz_test: one fuzz entry point, two ways to run it.

Default configuration (gcc, and --config=asan): NAME is a cc_test linked
with //bazel/fuzz:standalone_main, which runs every file of the seed corpus
(and the empty input) through LLVMFuzzerTestOneInput: the corpus is a
regression test in `bazel test //...`.

--config=fuzz (clang-14, .bazelrc): NAME is the same cc_test linked with
libFuzzer (-fsanitize=fuzzer) and run over the corpus with -runs=0; and
NAME_burst, which exists only in that configuration, fuzzes for
burst_seconds (RINGSIM_FUZZ_SECONDS overrides it) starting from the corpus,
with the dictionary if there is one. New inputs and crash artifacts go to
the burst's undeclared outputs (bazel-testlogs/.../test.outputs).
"""

load("@rules_cc//cc:defs.bzl", "cc_test")
load("//bazel:ringsim.bzl", "RINGSIM_COPTS")

_FUZZ = "//bazel:fuzz"

def _fuzz_only():
    return select({
        _FUZZ: [],
        "//conditions:default": ["//bazel:incompatible"],
    })

def ringsim_fuzz_test(name, srcs, corpus, deps = [], dict = None, burst_seconds = 10, max_len = 0, size = "small", **kwargs):
    """A fuzz target NAME whose seed corpus is the directory CORPUS of the package.

    Args:
      name: the regression test; NAME_burst is the burst (fuzz config only).
      srcs: the harness (defines LLVMFuzzerTestOneInput).
      corpus: the seed directory, relative to the package (at least one file).
      deps: what the harness uses.
      dict: a libFuzzer dictionary (label), for the burst.
      burst_seconds: how long the burst fuzzes.
      max_len: libFuzzer's -max_len for the burst (0: its default).
      size: the regression test's size.
      **kwargs: passed to the regression test.
    """
    corpus_dir = corpus.rstrip("/")
    native.filegroup(
        name = name + "_corpus",
        srcs = native.glob([corpus_dir + "/**"]),
        testonly = True,
        # tests/regressions_test replays the corpora's committed replay files.
        visibility = ["//tests:__pkg__"],
    )
    pkg = native.package_name()
    corpus_path = (pkg + "/" + corpus_dir) if pkg else corpus_dir

    cc_test(
        name = name,
        size = size,
        srcs = srcs,
        copts = RINGSIM_COPTS,
        deps = deps + select({
            _FUZZ: [],
            "//conditions:default": ["//bazel/fuzz:standalone_main"],
        }),
        linkopts = select({
            _FUZZ: ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        data = [":" + name + "_corpus"],
        # Relative to the runfiles root, the test's working directory.
        # libFuzzer: run every input once and stop; standalone_main skips flags.
        args = ["-runs=0", corpus_path],
        **kwargs
    )

    burst_data = [":" + name, ":" + name + "_corpus"]
    burst_args = ["$(rootpath :%s)" % name, corpus_path, str(burst_seconds), str(max_len)]
    if dict:
        burst_data.append(dict)
        burst_args.append("$(rootpath %s)" % dict)
    native.sh_test(
        name = name + "_burst",
        srcs = ["//bazel/fuzz:burst.sh"],
        data = burst_data,
        args = burst_args,
        size = "small" if burst_seconds <= 30 else "medium",
        # external: never cached, each run fuzzes anew.
        tags = ["fuzz_burst", "external"],
        target_compatible_with = _fuzz_only(),
    )
