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

Func winner(const std::shared_ptr<FunctionContents> &f, int stage, const Func &before, const Expr &incoming,
            bool is_max) {
    const Definition &d = f->stage(stage);
    internal_assert(d.rdom) << "winner() of an update without an RDom";
    Func w(f->name + "_" + std::to_string(stage) + "_argmax");
    std::vector<Expr> args = pure_args(*f);
    std::vector<Expr> init{before(args)}, point{incoming};
    for (size_t k = 0; k < d.rdom->vars.size(); k++) {
        const ReductionVariable &rv = d.rdom->vars[k];
        init.push_back(k == 0 ? rv.min - 1 : rv.min);
        point.push_back(Variable::make(Int(32), rv.name, nullptr, d.rdom));
    }
    w(args) = Tuple(init);
    Expr best = w(args)[0];
    w(args) = select(is_max ? incoming > best : incoming < best, Tuple(point), Tuple(w(args)));
    w.compute_root();
    return w;
}

}  // namespace internal
}  // namespace kiln
