#include "plan/plan.h"

namespace kbench::plan {

const sut::Method& sut_method(const SutSpec& sut) { return sut::MethodRegistry::instance().get(sut.method); }

const sut::Method& sut_method(const Plan& plan) {
  return sut::MethodRegistry::instance().get(plan.sut ? plan.sut->method : std::string(sut::kDefaultMethod));
}

bool boots_this_machine(const Plan& plan) {
  return plan.sut && plan.sut->boot && sut_method(plan).has(sut::Capability::OnController);
}

std::unique_ptr<sut::Connection> connect(const SutSpec& sut, const SwprofileSpec* swprofile) {
  if (!swprofile) return sut::make_connection(sut.method, sut.params, nullptr);
  const sut::SwprofileKernel kernel{swprofile->name,    swprofile->kernel.image, swprofile->kernel.modules,
                                    swprofile->kernel.deb, swprofile->cmdline,     swprofile->initrd,
                                    swprofile->kernel.dtb};
  return sut::make_connection(sut.method, sut.params, &kernel);
}

}  // namespace kbench::plan
