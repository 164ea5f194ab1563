// The one Catch2 main shared by every test tier (compiled once).
//
// The tests run with the machine model's defaults, whatever the shell that
// runs them sets: the cost model reads libgomp's wait policy
// (OMP_WAIT_POLICY=passive, GOMP_SPINCOUNT=0: workers sleep, so a parallel
// loop costs a wake-up), Kiln's thread count and a calibrated machine file
// ($KILN_MACHINE, else ~/.config/kiln/machine.txt), and the tests that
// check the search's decisions expect the defaults (a shell set up for
// benchmarks, with OMP_WAIT_POLICY=PASSIVE as docs/performance.md asks,
// made choose_saves keep another residual). Tests of those settings set
// them themselves.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char **argv) {
    for (const char *name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KILN_NUM_THREADS"}) unsetenv(name);
    setenv("KILN_MACHINE", "none", 1);
    return Catch::Session().run(argc, argv);
}
