// The autoscheduler's search space (Autoschedule.cpp): what the search
// knows of each Func (FuncAnalysis.cpp), a candidate schedule as a State of
// placements and loop structures, and the schedule text a State stands for
// (ScheduleWriter.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/Target.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

// Where a Func is computed: inlined, at the root, or in the group of a root
// Func (an output or a compute_root Func): per innermost serial loop of the
// group (a row or a tile), per outer loop (a strip or a row of tiles), or
// per innermost loop with its storage at the outer one (a sliding window).
// Vector: per vector of the group's innermost loop, where the group runs
// its small dimensions inside it (Structure::channels_inner): computed once
// for all of them.
enum class Place { Inline, Root, Inner, Sliding, Outer, Vector };

// The loops of a root Func's pure definition.
struct Structure {
    // Strips: a 1-D Func split into strips. Blocks: register blocks of tx
    // vectors by ty rows, for a matrix product computed per block. Columns:
    // strips of tx columns, outermost and in parallel, each down all its
    // rows (for a Func whose updates run over the rows, computed per strip).
    enum Kind { Plain, Rows, Tiles, Strips, Blocks, Columns } kind = Plain;
    int tx = 0, ty = 0;
    bool bare = false;  // no directives at all (the baseline)
    // Blocks: rows of blocks outermost (each row of blocks computes what
    // all its columns read: attention's row statistics), else columns of
    // blocks (each column panel of a GEMM's B read once).
    bool rows_outer = false;
    // Plain: no parallel loop either (a Func too small to pay for starting
    // one: convolution weights folded once per call).
    bool serial = false;
    // Rows, Tiles, Columns: its pure dimensions of at most 4 points beyond
    // the first two (an image's channels) innermost and unrolled, inside
    // the vectorized loop, so that the Funcs computed per vector (Place::
    // Vector) are computed once for all of them, not once per channel.
    bool channels_inner = false;
    bool same_loops(const Structure &o) const {
        return kind == o.kind && rows_outer == o.rows_outer && channels_inner == o.channels_inner;
    }
    std::string to_string() const { return loops_string() + (channels_inner ? ", channels innermost" : ""); }
    std::string loops_string() const {
        switch (kind) {
        case Rows: return "strips of " + std::to_string(ty) + " rows";
        case Tiles: return "tiles " + std::to_string(tx) + "x" + std::to_string(ty);
        case Strips: return "strips of " + std::to_string(tx);
        case Columns: return "strips of " + std::to_string(tx) + " columns";
        case Blocks:
            return "register blocks of " + std::to_string(tx) + " vectors x " + std::to_string(ty) + " rows" +
                   (rows_outer ? ", rows of blocks outermost" : "");
        default: return serial ? "no tiling, serial" : "no tiling";
        }
    }
};

struct FuncInfo {
    std::string name;
    std::vector<std::string> args;
    bool output = false, updates = false;
    std::vector<std::string> consumers;
    // Read once, at the same point, by the pure definition of its only
    // consumer (which has no updates): inlining it costs nothing.
    bool pointwise = false;
    // The dimensions (by position) of its consumers that its region follows:
    // k if a consumer's call uses that consumer's k-th pure variable. A Func
    // that does not follow the dimension a loop runs over has the same
    // region in every iteration of it (folded weights in a convolution).
    std::set<size_t> follows;
    // Its updates index a dimension that its consumers index with their
    // rows' variable (their second) other than by its pure variable (max
    // filter's vert_log(x, r.x, c, r.y), read at vert_log(x, y - t, ...)):
    // per strip of the consumers' rows, each update would run over all of
    // that dimension again. (An IIR filter down the columns, read
    // transposed, blur(y, x), has its rows' RVar in a dimension the
    // consumers index with their columns' variable.)
    bool rows_reduced = false;
    std::vector<int64_t> extent;  // of its largest realization with every Func at the root
    int lanes = 8;                // natural vector size of its (widest) type
    // A 1-D reduction f(y) = op(f(y), g(r, y)) over one RVar: what rfactor
    // can split into vector lanes (the RVar's loop name; "" otherwise).
    std::string rvar;
    // Such a reduction of floats that the target's exact float semantics
    // keep serial (no fast_math): why, for the explanation's `skipped`.
    std::string exact_order_only;
    // An update stores at an index computed from loaded values in some
    // dimension (a histogram's `hist(x, y, cell(v), c) += ...`): vectorizing
    // it scatters. (An index of RVars alone does not: its lanes store
    // densely along the pure first dimension.)
    bool scatter = false;
    // A matrix product f(x, y, ...) += a * b over an RDom (GEMM, a
    // convolution's taps): its RVars' loop names (matrix_rvars), "" otherwise.
    std::string matrix_rvar;
    std::string block_root;  // the group root whose register blocks it may be computed per (see above)
    // A matrix product without a block_root: the name of the wrapper f.in()
    // whose register blocks it may be computed per ("" if none). The
    // wrapper has a FuncInfo of its own but is not in the realization order.
    std::string wrapper;
    // A matrix product's operand whose first argument is the product's
    // first variable (the one its blocks vectorize) and whose other
    // arguments move with its innermost RVar (B in a GEMM's B(x, k)): what
    // packing wraps, pack_operand.in(product), per panel of the blocks
    // (State::packed); pack_var is the wrapper's first variable. "" if none.
    std::string pack_operand, pack_var;
    int pack_dim = 0;          // the operand's first dimension that moves with the RVar
    // The bytes its address moves per iteration of the RVar at the sizes
    // searched, their largest power-of-two factor: packing is weighed where
    // that is at least kiln_aliasing_stride (0 until the baseline's counts).
    int64_t pack_stride = 0;
};

