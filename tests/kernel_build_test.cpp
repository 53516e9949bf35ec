// The build key of src/build/kernel_build.h on real temporary git repositories:
// the same inputs give the same key, and every input that changes the kernel
// (commit, working-tree edit, config, fragment content, compiler, make
// arguments) gives another. Also the `build:` part of the plan format.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "build/kernel_build.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "support/plan_errors.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace fs = std::filesystem;
using kbench::InputError;
using kbench::build::build_key;
using kbench::build::build_key_parts;
using kbench::plan::KernelBuildSpec;
using kbench::testing::plan_error;
using kbench::testing::TempDir;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

void run(const std::string& command) { ASSERT_EQ(std::system(command.c_str()), 0) << command; }

bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// A git repository with a kernel-tree shape (Makefile, Kconfig) and one commit.
class KernelBuildKey : public ::testing::Test {
 protected:
  void SetUp() override {
    tree = dir.path() / "linux";
    write(tree / "Makefile", "all:\n");
    write(tree / "Kconfig", "mainmenu \"test\"\n");
    write(tree / "kernel/sys.c", "long sys_getppid(void) { return 1; }\n");
    write(tree / ".gitignore", "*.o\n");
    write(dir.path() / "frag.config", "CONFIG_FUTEX=y\n");
    git("init -q");
    git("add -A");
    git("commit -qm base");
    spec.source = tree.string();
    spec.config = "tinyconfig";
    spec.fragments = {(dir.path() / "frag.config").string(), "CONFIG_SMP=y"};
    spec.compiler = "gcc";
    spec.make_args = {"KCFLAGS=-O2"};
  }

  void git(const std::string& args) { run("git -C '" + tree.string() + "' " + args + " >/dev/null"); }

  std::string key(const KernelBuildSpec& of) { return build_key(build_key_parts(of, "test")); }
  std::string key() { return key(spec); }

  // The commit's identity, whatever git's configuration here says; for this
  // fixture only, as the other tests share the process.
  kbench::testing::ScopedEnv author_name{"GIT_AUTHOR_NAME", "kbench test"};
  kbench::testing::ScopedEnv author_email{"GIT_AUTHOR_EMAIL", "test@kbench.invalid"};
  kbench::testing::ScopedEnv committer_name{"GIT_COMMITTER_NAME", "kbench test"};
  kbench::testing::ScopedEnv committer_email{"GIT_COMMITTER_EMAIL", "test@kbench.invalid"};
  TempDir dir{"kbench-build-key"};
  fs::path tree;
  KernelBuildSpec spec;
};


TEST_F(KernelBuildKey, SameInputsGiveTheSameKey) {
  const std::string first = key();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(key(), first);
  spec.ref = "HEAD";
  EXPECT_EQ(key(), key());
}

TEST_F(KernelBuildKey, ACleanWorkingTreeHasTheKeyOfItsHead) {
  const std::string working_tree = key();
  spec.ref = "HEAD";
  EXPECT_EQ(key(), working_tree);
  git("branch test-branch");
  spec.ref = "test-branch";
  EXPECT_EQ(key(), working_tree);
}

TEST_F(KernelBuildKey, ANewCommitChangesTheKey) {
  spec.ref = "HEAD";
  const std::string before = key();
  write(tree / "kernel/sys.c", "long sys_getppid(void) { ndelay(100); return 1; }\n");
  git("commit -qam slow");
  EXPECT_NE(key(), before);
  spec.ref = "HEAD~1";
  EXPECT_EQ(key(), before);
}

TEST_F(KernelBuildKey, AWorkingTreeEditChangesTheKeyButNotTheRefs) {
  const std::string clean = key();
  KernelBuildSpec at_head = spec;
  at_head.ref = "HEAD";
  write(tree / "kernel/sys.c", "long sys_getppid(void) { return 2; }\n");
  const std::string edited = key();
  EXPECT_NE(edited, clean);
  EXPECT_EQ(key(at_head), clean);  // the commit is what it was
  write(tree / "kernel/sys.c", "long sys_getppid(void) { return 3; }\n");
  EXPECT_NE(key(), edited);        // another edit, another key
  write(tree / "kernel/sys.c", "long sys_getppid(void) { return 1; }\n");
  EXPECT_EQ(key(), clean);         // undone: the clean tree again
}

TEST_F(KernelBuildKey, UntrackedFilesCountUnlessIgnored) {
  const std::string clean = key();
  write(tree / "kernel/sys.o", "an object file, ignored\n");
  EXPECT_EQ(key(), clean);
  write(tree / "kernel/new.c", "int new_file;\n");
  const std::string with_new = key();
  EXPECT_NE(with_new, clean);
  write(tree / "kernel/new.c", "int new_file_changed;\n");
  EXPECT_NE(key(), with_new);
}

