// arm64 support that runs on any build machine: MIDR decoding of real
// /proc/cpuinfo texts, the SUT class name, the timer-cost statistic on a
// coarse counter, and the cross-built aarch64 agent beside the host's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/elf_machine.h"
#include "sut/connection.h"
#include "sysinfo/arm64_cpu.h"
#include "timing/clock.h"
#include "support/test_paths.h"

namespace {

using kbench::sysinfo::Midr;

// AWS Graviton3 (m7g): Neoverse-V1 r1p1; BogoMIPS is twice the 1.05 GHz counter.
const char* const kGraviton3Cpuinfo = R"(processor	: 0
BogoMIPS	: 2100.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0xd40
CPU revision	: 1

processor	: 1
BogoMIPS	: 2100.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0xd40
CPU revision	: 1

)";

// AmpereOne: Ampere's own implementer code and part space; 25 MHz counter.
const char* const kAmpereOneCpuinfo = R"(processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp flagm2 frint i8mm bf16 rng bti ecv
CPU implementer	: 0xc0
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xac3
CPU revision	: 1
)";

// Raspberry Pi 4: Cortex-A72 r0p3, 54 MHz counter, board lines after the CPUs.
const char* const kRaspberryPi4Cpuinfo = R"(processor	: 0
BogoMIPS	: 108.00
Features	: fp asimd evtstrm crc32 cpuid
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xd08
CPU revision	: 3

processor	: 1
BogoMIPS	: 108.00
Features	: fp asimd evtstrm crc32 cpuid
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x0
CPU part	: 0xd08
CPU revision	: 3

Hardware	: BCM2835
Revision	: c03111
Serial		: 10000000a1b2c3d4
Model		: Raspberry Pi 4 Model B Rev 1.1
)";

TEST(Arm64Midr, Graviton3IsNeoverseV1) {
  const auto midrs = kbench::sysinfo::midrs_from_cpuinfo(kGraviton3Cpuinfo);
  ASSERT_EQ(midrs.size(), 2u);
  EXPECT_EQ(midrs[0].implementer, 0x41u);
  EXPECT_EQ(midrs[0].part, 0xd40u);
  EXPECT_EQ(kbench::sysinfo::core_name(midrs[0]), "Neoverse-V1");
  EXPECT_EQ(kbench::sysinfo::implementer_name(midrs[0].implementer), "ARM");
  // The register value the fields make up, as sysfs' midr_el1 shows it.
  EXPECT_EQ(midrs[0].value(), 0x411fd401u);
  EXPECT_EQ(kbench::sysinfo::describe_cores(midrs), "Neoverse-V1 r1p1");
}

TEST(Arm64Midr, AmpereOneHasAmperesImplementer) {
  const auto midrs = kbench::sysinfo::midrs_from_cpuinfo(kAmpereOneCpuinfo);
  ASSERT_EQ(midrs.size(), 1u);
  EXPECT_EQ(kbench::sysinfo::implementer_name(midrs[0].implementer), "Ampere");
  EXPECT_EQ(kbench::sysinfo::describe_cores(midrs), "AmpereOne r0p1");
}

TEST(Arm64Midr, RaspberryPi4IsCortexA72AndBoardLinesAreNoProcessor) {
  const auto midrs = kbench::sysinfo::midrs_from_cpuinfo(kRaspberryPi4Cpuinfo);
  ASSERT_EQ(midrs.size(), 2u);
  EXPECT_EQ(kbench::sysinfo::describe_cores(midrs), "Cortex-A72 r0p3");
}

TEST(Arm64Midr, X86CpuinfoHasNone) {
  EXPECT_TRUE(kbench::sysinfo::midrs_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                                  "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\n")
                  .empty());
}

