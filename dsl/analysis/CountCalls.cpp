#include "CountCalls.h"

#include <algorithm>

#include "ir/ExprKey.h"

namespace kiln {
namespace internal {

namespace {

bool is_leaf(const Expr &e) {
    return e.as<Variable>() || e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>() || e.as<StringImm>();
}

}  // namespace

void CountCalls::include(const Expr &e) {
    if (e.defined() && !in_index && !e.type().is_bool()) widest = std::max(widest, e.type().bytes());
    if (!e.defined() || repeated || is_leaf(e)) return IRVisitor::include(e);
    repeated = !seen.insert((in_index ? "index " : "") + *expr_key(e)).second;
    IRVisitor::include(e);
    repeated = false;
}

void CountCalls::visit(const Call *op) {
    // Index arithmetic is address computation, not work on values.
    bool loads = op->call_type == Call::Func || op->call_type == Call::Image;
    bool saved = in_index;
    in_index = in_index || loads;
    IRVisitor::visit(op);
    in_index = saved;
    if (loads) calls[op->name]++;
    static const std::set<std::string> expensive = {"exp",  "log",   "pow",  "tanh", "sin",   "cos",
                                                     "tan",  "asin",  "acos", "atan", "atan2", "sinh",
                                                     "cosh", "asinh", "acosh", "atanh"};
    if (op->call_type == Call::PureExtern && !in_index && !repeated) (expensive.count(op->name) ? transcendentals : arith)++;
}

// A select whose condition is the same in every lane (`uniform`) is a C
// conditional in the kernel: it evaluates its condition and one branch. Its
// work is counted as the larger of the two branches' (each kind of
// operation); its loads as both's here (calls: the report's reads), as one
// branch's in LoopCounts' memory reads.
void CountCalls::visit(const Select *op) {
    if (in_index || repeated || !uniform || !uniform(op->condition)) {
        arith_or_none()++;
        IRVisitor::visit(op);
        return;
    }
    arith++;
    include(op->condition);
    CountCalls t = branch(), f = branch();
    t.include(op->true_value);
    f.include(op->false_value);
    arith += std::max(t.arith, f.arith);
    divs += std::max(t.divs, f.divs);
    transcendentals += std::max(t.transcendentals, f.transcendentals);
    widest = std::max({widest, t.widest, f.widest});
    for (const CountCalls *b : {&t, &f}) {
        for (const auto &[name, n] : b->calls) calls[name] += n;
        seen.insert(b->seen.begin(), b->seen.end());
    }
}

CountCalls CountCalls::branch() const {
    CountCalls b;
    b.uniform = uniform;
    b.seen = seen;
    return b;
}

}  // namespace internal
}  // namespace kiln
