// Func::in() and ImageParam::in(): wrapper Funcs.
//
// A wrapper is an ordinary Func whose pure definition copies the wrapped Func
// or image, w(x, y) = f(x, y). The wrapped one keeps the wrapper in its
// `wrappers` map under the consumer's name ("" for in()); lowering
// (lower/WrapCalls) redirects the consumers' calls to it. The wrapper calls
// the wrapped Func by name only, so no ownership cycle forms.
//
//   f.in(g)  ->  f.schedule.wrappers = {"g": f_in_g},  f_in_g(x) = f(x)
#include "ir/Function.h"
#include "kiln/Func.h"

namespace kiln {

using namespace internal;

namespace {

using WrapperMap = std::map<std::string, std::shared_ptr<FunctionContents>>;

// The wrapper of `consumers` in `wrappers`, made by `make(name)` the first time.
// "" stands for every consumer (in()).
template<typename Make>
Func find_or_make(WrapperMap &wrappers, std::map<std::string, int> &derived_names, const std::string &wrapped,
                  const std::vector<std::string> &consumers, Make make) {
    std::shared_ptr<FunctionContents> found;
    bool some_missing = false;
    for (const auto &c : consumers) {
        auto it = wrappers.find(c);
        if (it == wrappers.end()) {
            some_missing = true;
            continue;
        }
        user_assert(!found || found == it->second)
            << wrapped << ".in(...): " << (c.empty() ? std::string("in()") : c) << " and another consumer in the list "
            << "already have different wrappers of " << wrapped << "; a consumer's calls can go to one wrapper only";
        found = it->second;
    }
    if (found && !some_missing) return Func(found);
    user_assert(!found) << wrapped << ".in(...): some of the consumers already have their own wrapper ("
                        << found->name << ") and others do not; ask for the same list of consumers again, or "
                        << "give each consumer its own wrapper";
    std::string name = wrapped + "_in";
    for (const auto &c : consumers) name += c.empty() ? "" : "_" + c;
    Func w = make(derived_name(derived_names, name));
    for (const auto &c : consumers) wrappers[c] = w.contents();
    bump_definition_epoch();
    return w;
}

std::vector<std::string> consumer_names(const std::string &wrapped, const std::vector<Func> &consumers) {
    user_assert(!consumers.empty()) << wrapped << ".in({}): name at least one consumer, or use in() for all";
    std::vector<std::string> r;
    for (const auto &c : consumers) {
        user_assert(c.name() != wrapped) << wrapped << ".in(" << wrapped << "): a Func cannot wrap its own calls; "
                                         << "name a consumer of " << wrapped;
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
