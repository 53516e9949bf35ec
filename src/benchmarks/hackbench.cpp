// mmtests/hackbench: mmtests' hackbench configurations (which drive
// `perf bench sched messaging`) on the shared messaging engine: processes or
// threads, pipes or sockets, over a ladder of group counts scaled to the CPUs.
#include <algorithm>
#include <sstream>

#include "benchmarks/benchmark.h"
#include "benchmarks/messaging.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"

namespace kbench::bench {
namespace {

struct Variant {
  std::string name;  // "process-pipes"
  bool threads;
  bool pipes;
};

const std::vector<Variant> kVariants = {
    {"process-pipes", false, true},
    {"process-sockets", false, false},
    {"thread-pipes", true, true},
    {"thread-sockets", true, false},
};

// The group counts of the seed report's ladder (1, 4, 7, 12, 21, 30, 48, 79,
// then steps of 31), cut at 4 x CPUs, with 4 x CPUs itself as the last rung:
// 2 CPUs -> 1, 4, 7, 8; 64 CPUs -> 1 ... 234, 256.
std::vector<int> group_ladder(int cpus) {
  const int top = 4 * cpus;
  std::vector<int> ladder;
  for (int rung : {1, 4, 7, 12, 21, 30, 48, 79}) {
    if (rung < top) ladder.push_back(rung);
  }
  for (int rung = 110; rung < top; rung += 31) ladder.push_back(rung);
  ladder.push_back(top);
  return ladder;
}

// Values were validated against params(): groups is 'auto' or a list of
// counts, variants a list of kVariants' names.
std::vector<int> parse_groups(const Params& params) {
  if (param_string(params, "groups") == "auto") return group_ladder(static_cast<int>(tasks::online_cpus().size()));
  std::vector<int> groups;
  for (const auto& item : param_list(params, "groups")) {
    const int value = std::stoi(item);
    if (std::find(groups.begin(), groups.end(), value) == groups.end()) groups.push_back(value);
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::vector<Variant> parse_variants(const Params& params) {
  const auto wanted = param_list(params, "variants");
  std::vector<Variant> out;
  for (const auto& v : kVariants) {
    if (std::find(wanted.begin(), wanted.end(), v.name) != wanted.end()) out.push_back(v);
  }
  return out;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& v : kVariants) names.push_back(v.name);
  return names;
}

int loops_of(const Params& params) { return static_cast<int>(param_int(params, "loops")); }

class Hackbench : public Benchmark {
 public:
  std::string name() const override { return "mmtests/hackbench"; }
  std::string description() const override {
    return "hackbench (perf bench sched messaging) as mmtests runs it: time for groups of 20 senders "
           "and 20 receivers to exchange 100-byte messages, per IPC and task kind and group count";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"groups", "auto", "1,4",
                  "comma list of group counts, or 'auto': 1, 4, 7, 12, 21, 30, 48, 79, 110 (+31 ...) below 4 x "
                  "online CPUs, then 4 x online CPUs"}
            .integer(1, 100000)
            .list_of()
            .or_word("auto"),
        ParamSpec{"loops", "200", "50", "messages each sender sends each receiver of its group (hackbench -l)"}
            .integer(1, 100000000),
        ParamSpec{"variants", "process-pipes,process-sockets,thread-pipes,thread-sockets",
                  "process-pipes,process-sockets,thread-pipes,thread-sockets", "which task kinds and IPC to run"}
            .choice(variant_names())
            .list_of(),
    };
  }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    loops_of(params);
    std::vector<ResultClass> classes;
    for (const auto& variant : parse_variants(params)) {
      for (int groups : parse_groups(params)) {
        classes.push_back({"hackbench-" + variant.name + "-" + std::to_string(groups), "seconds", Better::Lower});
      }
    }
    return classes;
  }
  void prepare(const Params& params, const Placement&) override {
    loops_ = loops_of(params);
    variants_ = parse_variants(params);
    groups_ = parse_groups(params);
    cpus_ = tasks::online_cpus();
    for (const auto& variant : variants_) {
      ensure_messaging_fd_budget(spec(variant, groups_.back()));
    }
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    const auto classes = result_classes(params);
    std::vector<Measurement> out;
    std::size_t next = 0;
    for (const auto& variant : variants_) {
      for (int groups : groups_) {
        out.push_back({classes.at(next++), run_messaging(spec(variant, groups))});
      }
    }
    return out;
  }
  std::map<std::string, std::string> notes() const override {
    return {{"placement", "all senders and receivers unpinned over CPUs " + tasks::describe_cpus(cpus_) +
                              " (the agent's --cpu does not apply)"},
            {"groups", "group counts " + describe_groups() + " for " + std::to_string(cpus_.size()) + " online CPUs"}};
  }

 private:
  MessagingSpec spec(const Variant& variant, int groups) const {
    MessagingSpec s;
    s.groups = groups;
    s.loops = loops_;
    s.threads = variant.threads;
    s.pipes = variant.pipes;
    s.cpus = cpus_;
    validate_messaging(s, "mmtests/hackbench");
    return s;
  }
  std::string describe_groups() const {
    std::string out;
    for (int g : groups_) out += (out.empty() ? "" : ",") + std::to_string(g);
    return out;
  }

  int loops_ = 0;
  std::vector<Variant> variants_;
  std::vector<int> groups_;
  std::vector<int> cpus_;
};

KBENCH_REGISTER("mmtests/hackbench", [] { return std::make_unique<Hackbench>(); });

}  // namespace
}  // namespace kbench::bench
