// lowering-bench: how long Kiln takes to lower (not compile) pipelines that
// grow: a chain of 3x3 stencils with Halide's stencil_chain schedule at
// several depths, and Halide's interpolate and local Laplacian apps at
// several pyramid levels (docs/performance.md, "Lowering time").
//
//   lowering-bench [--depths 4,8,16,32,64] [--levels 2,...,10] [--runs N]
//                  [--budget S] [--timeout S] [--json FILE]
//
// A row times Pipeline::lowered_stmt (every lowering pass, and printing the
// statement) and gives the statement's size in characters and the time
// against the previous row of the case. Within a case, the sizes after one
// that took more than --budget seconds are skipped. Each size is lowered in
// a child process, stopped after --timeout seconds, so the program finishes
// whatever the lowering does. KILN_TIME_PASSES=1 adds each pass's time on
// stderr.
#include <kiln/kiln.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pyramids.h"
#include "stencil_chain.h"

namespace {

using kiln::Pipeline;
using kiln::Target;
using json = nlohmann::ordered_json;  // keys in the order written

struct Case {
    std::string name;
    std::string parameter;  // what the size counts
    std::function<Pipeline(int, const Target &)> build;
    std::vector<int> sizes;
};

// One size of a case: measured, stopped at the timeout, failed, or skipped.
struct Row {
    std::string status;  // "ok", "timeout", "error", "skipped"
    double ms = 0;       // the fastest run (ok), or how long it ran (timeout)
    long chars = 0;
    std::string note;
};

// What the child sends back through the pipe.
struct Measured {
    double ms;
    long chars;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Build and lower the pipeline `runs` times in this process.
Measured lower_here(const Case &c, int size, const Target &t, int runs) {
    Measured m{1e300, 0};
    for (int r = 0; r < runs; r++) {
        Pipeline p = c.build(size, t);  // a fresh pipeline: lowering is timed, building is not
        auto t0 = std::chrono::steady_clock::now();
        std::string stmt = p.lowered_stmt(t);
        m.ms = std::min(m.ms, ms_since(t0));
        m.chars = (long)stmt.size();
    }
    return m;
}

// The same in a child process, killed after `timeout_s` seconds.
Row lower_in_child(const Case &c, int size, const Target &t, int runs, double timeout_s) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe() failed");
    std::fflush(nullptr);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork() failed");
    if (pid == 0) {
        close(fds[0]);
        int rc = 0;
        try {
            Measured m = lower_here(c, size, t, runs);
            rc = write(fds[1], &m, sizeof m) == (ssize_t)sizeof m ? 0 : 3;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "lowering-bench: %s %d: %s\n", c.name.c_str(), size, e.what());
            rc = 2;
        }
        _exit(rc);
    }
    close(fds[1]);
    Row row;
    int status = 0;
    for (;;) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (ms_since(t0) > timeout_s * 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            close(fds[0]);
            row.status = "timeout";
            row.ms = ms_since(t0);
            return row;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Measured m{};
    bool got = read(fds[0], &m, sizeof m) == (ssize_t)sizeof m;
    close(fds[0]);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        row.status = "error";
        return row;
    }
    row.status = "ok";
    row.ms = m.ms;
    row.chars = m.chars;
    return row;
}

