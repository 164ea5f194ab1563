// The NPU instruction selector shared by NpuSelect*.cpp: the Selector that
// walks the loop nest after bounds inference (see NpuSelect.cpp) and the
// operand types its parts pass around. NpuSelect.cpp has the walk, the
// Func storage, windows and loads; NpuSelectVector.cpp the vector operations
// of a tile's value; NpuSelectReduce.cpp row and column reductions;
// NpuSelectMatrix.cpp matrix updates onto TMATMUL; NpuSelectHalo.cpp a
// stencil's halo, loaded once per tile; NpuSelectShapes.cpp how 1-D Funcs
// lie in tiles; NpuSelectChecks.cpp the checks of a
// tile's loops whose messages say how to fix the schedule. Internal to them: the
// rest of the compiler calls npu_select_kernel (NpuKernel.h).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "NpuKernel.h"
#include "ir/Error.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {
namespace npu_select {

inline std::string c_name(const std::string &ir) { return npu_c_name(ir); }
// A pointer into e's IntImm, so e must outlive it: binding a temporary (the
// result of simplify()) left it dangling (found by AddressSanitizer).
const int64_t *const_int(const Expr &e);
const int64_t *const_int(Expr &&) = delete;
// A tile operand (NpuArg with a buffer), or a scalar (its C++ in `code`).
struct Operand : NpuArg {
    bool fresh = false;  // a temporary of this expression: the next instruction may overwrite it
};

// The one table from IR operations to NPU instructions (NpuSelectVector.cpp).
struct NpuOpRule {
    IRNodeType node;
    const char *call;       // node Call: the function, whose unary instruction `tile` is
    npu::Op tile, scalar;   // tile op tile, tile op scalar
    bool commutes;          // scalar op tile is the tile-scalar form too
    npu::Op row, col;       // the reductions along x and y (kind Reduce), else `tile`
    npu::Op row_expand, col_expand;  // tile op column / tile op row, fused (kind ExpandBinary), else `tile`
};
// e's rule (a Call: of one argument), or nullptr when no instruction computes it.
const NpuOpRule *npu_op_rule(const Expr &e);
// The operands of a binary operation or comparison; false when e is none.
bool binary_operands(const Expr &e, Expr &a, Expr &b);

// Elements in a row of `cols` elements of type t, padded to the 32-byte alignment.
inline int padded_cols(int cols, npu::DType t) {
    const int per_row = 32 / npu::dtype_size(t);
    return (cols + per_row - 1) / per_row * per_row;
}
// e as a read of a Func or image: the Call itself, or the Call inside a
// widening cast<float>(...) of a 16-bit float read; nullptr otherwise.
const Call *read_of(const Expr &e);
// The same for a matrix operand, also inside a cast of an int8 read
// (cast<int32_t>: the matrix unit multiplies int8 and sums in int32).
const Call *matrix_read_of(const Expr &e);

// The values of a 2-D Tuple Func f that vary along x (its dimension 0)
// neither in f's pure definition nor in its updates, but for reads of those
// same values (at any x): a fixed point from all of them; none when every
// value is one. The NPU keeps them as columns (flash attention's m and l),
// and the ideal stream counts them once per row.
std::set<int> tuple_column_values(const FunctionContents &f);

// How a 1-D Func or image lies in a tile: one value per row (a column
// R x 1, indexed by the tile's y) or one value per column (a row 1 x C,
// indexed by x). 2-D Funcs are Full.
enum class Shape { Full, Column, Row };

// Records, for every 1-D Func and image of the loop nest, whether tiles
// read or write it along y (Column) or along x (Row), a 1-D Func read only
// inside another 1-D Func's tile taking that Func's orientation; and the
// Funcs of 2 or more dimensions realized over one value of each dimension
// from 1 on (`planar`: a per-row statistic of one plane, read as a 1-D
// Func) (NpuSelectShapes.cpp).
void find_shapes(const Stmt &loop_nest, std::map<std::string, Shape> &shapes, std::set<std::string> &planar);

// The loops of one tile: y outer, x inner; a 1-D tile has one of them.
struct Nest {
    const For *fy = nullptr, *fx = nullptr;
    int R = 1, C = 1;
    std::map<std::string, Expr> lets;  // lets between and inside the loops, expanded
};

struct FixForm;  // an epilogue's parts (NpuSelectFix.cpp)

class Selector {
public:
    Selector(const std::string &kernel_name, const Environment &env, const std::vector<std::string> &outputs,
             const Target &t, std::map<std::string, Shape> shapes, std::set<std::string> planar,
             bool share_subexpressions)
        : kernel_name(kernel_name), env(env), outputs(outputs), target(t), shapes(std::move(shapes)),
          planar(std::move(planar)), share_subexpressions(share_subexpressions) {}

