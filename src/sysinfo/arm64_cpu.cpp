#include "sysinfo/arm64_cpu.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kbench::sysinfo {

namespace {

struct KnownPart {
  unsigned implementer;
  unsigned part;
  const char* name;
};

// Part numbers as Linux's arch/arm64/include/asm/cputype.h and the cores'
// Technical Reference Manuals give them.
constexpr KnownPart kKnownParts[] = {
    {0x41, 0xd02, "Cortex-A34"},    {0x41, 0xd03, "Cortex-A53"},    {0x41, 0xd04, "Cortex-A35"},
    {0x41, 0xd05, "Cortex-A55"},    {0x41, 0xd06, "Cortex-A65"},    {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},    {0x41, 0xd09, "Cortex-A73"},    {0x41, 0xd0a, "Cortex-A75"},
    {0x41, 0xd0b, "Cortex-A76"},    {0x41, 0xd0c, "Neoverse-N1"},   {0x41, 0xd0d, "Cortex-A77"},
    {0x41, 0xd0e, "Cortex-A76AE"},  {0x41, 0xd0f, "AEMv8"},         {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd41, "Cortex-A78"},    {0x41, 0xd42, "Cortex-A78AE"},  {0x41, 0xd43, "Cortex-A65AE"},
    {0x41, 0xd44, "Cortex-X1"},     {0x41, 0xd46, "Cortex-A510"},   {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},     {0x41, 0xd49, "Neoverse-N2"},   {0x41, 0xd4a, "Neoverse-E1"},
    {0x41, 0xd4b, "Cortex-A78C"},   {0x41, 0xd4c, "Cortex-X1C"},    {0x41, 0xd4d, "Cortex-A715"},
    {0x41, 0xd4e, "Cortex-X3"},     {0x41, 0xd4f, "Neoverse-V2"},   {0x41, 0xd80, "Cortex-A520"},
    {0x41, 0xd81, "Cortex-A720"},   {0x41, 0xd82, "Cortex-X4"},     {0x41, 0xd83, "Neoverse-V3AE"},
    {0x41, 0xd84, "Neoverse-V3"},   {0x41, 0xd85, "Cortex-X925"},   {0x41, 0xd87, "Cortex-A725"},
    {0x41, 0xd8e, "Neoverse-N3"},
    {0x42, 0x00f, "Brahma-B15"},    {0x42, 0x100, "Brahma-B53"},    {0x42, 0x516, "Vulcan"},
    {0x43, 0x0a1, "ThunderX"},      {0x43, 0x0af, "ThunderX2"},     {0x43, 0x0b8, "OcteonTX2"},
    {0x46, 0x001, "A64FX"},
    {0x48, 0xd01, "TSV110"},  // Kunpeng 920
    {0x4e, 0x003, "Denver"},        {0x4e, 0x004, "Carmel"},        {0x4e, 0x010, "Olympus"},
    {0x50, 0x000, "X-Gene"},
    {0x51, 0x001, "Oryon"},         {0x51, 0x800, "Kryo 2xx Gold"}, {0x51, 0x801, "Kryo 2xx Silver"},
    {0x51, 0x802, "Kryo 3xx Gold"}, {0x51, 0x803, "Kryo 3xx Silver"}, {0x51, 0x804, "Kryo 4xx Gold"},
    {0x51, 0x805, "Kryo 4xx Silver"}, {0x51, 0xc00, "Falkor"},      {0x51, 0xc01, "Saphira"},
    {0x61, 0x022, "M1 Icestorm"},   {0x61, 0x023, "M1 Firestorm"},  {0x61, 0x024, "M1 Pro Icestorm"},
    {0x61, 0x025, "M1 Pro Firestorm"}, {0x61, 0x028, "M1 Max Icestorm"}, {0x61, 0x029, "M1 Max Firestorm"},
    {0x61, 0x032, "M2 Blizzard"},   {0x61, 0x033, "M2 Avalanche"},
    {0x6d, 0xd49, "Azure Cobalt 100"},
    {0xc0, 0xac3, "AmpereOne"},     {0xc0, 0xac4, "AmpereOne AC04"}, {0xc0, 0xac5, "AmpereOne AC04_1"},
    // QEMU's -cpu max: implementer 0 ("reserved for software use"), part 'Q'.
    {0x00, 0x051, "QEMU max"},
};

std::string hex(unsigned value, int digits) {
  std::ostringstream out;
  out << "0x" << std::hex;
  out.width(digits);
  out.fill('0');
  out << value;
  return out.str();
}

std::string strip_blanks(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<unsigned long long> parse_number(const std::string& text) {
  const std::string value = strip_blanks(text);
  if (value.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const unsigned long long number = std::stoull(value, &used, 0);  // 0x.. or decimal
    if (used != value.size()) return std::nullopt;
    return number;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string lower_dashed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isspace(u) ? '-' : static_cast<char>(std::tolower(u));
  }
  return out;
}

}  // namespace

Midr Midr::from_register(std::uint64_t value) {
  Midr midr;
  midr.implementer = (value >> 24) & 0xff;
  midr.variant = (value >> 20) & 0xf;
  midr.architecture = (value >> 16) & 0xf;
  midr.part = (value >> 4) & 0xfff;
  midr.revision = value & 0xf;
  return midr;
}

std::uint32_t Midr::value() const {
  return std::uint32_t(implementer) << 24 | std::uint32_t(variant) << 20 | std::uint32_t(architecture) << 16 |
         std::uint32_t(part) << 4 | std::uint32_t(revision);
}

std::string implementer_name(unsigned implementer) {
  switch (implementer) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0x6d: return "Microsoft";
    case 0xc0: return "Ampere";
    default: return "implementer " + hex(implementer, 2);
  }
}