// The kinds of decision the search makes per Func, as the keys of its
// explanation's comments ("place:f"): placement, a group's loops, a row
// reduction's form, a scattering update's form, a product's operand packed.
inline const char *const decision_kinds[] = {"place:", "loops:", "reduction:", "updates:", "packing:"};

struct State {
    std::set<std::string> rfactored;             // reductions split into vector lanes (FuncInfo::rvar)
    // Funcs with scattering updates (FuncInfo::scatter) whose updates run
    // serially, small dimensions unrolled innermost (see update_stanzas).
    std::set<std::string> serial_updates;
    // Matrix products computed per register block of their wrapper f.in()
    // (FuncInfo::wrapper), whose place, group and structure (Blocks) are
    // in the maps below under the wrapper's name.
    std::set<std::string> wrapped;
    // Matrix products computed per register block whose operand
    // (FuncInfo::pack_operand) is copied per column panel of the blocks,
    // contiguous in the order the blocks read it (pack_site).
    std::set<std::string> packed;
    // Of every Func that is not an output, and of an output computed at a
    // loop of another output that reads it (Inner or Outer in that
    // output's group: written to its buffer there); other outputs are at
    // the root.
    std::map<std::string, Place> place;
    std::map<std::string, std::string> group;    // Inner, Sliding, Outer: the group's root Func
    std::map<std::string, Structure> structure;  // outputs and Root Funcs
    Place place_of(const std::string &f) const {
        auto it = place.find(f);
        return it == place.end() ? Place::Root : it->second;  // an output not in place: at the root
    }
};

// The Funcs the search schedules, producers first, and what it knows of
// each (extents of 1024 until the baseline's counts give them).
struct PipelineFuncs {
    std::vector<std::string> order;
    std::map<std::string, FuncInfo> info;
};
PipelineFuncs analyze_funcs(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                            const std::vector<std::string> &out_names, const Target &t);

// A matrix product read elsewhere than at its own points (attention's
// scores, whose row maximum reads whole rows) has no consumer to be computed
// per register block of; its wrapper f.in(), which reads it at the same
// points, can be that consumer (FuncInfo::wrapper). Adds the wrappers'
// FuncInfos (with the products' extents) to `info`.
void add_wrappers(std::map<std::string, FuncInfo> &info, const Environment &env);

// Rows of a register block: 3/4 of a vector's lanes keeps 2 vectors of
// accumulators per row in registers (16 + 12 of AVX-512's 32 vector
// registers, 12 + 4 of AVX2's 16); within a strip of `strip` rows, the
// largest number up to that which divides it (no block overlaps the next
// strip's rows).
int block_rows(const FuncInfo &f, int strip = 0);

// The loops a Func gets when it goes to the root: strips of 16 rows (2-D),
// strips of 64 vectors (1-D), or none.
Structure initial_structure(const FuncInfo &f);

// The schedule text of a State, and the loops it names.
class ScheduleWriter {
public:
    ScheduleWriter(const std::map<std::string, FuncInfo> &info, const std::vector<std::string> &order,
                   const Environment &env)
        : info(info), order(order), env(env) {}

    // The loops of group root r for a Func placed at p in it: {compute, store}.
    // Empty if the structure has no such loop.
    std::pair<std::string, std::string> loops_for(const std::string &r, const Structure &s, Place p) const;

    // Whether f's region moves with the loop its group root runs at place
    // p (loops_for): the root's rows (dimension 1) per strip, row of tiles,
    // register block or row of blocks, its first dimension per strip of a
    // 1-D Func, per column of blocks or per strip of columns (the rows per
    // row of such a strip), either per 2-D tile.
    static bool follows_loop(const FuncInfo &f, const Structure &s, Place p);

    // The dimensions of f, beyond the first two, of at most 4 points at the
    // sizes searched (Structure::channels_inner), by position.
    static std::vector<size_t> small_dims(const FuncInfo &f);

    // Where the operand of product f is packed (State::packed): the group
    // root of its register blocks and their panel loop, {"", ""} where the
    // blocks have no column panels (rows of blocks outermost, or a group
    // computed per strip of another: a panel would be one block).
    std::pair<std::string, std::string> pack_site(const State &s, const FuncInfo &f) const;
    // Its stanza: "B.in(matmul): compute_at(output, xo) vectorize(_0, natural_vector_size)".
    std::string pack_stanza(const State &s, const FuncInfo &f) const;

    // "inline", "compute_root" or "compute_at(g, loop)" (with its store_at).
    std::string option_name(const State &s, const std::string &f, Place p) const;

    // The schedule file of a state, consumers first (a Func's group root
    // has its loops before the Func names them). With `why`, each Func's
    // decisions ("place:f", "loops:f", "reduction:f", "updates:f") as comments.
    std::string render(const State &s, const std::map<std::string, std::string> *why = nullptr) const;

private:
    const std::map<std::string, FuncInfo> &info;
    const std::vector<std::string> &order;
    const Environment &env;

    std::vector<std::string> update_stanzas(const FuncInfo &fi, bool root, bool serial) const;
    static std::string block_loops(const FuncInfo &f, const Structure &s);
    static std::string channel_loops(const FuncInfo &f, const Structure &s, const std::string &loops);
    std::string wrapper_directives(const State &s, const FuncInfo &f) const;
    std::string root_directives(const FuncInfo &f, const Structure &s) const;
};

}  // namespace internal
}  // namespace kiln