TEST_F(KernelBuildKey, ConfigFragmentsCompilerAndMakeArgsEachChangeIt) {
  const std::string base = key();
  KernelBuildSpec other = spec;
  other.config = "defconfig";
  EXPECT_NE(key(other), base);

  other = spec;
  write(dir.path() / "frag.config", "CONFIG_FUTEX=y\nCONFIG_EPOLL=y\n");
  EXPECT_NE(key(), base) << "a fragment file's content is part of the key";
  write(dir.path() / "frag.config", "CONFIG_FUTEX=y\n");
  EXPECT_EQ(key(), base);

  other = spec;
  other.fragments.back() = "CONFIG_SMP=n";
  EXPECT_NE(key(other), base);

  other = spec;
  other.make_args = {"KCFLAGS=-O1"};
  EXPECT_NE(key(other), base);
  other.make_args = {};
  EXPECT_NE(key(other), base);

  if (on_path("clang") && on_path("ld.lld")) {
    other = spec;
    other.compiler = "clang";
    EXPECT_NE(key(other), base);
  }
}

TEST_F(KernelBuildKey, AConfigFileCountsByItsContent) {
  write(dir.path() / "my.config", "CONFIG_SMP=y\n");
  spec.config = (dir.path() / "my.config").string();
  const std::string first = key();
  write(dir.path() / "my.config", "CONFIG_SMP=n\n");
  EXPECT_NE(key(), first);
  write(dir.path() / "copy.config", "CONFIG_SMP=y\n");
  spec.config = (dir.path() / "copy.config").string();
  EXPECT_EQ(key(), first) << "the same content under another name is the same config";
}

TEST_F(KernelBuildKey, ATreeOutsideGitCountsByItsFiles) {
  fs::remove_all(tree / ".git");
  const std::string first = key();
  EXPECT_EQ(key(), first);
  write(tree / "kernel/sys.c", "long sys_getppid(void) { return 22; }\n");
  EXPECT_NE(key(), first);
  spec.ref = "HEAD";
  EXPECT_THROW(key(), InputError);
}

TEST_F(KernelBuildKey, BadSpecsAreInputErrors) {
  KernelBuildSpec bad = spec;
  bad.ref = "no-such-ref";
  try {
    key(bad);
    FAIL() << "an unknown ref was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("build.ref 'no-such-ref'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kbench::build::check_build_spec(bad, "test"), InputError);
  bad = spec;
  bad.fragments = {(dir.path() / "missing.config").string()};
  EXPECT_THROW(key(bad), InputError);
  bad = spec;
  bad.source = (dir.path() / "nowhere").string();
  EXPECT_THROW(key(bad), InputError);
  EXPECT_NO_THROW(kbench::build::check_build_spec(spec, "test"));
}

TEST(BuildKey, IsTheSha256OfTheParts) {
  const nlohmann::json parts = {{"a", 1}};
  EXPECT_EQ(build_key(parts), build_key(nlohmann::json{{"a", 1}}));
  EXPECT_NE(build_key(parts), build_key(nlohmann::json{{"a", 2}}));
  // sha256 of the text {"a":1}, computed with python3 hashlib.
  EXPECT_EQ(build_key(parts), "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862");
}

// ---- the plan's build: ---------------------------------------------------------


class PlanBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    write(dir.path() / "linux/Makefile", "all:\n");
    write(dir.path() / "linux/Kconfig", "\n");
    write(dir.path() / "frag.config", "CONFIG_SMP=y\n");
    fs::create_directories(dir.path() / "not-a-tree");
    previous = fs::current_path();
    fs::current_path(dir.path());
  }
  void TearDown() override { fs::current_path(previous); }

  std::string plan(const std::string& build) {
    return "swprofiles:\n  - name: gcc\n    build: " + build + "\nbenchmarks: [syscall/getpid]\n";
  }

  TempDir dir{"kbench-plan-build"};
  fs::path previous;
};

TEST_F(PlanBuild, ParsesAFullSpecWithPathsRelativeToThePlan) {
  write(dir.path() / "plans/p.yaml", plan("{source: ../linux, ref: v6.1, config: ../frag.config, fragments: "
                                          "[../frag.config, CONFIG_RETPOLINE=y, '# CONFIG_SMP is not set'], "
                                          "compiler: clang, make_args: [KCFLAGS=-O2, W=1]}"));
  fs::current_path("/");
  const auto parsed = kbench::plan::load_plan((dir.path() / "plans/p.yaml").string());
  ASSERT_TRUE(parsed.swprofiles.at(0).build);
  const KernelBuildSpec& spec = *parsed.swprofiles[0].build;
  EXPECT_EQ(spec.source, (dir.path() / "linux").string());
  EXPECT_EQ(spec.ref, "v6.1");
  EXPECT_EQ(spec.config, (dir.path() / "frag.config").string());
  EXPECT_EQ(spec.fragments,
            (std::vector<std::string>{(dir.path() / "frag.config").string(), "CONFIG_RETPOLINE=y", "# CONFIG_SMP is not set"}));
  EXPECT_EQ(spec.compiler, "clang");
  EXPECT_EQ(spec.make_args, (std::vector<std::string>{"KCFLAGS=-O2", "W=1"}));
  EXPECT_EQ(spec.line, 3);
  EXPECT_TRUE(parsed.swprofiles[0].kernel.empty());
}