std::string core_name(const Midr& midr) {
  for (const auto& known : kKnownParts) {
    if (known.implementer == midr.implementer && known.part == midr.part) return known.name;
  }
  return implementer_name(midr.implementer) + " part " + hex(midr.part, 3);
}

std::string core_name_with_revision(const Midr& midr) {
  return core_name(midr) + " r" + std::to_string(midr.variant) + "p" + std::to_string(midr.revision);
}

std::vector<Midr> midrs_from_cpuinfo(const std::string& cpuinfo) {
  // One block per processor, blank-line separated; a block counts once it
  // has both implementer and part.
  std::vector<Midr> out;
  Midr current;
  bool have_implementer = false, have_part = false;
  auto finish_block = [&] {
    if (have_implementer && have_part) out.push_back(current);
    current = Midr{};
    have_implementer = have_part = false;
  };
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    if (strip_blanks(line).empty()) {
      finish_block();
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = strip_blanks(line.substr(0, colon));
    const auto value = parse_number(line.substr(colon + 1));
    if (key == "processor" && (have_implementer || have_part)) finish_block();
    if (!value) continue;
    if (key == "CPU implementer") {
      current.implementer = unsigned(*value);
      have_implementer = true;
    } else if (key == "CPU part") {
      current.part = unsigned(*value);
      have_part = true;
    } else if (key == "CPU variant") {
      current.variant = unsigned(*value);
    } else if (key == "CPU revision") {
      current.revision = unsigned(*value);
    } else if (key == "CPU architecture") {
      // cpuinfo prints 8 for every ARMv8+ core; MIDR's field is 0xf then.
      current.architecture = 0xf;
    }
  }
  finish_block();
  return out;
}

std::optional<Midr> midr_from_sysfs_text(const std::string& text) {
  const std::string value = strip_blanks(text);
  if (value.rfind("0x", 0) != 0) return std::nullopt;
  const auto number = parse_number(value);
  if (!number) return std::nullopt;
  return Midr::from_register(*number);
}

std::string describe_cores(const std::vector<Midr>& midrs) {
  std::vector<std::pair<Midr, int>> kinds;
  for (const auto& midr : midrs) {
    const auto same = std::find_if(kinds.begin(), kinds.end(), [&](const auto& kind) {
      return kind.first.same_core(midr) && kind.first.variant == midr.variant && kind.first.revision == midr.revision;
    });
    if (same == kinds.end()) {
      kinds.emplace_back(midr, 1);
    } else {
      ++same->second;
    }
  }
  if (kinds.size() == 1) return core_name_with_revision(kinds.front().first);
  std::string out;
  for (const auto& [midr, count] : kinds) {
    out += (out.empty() ? "" : " + ") + std::to_string(count) + "x " + core_name_with_revision(midr);
  }
  return out;
}

std::string sut_class_name(const std::string& arch, const std::string& core, int sockets, long cpus,
                           const std::string& sys_vendor, const std::string& product_name,
                           std::int64_t memory_gib) {
  if (strip_blanks(sys_vendor) == "Amazon EC2" && !strip_blanks(product_name).empty()) {
    return "aws-" + lower_dashed(strip_blanks(product_name));
  }
  std::string name = lower_dashed(strip_blanks(arch));
  const auto append = [&name](const std::string& part) {
    name += '-';
    name += part;
  };
  if (!strip_blanks(core).empty()) append(lower_dashed(strip_blanks(core)));
  if (sockets > 0) append(std::to_string(sockets) + 's');
  if (cpus > 0) append(std::to_string(cpus) + 'c');
  if (memory_gib > 0) append(std::to_string(memory_gib) + 'g');
  return name;
}

}  // namespace kbench::sysinfo