    NpuKernel k;

    void stmt(const Stmt &s, std::vector<NpuItem> &out);
    // After selection: drops the whole load of each panel loaded in k-slices (sliced_load) that nothing reads whole.
    void drop_sliced_panel_loads(std::vector<NpuItem> &items);
    // After that: gives each such panel whose loop can prefetch (ring_panels)
    // the slots L1 has room for beside the other L1 buffers, up to twice its
    // slices, and loads the next panel's slices into them (NpuRing).
    void make_rings(std::vector<NpuItem> &items);

private:
    // Scalar C++ for an expression of loop variables, lets and Params.
    std::string scalar(const Expr &e) const;
    // While alive, names the let, loop or Func whose scalar code is being
    // written (the message of an expression the S pipe cannot compute).
    struct ScalarOwner {
        ScalarOwner(Selector &s, const std::string &name) : s(s), previous(s.scalar_owner) { s.scalar_owner = &name; }
        ~ScalarOwner() { s.scalar_owner = previous; }
        Selector &s;
        const std::string *previous;
    };
    const std::string *scalar_owner = nullptr;
    const std::string kernel_name;  // the host stub's name, which run-time messages start with
    const Environment &env;
    const std::vector<std::string> &outputs;
    const Target &target;
    const std::map<std::string, Shape> shapes;
    // Funcs of 2 or more dimensions computed over one value of each
    // dimension from 1 on (find_shapes): a per-row statistic of one key
    // block, block_max(i, kb), is a column of its plane kb. Their tiles
    // span dimension 0 alone; the further dimensions pick the plane.
    const std::set<std::string> planar;
    std::vector<std::pair<std::string, Expr>> lets;  // enclosing lets, outermost first
    std::map<std::string, int> ub_buffer;            // Func (value_key) -> its UB buffer
    // The key of value i of a Func in ub_buffer: its name for value 0,
    // "f[i]" for the further values of a Tuple, each in a buffer of its own.
    static std::string value_key(const std::string &f, int i) {
        return i ? f + "[" + std::to_string(i) + "]" : f;
    }
    std::map<std::string, std::vector<Expr>> ub_mins;  // Func -> its realization's min per dimension
    // A Tuple of 2-D tiles in UB: the values whose definitions do not vary
    // along x (flash attention's m and l: per query row, whatever the
    // feature c), each kept as a column R x 1 rather than a tile.
    std::map<std::string, std::set<int>> column_values;
    bool is_column_value(const std::string &f, int i) const {
        auto it = column_values.find(f);
        return it != column_values.end() && it->second.count(i);
    }

