// The autoscheduler's machine file (MachineModel::with_file, file_text,
// machine_file, host) and kiln-calibrate's measurements (calibrate_host).
#include <kiln/Calibrate.h>
#include <kiln/kiln.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

// A file under /tmp with `text`, removed with the object.
struct TempFile {
    std::string path = "/tmp/kiln-machine-test-" + std::to_string(getpid()) + ".txt";
    explicit TempFile(const std::string &text) { std::ofstream(path) << text; }
    ~TempFile() { std::remove(path.c_str()); }
};

// Sets an environment variable for the life of the object.
struct ScopedEnv {
    std::string name, old;
    bool had;
    ScopedEnv(const std::string &n, const std::string &v) : name(n) {
        const char *o = std::getenv(n.c_str());
        had = o != nullptr;
        if (had) old = o;
        setenv(n.c_str(), v.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had) setenv(name.c_str(), old.c_str(), 1);
        else unsetenv(name.c_str());
    }
};

std::string error_of(const std::string &text) {
    TempFile f(text);
    try {
        MachineModel().with_file(f.path);
    } catch (const CompileError &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a machine file sets the fields it names and keeps the rest", "[machine]") {
    TempFile f("# measured elsewhere\nghz = 4.5\n  dram_total_bytes_per_ns=61.25  # two cores\n\nthreads = 8\n"
               "l2_bytes = 2097152\n");
    MachineModel m = MachineModel().with_file(f.path);
    CHECK(m.ghz == 4.5);
    CHECK(m.dram_total_bytes_per_ns == 61.25);
    CHECK(m.threads == 8);
    CHECK(m.l2_bytes == 2097152);
    CHECK(m.l1_bytes_per_ns == MachineModel().l1_bytes_per_ns);  // not in the file
    CHECK(m.source == f.path);
    CHECK(m.to_string().find("calibrated: " + f.path) != std::string::npos);
    CHECK(MachineModel().to_string().find("rates: defaults") != std::string::npos);
}

TEST_CASE("file_text writes every field, and reading it back gives the same model", "[machine]") {
    MachineModel m;
    m.ghz = 3.25, m.ops_per_cycle = 1.5, m.div_cycles = 4.75, m.l3_bytes = 48 << 20, m.threads = 3;
    m.parallel_loop_ns = 1234.5, m.page_ns = 321;
    TempFile f(m.file_text("first line\nsecond line"));
    std::ifstream in(f.path);
    std::string first;
    std::getline(in, first);
    CHECK(first == "# first line");
    MachineModel back = MachineModel().with_file(f.path);
    CHECK(back.file_text() == m.file_text());
}

TEST_CASE("a bad machine file names the file, the line and the problem", "[machine][error]") {
    std::string e = error_of("ghz = 3\nclock = 4\n");
    CHECK(e.find(":2: unknown name `clock`") != std::string::npos);
    CHECK(e.find("the names are l1_bytes, l2_bytes") != std::string::npos);
    CHECK(error_of("ghz = fast\n").find(":1: ghz must be a positive number, not `fast`") != std::string::npos);
    CHECK(error_of("threads = 0\n").find("threads must be a positive number, not `0`") != std::string::npos);
    CHECK(error_of("ghz 3\n").find(":1: expected `name = value`, got `ghz 3`") != std::string::npos);
    std::string missing;
    try {
        MachineModel().with_file("/nonexistent/kiln/machine.txt");
    } catch (const CompileError &err) {
        missing = err.what();
    }
    CHECK(missing == "machine file /nonexistent/kiln/machine.txt: cannot be read");
}

TEST_CASE("host() reads the machine file $KILN_MACHINE names, none means the defaults", "[machine]") {
    TempFile f("ghz = 2.5\nparallel_loop_ns = 777\n");
    {
        ScopedEnv env("KILN_MACHINE", f.path);
        CHECK(MachineModel::machine_file() == f.path);
        MachineModel m = MachineModel::host();
        CHECK(m.ghz == 2.5);
        CHECK(m.parallel_loop_ns == 777);
        CHECK(m.source == f.path);
        // The caches still come from this machine where the file is silent.
        CHECK(m.l1_bytes == MachineModel::detected().l1_bytes);
        // The autoscheduler's explanation says which figures it used.
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func g("g");
        g(x, y) = in(x, y) * 2.0f;
        AutoscheduleResult r = autoschedule(Pipeline(g), Target("x86-64-linux-avx2-fma"), {{"g", {256, 256}}});
        CHECK(r.explanation.find("calibrated: " + f.path) != std::string::npos);
    }
    {
        ScopedEnv env("KILN_MACHINE", "none");
        CHECK(MachineModel::machine_file().empty());
        CHECK(MachineModel::host().source == "defaults");
        CHECK(MachineModel::host().ghz == MachineModel().ghz);
    }
    {
        ScopedEnv env("KILN_MACHINE", "");
        ScopedEnv config("XDG_CONFIG_HOME", "/tmp/kiln-config");
        CHECK(MachineModel::machine_file() == "/tmp/kiln-config/kiln/machine.txt");
    }
}

TEST_CASE("detected() says the workers sleep under the passive wait policy, and a loop then costs a wake-up",
          "[machine]") {
    {
        ScopedEnv policy("OMP_WAIT_POLICY", "PASSIVE");
        MachineModel m = MachineModel::detected();
        CHECK(m.workers_sleep);
        CHECK(m.parallel_start_ns() == m.parallel_wake_ns);
        CHECK(m.to_string().find("its workers woken (OMP_WAIT_POLICY=passive)") != std::string::npos);
    }
    {
        ScopedEnv policy("OMP_WAIT_POLICY", "active");
        ScopedEnv spins("GOMP_SPINCOUNT", "0");  // what the passive policy sets
        CHECK(MachineModel::detected().workers_sleep);
    }
    {
        ScopedEnv policy("OMP_WAIT_POLICY", "active");
        ScopedEnv spins("GOMP_SPINCOUNT", "10000");
        MachineModel m = MachineModel::detected();
        CHECK(!m.workers_sleep);
        CHECK(m.parallel_start_ns() == m.parallel_loop_ns);
        CHECK(m.to_string().find("woken") == std::string::npos);
    }
    // The machine file sets the wake-up's cost, not whether workers sleep.
    TempFile f("parallel_wake_ns = 12345\n");
    ScopedEnv policy("OMP_WAIT_POLICY", "passive");
    MachineModel m = MachineModel::detected().with_file(f.path);
    CHECK(m.workers_sleep);
    CHECK(m.parallel_start_ns() == 12345);
}

TEST_CASE("calibrate_host measures every rate and its file reads back", "[machine][calibrate]") {
    CalibrationOptions o;
    o.quick = true;
    Calibration c = calibrate_host(o);
    const MachineModel &m = c.machine;
    for (double v : {m.ghz, m.ops_per_cycle, m.div_cycles, m.l1_bytes_per_ns, m.l2_bytes_per_ns, m.l3_bytes_per_ns,
                     m.dram_bytes_per_ns, m.dram_total_bytes_per_ns, m.parallel_loop_ns, m.parallel_wake_ns, m.allocation_ns,
                     m.page_ns}) {
        CHECK(std::isfinite(v));
        CHECK(v > 0);
    }
    // Wide bounds: a shared machine slows runs down, but no x86-64 core of
    // this century is outside them.
    CHECK(m.ghz > 0.3);
    CHECK(m.ghz < 10);
    CHECK(m.ops_per_cycle > 0.05);
    CHECK(m.ops_per_cycle <= 8);
    // The caches and threads are the detected ones; the model of the
    // emitted code keeps its values.
    CHECK(m.l2_bytes == MachineModel::detected().l2_bytes);
    CHECK(m.unvectorized_lanes == MachineModel::detected().unvectorized_lanes);
    CHECK(c.report.find("clock: ") != std::string::npos);
    CHECK(c.report.find("DRAM ") != std::string::npos);
    CHECK(c.header.find("CPU: ") != std::string::npos);
    TempFile f(m.file_text(c.header));
    MachineModel back = MachineModel().with_file(f.path);
    CHECK(back.ghz == Approx(m.ghz).epsilon(1e-5));
    CHECK(back.dram_total_bytes_per_ns == Approx(m.dram_total_bytes_per_ns).epsilon(1e-5));
}

TEST_CASE("the model's threads are the runtime's: $KILN_NUM_THREADS, over the machine file", "[machine]") {
    TempFile f("threads = 4\n");
    ScopedEnv machine("KILN_MACHINE", f.path);
    {
        ScopedEnv threads("KILN_NUM_THREADS", "1");
        CHECK(MachineModel::detected().threads == 1);
        CHECK(MachineModel::host().threads == 1);  // the kernels will run on one thread
    }
    {
        ScopedEnv threads("KILN_NUM_THREADS", "");
        CHECK(MachineModel::host().threads == 4);  // the file, where the environment is silent
        CHECK(MachineModel::detected().threads >= 1);
    }
    for (const char *ignored : {"0", "-3", "many"}) {
        ScopedEnv threads("KILN_NUM_THREADS", ignored);  // not a thread count: as if unset
        CHECK(MachineModel::host().threads == 4);
    }
}
