// Replays inputs through LLVMFuzzerTestOneInput without libFuzzer: every
// regular file named on the command line or found (recursively) under a
// directory named there, in sorted order, plus the empty input. Arguments
// starting with '-' (libFuzzer flags) are ignored, so a test passes the
// same arguments whether it is linked with this main or with libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    const std::filesystem::path path(arg);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(
               path, std::filesystem::directory_options::follow_directory_symlink)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "standalone_main: %s: no such file or directory\n", arg.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  LLVMFuzzerTestOneInput(nullptr, 0);
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "standalone_main: %s: cannot read\n", file.c_str());
      return 2;
    }
    std::fprintf(stderr, "Running: %s (%zu bytes)\n", file.c_str(), bytes.size());
    // A copy in its own allocation, so ASan sees reads past the end.
    std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::fprintf(stderr, "standalone_main: %zu inputs (and the empty one) ran\n", files.size());
  return 0;
}