    std::map<std::string, int> ub_cols;                // 2-D Func in UB -> the columns of its region (unpadded)
    std::map<std::string, int> loaded;                 // image window -> the UB tile it is loaded in (this loop body)
    std::map<std::string, int> expanded;               // (buffer, shape) -> its TROWEXPAND/TCOLEXPAND (this loop body)
    std::vector<std::string> loop_vars;                // enclosing loops, outermost first
    std::vector<const For *> loop_stack;               // the same loops
    std::vector<NpuItem> hoisted;                      // loop-invariant loads, emitted before the outermost loop
    std::set<int> hoisted_buffers;
    std::map<std::string, int> hoisted_loaded;         // image window or expansion -> its hoisted tile
    std::string current;                               // the Func whose tile is being selected
    // Common subexpressions of the current tile's value: a tile-valued
    // subexpression that the value computes more than once is selected once,
    // into a temporary that nothing overwrites until the tile is done
    // (count_repeats, then select()). Off when the kept tiles overflowed UB
    // and the kernel is selected again (npu_select_and_place).
    const bool share_subexpressions;
    std::map<std::string, int> repeats;     // expression key -> how many times the value selects it
    std::map<std::string, Operand> shared;  // expression key -> its tile, once computed
    // e is a tile value that select() may compute once and share: float32,
    // neither a read (loads and views are shared already) nor a scalar.
    bool shareable(const Expr &e, const Nest &n) const;
    // Counts the selections of each shareable subexpression of `value` (the
    // current tile's value, selected next): a repeated one's operands once,
    // as it is computed once; d * d's d once (selected once).
    void count_repeats(const Expr &value, const Nest &n);
    int temps = 0;
    bool current_double = false;

    Expr expand(Expr e) const {
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) e = substitute(it->first, it->second, e);
        return simplify(e);
    }

    bool is_output(const std::string &f) const { return std::count(outputs.begin(), outputs.end(), f) > 0; }

    const FunctionContents &func(const std::string &name) const {
        auto it = env.find(name);
        internal_assert(it != env.end()) << "NPU target: no Func " << name;
        return *it->second;
    }

    // The dimensions of `name` (read or written with `dims` coordinates) that its tile spans: 2, or 1
    // for a 1-D Func and a planar one; the others pick the plane.
    size_t tile_dims(const std::string &name, size_t dims) const {
        return planar.count(name) ? 1 : std::min<size_t>(dims, 2);
    }
    Shape shape_of(const std::string &name, size_t dims) const {
        if (tile_dims(name, dims) >= 2) return Shape::Full;  // 3-D and 4-D: planes of 2-D tiles
        auto it = shapes.find(name);
        return it == shapes.end() ? Shape::Column : it->second;
    }

    MemoryType memory_of(const std::string &name, bool at_root) const {
        if (is_output(name)) return MemoryType::GM;
        MemoryType m = func(name).schedule.memory_type;
        if (m == MemoryType::Auto) return at_root ? MemoryType::GM : MemoryType::UB;
        return m;
    }

    int add_buffer(const std::string &name, const std::string &owner, int rows, int cols, bool dbl,
                   npu::Mem memory = npu::Mem::UB, npu::DType dtype = npu::DType::F32);

    void realize(const Realize *r, std::vector<NpuItem> &out);

    // The Provide inside `loops` (outermost first, each the next one's body
    // but for lets), whose Func's tile is selected from now on; adds the lets
    // of their bodies to `lets`, expanded.
    const Provide *begin_stage(const std::vector<const For *> &loops, std::map<std::string, Expr> &lets);

    std::set<std::string> gm_funcs;

    static const Stmt &skip_lets(const Stmt &s) {
        const Stmt *b = &s;
        while (const LetStmt *l = b->as<LetStmt>()) b = &l->body;
        return *b;
    }

    void loop(const For *f, std::vector<NpuItem> &out);
    // A Provide outside any loop: a user error saying why (a Func of no
    // dimensions, or loops of extent 1 at its compute_at level) and what to do.
    void provide_outside_loop(const Provide *p);

    // A window of Func/Image `name` at args: its coordinates at the tile's
    // origin, and how it lies in the tile. Each coordinate must be the
    // tile's own loop variable plus a constant.
    struct Window {
        Expr x0, y0;
        Shape shape = Shape::Full;
        Expr lo[2], hi[2];  // a clamped coordinate's bounds (x, y): a TLOAD with replicated edges
        Expr fill;          // if defined, a TLOAD padded with this constant outside those bounds instead
        // The coordinates of dimensions 2, 3, ... of a 3-D or 4-D read (a
        // channel, a batch), expanded: fixed within the tile, they pick the
        // plane of the buffer the 2-D window lies in.
        std::vector<Expr> outer;
        bool clamped() const { return lo[0].defined() || lo[1].defined(); }
        // The window's origin or plane depends on loop variable v.
        bool moves_with(const std::string &v) const {
            bool m = expr_uses_var(x0, v) || expr_uses_var(y0, v);
            for (const Expr &o : outer) m |= expr_uses_var(o, v);
            return m;
        }
        // The plane as text, for the keys of loads and halos.
        std::string plane_key() const {
            std::ostringstream s;
            for (const Expr &o : outer) s << "@" << o;
            return s.str();
        }
    };

