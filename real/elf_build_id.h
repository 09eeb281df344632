// Build-ids (the NT_GNU_BUILD_ID note, name "GNU", type 3) read with
// elfutils' libelf (Debian's libelf-dev): from an ELF file's PT_NOTE
// segments (then its SHT_NOTE sections), from an ELF image in memory (the
// vdso), and from raw notes (/sys/kernel/notes, the running kernel's).
// Every read is bounded by the data libelf hands back; a file that is not
// ELF, or has no build-id, is a one-line problem, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ringsim::real {

using BuildId = std::vector<std::uint8_t>;

// "" or the problem ("/x: not an ELF file").
std::string elf_file_build_id(const std::string& path, BuildId& out);
std::string elf_image_build_id(std::span<const std::byte> image, BuildId& out);
// A sequence of ELF notes (as /sys/kernel/notes holds them).
std::string notes_build_id(std::span<const std::byte> notes, BuildId& out);

// The running kernel's, from /sys/kernel/notes.
std::string kernel_build_id(BuildId& out);
// This process's vdso (the same image every process of this ABI maps):
// its bytes, from the [vdso] range of /proc/self/maps.
std::string vdso_image(std::vector<std::byte>& out);

}  // namespace ringsim::real
