#pragma once
// The pieces of the lava connection (src/sut/lava.cpp) that need no server,
// declared for its tests.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sut/initramfs.h"

namespace kbench::sut::lava {

// How a job boots its device: LAVA's QEMU device types start QEMU with the
// kernel and the initramfs (deploy to tmpfs); a board's firmware fetches
// them by TFTP on LAVA's command, as KernelCI's and Linaro's boards do
// (deploy to tftp, boot by U-Boot with its device type's ramdisk commands).
enum class BootMethod { Qemu, UBoot };

// One LAVA job: deploy a kernel and kbench's initramfs, boot them, wait for
// /init's closing prompt.
struct JobSpec {
  BootMethod boot = BootMethod::Qemu;
  std::string job_name;
  std::string device_type;
  std::vector<std::string> tags;
  std::vector<std::string> extra_options;  // QEMU's, through the job's context
  std::string priority = "medium";
  std::string arch = "x86_64";  // uname -m of the guest
  std::string kernel_url;
  // U-Boot: how the firmware boots the kernel (LAVA's image, zimage or
  // uimage: booti, bootz, bootm).
  std::string kernel_type = "image";
  // U-Boot: an image with U-Boot's header (uboot_ramdisk_image), which the
  // job passes through as it is.
  std::string initramfs_url;
  std::string dtb_url;  // "": the device's own device tree
  std::vector<std::string> cmdline;  // the swprofile's
  std::chrono::seconds job_timeout{1800};
  std::chrono::seconds deploy_timeout{300};
};

// What /init prints when it is done: the prompt LAVA's boot action waits for.
inline constexpr const char* kDonePrompt = "kbench-lava-done# ";

std::string job_yaml(const JobSpec& spec);

// What a LAVA job log (api/v0.2/jobs/ID/logs/, one YAML flow mapping per
// line) holds for kbench: the frames among the target's lines, and LAVA's
// own error messages.
struct LogContents {
  std::vector<ResultFrame> frames;
  std::vector<std::string> errors;  // LAVA's error and exception lines
  std::string last_console_line;     // of those that hold no frame
  // How LAVA classed the job's failure (lava-run's error_type: Infrastructure,
  // Job, Test, Bug, Configuration, Canceled, LAVATimeout, ...); empty when the
  // job passed or the log does not say.
  std::string job_error_type;
  std::size_t lines = 0;
};
LogContents read_job_log(const std::string& log_yaml);

// What api/v0.2/devices/?device_type=X says of a device type's devices, in
// a few words: how many, how many could take a job now, each one's state
// and health ("2 devices, 0 Idle and Good: a Idle/Maintenance, b Running/Good").
std::string describe_devices(const std::string& devices_json);

// Why no device of a type can run a job now, as LAVA's scheduler decides it
// (a device whose health is Good or Unknown, on a worker Online and Active,
// whatever it runs at the moment): "q1 Maintenance, q2 Good on w1
// Offline/Active". nullopt when one can, or when the listings do not show
// every device (a later page, a reply kbench cannot read): only a device
// type seen whole to be unable is reported. `workers_json`: the reply of
// api/v0.2/workers/; unreadable, the devices' health alone decides.
// `wanted_tags`: the tags the job asks for, which LAVA's scheduler wants a
// device to have every one of; `tags_json`, the reply of api/v0.2/tags/,
// names the ids a device lists. Unreadable, tags are not held against a
// device.
std::optional<std::string> why_no_device_can_run(const std::string& devices_json, const std::string& workers_json,
                                                 const std::vector<std::string>& wanted_tags = {},
                                                 const std::string& tags_json = "");

// FNV-1a, 64 bits: a digest that stays the same from one kbench build and
// run to the next (a resumed plan's job names), unlike std::hash.
std::uint64_t fnv1a64(const std::string& text);

// A YAML double-quoted scalar's text (without its quotes) unescaped.
std::string yaml_unquote(const std::string& text);

}  // namespace kbench::sut::lava