    // clamp(e, lo, hi) as the boundary conditions write it: max(min(e, hi), lo) or min(max(e, lo), hi).
    static bool match_clamp(const Expr &e, Expr &v, Expr &lo, Expr &hi) {
        if (const Max *mx = e.as<Max>())
            if (const Min *mn = mx->a.as<Min>()) {
                v = mn->a, hi = mn->b, lo = mx->b;
                return true;
            }
        if (const Min *mn = e.as<Min>())
            if (const Max *mx = mn->a.as<Max>()) {
                v = mx->a, lo = mx->b, hi = mn->b;
                return true;
            }
        return false;
    }
    Window window(const std::string &name, const std::vector<Expr> &args, const Nest &n);

    // The tile of `shape` a window fills in an R x C tile.
    static std::pair<int, int> window_shape(Shape s, int R, int C) {
        return {s == Shape::Row ? 1 : R, s == Shape::Column ? 1 : C};
    }

    // Elements between the window's origin and the start of Func `name`'s UB buffer.
    Expr ub_offset(const std::string &name, const Window &w);

    std::string gm_code(const std::string &name, const Window &w) const;

    // Appends op(args...): its pipe from the ISA table, the buffers it reads and writes from its tiles.
    void instr(std::vector<NpuItem> &out, npu::Op op, std::vector<NpuArg> args, npu::Cmp cmp = npu::Cmp::EQ,
               bool transpose = false);

    // Temporaries of the current tile whose last reader has been selected, by shape: reused
    // (only the vector pipe touches them, in order, so reuse needs no flag).
    std::map<std::pair<int, int>, std::vector<int>> free_temps;

    int temp(int rows, int cols);
    // A new temporary of the current tile, never one freed by an earlier
    // instruction: the destination of a TLOAD, which would otherwise wait
    // for the vector pipe's last read of the reused buffer within the body.
    int load_temp(int rows, int cols) {
        return add_buffer(current + ".t" + std::to_string(temps++), current, rows, cols, current_double);
    }

    // `o` has been read for the last time (unless it became `keep`, the result).
    void release(const Operand &o, int keep);

    // Where a result of R x C goes: `dst`, else a fresh operand of that shape (overwritten in place), else a new temporary.
    int result(int dst, int R, int C, std::initializer_list<const Operand *> ops);

    // The top-left R x C of buffer b (from its row row0 on); an operand read again, never overwritten.
    static Operand tile_operand(int b, int R, int C, bool fresh, int row0 = 0) { return Operand{{b, R, C, row0, ""}, fresh}; }
    static Operand again(Operand o) { return o.fresh = false, o; }
    static NpuArg gm_arg(std::string code) { return NpuArg{-1, 0, 0, 0, std::move(code)}; }

    // A window of shape `s` in buffer b, widened to the R x C tile by TROWEXPAND / TCOLEXPAND when it is 1-D.
    Operand expand_to(int b, Shape s, int dst, int R, int C, std::vector<NpuItem> &out);

