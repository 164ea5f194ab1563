// Run by tests/interop/CMakeLists.txt at configure time (try_run): prints the
// target Halide's AOT library is compiled for, kiln_halide::host_target().
#include <cstdio>

#include "halide_target.h"

int main() {
    std::printf("%s", kiln_halide::host_target().to_string().c_str());
    return 0;
}
