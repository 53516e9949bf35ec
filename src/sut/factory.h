#pragma once
// The connection a plan asks for: sut.connection.method with its params, and
// for qemu the swprofile that says which kernel to boot with which cmdline.
#include <memory>

#include "plan/plan.h"
#include "sut/connection.h"

namespace kbench::sut {

// sut == nullptr: local. For qemu, one connection per swprofile (it boots
// that swprofile's kernel). Throws InputError for bad params, RunError when
// the agent cannot be found.
std::unique_ptr<Connection> make_connection(const plan::SutSpec* sut, const plan::SwprofileSpec* swprofile);

}  // namespace kbench::sut