    // A stencil's halo: the union of a tile's windows of one input (or GM
    // Func) at constant offsets from each other, loaded once into a UB tile
    // of (R + the offsets' span in y) x (C + their span in x); each window
    // is then the sub-tile at its offset (a row view, or TEXTRACT at a
    // column offset). Planned for each vector tile (plan_halos), loaded at
    // its first read, and read by later tiles of the same loop body whose
    // windows it holds.
    struct Halo {
        std::string name, clamp;  // the input, and its clamped bounds as text (windows with other bounds differ)
        Window w;                 // the union window: origin and clamped bounds
        int rows = 0, cols = 0;
        int buffer = -1;          // its float32 UB tile, once loaded
    };
    std::vector<Halo> planned;   // the current tile's, not loaded yet
    std::vector<Halo> halos;     // loaded in this loop body
    bool halo_reads = false;     // the current tile's reads may come from halos (a vector tile's value)
    std::string clamp_key(const Window &w) const;
    // Plans the halos of a vector tile whose value is `value`.
    void plan_halos(const Expr &value, const Nest &n);
    // The window w (R x C) of `name` as a sub-tile of a halo (loading a planned one), or an
    // undefined operand (buffer -1) when no halo holds it.
    Operand halo_read(const std::string &name, const Window &w, npu::DType dt, int dst, int R, int C,
                      std::vector<NpuItem> &out);

    // A read of a Func or image inside the tile; with `narrow`, a 1-D window
    // is returned as its column or row, not widened to the tile; with `fill`,
    // a clamped read of an image or GM Func padded with that constant outside the clamp's bounds.
    Operand select_call(const Call *c, int dst, const Nest &n, std::vector<NpuItem> &out, bool narrow = false,
                        const Expr &fill = Expr());
    // select(v inside [lo, hi] in each clamped dimension, f(clamp(v, lo, hi), ...), constant): the
    // constant_exterior boundary (and the zero outside an adjoint's region). Returns the read with
    // `fill` set to the constant, or null when `sel` is not of that form.
    const Call *padded_read(const Select *sel, const Nest &n, Expr &fill);

    // e needs no tile: it uses neither of the tile's loops nor any Func or image (a tile-scalar operand).
    bool scalar_only(const Expr &e, const Nest &n) const;
    // e reads a 1-D Func or image as a column or row of a 2-D tile.
    bool is_narrow(const Expr &e, const Nest &n) const;
    // a op b with b (or a, when op commutes) a column or row of the 2-D tile:
    // one TROWEXPAND* / TCOLEXPAND*, so the widened tile is never built. An
    // undefined operand when the op has no fused form or the other side is a scalar.
    Operand select_fused_expand(const NpuOpRule &rule, const Expr &x, const Expr &y, int dst, const Nest &n,
                                std::vector<NpuItem> &out);

    // Selects e into buffer `dst` (or a temporary when dst < 0) over the R x C tile; returns the operand.
    // A repeated subexpression (count_repeats) is computed once and read again.
    Operand select(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out);
    // select() without that sharing at e itself.
    Operand select_value(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out);
    // A 16-bit float value (a Func of that type, or cast<float16_t>(e) of a
    // float32 e) into the 16-bit buffer dst: computed in float32, then one
    // TCVT (the vector unit computes 16-bit data in float32).
    void select_narrowed(const Expr &v, int dst, const Nest &n, std::vector<NpuItem> &out);
    // A new UB buffer of the current tile for 16-bit values (TLOAD or TCVT destination).
    int temp16(int rows, int cols, npu::DType t) {
        return add_buffer(current + ".h" + std::to_string(temps++), current, rows, cols, current_double,
                          npu::Mem::UB, t);
    }

    // o is a column (R x 1) in the 2-D tile of n.
    bool is_column(const Operand &o, const Nest &n) const;
    // rule's operation on column a (and column or scalar b; none for a unary op), into a new column.
    Operand column_op(const NpuOpRule &rule, const Operand &a, const Operand &b, const Nest &n,
                      std::vector<NpuItem> &out);
    // A column operand as the value of the tile: itself, or widened (TROWEXPAND) into dst.
    Operand widen(const Operand &col, int dst, const Nest &n, std::vector<NpuItem> &out);
    // A scalar operand spread over an R x C temporary (TDUP); tiles unchanged.
    Operand as_tile(Operand o, const Nest &n, std::vector<NpuItem> &out);

    // select(a cmp b, t, f): TCMP into a u8 mask, then TSEL.
    Operand select_select(const Select *sel, int dst, const Nest &n, std::vector<NpuItem> &out);

