#pragma once
// SUT connection methods (sut.connection.method): each is one file in
// src/sut/ that registers itself with KBENCH_SUT_METHOD, declaring its name,
// its parameters, what it can do and how to connect. Plans, the runner, the
// fleet, bisect and the kernel build ask a method's capabilities instead of
// its name, so a new method is its file alone.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.h"
#include "common/spoken_list.h"
#include "sut/connection.h"

namespace kbench::sut {

// What a plan's SUT is when it names no connection.
inline constexpr const char* kDefaultMethod = "local";

enum class Capability : std::uint32_t {
  // The agent runs on the machine kbench runs on: it measures the running
  // kernel (whose cmdline a swprofile must match), sysctls are set here, a
  // boot restarts kbench itself, and several such SUTs share one machine.
  OnController = 1u << 0,
  // Boots each swprofile's kernel itself (one connection per swprofile); its
  // guest has only what kbench puts there.
  BootsKernel = 1u << 1,
  // Has a shell on the SUT (RemoteShell) through which sut.boot installs
  // kernels and kexecs or reboots into them.
  Deploy = 1u << 2,
  // A swprofile's sysctl settings take effect (directly, or on each boot).
  Sysctls = 1u << 3,
  // A built kernel's modules are installed with it.
  Modules = 1u << 4,
  // The agent runs under a swprofile's wrapper command.
  Wrapper = 1u << 5,
  // The SUT is a VM this machine runs as a child of kbench: it runs on this
  // machine's CPUs, with the CPU affinity of the kbench that starts it.
  GuestOnController = 1u << 6,
  // Boots a swprofile's kernel with the swprofile's flattened device tree
  // (kernel: {image, dtb}) instead of the one the board or firmware gives.
  DeviceTree = 1u << 7,
};

class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr Capabilities(std::initializer_list<Capability> list) {
    for (const Capability c : list) bits_ |= static_cast<std::uint32_t>(c);
  }
  constexpr bool has(Capability c) const { return (bits_ & static_cast<std::uint32_t>(c)) != 0; }

 private:
  std::uint32_t bits_ = 0;
};

// What a method that boots a swprofile's kernel itself gets of the swprofile.
struct SwprofileKernel {
  std::string name;  // for error messages
  std::string image;
  std::string modules;  // a tarball of lib/modules/RELEASE/, put into the boot's initramfs
  std::string deb;      // set: a kernel only a deployed SUT can install (plan exec unpacks its image first)
  std::vector<std::string> cmdline;
  std::string initrd;
  std::string dtb;  // a flattened device tree the kernel boots with instead of the board's
};

// A parameter a plan gives the wrong way, found when the plan is read:
// reported as "<at>.connection.params.<key>: expected <expected>".
struct ParamProblem {
  std::string key;
  std::string expected;
};

struct Method {
  std::string name;
  std::string summary;  // one line: what the SUT is
  std::vector<ParamSpec> params;
  Capabilities capabilities;
  // Called with the plan's params and, for BootsKernel methods, the
  // swprofile (nullptr otherwise). Throws InputError for bad params,
  // RunError when the agent (find_agent_binary) cannot be found.
  std::function<std::unique_ptr<Connection>(const Params& params, const SwprofileKernel* swprofile)> make;
  // Optional: what the plan parser refuses early, with the plan's line.
  std::function<std::optional<ParamProblem>(const Params& params)> check_params{};
  // Optional: what `plan check` asks the service behind the SUT, when it
  // answers (a LAVA server: that the device type exists and the token is
  // accepted). A problem is bad input; the note is one line for the user
  // either way (what was found, or that the service was not reached).
  struct OnlineCheck {
    std::optional<ParamProblem> problem;
    std::string note;
  };
  std::function<OnlineCheck(const Params& params)> check_online{};

  bool has(Capability c) const { return capabilities.has(c); }
  // "host, user, port": the declared parameters' names in their order.
  std::string param_names() const;
  // The first of `given` that is not declared, not of its declared kind, or
  // refused by check_params; nullopt when all are fine.
  std::optional<ParamProblem> problem_with(const Params& given) const;
  // Throws InputError "sut.connection.params.<key>: expected <expected>"
  // for problem_with's problem.
  void require_valid(const Params& given) const;
};

class MethodRegistry {
 public:
  static MethodRegistry& instance();
  // Registering a name twice is a programming error: std::logic_error.
  void add(Method method);
  // nullptr when unknown.
  const Method* find(std::string_view name) const;
  // Throws InputError "sut.connection.method: expected local, qemu or ssh, got 'NAME'".
  const Method& get(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  // The names of the methods `keep` accepts, sorted.
  std::vector<std::string> names_where(const std::function<bool(const Method&)>& keep) const;
  std::vector<std::string> names_with(Capability c) const;

 private:
  std::vector<Method> methods_;  // sorted by name
};

// The connection of method `method` (InputError naming the registered ones
// when unknown). `swprofile`: the swprofile to
// boot, for BootsKernel methods (one connection per swprofile); nullptr
// otherwise.
std::unique_ptr<Connection> make_connection(std::string_view method, const Params& params,
                                            const SwprofileKernel* swprofile);

struct MethodRegistrar {
  explicit MethodRegistrar(Method method) { MethodRegistry::instance().add(std::move(method)); }
};

}  // namespace kbench::sut

#define KBENCH_SUT_CONCAT_INNER(a, b) a##b
#define KBENCH_SUT_CONCAT(a, b) KBENCH_SUT_CONCAT_INNER(a, b)
// KBENCH_SUT_METHOD({.name = "ssh", .params = {...}, .capabilities = {...}, .make = ...});
// Variadic: the designated initialiser's commas are not the macro's.
// __COUNTER__, not __LINE__: a unity build compiles several methods' files
// as one translation unit.
#define KBENCH_SUT_METHOD(...)                                                                    \
  static const ::kbench::sut::MethodRegistrar KBENCH_SUT_CONCAT(kbench_sut_method_, __COUNTER__)( \
      ::kbench::sut::Method __VA_ARGS__)
