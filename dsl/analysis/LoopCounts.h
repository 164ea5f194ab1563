// Dynamic counts of a loop nest, found by walking it with concrete values
// for its free variables (buffer sizes, parameters) instead of running it.
//
//   for (y, 0, 4) { realize f([0, 10]) { for (x, 0, 10) { f(x) = g(x) + g(x + 1) } } }
//     ->  f: 4 realizations of 10 points, 40 stores; g: 80 loads
//
// A store belongs to an update (stage k >= 1) of f when the innermost loop
// around it that belongs to f is named f.s<k>.*; any other store of f is
// its pure definition's.
//
// Each store also counts the work of the stored values (arithmetic, integer
// divisions, transcendental calls, after inlining) and where it ran: inside
// a vectorized loop (with that loop's lanes) or a parallel one (with its
// number of iterations, the tasks). The cost model of dsl/autoschedule
// weighs these.
//
// A loop whose body evaluates nothing that depends on its variable (inner
// loops' bounds, guards, realizations' bounds, directly or through lets) is
// counted by multiplying; so is one where only inner loops' bounds do, when
// its first and last iterations count the same. Others are split into
// ranges: a range whose second, middle and second-to-last iterations count
// the same is its first iteration, the rest counted once and multiplied,
// and its last; other ranges are halved, down to 4 iterations stepped
// through. Guards affine in the variable make a few such pieces. Sampling
// can miss a band of iterations that falls between the probes (rows 10 to
// 19 of 64 behind a guard `10 <= y < 20`); lowering makes one-sided guards
// (tails, clamps), which it does not miss.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/TextMemo.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

struct FunctionContents;

// Loads whose address moves by a stride of at least kiln_aliasing_stride
// bytes, a multiple of that power of two, per iteration of the innermost
// serial loop around them (B(x, k) in a GEMM's update, k innermost, B's
// rows 4 KiB apart): such addresses fall into few of a cache's sets, so
// the cache holds few of the lines one pass of the loop touches. Kept per
// Func that loads them, by what they read and how.
constexpr int64_t kiln_aliasing_stride = 1024;
struct AliasedLoads {
    std::string read;             // the Func or input loaded
    std::string loop;             // the innermost serial loop
    int64_t stride = 0;           // bytes, the largest power of two dividing the stride
    int64_t access_bytes = 0;     // one load's bytes (a vector's, or one value's)
    int64_t per_iteration = 0;    // loads per iteration of the loop (unrolled copies that move the address)
    int64_t iterations = 0;       // the loop's extent
    bool operator<(const AliasedLoads &o) const {
        return std::tie(read, loop, stride, access_bytes, per_iteration, iterations) <
               std::tie(o.read, o.loop, o.stride, o.access_bytes, o.per_iteration, o.iterations);
    }
};

struct FuncCounts {
    int64_t stores = 0;           // Provide executions
    std::vector<int64_t> stage_stores;  // stores by stage (0: the pure definition)
    int64_t pure_stores = 0;      // those of the pure definition (stage 0): the points defined
    int64_t loads = 0;            // Call executions (reads of its values; inputs get a row for these too)
    // Of those, the values loaded from memory (L1): a load shared by the
    // iterations of an unrolled loop counts once (see memory_reads).
    double values_loaded = 0;
    int64_t realizations = 0;     // Realize executions
    std::vector<int64_t> largest; // extents of the largest realization
    int64_t largest_points = 0;
    // Work of its stores (every stage), counted per stored point: simple
    // operations (+, *, min, compare, select, cast, ...), divisions and
    // modulos, calls to exp/log/pow/tanh/sin/cos (sqrt and floor count as
    // simple operations).
    int64_t arith = 0, divs = 0, transcendentals = 0;
    int64_t reads = 0;            // values its stores read (of Funcs and inputs)
    // Those that reach memory: a load that does not move with an enclosing
    // unrolled loop counts once for all its iterations, and an update's read
    // of the point it stores, when the innermost serial loop does not move
    // that point, not at all (both stay in registers).
    // A load inside a vectorized loop counts once per vector when its
    // lanes are adjacent, else once per lane: a gather (or its stride, for
    // dense loads deinterleaved by 2 to 4).
    double memory_reads = 0;
    double gathers = 0;           // of memory_reads' loads, the gathers (each counted once)
    // Stores inside a vectorized loop whose lanes are not adjacent in the
    // Func's memory (the loop moves another dimension than its innermost
    // one, or that one by a stride): each lane a store of its own. Counted
    // as memory_reads counts a gather's loads: per stored point, the stores
    // its vector takes (16 for a scatter of 16 lanes).
    double scattered_stores = 0;
    int64_t vector_stores = 0;    // stores inside a vectorized loop
    // stores outside one whose innermost loop (serial) does not move the
    // point stored: a reduction the C++ compiler cannot vectorize either
    int64_t serial_reduction_stores = 0;
    // other stores outside one whose values call exp, log, pow, tanh, sin or
    // cos: g++ does not vectorize a loop through Kiln's math routines, so
    // they too run one lane at a time
    int64_t scalar_call_stores = 0;
    int64_t vector_lanes = 0;     // the widest such loop's extent
    // The bytes of the widest type the values of those stores compute (a
    // uint8 store of float arithmetic: 4), operations in indices aside.
    int vector_value_bytes = 0;
    int64_t parallel_stores = 0;  // stores inside a parallel loop
    int64_t parallel_tasks = 0;   // the fewest iterations of a parallel loop around a store
    // Its stores' loads at an aliasing stride (AliasedLoads): how many
    // (a load an unrolled block shares counted once, as memory_reads).
    std::map<AliasedLoads, double> aliased;
};