    // The update f(y) = f(y) op g(r, y) over a 2-D tile (y, r): a row
    // reduction (TROWSUM / TROWMAX into f's column), or with f indexed by x
    // a column reduction (TCOLSUM / TCOLMAX into f's row).
    void select_reduction(const Provide *p, const Nest &n, std::vector<NpuItem> &out);
    // A Tuple state updated over a row tile whose update is a running
    // maximum and a sum rescaled to it (the online softmax): per tile or
    // chunk, TROWMAX, TMAX, the rescale factor and TROWSUM_ACC
    // (NpuSelectReduce.cpp). Any other Tuple update is refused.
    void select_online_reduction(const Provide *p, const Nest &n, bool rows, std::vector<NpuItem> &out);
    void check_one_rvar(const std::string &f, const std::string &loops, const char *op);
    // The reduction's loop `loop` (of extent `extent`) must cover its
    // RVar's whole extent: one instruction does not accumulate across a
    // loop over the rest of a split RVar. `what` names the update, `fix`
    // says which loops may be tiled instead.
    void check_whole_rvar(const std::string &f, const For *loop, const Expr &extent, const std::string &what,
                          const char *op, const char *fix);

    std::set<int> zeroed;  // L0C buffers whose next TMATMUL starts from 0

    // The L0C tile of buffer b in UB (TMOV on the fix pipe), once per loop body.
    Operand from_l0c(int b, int dst, int R, int C, std::vector<NpuItem> &out);

    // The tile of output or GM Func p (window w) when its value is an
    // epilogue of a matrix accumulator in L0C over the same tile (+ a
    // per-column bias, max(., 0), times a scalar, then a conversion:
    // saturating_cast<int8_t>(round(.)) of cast<float> of an int32 one, a
    // cast to f16 / bf16, or none): one TSTORE from L0C through the fix pipe
    // with that epilogue (NpuSelectFix.cpp). False when the value reads no
    // accumulator, or a float32 one in another form (the vector unit then
    // computes it); a user error when it reads an int32 one in another form.
    bool select_fix_store(const Provide *p, const Window &w, const Nest &n, std::vector<NpuItem> &out);
    // Empty when v, the value of Func func's tile, is an epilogue of
    // accumulator acc the fix pipe applies (its parts in f), else what is not.
    std::string fix_form(const std::string &func, const Expr &v, const std::string &acc, const Nest &n, FixForm &f);
    // f is a Func whose matrix accumulator (float32 or int32) is in L0C.
    bool is_accumulator(const std::string &f) const {
        auto it = ub_buffer.find(f);
        return it != ub_buffer.end() && k.buffers[it->second].memory == npu::Mem::L0C;
    }
    // f is a Func whose int32 accumulator is in L0C.
    bool is_int_accumulator(const std::string &f) const {
        return is_accumulator(f) && k.buffers[ub_buffer.at(f)].dtype == npu::DType::I32;
    }

    // An operand of a matrix update: its window loaded GM -> L1 (TLOAD) and
    // moved L1 -> L0A/L0B (TMOV); before the outermost loop when it does
    // not move with any loop.
    int stage_operand(const Call *c, const Nest &n, npu::Mem l0, std::vector<NpuItem> &out);
    // An operand panel's load (a Func in L1, one TLOAD of the window it
    // copies): the source and its window (expanded), and how many loops
    // were around it. A panel read in k-slices by a split K is loaded in
    // those slices instead, each on the first trip of the loops between
    // the panel's and the slice loop (sliced_load), and its whole load is
    // dropped when selection ends (npu_select_kernel).
    struct PanelLoad {
        std::string source;
        Window window;
        int cols = 0;
        size_t depth = 0;
    };
    std::map<int, PanelLoad> panel_loads;  // L1 buffer -> its load
    std::set<int> sliced_panels, whole_panel_reads;
    const For *slice_loop = nullptr;  // the k-slice loop of the matrix update being selected, if split
    // The TLOAD of the k-slice of panel b whose first row is `row` (n.R
    // rows), when the panel is loaded per slice: its slice count, else 0.
    int sliced_load(int b, const Expr &row, const Nest &n, std::vector<NpuItem> &out);
    // A panel loaded in k-slices whose panel loop can prefetch (sliced_load):
    // its ring without slots yet, the rows of a slice, its loops, the
    // window of the next panel's slice of a slice iteration and its input.
    struct RingPanel {
        NpuRing ring;
        int rows = 0;
        const For *panel_loop = nullptr, *tile_loop = nullptr, *slice_loop = nullptr;
        Window next;
        std::string source;
    };
    std::map<int, RingPanel> ring_panels;  // L1 buffer -> its ring
    // The instructions of ring r of buffer b under items: slots for the
    // slices, the first panel's guard, the next panel's load after each move.
    void ring_items(std::vector<NpuItem> &items, int b, const RingPanel &r);