TEST_F(PlanBuild, Defaults) {
  const auto parsed = kbench::plan::parse_plan(plan("{source: linux}"), "p.yaml");
  const KernelBuildSpec& spec = *parsed.swprofiles.at(0).build;
  EXPECT_EQ(spec.config, "defconfig");
  EXPECT_EQ(spec.compiler, "gcc");
  EXPECT_TRUE(spec.ref.empty());
  EXPECT_TRUE(spec.fragments.empty());
}

TEST_F(PlanBuild, ErrorsNameFileLineAndKey) {
  EXPECT_EQ(plan_error("swprofiles:\n  - name: gcc\n    kernel: /boot/vmlinuz\n    build: {source: linux}\nbenchmarks: [a/b]\n"),
            "p.yaml:4: swprofiles[].build: expected either kernel (a built kernel) or build, not both");
  EXPECT_EQ(plan_error(plan("{source: linux, compiler: icc}")),
            "p.yaml:3: swprofiles[].build.compiler: expected gcc or clang, got 'icc'");
  EXPECT_EQ(plan_error(plan("{config: tinyconfig}")),
            "p.yaml:3: swprofiles[].build.source: expected the kernel source tree to build (source: DIR)");
  EXPECT_EQ(plan_error(plan("{source: nowhere}")),
            "p.yaml:3: swprofiles[].build.source: expected a directory holding a kernel tree, got '" +
                (dir.path() / "nowhere").string() + "'");
  EXPECT_EQ(plan_error(plan("{source: not-a-tree}")),
            "p.yaml:3: swprofiles[].build.source: expected a kernel tree (a directory with a Makefile and a Kconfig), "
            "got '" + (dir.path() / "not-a-tree").string() + "'");
  EXPECT_EQ(plan_error(plan("{source: linux, config: missing.config}")),
            "p.yaml:3: swprofiles[].build.config: expected a make config target (defconfig, tinyconfig, ...) or a "
            "readable config file, got 'missing.config'");
  EXPECT_EQ(plan_error(plan("{source: linux, fragments: [nofile.config]}")),
            "p.yaml:3: swprofiles[].build.fragments[]: expected a readable fragment file or a CONFIG_X=value line, "
            "got 'nofile.config'");
  EXPECT_EQ(plan_error(plan("{source: linux, fragments: [CONFIG_SMP]}")),
            "p.yaml:3: swprofiles[].build.fragments[]: expected CONFIG_NAME=VALUE (y, m, n, a number or a string), "
            "got 'CONFIG_SMP'");
  EXPECT_EQ(plan_error(plan("{source: linux, fragments: CONFIG_SMP=y}")),
            "p.yaml:3: swprofiles[].build.fragments: expected a list of fragment files or CONFIG_X=value lines");
  EXPECT_EQ(plan_error(plan("{source: linux, make_args: [O=/tmp/x]}")),
            "p.yaml:3: swprofiles[].build.make_args: expected arguments other than O=, CC=, LLVM=, -j and -C (kbench "
            "sets them), got 'O=/tmp/x'");
  EXPECT_EQ(plan_error(plan("{source: linux, ref: --all}")),
            "p.yaml:3: swprofiles[].build.ref: expected a git ref (commit, tag or branch), got '--all'");
  EXPECT_EQ(plan_error(plan("{source: linux, jobs: 4}")).rfind("p.yaml:3: swprofiles[].build.jobs: expected one of the keys", 0),
            0u);
}

TEST(ConfigTarget, NamesVersusFiles) {
  using kbench::plan::is_config_target;
  EXPECT_TRUE(is_config_target("tinyconfig"));
  EXPECT_TRUE(is_config_target("defconfig"));
  EXPECT_TRUE(is_config_target("x86_64_defconfig"));
  EXPECT_FALSE(is_config_target("kvm_guest.config"));  // a file: targets have no dot
  EXPECT_FALSE(is_config_target("configs/my.config"));
  EXPECT_FALSE(is_config_target("/boot/config-6.1.0"));
  EXPECT_FALSE(is_config_target("my.cfg"));
}

}  // namespace
