#pragma once
// arm64 CPU identity: the Main ID Register (MIDR_EL1) of each core and the
// readable core name it stands for. /proc/cpuinfo on arm64 names no model, only
// the register's fields ("CPU implementer : 0x41", "CPU part : 0xd40"), and a
// kernel change's effect depends on exactly this core (errata workarounds,
// Spectre mitigations are chosen by MIDR).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench::sysinfo {

struct Midr {
  unsigned implementer = 0;  // bits 31:24
  unsigned variant = 0;      // bits 23:20, the major revision ("r1")
  unsigned architecture = 0; // bits 19:16
  unsigned part = 0;         // bits 15:4
  unsigned revision = 0;     // bits 3:0, the minor revision ("p1")

  static Midr from_register(std::uint64_t value);
  std::uint32_t value() const;
  bool same_core(const Midr& other) const { return implementer == other.implementer && part == other.part; }
};

// "ARM", "Ampere", "Apple", "Qualcomm", ...; "implementer 0x.." for the rest.
std::string implementer_name(unsigned implementer);

// "Neoverse-V1", "Cortex-A72", "AmpereOne", "QEMU max"; for a part not in
// the table, the implementer's name and the part number ("ARM part 0xd99").
std::string core_name(const Midr& midr);

// "Neoverse-V1 r1p1": the core name and its revision, as Arm's manuals write it.
std::string core_name_with_revision(const Midr& midr);

// Every processor of a /proc/cpuinfo text, in order; empty when the text
// carries no arm64 "CPU implementer"/"CPU part" fields (x86, qemu-user).
std::vector<Midr> midrs_from_cpuinfo(const std::string& cpuinfo);

// sysfs' midr_el1 ("0x00000000410fd083"); nullopt when it is no hex number.
std::optional<Midr> midr_from_sysfs_text(const std::string& text);

// The cores of a machine, once each in order of first appearance, with how
// many processors have them: "Neoverse-V1 r1p1" for one kind,
// "4x Cortex-A76 r4p0 + 4x Cortex-A55 r2p0" for a big.LITTLE machine.
std::string describe_cores(const std::vector<Midr>& midrs);

// The SUT class name of the seed report's tables ("Results for SUT Class
// aws-m7g.metal:"): the cloud's instance type where the firmware names one
// (sys_vendor "Amazon EC2" and product_name "m7g.metal" -> "aws-m7g.metal"),
// else <arch>-<core>-<sockets>s-<cpus>c-<memory>g ("aarch64-ampereone-1s-192c-502g"),
// the seed's cesw-aarch64-ampereone-1s-a192-32x without the lab's prefix and
// SKU, which no file names. Memory is MemTotal in whole GiB as the SUT's
// identity rounds it (so a class never splits where a SUT does not). Lower
// case, spaces as '-'. sockets, cpus or memory_gib <= 0: unknown, left out.
std::string sut_class_name(const std::string& arch, const std::string& core, int sockets, long cpus,
                           const std::string& sys_vendor, const std::string& product_name,
                           std::int64_t memory_gib = 0);

}  // namespace kbench::sysinfo
