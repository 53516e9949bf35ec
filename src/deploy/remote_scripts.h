#pragma once
// The POSIX sh that runs on an ssh SUT to install and boot kernels, kept in
// assets/deploy/ (where `make test` checks their syntax). Each is
// run as `sh -c SCRIPT kbench ARGS...` through kAsRoot. Exit status 3 means
// the SUT cannot do what was asked (a missing tool, a clash): its stderr's
// last line says why, for the user.
#include "assets/deploy/activate_function.sh.h"
#include "assets/deploy/as_root.sh.h"
#include "assets/deploy/boot.sh.h"
#include "assets/deploy/cleanup.sh.h"
#include "assets/deploy/identify.sh.h"
#include "assets/deploy/probe.sh.h"
#include "assets/deploy/receive_file.sh.h"
#include "assets/deploy/settle.sh.h"
#include "assets/deploy/stage_state.sh.h"
#include "assets/deploy/sysctl.sh.h"
#include "assets/deploy/unpack.sh.h"
#include "assets/deploy/unpack_finish.sh.h"

namespace kbench::deploy::scripts {

// Runs the script in $1 with the remaining arguments as root: directly, or
// through sudo -n (never prompts) for a non-root ssh user.
inline constexpr const char* kAsRoot = assets::deploy::as_root_sh;

// Where the SUT keeps what kbench staged: one directory per kernel content.
inline constexpr const char* kStageRoot = "/var/lib/kbench/kernels";

// What the SUT runs now and what it has: key=value lines.
inline constexpr const char* kProbe = assets::deploy::probe_sh;

// $1 stage dir, $2 file name: stdin into the stage dir, then its sha256.
// A stage dir with "ready" in it is complete and is reused as it is.
inline constexpr const char* kReceiveFile = assets::deploy::receive_file_sh;

// $1 stage dir: prints "ready RELEASE" when staged before, else "missing".
inline constexpr const char* kStageState = assets::deploy::stage_state_sh;

// Puts the stage's modules at /lib/modules/RELEASE, where the kernel, depmod
// and the initramfs tools look: hard links to the stage's files when both
// are on one file system, else a copy; never a symbolic link, so that module
// loading never depends on /var being mounted. The directory is marked as
// kbench's; a release the SUT has installed itself (no mark) is never
// replaced. The same stage's directory is kept, so only builds of one
// release that alternate (a bisect's commits, a patch against its base)
// redo it at each boot: links cost nothing there, a copy of a whole module
// tree tens of seconds on a slow SUT. depmod writes its indexes as new files
// (a rename), never into a linked one. Defines activate(); $1 stage dir, $2
// release.
inline constexpr const char* kActivateFunction = assets::deploy::activate_function_sh;

// $1 stage dir, $2 kind (deb | image), $3 release the controller read from
// the image ("" when it could not). Unpacks what was received into
// vmlinuz, modules/ (with the config in it, where the fingerprint finds it)
// and initrd.img made by the SUT's own tool, then marks the stage ready.
inline constexpr const char* kUnpack = assets::deploy::unpack_sh;

// Continues kUnpack (after kActivateFunction): modules in place, initramfs.
inline constexpr const char* kUnpackFinish = assets::deploy::unpack_finish_sh;

// $1 method (kexec | reboot | default: a plain reboot into the SUT's
// default entry), $2 image, $3 initrd ("" for none), $4 the
// whole cmdline, $5 stage dir ("" for a kernel the SUT has installed),
// $6 how the boot starts: "" (ssh) in the background after a second, so the
// ssh session ends before the SUT goes down; "queue" (the machine kbench
// runs on) as a systemd job, so the boot needs no process of kbench's: the
// kbench that asked for it exits, and a resume unit's cgroup is stopped with
// nothing left in it that the boot depends on.
// Loads the kernel, starts the boot and returns.
inline constexpr const char* kBoot = assets::deploy::boot_sh;

// Waits (at most 150 s) for the boot's start-up jobs to finish: systemd's
// is-system-running --wait returns once the system is running or degraded.
inline constexpr const char* kSettle = assets::deploy::settle_sh;

// What the booted SUT runs: uname -r, uname -v, /proc/cmdline, boot id.
inline constexpr const char* kIdentify = assets::deploy::identify_sh;

// After the plan: the one-shot GRUB entries go, and the modules kbench put
// in /lib/modules (the stages stay for the next plan).
inline constexpr const char* kCleanup = assets::deploy::cleanup_sh;

// $1..: name=value sysctls to set after a boot (a fresh boot has the
// defaults, so nothing needs restoring).
inline constexpr const char* kSysctl = assets::deploy::sysctl_sh;

}  // namespace kbench::deploy::scripts
