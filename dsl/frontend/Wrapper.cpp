// Func::in() and ImageParam::in(): wrapper Funcs; Func::clone_in(): clones.
//
// A wrapper is an ordinary Func whose pure definition copies the wrapped Func
// or image, w(x, y) = f(x, y). The wrapped one keeps the wrapper in its
// `wrappers` map under the consumer's name ("" for in()); lowering
// (lower/WrapCalls) redirects the consumers' calls to it. The wrapper calls
// the wrapped Func by name only, so no ownership cycle forms.
//
//   f.in(g)  ->  f.schedule.wrappers = {"g": f_in_g},  f_in_g(x) = f(x)
//
// A clone (clone_in) is kept and redirected to the same way, but it is a
// copy of the Func's definitions and schedule, with its calls to itself
// renamed, and it calls nothing the Func does not:
//   f(x) = in(x); f(x) += 1;  f.clone_in(g)  ->  f_clone_in_g(x) = in(x); f_clone_in_g(x) += 1
#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "kiln/Func.h"

namespace kiln {

using namespace internal;

namespace {

using WrapperMap = std::map<std::string, std::shared_ptr<FunctionContents>>;

// The wrapper of `consumers` in `wrappers`, made by `make(name)` the first time.
// "" stands for every consumer (in()).
// `kind`: "in" or "clone_in", for the name (f_in_g, f_clone_in_g) and the messages.
template<typename Make>
Func find_or_make(WrapperMap &wrappers, std::map<std::string, int> &derived_names, const std::string &wrapped,
                  const std::vector<std::string> &consumers, Make make, const std::string &kind = "in") {
    std::shared_ptr<FunctionContents> found;
    bool some_missing = false;
    for (const auto &c : consumers) {
        auto it = wrappers.find(c);
        if (it == wrappers.end()) {
            some_missing = true;
            continue;
        }
        user_assert(!found || found == it->second)
            << wrapped << "." << kind << "(...): " << (c.empty() ? std::string("in()") : c)
            << " and another consumer in the list already have different wrappers of " << wrapped
            << " (in() or clone_in()); a consumer's calls can go to one wrapper only";
        found = it->second;
    }
    if (found && !some_missing) {
        user_assert((kind == "clone_in") == found->wraps.empty())
            << wrapped << "." << kind << "(...): the consumers already have "
            << (found->wraps.empty() ? "a clone" : "a wrapper") << " of " << wrapped << ", " << found->name
            << " (made by " << (found->wraps.empty() ? "clone_in" : "in")
            << "); a consumer's calls can go to one of them only";
        return Func(found);
    }
    user_assert(!found) << wrapped << "." << kind << "(...): some of the consumers already have their own wrapper ("
                        << found->name << ") and others do not; ask for the same list of consumers again, or "
                        << "give each consumer its own wrapper";
    std::string name = wrapped + "_" + kind;
    for (const auto &c : consumers) name += c.empty() ? "" : "_" + c;
    Func w = make(derived_name(derived_names, name));
    for (const auto &c : consumers) wrappers[c] = w.contents();
    bump_definition_epoch();
    return w;
}

std::vector<std::string> consumer_names(const std::string &wrapped, const std::vector<Func> &consumers,
                                        const std::string &kind = "in") {
    user_assert(!consumers.empty()) << wrapped << "." << kind << "({}): name at least one consumer"
                                    << (kind == "in" ? ", or use in() for all" : "");
    std::vector<std::string> r;
    for (const auto &c : consumers) {
        user_assert(c.name() != wrapped) << wrapped << "." << kind << "(" << wrapped
                                         << "): a Func cannot wrap its own calls; name a consumer of " << wrapped;
        r.push_back(c.name());
    }
    return r;
}

std::vector<Expr> wrapper_args(const std::vector<std::string> &names) {
    std::vector<Expr> args;
    for (const auto &n : names) args.push_back(Var(n));
    return args;
}

}  // namespace

Func Func::in(const std::vector<Func> &consumers) {
    user_assert(defined()) << "Func " << name() << " must be defined before in() makes a wrapper of it";
    std::vector<std::string> names = consumers.empty() ? std::vector<std::string>{""} : consumer_names(name(), consumers);
    return find_or_make(func->schedule.wrappers, func->derived_names, name(), names, [&](const std::string &wname) {
        Func w(wname);
        std::vector<Expr> args = wrapper_args(func->args);
        std::vector<Expr> values;  // every element of a Tuple
        for (size_t i = 0; i < func->types.size(); i++)
            values.push_back(Call::make(func->types[i], func->name, args, Call::Func, nullptr, nullptr, (int)i));
        w(args) = Tuple(values);
        w.contents()->wrapped_func = func;
        w.contents()->wraps = name();
        return w;
    });
}
Func Func::in(const Func &consumer) { return in(std::vector<Func>{consumer}); }

namespace {
// Calls to Func `from` renamed to `to` (a clone's calls to itself).
class RenameSelf : public IRMutator {
public:
    RenameSelf(const std::string &from, const std::string &to) : from(from), to(to) {}

protected:
    const std::string &from, &to;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || c->name != from) return e;
        return Call::make(c->type, to, c->args, Call::Func, nullptr, nullptr, c->value_index);
    }
};
}  // namespace

Func Func::clone_in(const std::vector<Func> &consumers) {
    user_assert(defined()) << "Func " << name() << " must be defined before clone_in() copies it";
    std::vector<std::string> names = consumer_names(name(), consumers, "clone_in");
    auto make = [&](const std::string &cname) {
        auto c = std::make_shared<FunctionContents>();  // a serial of its own (lower/UniqueNames.h)
        const uint64_t serial = c->serial;
        *c = *func;
        c->serial = serial;
        c->name = cname;
        c->schedule.wrappers.clear();  // the clone's consumers call it, not f's wrappers
        c->schedule.origins.clear();
        c->derived_names.clear();
        c->output_buffers.clear();
        c->jit_cache.reset();
        RenameSelf rename(func->name, cname);
        for (int s = 0; s < c->num_stages(); s++) {
            Definition &d = c->stage(s);
            for (auto &v : d.values) v = rename.mutate(v);
            for (auto &a : d.args) a = rename.mutate(a);
        }
        return Func(c);
    };
    return find_or_make(func->schedule.wrappers, func->derived_names, name(), names, make, "clone_in");
}
Func Func::clone_in(const Func &consumer) { return clone_in(std::vector<Func>{consumer}); }
Func Func::in() { return in(std::vector<Func>{}); }

Func ImageParam::in(const std::vector<Func> &consumers) {
    user_assert(contents) << "in() on an undefined ImageParam";
    std::vector<std::string> names = consumers.empty() ? std::vector<std::string>{""} : consumer_names(name(), consumers);
    return find_or_make(contents->wrappers, contents->derived_names, name(), names, [&](const std::string &wname) {
        Func w(wname);
        std::vector<std::string> vars;
        for (int d = 0; d < dimensions(); d++) vars.push_back("_" + std::to_string(d));
        std::vector<Expr> args = wrapper_args(vars);
        w(args) = Call::make(type(), name(), args, Call::Image, nullptr, nullptr);
        w.contents()->wrapped_image = contents;
        w.contents()->wraps = name();
        return w;
    });
}
Func ImageParam::in(const Func &consumer) { return in(std::vector<Func>{consumer}); }
Func ImageParam::in() { return in(std::vector<Func>{}); }

}  // namespace kiln
