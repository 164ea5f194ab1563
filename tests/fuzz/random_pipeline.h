// Random pipelines and random schedules for the fuzz tier.
//
// A pipeline is a chain of 2-5 int32 stages over (x, y); stage k reads stage
// k-1 (or the input) and up to two more earlier stages or the input (several
// consumers per Func), each at offsets in [-2, 2]. A stage is pure, a
// reduction over RDom r in [0, 3) (f = 0; f += ...), or pure plus an update
// (f = f * 2 + 1); its value may pass through Euclidean / or %, min, max,
// select, or bitwise operators and shifts. The input is read through repeat_edge.
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
    // 0 none, 1 / 3, 2 % 7, 3 min(v, 40), 4 max(v, -40), 5 select(v > 10, v - 5, v + 3),
    // 6 (v >> 1) ^ (v & 6), 7 (v << 1) | (v & 3)
    int post = 0;
    int kind = 0;  // 0 pure, 1 reduction over r in [0, 3), 2 pure + update f = f * 2 + 1
};
struct PipelineSpec {
    std::vector<StageSpec> stages;
    int in_w = 0, in_h = 0, out_w = 0, out_h = 0;
    // Read the input directly instead of through repeat_edge (the input then
    // covers exactly what the schedule reads; reference() does not apply),
    // and let intermediates' splits round up too (TailStrategy::RoundUp).
    bool direct_input = false;
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

// The value of a stage after its `post` operation, for either library's Expr
// (min, max and select found by argument-dependent lookup).
template<typename E>
E post_op(int which, E v) {
    switch (which) {
    case 1: return v / 3;
    case 2: return v % 7;
    case 3: return min(v, 40);
    case 4: return max(v, -40);
    case 5: return select(v > 10, v - 5, v + 3);
    case 6: return (v >> 1) ^ (v & 6);
    case 7: return (v << 1) | (v & 3);
    default: return v;
    }
}

// The stages f0, f1, ... of `p` for library L (Kiln, or Halide 14 in the
// differential tier: L names Func, Expr, RDom and repeat_edge, as kd::K and
// kd::H of tests/differential/diff.h do), reading `in` through repeat_edge
// (or directly, with p.direct_input).
template<typename L, typename ImageParam, typename Var>
std::vector<typename L::Func> build_stages(const PipelineSpec &p, const ImageParam &in, const Var &x, const Var &y) {
    using Func = typename L::Func;
    using Expr = typename L::Expr;
    Func clamped = L::repeat_edge(in);
    std::vector<Func> stages;
    for (size_t k = 0; k < p.stages.size(); k++) {
        const StageSpec &st = p.stages[k];
        Func f("f" + std::to_string(k));
        typename L::RDom r(0, 3, "r" + std::to_string(k));
        auto value = [&](Expr rx) {
            Expr v;
            for (const Tap &t : st.taps) {
                Expr xx = x + t.dx + rx, yy = y + t.dy;
                Expr input = p.direct_input ? Expr(in(xx, yy)) : Expr(clamped(xx, yy));
                Expr read = t.src < 0 ? input : Expr(stages[t.src](xx, yy));
                Expr term = t.coef * read;
                v = v.defined() ? v + term : term;
            }
            return post_op(st.post, v);
        };
        if (st.kind == 1) {
            f(x, y) = 0;
            f(x, y) += value(r);
        } else {
            f(x, y) = value(0);
            if (st.kind == 2) f(x, y) = f(x, y) * 2 + 1;
        }
        stages.push_back(f);
    }
    return stages;
}

// The pipeline as Kiln Funcs (fresh each time, so each schedule starts clean).
struct Built {
    kiln::ImageParam in{kiln::Int(32), 2, "in"};
    kiln::Var x{"x"}, y{"y"};
    std::vector<kiln::Func> stages;
    kiln::Func output() const { return stages.back(); }
};
void build(const PipelineSpec &p, Built &b);

// Applies a random schedule; returns it as .sched text (ScheduleFile::parse
// reads it), so that a failing case can be replayed and Halide given the same
// schedule (tests/differential/test_fuzz_halide.cpp).
std::string random_schedule(const PipelineSpec &p, Built &b, Rng &r);

}  // namespace kiln_fuzz