std::string seconds(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000);
    return buf;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"lowering-bench: Kiln's lowering time against stencil-chain depth and pyramid levels"};
    std::vector<int> depths{4, 8, 16, 32, 64}, levels{2, 3, 4, 5, 6, 7, 8, 9, 10};
    std::vector<std::string> only;
    int runs = 1;
    double budget_s = 60, timeout_s = 120;
    std::string json_path, target_name = "host";
    app.add_option("--depths", depths, "stencil-chain depths, in order")->delimiter(',')->capture_default_str();
    app.add_option("--levels", levels, "pyramid levels, in order")->delimiter(',')->capture_default_str();
    app.add_option("--only", only, "cases to run: stencil_chain, interpolate, local_laplacian")
        ->delimiter(',')
        ->check(CLI::IsMember({"stencil_chain", "interpolate", "local_laplacian"}));
    app.add_option("--runs,-n", runs, "time the fastest of N lowerings")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--budget", budget_s, "skip the rest of a case after a size that took longer (seconds)")
        ->capture_default_str();
    app.add_option("--timeout", timeout_s, "stop one size's lowering after this long (seconds)")->capture_default_str();
    app.add_option("--json", json_path, "also write the rows as JSON to this file");
    app.add_option("--target", target_name, "the target lowered for")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    for (int d : depths)
        if (d < 1) return app.exit(CLI::ValidationError("--depths", "a depth is at least 1"));
    for (int l : levels)
        if (l < 2) return app.exit(CLI::ValidationError("--levels", "a pyramid has at least 2 levels"));
    Target target;
    try {
        target = Target(target_name);
    } catch (const kiln::CompileError &e) {
        std::fprintf(stderr, "lowering-bench: %s\n", e.what());
        return 2;
    }

    std::vector<Case> cases{
        {"stencil_chain", "depth",
         [](int n, const Target &t) { return kiln_lowering::make_stencil_chain(n, t).pipeline; }, depths},
        {"interpolate", "levels", kiln_lowering::make_interpolate, levels},
        {"local_laplacian", "levels", kiln_lowering::make_local_laplacian, levels},
    };

    std::printf("target %s, fastest of %d run%s, budget %g s, timeout %g s\n\n", target.to_string().c_str(), runs,
                runs == 1 ? "" : "s", budget_s, timeout_s);
    std::printf("%-16s %-7s %5s %12s %12s %8s\n", "case", "param", "size", "lowering ms", "stmt chars", "ratio");
    json rows = json::array();
    for (const Case &c : cases) {
        if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
        std::optional<Row> prev;  // the last size lowered
        std::string skip;         // once set, why the remaining sizes are skipped
        for (int size : c.sizes) {
            Row row;
            if (prev && skip.empty()) {
                if (prev->status == "timeout")
                    skip = "skipped (previous " + c.parameter + " took > " + seconds(prev->ms) + ")";
                else if (prev->status == "error")
                    skip = "skipped (previous " + c.parameter + " failed)";
                else if (prev->ms > budget_s * 1000)
                    skip = "skipped (previous " + c.parameter + " took " + seconds(prev->ms) + ")";
            }
            if (!skip.empty()) {
                row.status = "skipped";
                row.note = skip;
            } else {
                row = lower_in_child(c, size, target, runs, timeout_s);
            }
            std::printf("%-16s %-7s %5d ", c.name.c_str(), c.parameter.c_str(), size);
            json j{{"case", c.name}, {"parameter", c.parameter}, {"size", size}, {"status", row.status}};
            if (row.status == "ok") {
                std::printf("%12.1f %12ld", row.ms, row.chars);
                j["lowering_ms"] = row.ms;
                j["stmt_chars"] = row.chars;
                if (prev && prev->status == "ok") {
                    double ratio = row.ms / prev->ms;
                    std::printf(" %7.2fx", ratio);
                    j["ratio"] = ratio;
                }
            } else if (row.status == "timeout") {
                std::printf("%12s", ("stopped after " + seconds(row.ms)).c_str());
                j["stopped_after_ms"] = row.ms;
            } else if (row.status == "error") {
                std::printf("%12s", "error (see stderr)");
            } else {
                std::printf("%s", row.note.c_str());
                j["note"] = row.note;
            }
            std::printf("\n");
            std::fflush(stdout);
            rows.push_back(j);
            if (row.status != "skipped") prev = row;
        }
    }

    if (!json_path.empty()) {
        json out{{"target", target.to_string()},
                 {"runs", runs},
                 {"budget_s", budget_s},
                 {"timeout_s", timeout_s},
                 {"rows", rows}};
        std::ofstream f(json_path);
        f << out.dump(2) << "\n";
        if (!f) {
            std::fprintf(stderr, "lowering-bench: cannot write %s\n", json_path.c_str());
            return 1;
        }
    }
    return 0;
}
