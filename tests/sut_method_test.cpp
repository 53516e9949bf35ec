// The registry of SUT connection methods: which are registered, what each
// can do, and the errors that name them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"
#include "plan/plan.h"
#include "support/error_text.h"
#include "support/scoped_env.h"
#include "sut/method.h"
#include "support/test_paths.h"

namespace kbench::sut {
namespace {

using ::testing::ElementsAre;
using kbench::testing::error_of;

std::vector<std::string> capabilities_of(const std::string& name) {
  const Method& method = MethodRegistry::instance().get(name);
  std::vector<std::string> out;
  const std::vector<std::pair<Capability, std::string>> all = {
      {Capability::OnController, "on-controller"}, {Capability::BootsKernel, "boots-kernel"},
      {Capability::Deploy, "deploy"},              {Capability::Sysctls, "sysctls"},
      {Capability::Modules, "modules"},            {Capability::Wrapper, "wrapper"}};
  for (const auto& [capability, word] : all) {
    if (method.has(capability)) out.push_back(word);
  }
  return out;
}

// The agent the local and ssh factories look for (a test binary has no
// kbench beside it), for the returned object's scope only: the other tests
// share the process.
kbench::testing::ScopedEnv point_at_agent() {
  return {"KBENCH_AGENT", (std::string(KBENCH_BINARY_DIR) + "/kbench-agent").c_str()};
}

TEST(SutMethods, EveryMethodFileIsRegistered) {
  EXPECT_THAT(MethodRegistry::instance().names(), ElementsAre("lava", "local", "qemu", "ssh"));
  EXPECT_NE(MethodRegistry::instance().find(kDefaultMethod), nullptr);
}

TEST(SutMethods, DeclareWhatTheyCanDo) {
  EXPECT_THAT(capabilities_of("local"), ElementsAre("on-controller", "deploy", "sysctls", "modules", "wrapper"));
  EXPECT_THAT(capabilities_of("ssh"), ElementsAre("deploy", "sysctls", "modules", "wrapper"));
  EXPECT_THAT(capabilities_of("qemu"), ElementsAre("boots-kernel"));
  EXPECT_THAT(capabilities_of("lava"), ElementsAre("boots-kernel"));
  EXPECT_THAT(MethodRegistry::instance().names_with(Capability::Deploy), ElementsAre("local", "ssh"));
}

TEST(SutMethods, DeclareTheirParameters) {
  EXPECT_EQ(MethodRegistry::instance().get("local").param_names(), "");
  EXPECT_EQ(MethodRegistry::instance().get("ssh").param_names(),
            "host, user, port, keyfile, known_hosts, strict_host_key_checking, connect_timeout");
  EXPECT_EQ(MethodRegistry::instance().get("qemu").param_names(),
            "arch, memory, cpus, accel, icount, cpu, qemu, busybox, boot_timeout, kvm_probe_timeout");
}

TEST(SutMethods, AnUnknownNameIsBadInputNamingTheRegisteredOnes) {
  EXPECT_EQ(MethodRegistry::instance().find("telnet"), nullptr);
  EXPECT_EQ(error_of([] { MethodRegistry::instance().get("telnet"); }),
            "sut.connection.method: expected lava, local, qemu or ssh, got 'telnet'");
  EXPECT_EQ(error_of([] { make_connection("telnet", {}, nullptr); }),
            "sut.connection.method: expected lava, local, qemu or ssh, got 'telnet'");
  EXPECT_EQ(error_of([] { plan::parse_plan("sut: {connection: {method: telnet}}\nbenchmarks: [a/b]\n", "p.yaml"); }),
            "p.yaml:1: sut.connection.method: expected lava, local, qemu or ssh, got 'telnet'");
}

TEST(SutMethods, AnUnknownParameterIsNamedWithTheDeclaredOnes) {
  const auto agent = point_at_agent();
  EXPECT_EQ(error_of([] { make_connection("ssh", {{"host", "h"}, {"bogus", "1"}}, nullptr); }),
            "sut.connection.params.bogus: expected a parameter of the ssh method (host, user, port, keyfile, "
            "known_hosts, strict_host_key_checking, connect_timeout), got 'bogus'");
  const SwprofileKernel kernel{"a", "/boot/vmlinuz", "", "", {}, "", ""};
  EXPECT_EQ(error_of([&] { make_connection("qemu", {{"bogus", "1"}}, &kernel); }),
            "sut.connection.params.bogus: expected a parameter of the qemu method (arch, memory, cpus, accel, icount, "
            "cpu, qemu, busybox, boot_timeout, kvm_probe_timeout), got 'bogus'");
  // The plan reader and the factory say the same thing of the same parameter.
  EXPECT_EQ(error_of([] {
              plan::parse_plan("sut: {connection: {method: ssh, params: {host: h, bogus: 1}}}\nbenchmarks: [a/b]\n",
                               "p.yaml");
            }),
            "p.yaml:1: sut.connection.params.bogus: expected a parameter of the ssh method (host, user, port, keyfile, "
            "known_hosts, strict_host_key_checking, connect_timeout), got 'bogus'");
}

TEST(SutMethods, DeployableMethodsHaveAShellOnTheSut) {
  const auto agent = point_at_agent();
  auto local = make_connection("local", {}, nullptr);
  EXPECT_NE(remote_shell(*local), nullptr);
  EXPECT_EQ(local->describe(), "local");
  // Nothing connects before the first agent starts.
  auto ssh = make_connection("ssh", {{"host", "sut.invalid"}}, nullptr);
  EXPECT_NE(remote_shell(*ssh), nullptr);
}

TEST(SutMethods, AKernelBootingMethodNeedsTheSwprofilesImage) {
  EXPECT_EQ(error_of([] { make_connection("qemu", {}, nullptr); }),
            "swprofiles[].kernel: expected a kernel image to boot with the qemu connection (kernel: PATH, or "
            "{image: PATH, modules: TARBALL})");
  const SwprofileKernel deb{"a", "", "", "linux.deb", {}, "", ""};
  EXPECT_THAT(error_of([&] { make_connection("qemu", {}, &deb); }), ::testing::StartsWith("swprofiles[a].kernel:"));
}

TEST(SutMethods, APlanWithoutSutUsesTheDefaultMethod) {
  const plan::Plan plan = plan::parse_plan("benchmarks: [a/b]\n", "p.yaml");
  EXPECT_EQ(plan::sut_method(plan).name, kDefaultMethod);
  EXPECT_TRUE(plan::sut_method(plan).has(Capability::OnController));
}

TEST(SutMethods, ThePlanAsksAMethodToCheckItsParameters) {
  EXPECT_EQ(error_of([] {
              plan::parse_plan("sut: {connection: {method: ssh, params: {host: -oProxyCommand=x}}}\nbenchmarks: [a/b]\n",
                               "p.yaml");
            }),
            "p.yaml:1: sut.connection.params.host: expected a host name, got '-oProxyCommand=x'");
}

TEST(SutMethods, ThePlanHoldsEveryParameterToTheMethodsDeclaration) {
  auto plan_error = [](const std::string& method, const std::string& params) {
    return error_of([&] {
      plan::parse_plan("sut: {connection: {method: " + method + ", params: {" + params + "}}}\nbenchmarks: [a/b]\n",
                       "p.yaml");
    });
  };
  EXPECT_EQ(plan_error("qemu", "cpus: abc"),
            "p.yaml:1: sut.connection.params.cpus: expected an integer from 1 to 1000000000, got 'abc'");
  EXPECT_EQ(plan_error("qemu", "accel: fast"),
            "p.yaml:1: sut.connection.params.accel: expected one of auto, kvm, tcg, tcg-single, got 'fast'");
  EXPECT_EQ(plan_error("qemu", "cpuz: 2"),
            "p.yaml:1: sut.connection.params.cpuz: expected a parameter of the qemu method (arch, memory, cpus, "
            "accel, icount, cpu, qemu, busybox, boot_timeout, kvm_probe_timeout), got 'cpuz'");
  EXPECT_EQ(plan_error("local", "x: 1"),
            "p.yaml:1: sut.connection.params.x: expected no parameters (the local method takes none), got 'x'");
  EXPECT_EQ(plan_error("qemu", "cpus: 2, accel: tcg, memory: 512M"), "");
}

TEST(MethodRegistry, KeepsNamesSortedAndRefusesADuplicate) {
  MethodRegistry registry;
  const auto method = [](std::string name, Capabilities capabilities) {
    return Method{.name = std::move(name), .summary = "", .params = {}, .capabilities = capabilities, .make = {}};
  };
  registry.add(method("zeta", {Capability::Sysctls}));
  registry.add(method("alpha", {Capability::Sysctls, Capability::Wrapper}));
  registry.add(method("mid", {}));
  EXPECT_THAT(registry.names(), ElementsAre("alpha", "mid", "zeta"));
  EXPECT_THAT(registry.names_with(Capability::Sysctls), ElementsAre("alpha", "zeta"));
  EXPECT_THROW(registry.add(method("mid", {})), std::logic_error);
}

}  // namespace
}  // namespace kbench::sut
