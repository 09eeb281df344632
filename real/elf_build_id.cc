#include "real/elf_build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "real/synthesize.h"

namespace ringsim::real {
namespace {

constexpr std::size_t kNotesMax = 1 << 16;        // notes walked in one segment or section
constexpr std::size_t kSegmentsMax = 1 << 16;     // program headers or sections looked at
constexpr std::uint64_t kVdsoBytesMax = 1 << 24;  // a vdso is a few pages

bool libelf_ready() {
  static const bool ready = ::elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

// The build-id among the notes of `data` (libelf's note iterator).
bool note_build_id(Elf_Data* data, BuildId& out) {
  if (data == nullptr || data->d_buf == nullptr) return false;
  std::size_t offset = 0;
  for (std::size_t n = 0; n < kNotesMax && offset < data->d_size; n++) {
    GElf_Nhdr note{};
    std::size_t name_at = 0;
    std::size_t desc_at = 0;
    const std::size_t next = ::gelf_getnote(data, offset, &note, &name_at, &desc_at);
    if (next == 0 || next <= offset) return false;
    const auto* bytes = static_cast<const char*>(data->d_buf);
    const bool gnu = note.n_namesz == 4 && std::memcmp(bytes + name_at, "GNU", 4) == 0;
    if (gnu && note.n_type == NT_GNU_BUILD_ID && note.n_descsz > 0 && note.n_descsz <= 20) {
      out.assign(reinterpret_cast<const std::uint8_t*>(bytes + desc_at),
                 reinterpret_cast<const std::uint8_t*>(bytes + desc_at) + note.n_descsz);
      return true;
    }
    offset = next;
  }
  return false;
}

bool segments_build_id(Elf* elf, BuildId& out) {
  std::size_t count = 0;
  if (::elf_getphdrnum(elf, &count) != 0) return false;
  for (std::size_t i = 0; i < count && i < kSegmentsMax; i++) {
    GElf_Phdr phdr{};
    if (::gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) continue;
    const Elf_Type type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    if (note_build_id(::elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, type), out)) {
      return true;
    }
  }
  return false;
}

bool sections_build_id(Elf* elf, BuildId& out) {
  Elf_Scn* section = nullptr;
  for (std::size_t i = 0; i < kSegmentsMax; i++) {
    section = ::elf_nextscn(elf, section);
    if (section == nullptr) return false;
    GElf_Shdr shdr{};
    if (::gelf_getshdr(section, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    if (note_build_id(::elf_getdata(section, nullptr), out)) return true;
  }
  return false;
}

std::string elf_build_id(Elf* elf, const std::string& what, BuildId& out) {
  if (elf == nullptr) return what + ": " + ::elf_errmsg(-1);
  std::string problem;
  if (::elf_kind(elf) != ELF_K_ELF) {
    problem = what + ": not an ELF file";
  } else if (!segments_build_id(elf, out) && !sections_build_id(elf, out)) {
    problem = what + ": no build-id note";
  }
  ::elf_end(elf);
  return problem;
}

}  // namespace

std::string elf_file_build_id(const std::string& path, BuildId& out) {
  if (!libelf_ready()) return "libelf: " + std::string(::elf_errmsg(-1));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path + ": cannot open: " + std::strerror(errno);
  const std::string problem = elf_build_id(::elf_begin(fd, ELF_C_READ_MMAP, nullptr), path, out);
  ::close(fd);
  return problem;
}

std::string elf_image_build_id(std::span<const std::byte> image, BuildId& out) {
  if (!libelf_ready()) return "libelf: " + std::string(::elf_errmsg(-1));
  // elf_memory only reads the image (ELF_C_READ_MMAP semantics).
  char* bytes = const_cast<char*>(reinterpret_cast<const char*>(image.data()));
  return elf_build_id(::elf_memory(bytes, image.size()), "ELF image", out);
}

std::string notes_build_id(std::span<const std::byte> notes, BuildId& out) {
  if (!libelf_ready()) return "libelf: " + std::string(::elf_errmsg(-1));
  // Raw notes have no ELF around them: libelf's iterator over our bytes.
  Elf_Data data{};
  data.d_buf = const_cast<std::byte*>(notes.data());
  data.d_size = notes.size();
  data.d_type = ELF_T_NHDR;
  data.d_version = EV_CURRENT;
  return note_build_id(&data, out) ? "" : "no build-id note";
}

std::string kernel_build_id(BuildId& out) {
  std::ifstream in("/sys/kernel/notes", std::ios::binary);
  if (!in) return "/sys/kernel/notes: cannot read it";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string problem =
      notes_build_id(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()), out);
  return problem.empty() ? "" : "/sys/kernel/notes: " + problem;
}

std::string vdso_image(std::vector<std::byte>& out) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  for (std::size_t n = 0; n < kNotesMax && std::getline(maps, line); n++) {
    MapEntry map;
    if (!parse_maps_line(line, map) || map.path != "[vdso]") continue;
    if (map.end - map.start > kVdsoBytesMax) return "[vdso] of " + std::to_string(map.end - map.start) + " bytes";
    const auto* begin = reinterpret_cast<const std::byte*>(map.start);
    out.assign(begin, begin + (map.end - map.start));
    return "";
  }
  return "no [vdso] in /proc/self/maps";
}

}  // namespace ringsim::real