    // C(x, y) = C(x, y) + A(k, y) * B(x, k) over a 3-D nest of constant
    // loops (any order), C in L0C: one TMATMUL (from 0, after C's pure
    // definition) or TMATMUL_ACC of the M x K window of A and the K x N
    // window of B. The sum runs over k in order, as the host's loop does.
    void select_matmul(const For *l0, const For *l1, const For *l2, std::vector<NpuItem> &out);
    // The loop directly around a reduction's tile (a matrix update's nest,
    // a row or column reduction) over the parts of its split RVar (fk the
    // part's loop, of extent K): the k-slices of a split K, the chunks of a
    // row longer than a tile. nullptr when the RVar is not split there; a
    // user error (naming `what`, the loop) when the parts do not cover the
    // RVar exactly or the loop is not serial.
    const For *split_rvar_loop(const std::string &f, const For *fk, int64_t K, const char *what);
    // A split K whose slice loop sits among `loops`, the matrix update's
    // innermost three: a user error saying where the slice loop goes.
    void check_slice_loop_place(const std::string &f, const std::vector<const For *> &loops);

    // The legality of an explicit npu_tile(x, y) on the stage whose innermost
    // loops are fy (rows) and fx (columns): they must be the loops it names,
    // of constant extents, with rows of a multiple of 32 bytes.
    void check_npu_tile(const std::string &f, const For *fy, const For *fx, const int64_t *ey, const int64_t *ex);

    // A tile loop of non-constant extent that runs over an RVar of f's
    // update whose extent is known only at run time: a user error saying to
    // give the RDom constant bounds (bound() cannot).
    void check_rvar_extent(const std::string &f, const For *loop);
    // The RDom variable of one of f's updates that `loop` runs over (split
    // or not), with the update's stage number; nullptr for a pure loop.
    const ReductionVariable *rvar_of(const std::string &f, const For *loop, int *stage = nullptr) const;

    // The Func whose own loops decide the region f is computed over: f when
    // it is an output or compute_root, else the root of its compute_at chain.
    std::string region_root(const std::string &f) const;
    // For a message about a run-time extent of dimension `dim` of Func f (its
    // tile loop or its region): what makes it constant, with the Func and Var
    // names: bound(v, 0, W) with a constant W or a split by a constant on
    // region_root(f). Empty when that dimension is already bound() to a
    // constant there (the run-time size comes from elsewhere, e.g. an RDom).
    std::string constant_extent_fix(const std::string &f, int dim) const;
    // The same for a loop of f's tile: a split by a constant factor where the
    // loop is a split's inner loop of run-time factor, else constant_extent_fix
    // for the dimension it runs over, else constant tiles in general.
    std::string tile_extent_fix(const std::string &f, const For *loop) const;

    // The values of p, a Func in UB, each into its buffer; a Tuple's value
    // that a later value reads goes through a temporary (NpuSelect.cpp).
    void select_values(const Provide *p, const Nest &n, npu::DType dtype, std::vector<NpuItem> &out);
    // The tile of one stage: fy and/or fx (a 1-D tile has one), with a Provide inside.
    void select_tile(const For *fy, const For *fx, std::vector<NpuItem> &out);
};

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
