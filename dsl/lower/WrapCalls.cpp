#include "WrapCalls.h"

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

using WrapperMap = std::map<std::string, std::shared_ptr<FunctionContents>>;

// The wrapper the calls of `consumer` to a wrapped thing go to, or null.
const FunctionContents *wrapper_for(const WrapperMap &w, const std::string &consumer) {
    auto it = w.find(consumer);
    if (it == w.end()) it = w.find("");
    return it == w.end() ? nullptr : it->second.get();
}

class Redirect : public IRMutator {
public:
    Redirect(const std::string &c, const Environment &e) : consumer(c), env(e) {}

protected:
    const std::string &consumer;
    const Environment &env;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const auto *c = e.as<Call>();
        const WrapperMap *w = nullptr;
        if (c->call_type == Call::Func && c->name != consumer && env.count(c->name))
            w = &env.at(c->name)->schedule.wrappers;
        if (c->call_type == Call::Image && c->param) w = &c->param->wrappers;
        const FunctionContents *to = w ? wrapper_for(*w, consumer) : nullptr;
        if (!to) return e;
        std::shared_ptr<FunctionContents> target;
        for (const auto &kv : *w)
            if (kv.second.get() == to) target = kv.second;
        return Call::make(c->type, to->name, c->args, Call::Func, target, nullptr, c->value_index);
    }
};

// The wrapper's call of the wrapped Func or image, with its owner pointer back.
void relink(FunctionContents &w) {
    std::vector<Expr> args;
    for (const auto &a : w.args) args.push_back(Variable::make(Int(32), a));
    if (auto f = w.wrapped_func.lock()) {
        w.init.values.clear();
        for (size_t i = 0; i < f->types.size(); i++)
            w.init.values.push_back(Call::make(f->types[i], f->name, args, Call::Func, f, nullptr, (int)i));
    } else if (auto p = w.wrapped_image.lock()) {
        w.init.values = {Call::make(p->type, p->name, args, Call::Image, nullptr, p)};
    } else {
        user_error << "Func " << w.name << " is a wrapper (in()) of " << w.wraps << ", which no longer exists";
    }
}

}  // namespace

void wrap_calls(Environment &env) {
    for (auto &kv : env) {
        FunctionContents &f = *kv.second;
        if (!f.wraps.empty()) {
            relink(f);
            continue;
        }
        Redirect r(f.name, env);
        for (int s = 0; s < f.num_stages(); s++) {
            Definition &d = f.stage(s);
            for (auto &v : d.values) v = r.mutate(v);
            for (auto &a : d.args) a = r.mutate(a);
        }
    }
}

}  // namespace internal
}  // namespace kiln