TEST(Arm64Midr, SysfsRegisterTextAndRoundTrip) {
  // Cortex-A53 r0p4 as /sys/devices/system/cpu/cpu0/regs/identification/midr_el1 prints it.
  const auto midr = kbench::sysinfo::midr_from_sysfs_text("0x00000000410fd034\n");
  ASSERT_TRUE(midr.has_value());
  EXPECT_EQ(kbench::sysinfo::core_name_with_revision(*midr), "Cortex-A53 r0p4");
  EXPECT_EQ(Midr::from_register(midr->value()).value(), midr->value());
  EXPECT_FALSE(kbench::sysinfo::midr_from_sysfs_text("garbage").has_value());
  EXPECT_FALSE(kbench::sysinfo::midr_from_sysfs_text("").has_value());
}

TEST(Arm64Midr, CommonCoresAndUnknownParts) {
  const auto name = [](unsigned implementer, unsigned part) {
    Midr midr;
    midr.implementer = implementer;
    midr.part = part;
    return kbench::sysinfo::core_name(midr);
  };
  EXPECT_EQ(name(0x41, 0xd0c), "Neoverse-N1");  // Ampere Altra, Graviton2
  EXPECT_EQ(name(0x41, 0xd49), "Neoverse-N2");
  EXPECT_EQ(name(0x41, 0xd4f), "Neoverse-V2");  // Graviton4, Grace
  EXPECT_EQ(name(0x41, 0xd84), "Neoverse-V3");
  EXPECT_EQ(name(0x41, 0xd4a), "Neoverse-E1");
  EXPECT_EQ(name(0x41, 0xd05), "Cortex-A55");
  EXPECT_EQ(name(0x41, 0xd44), "Cortex-X1");
  EXPECT_EQ(name(0x00, 0x051), "QEMU max");  // qemu -cpu max
  EXPECT_EQ(name(0x61, 0x023), "M1 Firestorm");
  EXPECT_EQ(name(0x51, 0x001), "Oryon");
  // A part the table does not know keeps its numbers, readable.
  EXPECT_EQ(name(0x41, 0xd99), "ARM part 0xd99");
  EXPECT_EQ(name(0x99, 0x123), "implementer 0x99 part 0x123");
}

TEST(Arm64Midr, BigLittleMachinesListEachCoreKind) {
  std::vector<Midr> midrs;
  for (int i = 0; i < 4; ++i) midrs.push_back(Midr::from_register(0x412fd050));  // Cortex-A55 r2p0
  for (int i = 0; i < 4; ++i) midrs.push_back(Midr::from_register(0x414fd0b0));  // Cortex-A76 r4p0
  EXPECT_EQ(kbench::sysinfo::describe_cores(midrs), "4x Cortex-A55 r2p0 + 4x Cortex-A76 r4p0");
}

TEST(SutClass, CloudInstanceTypeAsTheSeedReportNamesIt) {
  EXPECT_EQ(kbench::sysinfo::sut_class_name("aarch64", "Neoverse-V1", 1, 64, "Amazon EC2", "m7g.metal"),
            "aws-m7g.metal");
}

TEST(SutClass, MemoryInWholeGibJoinsTheNameWhenKnown) {
  EXPECT_EQ(kbench::sysinfo::sut_class_name("aarch64", "Neoverse-N1", 1, 64, "", "", 251),
            "aarch64-neoverse-n1-1s-64c-251g");
  EXPECT_EQ(kbench::sysinfo::sut_class_name("aarch64", "Neoverse-V1", 1, 64, "Amazon EC2", "m7g.metal", 251),
            "aws-m7g.metal")
      << "an instance type already says how much memory";
}

TEST(SutClass, OtherMachinesByArchCoreSocketsAndCpus) {
  EXPECT_EQ(kbench::sysinfo::sut_class_name("aarch64", "AmpereOne", 1, 192, "Ampere", "Mt.Mitchell"),
            "aarch64-ampereone-1s-192c");
  EXPECT_EQ(kbench::sysinfo::sut_class_name("aarch64", "Cortex-A72", 0, 4, "", ""), "aarch64-cortex-a72-4c");
  EXPECT_EQ(kbench::sysinfo::sut_class_name("x86_64", "Intel Xeon Platinum 8375C", 2, 128, "", ""),
            "x86_64-intel-xeon-platinum-8375c-2s-128c");
}

