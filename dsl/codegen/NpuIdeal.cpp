// See NpuIdeal.h.
#include "NpuIdeal.h"

#include <algorithm>
#include <set>

#include "NpuSelect.h"
#include "ir/ExprKey.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "analysis/Bounds.h"
#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "frontend/ReportLoopNest.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

namespace {

// Whether e reads a Func or an image: an expression that does not is a
// scalar of the S pipe (1 / sqrt(64.0f)), no vector work.
bool reads(const Expr &e) {
    struct Reads : IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found |= c->call_type != Call::PureExtern;
            IRVisitor::visit(c);
        }
    } r;
    r.include(e);
    return r.found;
}

// The vector unit's element-ops of one value: each operation on values
// read one, a transcendental `transcendental` of them; reads, constants,
// variables and scalars none; a subexpression that occurs more than once
// (d * d) once. The widening of a 16-bit read (cast<float>(input(x, y)))
// is not counted here but its source noted in `widened` (name -> is an
// image): one conversion per element of the source, however many Funcs
// read it.
class ElementOps : public IRVisitor {
public:
    ElementOps(double transcendental, std::map<std::string, bool> &widened)
        : transcendental(transcendental), widened(widened) {}
    double ops = 0;

    using IRVisitor::visit;
    void include(const Expr &e) override {
        if (e.defined() && reads(e) && seen.insert(*expr_key(e)).second) IRVisitor::include(e);
    }

private:
    const double transcendental;
    std::map<std::string, bool> &widened;
    std::set<std::string> seen;

    void visit(const Cast *c) override {
        if (const Call *read = npu_select::read_of(Expr(c)); read && c->type != c->value.type()) {
            widened[read->name] = read->call_type == Call::Image;
            return;
        }
        if (c->type != c->value.type()) ops += 1;  // TCVT
        IRVisitor::visit(c);
    }
#define KILN_NPU_IDEAL_OP(T)                      \
    void visit(const T *o) override {             \
        ops += 1;                                 \
        IRVisitor::visit(o);                      \
    }
    KILN_NPU_IDEAL_OP(Add)
    KILN_NPU_IDEAL_OP(Sub)
    KILN_NPU_IDEAL_OP(Mul)
    KILN_NPU_IDEAL_OP(Div)
    KILN_NPU_IDEAL_OP(Mod)
    KILN_NPU_IDEAL_OP(Min)
    KILN_NPU_IDEAL_OP(Max)
    KILN_NPU_IDEAL_OP(EQ)
    KILN_NPU_IDEAL_OP(NE)
    KILN_NPU_IDEAL_OP(LT)
    KILN_NPU_IDEAL_OP(LE)
    KILN_NPU_IDEAL_OP(GT)
    KILN_NPU_IDEAL_OP(GE)
    KILN_NPU_IDEAL_OP(And)
    KILN_NPU_IDEAL_OP(Or)
    KILN_NPU_IDEAL_OP(Not)
    KILN_NPU_IDEAL_OP(Select)
#undef KILN_NPU_IDEAL_OP
    void visit(const Call *c) override {
        if (c->call_type != Call::PureExtern) return;  // a read: its coordinates are the DMA's, not vector work
        if (c->name != "stop_gradient") {
            const npu_select::NpuOpRule *rule = npu_select::npu_op_rule(Expr(c));
            ops += rule && npu::is_transcendental(rule->tile) ? transcendental : 1;
        }
        IRVisitor::visit(c);
    }
};

// A matrix update C(x, y) = C(x, y) + A(k, y) * B(x, k): the type of its
// operands, or false.
bool matrix_update(const FunctionContents &f, const Definition &d, Type &operand) {
    const Add *add = d.values.size() == 1 && d.rdom ? d.values[0].as<Add>() : nullptr;
    if (!add || f.args.size() < 2) return false;  // 3-D: a plane per value of the further dimensions
    for (const Expr *self : {&add->a, &add->b}) {
        const Call *c = self->as<Call>();
        const Mul *mul = (self == &add->a ? add->b : add->a).as<Mul>();
        if (!c || c->name != f.name || !mul) continue;
        const Call *a = npu_select::matrix_read_of(mul->a), *b = npu_select::matrix_read_of(mul->b);
        if (!a || !b || a->args.size() < 2 || b->args.size() < 2) continue;
        operand = a->type;
        return true;
    }
    return false;
}

// The ops of one value v of d into ops.
void count_value(const FunctionContents &f, const Definition &d, const Expr &v, double reduce, ElementOps &ops) {
    Expr a, b;
    const Call *self = nullptr;
    if (d.rdom && npu_select::binary_operands(v, a, b)) {
        const Call *ca = a.as<Call>(), *cb = b.as<Call>();
        self = ca && ca->name == f.name ? ca : cb && cb->name == f.name ? cb : nullptr;
    }
    if (!self) {
        ops.include(v);
        return;
    }
    ops.ops += reduce;
    ops.include(self == a.as<Call>() ? b : a);
}

