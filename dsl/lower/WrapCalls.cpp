#include "WrapCalls.h"

#include <set>

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

// The image a Func made from an ImageParam (ImageParam::operator Func)
// reads, at its own Vars in order; null for any other Func.
const ParameterContents *image_read_by(const FunctionContents &f) {
    if (!f.is_image_wrapper || f.num_stages() != 1 || f.init.values.size() != 1) return nullptr;
    const Call *c = f.init.values[0].as<Call>();
    if (!c || c->call_type != Call::Image || !c->param || c->args.size() != f.args.size()) return nullptr;
    for (size_t i = 0; i < f.args.size(); i++) {
        const Variable *v = c->args[i].as<Variable>();
        if (!v || v->name != f.args[i]) return nullptr;
    }
    return c->param.get();
}

class Redirect : public IRMutator {
public:
    Redirect(const std::string &c, const Environment &e, std::set<std::pair<std::string, std::string>> &used)
        : consumer(c), env(e), used(used) {}

protected:
    const std::string &consumer;
    const Environment &env;
    std::set<std::pair<std::string, std::string>> &used;  // (wrapper, consumer) redirected

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const auto *c = e.as<Call>();
        const WrapperMap *w = nullptr;
        if (c->call_type == Call::Func && c->name != consumer && env.count(c->name)) {
            w = &env.at(c->name)->schedule.wrappers;
            // A Func made from an image stands for the image: the image's
            // wrapper for this consumer (input.in(g)) takes its calls too.
            const ParameterContents *image = image_read_by(*env.at(c->name));
            if (image && image->wrappers.count(consumer)) w = &image->wrappers;
        }
        if (c->call_type == Call::Image && c->param) w = &c->param->wrappers;
        const FunctionContents *to = w ? wrapper_for(*w, consumer) : nullptr;
        if (!to) return e;
        std::shared_ptr<FunctionContents> target;
        for (const auto &kv : *w)
            if (kv.second.get() == to) target = kv.second;
        used.insert({to->name, w->count(consumer) ? consumer : std::string()});
        return Call::make(c->type, to->name, c->args, Call::Func, target, nullptr, c->value_index);
    }
};

// A wrapper for a consumer in the pipeline that does not call the wrapped
// Func or image would silently do nothing: an error naming both.
void check_wrappers_used(const Environment &env, const std::set<std::pair<std::string, std::string>> &used) {
    for (const auto &kv : env) {
        const FunctionContents &w = *kv.second;
        if (w.wraps.empty()) continue;
        const WrapperMap *map = nullptr;
        if (auto f = w.wrapped_func.lock()) map = &f->schedule.wrappers;
        else if (auto p = w.wrapped_image.lock()) map = &p->wrappers;
        if (!map) continue;
        for (const auto &[consumer, to] : *map) {
            if (consumer.empty() || to->name != w.name || !env.count(consumer) || used.count({w.name, consumer}))
                continue;
            user_error << "In schedule of " << w.name << ": " << w.wraps << ".in(" << consumer << ") wraps the calls of "
                       << consumer << " to " << w.wraps << ", but " << consumer << " does not call " << w.wraps
                       << ", so " << w.name << " would never be used; wrap a Func that " << consumer
                       << " calls directly (the producer it reads), or remove the in() stanza";
        }
    }
}

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
    std::set<std::pair<std::string, std::string>> used;
    for (auto &kv : env) {
        FunctionContents &f = *kv.second;
        if (!f.wraps.empty()) {
            relink(f);
            continue;
        }
        Redirect r(f.name, env, used);
        for (int s = 0; s < f.num_stages(); s++) {
            Definition &d = f.stage(s);
            for (auto &v : d.values) v = r.mutate(v);
            for (auto &a : d.args) a = r.mutate(a);
        }
    }
    check_wrappers_used(env, used);
}

}  // namespace internal
}  // namespace kiln
