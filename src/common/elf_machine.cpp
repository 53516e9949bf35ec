#include "common/elf_machine.h"

#include <fstream>

namespace kbench {

std::string elf_machine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return "";
  if (header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') return "";
  // e_machine at offset 18, in the byte order EI_DATA (offset 5) names.
  const unsigned value = header[5] == 2 ? (header[18] << 8 | header[19]) : (header[19] << 8 | header[18]);
  switch (value) {
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 3: return "i386";
    case 40: return "arm";
    case 243: return "riscv64";
    default: return "elf-machine-" + std::to_string(value);
  }
}

}  // namespace kbench