// The element-ops of one point of definition d of f: in an update over an
// RDom, the accumulation (f(args) op e) is one reduce op, weighed by
// `reduce`, plus e's. A Tuple value in `columns` (it does not vary along x)
// weighs `column_weight` (1 / the extent of x: computed once per row).
double stage_ops(const FunctionContents &f, const Definition &d, double transcendental, double reduce,
                 std::map<std::string, bool> &widened, const std::set<int> &columns, double column_weight) {
    ElementOps ops(transcendental, widened);
    double total = 0;
    for (size_t i = 0; i < d.values.size(); i++) {
        const Expr &v = d.values[i];
        const double before = ops.ops;
        count_value(f, d, v, reduce, ops);
        total += (ops.ops - before) * (columns.count((int)i) ? column_weight : 1.0);
    }
    return total;
}

// The elements of input `name` that the loop nest s reads: the box of its
// reads, within the buffer (the whole buffer if the box is not known).
//   out(x, y) = A(k, y) * B(x, k), k in [0, 128), B given as 128 x 1024  ->  B: 128 x 128
int64_t elements_read(const Stmt &s, const std::string &name, const ConcreteSizes &cs) {
    bool found = false;
    Box b = box_touched(s, name, true, false, &found);
    const std::vector<int> &size = cs.sizes.at(name);
    if (!found) return 0;
    const std::map<std::string, Expr> values = substitutions(cs);
    int64_t n = 1;
    for (size_t d = 0; d < size.size(); d++) {
        int64_t lo = cs.values.at(name + ".min." + std::to_string(d)), hi = lo + size[d] - 1;
        if (d < b.size() && b[d].bounded()) {
            const Expr bl = simplify(substitute(values, b[d].min)), bh = simplify(substitute(values, b[d].max));
            const int64_t *l = as_const_int(bl), *h = as_const_int(bh);
            if (l && h) lo = std::max(lo, *l), hi = std::min(hi, *h);
        }
        n *= std::max<int64_t>(hi - lo + 1, 0);
    }
    return n;
}

}  // namespace

double NpuIdealStream::roofline_cycles() const {
    return std::max({read_cycles, write_cycles, vector_cycles, matrix_cycles});
}

NpuIdealStream npu_ideal_stream(const Pipeline &p, const std::map<std::string, std::vector<int>> &sizes,
                                const npu::Machine &m) {
    std::vector<std::shared_ptr<FunctionContents>> outs;
    for (const Func &o : p.outputs()) outs.push_back(o.contents());
    ConcreteSizes cs = concrete_sizes(outs, sizes, "NPU ideal stream");
    // Every Func computed once per point: the fusion report's baseline with inlined Funcs materialized.
    Stmt base_nest = report_loop_nest(outs, Target("npu"), true, true);
    LoopCounts base = count_loop_nest(base_nest, cs.values, cs.float_values);
    NpuIdealStream s;
    // Each input once: the elements the algorithm reads of it.
    std::map<std::string, int64_t> read_elements;
    for (const auto &kv : find_parameters(find_environment(outs)))
        if (kv.second->is_buffer) {
            read_elements[kv.first] = elements_read(base_nest, kv.first, cs);
            s.gm_read_bytes += read_elements[kv.first] * kv.second->type.bytes();
        }
    for (const auto &o : outs) {
        int64_t n = o->bytes_per_point();
        for (int e : cs.sizes.at(o->name)) n *= e;
        s.gm_write_bytes += n;
    }
    s.read_cycles = (double)s.gm_read_bytes / m.rate(npu::Pipe::MTE2).bytes_per_cycle;
    s.write_cycles = (double)s.gm_write_bytes / m.rate(npu::Pipe::MTE3).bytes_per_cycle;
    const double per_op = 4.0 / m.vector_bytes_per_cycle;  // one f32 element
    std::map<std::string, bool> widened;  // 16-bit sources read as float32 (name -> is an image)
    for (const auto &kv : find_environment(outs)) {
        const FunctionContents &f = *kv.second;
        auto counts = base.funcs.find(f.name);
        if (counts == base.funcs.end()) continue;  // an image's wrapper, inlined: a read
        const std::vector<int64_t> &points_of = counts->second.stage_stores;
        double ops = 0;
        const std::set<int> columns = f.init.values.size() > 1 ? npu_select::tuple_column_values(f) : std::set<int>();
        const double column_weight =
            counts->second.largest.empty() ? 1.0 : 1.0 / (double)std::max<int64_t>(1, counts->second.largest[0]);
        for (int k = 0; k < f.num_stages() && k < (int)points_of.size(); k++) {
            const Definition &d = f.stage(k);
            const double points = (double)points_of[k];
            Type operand;
            if (k > 0 && matrix_update(f, d, operand)) {
                s.matrix_cycles += points / ((double)m.matrix_m * m.matrix_n * m.matrix_k(npu_dtype(operand)));
                continue;
            }
            ops += points * stage_ops(f, d, (double)m.transcendental_factor, (double)m.reduce_factor, widened, columns,
                                      column_weight);
        }
        s.vector_cycles_of[f.name] = ops * per_op;
        s.vector_cycles += ops * per_op;
    }
    for (const auto &w : widened) {  // one TCVT per element of each 16-bit source
        double elements = 1;
        if (w.second)
            elements = (double)read_elements[w.first];
        else
            elements = (double)base.funcs[w.first].pure_stores;
        s.vector_cycles_of[w.first + " (widened)"] = elements * per_op;
        s.vector_cycles += elements * per_op;
    }
    return s;
}

}  // namespace internal
}  // namespace kiln