struct LoopCounts {
    std::map<std::string, FuncCounts> funcs;
    int64_t parallel_loops = 0;  // parallel loops started (each is a fork and a join)
    bool exact = true;  // false if some bound could not be evaluated
    // Counting visits loops at most kiln_count_loop_visits times in all;
    // past that, a loop whose body changes with its variable is counted as
    // its first iteration times its extent, and `sampled` is set.
    bool sampled = false;
};

// The loop visits one count_loop_nest makes before it samples: 20x the most
// any shipped schedule or searched candidate needs (25k), a few seconds.
// Schedules whose windows change with every iteration of every level of a
// fused pyramid otherwise took minutes (local_laplacian under the search's
// default rule: 139 s).
constexpr int64_t kiln_count_loop_visits = 500000;

// The counts of a loop nest's groups, kept for the next loop nest of the
// same pipeline at the same values (the autoscheduler counts every
// candidate schedule, and a candidate changes one group). A group is a
// producer at the top of the nest, outside every loop (a Func computed at
// the root, with the Funcs computed in its loops); its counts are keyed by
// its text and, for each variable it uses from outside it, that variable's
// value and the text of the lets it names (a vector access's stride is
// found through them). One memo serves one pipeline, one set of `values`,
// `float_values` and `innermost_dims`: they are not in the key.
//
//   CountMemo memo;                          // kept across the candidates
//   count_loop_nest(body, values, floats, dims, &memo);  // a group whose text and
//                                            // inputs were counted before: added again
//
// Counts with and without a memo are the same to the bit: every group's
// counts are summed apart and added to the rest, memo or not.
//
// It also keeps the stride of each vector access it finds in the groups it
// counts, keyed by the vectorized loop's name, the index's text and type,
// and the names and texts of the lets put into it (finding one takes three
// simplifications of the index with those lets put in: 10% of the
// instructions of camera_pipe's search). A group counted again, because
// its region or its loops changed, has mostly the accesses it had: two
// thirds of camera_pipe's are found in the memo.
class CountMemo {
public:
    int64_t hits = 0, misses = 0;
    int64_t stride_hits = 0, stride_misses = 0;
    struct Entry {
        LoopCounts counts;
        int64_t visits = 0;  // the loop visits counting it took (kiln_count_loop_visits)
    };
    const Entry *find(const std::string &key) const { return groups.find(key); }
    void keep(const std::string &key, Entry e) { groups.keep(key, std::move(e)); }
    // 1: adjacent lanes (or the same); 2 to 4: that stride; 0: one load per lane.
    const int *find_stride(const std::string &key) const { return strides.find(key); }
    void keep_stride(const std::string &key, int stride) { strides.keep(key, stride); }

private:
    TextMemo<Entry> groups;
    TextMemo<int> strides;
};

// `values`: every free Int variable the loop bounds need; `float_values`:
// float scalars as constants (a bound like `int(1 / r_sigma) + 2`), whose
// arithmetic is evaluated in their type's precision; `innermost_dims`: the
// Funcs whose innermost dimension in memory is not their first
// (innermost_storage_dims()), for which loads and stores are adjacent.
LoopCounts count_loop_nest(const Stmt &s, const std::map<std::string, int64_t> &values,
                           const std::map<std::string, Expr> &float_values = {},
                           const std::map<std::string, int> &innermost_dims = {}, CountMemo *memo = nullptr);

// Each Func of `env` stored with reorder_storage() another dimension than
// its first innermost: the index of that argument.
std::map<std::string, int> innermost_storage_dims(const std::map<std::string, std::shared_ptr<FunctionContents>> &env);

}  // namespace internal
}  // namespace kiln
