// Random pipelines and random schedules for the fuzz tier.
//
// A pipeline is a chain of 2-5 int32 stages over (x, y); stage k reads stage
// k-1 (or the input) and up to two more earlier stages or the input (several
// consumers per Func), each at offsets in [-2, 2]. A stage is pure, a
// reduction over RDom r in [0, 3) (f = 0; f += ...), or pure plus an update
// (f = f * 2 + 1); its value may pass through Euclidean / or %, min, max or
// select. The input is read through repeat_edge.
//
// reference() evaluates the algorithm directly (no schedule at all), the
// oracle every random schedule is compared against. random_schedule() picks
// splits with odd and even factors and both tail strategies, tiles, reorders,
// vectorize, unroll, parallel, and for every Func inline / compute_root /
// compute_at a random loop of a random later stage / store_root with
// compute_at (sliding window, storage folding). It also writes the schedule
// as text so that a failing case can be read and replayed.
#pragma once
#include <kiln/kiln.h>

#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kiln_fuzz {

struct Tap {
    int src;  // -1: the input
    int dx, dy, coef;
};
struct StageSpec {
    std::vector<Tap> taps;
    int post = 0;  // 0 none, 1 / 3, 2 % 7, 3 min(v, 40), 4 max(v, -40), 5 select(v > 10, v - 5, v + 3)
    int kind = 0;  // 0 pure, 1 reduction over r in [0, 3), 2 pure + update f = f * 2 + 1
};
struct PipelineSpec {
    std::vector<StageSpec> stages;
    int in_w = 0, in_h = 0, out_w = 0, out_h = 0;
    std::string to_string() const;
};

class Rng {
public:
    explicit Rng(uint32_t seed) : g(seed) {}
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); }
    bool chance(int percent) { return pick(0, 99) < percent; }

private:
    std::mt19937 g;
};

PipelineSpec random_pipeline(Rng &r);

// The output over [0, out_w) x [0, out_h), row-major, for this input.
std::vector<int32_t> reference(const PipelineSpec &p, const std::vector<int32_t> &input);

// The pipeline as Kiln Funcs (fresh each time, so each schedule starts clean).
struct Built {
    kiln::ImageParam in{kiln::Int(32), 2, "in"};
    kiln::Var x{"x"}, y{"y"};
    std::vector<kiln::Func> stages;
    kiln::Func output() const { return stages.back(); }
};
void build(const PipelineSpec &p, Built &b);

// Applies a random schedule; returns it as text, one Func per line.
std::string random_schedule(const PipelineSpec &p, Built &b, Rng &r);

}  // namespace kiln_fuzz
