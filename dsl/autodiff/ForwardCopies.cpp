// Copies of forward stages and the winners of min/max reductions
// (ForwardCopies.h).
#include "autodiff/ForwardCopies.h"

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

// Calls of f to itself (kept without a pointer) redirected to `to`.
class Redirect : public IRMutator {
public:
    Redirect(const std::string &from, std::shared_ptr<FunctionContents> to) : from(from), to(std::move(to)) {}

protected:
    using IRMutator::visit;
    std::string from;
    std::shared_ptr<FunctionContents> to;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || c->func || c->name != from) return e;
        return Call::make(c->type, to->name, c->args, Call::Func, to, nullptr, c->value_index);
    }
};

std::vector<Expr> pure_args(const FunctionContents &f) {
    std::vector<Expr> v;
    for (const auto &a : f.args) v.push_back(make_var(a));
    return v;
}

}  // namespace

Expr redirect_self_calls(const Expr &e, const std::string &f, const Func &to) {
    return Redirect(f, to.contents()).mutate(e);
}

Func stage_value(const std::shared_ptr<FunctionContents> &f, int stage) {
    Func copy(f->name + "_" + std::to_string(stage) + "_value");
    for (int s = 0; s <= stage; s++) {
        const Definition &d = f->stage(s);
        Redirect to_copy(f->name, copy.contents());
        std::vector<Expr> args, values;
        for (const Expr &a : d.args) args.push_back(to_copy.mutate(a));
        for (const Expr &v : d.values) values.push_back(to_copy.mutate(v));
        internal_assert(values.size() == 1) << "stage_value of a Tuple-valued Func " << f->name;
        FuncRef(copy.contents(), args) = values[0];
    }
    if (stage > 0) copy.compute_root();  // not redone per point of each consumer
    return copy;
}

Expr winner_index(const std::shared_ptr<ReductionDomainContents> &rdom) {
    Type t = rdom->vars.size() == 1 ? Int(32) : Int(64);
    Expr index, stride;
    for (const ReductionVariable &rv : rdom->vars) {
        Expr offset = cast(t, Variable::make(Int(32), rv.name, nullptr, rdom) - rv.min);
        index = index.defined() ? index + offset * stride : offset;
        stride = stride.defined() ? stride * cast(t, rv.extent) : cast(t, rv.extent);
    }
    return index;
}

Func winner(const std::shared_ptr<FunctionContents> &f, int stage, const Func &before, const Func &after,
            const Expr &incoming) {
    const Definition &d = f->stage(stage);
    internal_assert(d.rdom) << "winner() of an update without an RDom";
    Expr point = winner_index(d.rdom);
    Expr none = type_max(point.type());
    Func w(f->name + "_" + std::to_string(stage) + "_argmax");
    std::vector<Expr> args = pure_args(*f);
    w(args) = select(before(args) == after(args), make_const(point.type(), (int64_t)-1), none);
    w(args) = min(w(args), select(incoming == after(args), point, none));
    w.compute_root();
    return w;
}

}  // namespace internal
}  // namespace kiln
