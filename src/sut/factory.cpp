#include "sut/factory.h"

#include "common/errors.h"

namespace kbench::sut {

std::unique_ptr<Connection> make_connection(const plan::SutSpec* sut, const plan::SwprofileSpec* swprofile) {
  const std::string method = sut ? sut->method : "local";
  if (method == "local") return make_local_connection(find_agent_binary());
  if (method == "ssh") return make_ssh_connection(sut->params, find_agent_binary());
  if (method == "qemu") {
    if (!swprofile || swprofile->kernel.image.empty() || !swprofile->kernel.modules.empty() ||
        !swprofile->kernel.deb.empty()) {
      throw InputError(std::string("swprofiles[") + (swprofile ? swprofile->name : "") +
                       "].kernel: expected a kernel image to boot with the qemu connection (kernel: PATH; packages "
                       "and modules are installed on ssh SUTs with sut.boot)");
    }
    QemuBoot boot{swprofile->kernel.image, swprofile->cmdline, swprofile->initrd};
    return make_qemu_connection(sut->params, std::move(boot), find_agent_binary());
  }
  throw InputError("sut.connection.method: expected local, ssh or qemu, got '" + method + "'");
}

}  // namespace kbench::sut
