#include "ConcreteSizes.h"

#include <algorithm>
#include <cstring>

#include "ir/Error.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

double float_value(const ParameterContents &p) {
    uint64_t bits = p.scalar_bits;
    if (p.type.bits() == 32) {
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}

int64_t scalar_value(const ParameterContents &p) {
    const Type &t = p.type;
    uint64_t bits = p.scalar_bits;
    if (t.is_uint()) return t.bits() >= 64 ? (int64_t)bits : (int64_t)(bits & ((1ull << t.bits()) - 1));
    int sh = 64 - t.bits();
    return (int64_t)(bits << sh) >> sh;
}

}  // namespace

std::map<std::string, Expr> substitutions(const ConcreteSizes &c) {
    std::map<std::string, Expr> m = c.float_values;
    for (const auto &[name, v] : c.values) m[name] = Expr((int)v);
    return m;
}

std::optional<int64_t> constant_value(const Expr &e, const std::map<std::string, Expr> &values,
                                      const std::map<std::string, Expr> &lets) {
    Expr v = simplify(substitute(values, e));
    // Each round replaces the lets named by one more level of the chain.
    for (int depth = 0; depth < 16 && !as_const_int(v) && !lets.empty(); depth++) {
        Expr next = simplify(substitute(values, substitute(lets, v)));
        if (equal(next, v)) break;
        v = next;
    }
    if (const int64_t *n = as_const_int(v)) return *n;
    return std::nullopt;
}

ConcreteSizes concrete_sizes(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                             const std::map<std::string, std::vector<int>> &sizes, const std::string &caller) {
    ConcreteSizes r;
    std::vector<int64_t> largest;
    auto set_buffer = [&](const std::string &name, const std::vector<int> &ext) {
        int64_t stride = 1;
        for (size_t d = 0; d < ext.size(); d++) {
            std::string dn = std::to_string(d);
            r.values[name + ".min." + dn] = 0;
            r.values[name + ".extent." + dn] = ext[d];
            r.values[name + ".stride." + dn] = stride;
            stride *= ext[d];
        }
        r.sizes[name] = ext;
    };
    for (const auto &o : outs) {
        auto it = sizes.find(o->name);
        user_assert(it != sizes.end() && it->second.size() == o->args.size())
            << caller << ": give the size of output " << o->name << " (" << o->args.size()
            << " dimensions), e.g. {{\"" << o->name << "\", {1024, 1024}}}";
        for (int i = 0; i < o->num_values(); i++) {  // a Tuple: one buffer per element
            set_buffer(o->buffer_name(i), it->second);
            r.sizes.erase(o->buffer_name(i));
        }
        r.sizes[o->name] = it->second;
        for (size_t d = 0; d < it->second.size(); d++) {
            if (largest.size() <= d) largest.push_back(0);
            largest[d] = std::max<int64_t>(largest[d], it->second[d]);
        }
    }
    Environment env = find_environment(outs);
    for (const auto &kv : find_parameters(env)) {
        const ParameterContents &p = *kv.second;
        if (!p.is_buffer) {
            if (!p.type.is_float()) r.values[p.name] = scalar_value(p);
            else if (p.type.bits() >= 32) r.float_values[p.name] = FloatImm::make(p.type, float_value(p));
            continue;
        }
        std::vector<int> ext;
        auto it = sizes.find(p.name);
        if (it != sizes.end()) ext = it->second;
        if ((int)ext.size() < p.dimensions) r.assumed.push_back(p.name);
        for (int d = (int)ext.size(); d < p.dimensions; d++) ext.push_back(d < (int)largest.size() ? (int)largest[d] : 1);
        set_buffer(p.name, ext);
        int64_t n = 1;
        for (int e : ext) n *= e;
        r.input_bytes += n * p.type.bytes();
    }
    return r;
}

}  // namespace internal
}  // namespace kiln