// The histogram measure_timer_overhead keeps: brackets of 0..4095 ticks.
std::vector<std::uint64_t> bracket_counts(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> ticks_times) {
  std::vector<std::uint64_t> counts(4096, 0);
  for (const auto& [ticks, times] : ticks_times) counts.at(ticks) = times;
  return counts;
}

TEST(TimerCost, FineCounterUsesTheMode) {
  // A TSC: brackets of 30-34 ticks, a few disturbed ones far out.
  const auto cost =
      kbench::timing::summarize_timer_brackets(bracket_counts({{30, 10}, {32, 900}, {34, 80}, {3000, 10}}), 30, 1000);
  EXPECT_STREQ(cost.statistic, "mode");
  EXPECT_EQ(cost.ticks, 32u);
  EXPECT_DOUBLE_EQ(cost.cost_ticks, 32.0);
}

TEST(TimerCost, CoarseCounterUsesTheMeanOfUndisturbedBrackets) {
  // A 25 MHz cntvct_el0 and a bracket of about 0.3 ticks: most read 0, some 1.
  // The mode (0) would subtract nothing; the mean is the cost. The interrupted
  // brackets (40 ticks) stay out of it.
  const auto cost =
      kbench::timing::summarize_timer_brackets(bracket_counts({{0, 700}, {1, 300}, {40, 5}}), 0, 1005);
  EXPECT_STREQ(cost.statistic, "mean");
  EXPECT_EQ(cost.ticks, 0u);
  EXPECT_DOUBLE_EQ(cost.cost_ticks, 0.3);
}

TEST(TimerCost, SteppedCounterKeepsTheBracketsThatStraddleAStep) {
  // qemu-user's cntvct_el0: 62.5 MHz, but advancing 62 or 63 ticks each
  // microsecond. A 50 ns bracket reads 0, or one step when it straddles a
  // microsecond boundary (5% of them); a preempted one reads far more.
  const auto cost = kbench::timing::summarize_timer_brackets(
      bracket_counts({{0, 950}, {62, 30}, {63, 20}, {4000, 3}}), 0, 1003);
  EXPECT_STREQ(cost.statistic, "mean");
  EXPECT_DOUBLE_EQ(cost.cost_ticks, (62.0 * 30 + 63.0 * 20) / 1000);
}

TEST(TimerCost, NoCountedBracketFallsBackToTheMinimum) {
  const auto cost = kbench::timing::summarize_timer_brackets(std::vector<std::uint64_t>(4096, 0), 5000, 10);
  EXPECT_DOUBLE_EQ(cost.cost_ticks, 5000.0);
}

// The plain build on x86-64 with g++-aarch64-linux-gnu puts the aarch64
// agent and its exec helper beside the host's, where the controller finds it
// for an arm64 SUT.
TEST(CrossAgent, TheAarch64AgentIsBesideTheHostAgentAndChosenForArm64) {
  const std::filesystem::path dir = KBENCH_BINARY_DIR;
  if (!std::filesystem::exists(dir / "kbench-agent-aarch64")) {
    GTEST_SKIP() << "no " << (dir / "kbench-agent-aarch64") << " (aarch64-linux-gnu-g++ not installed)";
  }
  EXPECT_EQ(kbench::elf_machine((dir / "kbench-agent-aarch64").string()), "aarch64");
  EXPECT_EQ(kbench::elf_machine((dir / "kbench-exec-helper-aarch64").string()), "aarch64");
  EXPECT_EQ(kbench::sut::agent_for_machine("arm64", (dir / "kbench-agent").string()),
            (dir / "kbench-agent-aarch64").string());
}

}  // namespace
