// Generators: member registration, GeneratorParams from text, the Pipeline
// and signature of a generator, and the registry.
#include "kiln/Generator.h"
#include "kiln/Derivative.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "ir/Error.h"
#include "codegen/CNames.h"
#include "ir/IR.h"
#include "ir/Simplify.h"
#include "ir/Util.h"

namespace kiln {

using internal::join;

namespace {

// Generators that exist, so that a member being constructed can find the
// object it belongs to (Halide's ObjectInstanceRegistry does the same).
std::mutex live_mutex;
std::vector<GeneratorBase *> &live_generators() {
    static std::vector<GeneratorBase *> v;
    return v;
}

std::map<std::string, GeneratorRegistry::Factory> &registry() {
    static std::map<std::string, GeneratorRegistry::Factory> r;
    return r;
}

// The element types a buffer or GeneratorParam<Type> may have.
const std::vector<Type> &generator_types() {
    static const std::vector<Type> types = {Bool(),   Int(8),   Int(16),  Int(32),   Int(64),  UInt(8),
                                            UInt(16), UInt(32), UInt(64), Float(16), BFloat(16),
                                            Float(32), Float(64)};
    return types;
}

}  // namespace

// ---- Members ----

GeneratorBase::GeneratorBase(size_t object_size) : object_size_(object_size) {
    std::lock_guard<std::mutex> lock(live_mutex);
    live_generators().push_back(this);
}

GeneratorBase::~GeneratorBase() {
    std::lock_guard<std::mutex> lock(live_mutex);
    auto &v = live_generators();
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

GeneratorBase &GeneratorBase::owner_of(const void *member, const std::string &kind, const std::string &name) {
    std::string what = kind + " '" + name + "'";
    std::lock_guard<std::mutex> lock(live_mutex);
    const char *p = (const char *)member;
    for (GeneratorBase *g : live_generators()) {
        const char *begin = (const char *)g;
        if (p >= begin && p < begin + g->object_size_) {
            g->check_new_name(what, name);
            return *g;
        }
    }
    user_error << what << " is not a data member of a generator; declare Inputs, Outputs and GeneratorParams "
               << "as members of a class derived from Generator<T>";
    return *live_generators().front();  // not reached
}

void GeneratorBase::check_new_name(const std::string &what, const std::string &name) const {
    user_assert(internal::is_c_identifier(name)) << what << ": \"" << name
                                     << "\" is not a valid name; use letters, digits and '_', not starting with a digit";
    auto taken = [&](const auto &members) {
        for (const auto *m : members)
            if (m->name() == name) return true;
        return false;
    };
    user_assert(!taken(params_) && !taken(inputs_) && !taken(outputs_))
        << what << ": the name is already used by another GeneratorParam, Input or Output of this generator";
}

namespace internal {

void register_generator_member(GeneratorParamBase *param) {
    GeneratorBase::owner_of(param, "GeneratorParam", param->name()).params_.push_back(param);
}

void register_generator_member(GeneratorInputBase *input) {
    GeneratorBase::owner_of(input, "Input", input->name()).inputs_.push_back(input);
}

void register_generator_member(GeneratorOutputBase *output) {
    GeneratorBase::owner_of(output, "Output", output->name()).outputs_.push_back(output);
}

}  // namespace internal

GeneratorParamBase::GeneratorParamBase(const std::string &name) : name_(name) {
    internal::register_generator_member(this);
}

GeneratorInputBase::GeneratorInputBase(const std::string &name) : GeneratorIOBase(name) {
    internal::register_generator_member(this);
}

GeneratorOutputBase::GeneratorOutputBase(const std::string &name) : GeneratorIOBase(name) {
    internal::register_generator_member(this);
}

void GeneratorIOBase::set_estimates(const BoundaryConditions::Region &estimates) {
    const Argument a = argument();
    const std::string what =
        std::string(dynamic_cast<const GeneratorInputBase *>(this) ? "Input '" : "Output '") + name_ + "'";
    user_assert(a.is_buffer) << what << ": set_estimates() gives a buffer's size; a scalar has none";
    user_assert((int)estimates.size() == a.dimensions)
        << what << ": set_estimates() got " << estimates.size() << " dimension(s) for a " << a.dimensions
        << "-D buffer; give {min, extent} for each dimension, e.g. {{0, 1024}, {0, 768}} for two";
    std::vector<int> extents;
    for (size_t d = 0; d < estimates.size(); d++) {
        const Expr e = internal::simplify(estimates[d].second);
        const int64_t *n = e.defined() ? as_const_int(e) : nullptr;
        user_assert(n && *n > 0 && *n <= std::numeric_limits<int>::max())
            << what << ": set_estimates(): the extent of dimension " << d << " is " << e
            << ", not a positive integer constant; give a number (a GeneratorParam's value is one)";
        extents.push_back((int)*n);
    }
    estimates_ = extents;
}

void GeneratorOutputBase::set(const Func &f) {
    user_assert(f.defined()) << "Output '" << name_ << "': set() was given Func " << f.name()
                             << ", which has no definition; pass a defined Func, e.g. an adjoint d(input)";
    user_assert(!func_.defined()) << "Output '" << name_ << "' is defined twice: set(" << f.name()
                                  << ") after an earlier definition; define each Output once in generate()";
    std::vector<Var> vars = f.args();
    std::vector<Expr> args(vars.begin(), vars.end());
    func_(args) = f(args);
}

Output<Func>::Output(const std::string &name, std::vector<Type> types, int dims)
    : GeneratorOutputBase(name), types_(std::move(types)), dims_(dims) {
    if (types_.empty()) throw CompileError("Output '" + name + "': give the type of its value, or of each Tuple element");
    if (dims_ < 0 || dims_ > 8) throw CompileError("Output '" + name + "': give the number of dimensions (0 to 8)");
}

std::vector<Argument> Output<Func>::arguments() const {
    std::vector<Argument> args;
    for (size_t i = 0; i < types_.size(); i++)
        args.push_back({internal::tuple_buffer_name(name_, (int)i, (int)types_.size()), true, types_[i], dims_});
    return args;
}

std::string Output<Func>::describe() const {
    if (types_.size() == 1) return internal::describe_buffer(types_[0], dims_, nullptr);
    std::vector<std::string> elems;
    for (const Argument &a : arguments()) elems.push_back(a.name + " " + a.type.to_string());
    return "Tuple of " + std::to_string(types_.size()) + " buffers (" + join(elems) + "), " + std::to_string(dims_) +
           "-D";
}

// ---- GeneratorParam values ----

namespace internal {

bool parse_generator_value(const std::string &s, int64_t &v) {
    char *end = nullptr;
    errno = 0;
    long long x = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0) return false;
    v = x;
    return true;
}

bool parse_generator_value(const std::string &s, double &v) {
    char *end = nullptr;
    double x = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') return false;
    v = x;
    return true;
}

bool parse_generator_value(const std::string &s, bool &v) {
    if (s != "true" && s != "1" && s != "false" && s != "0") return false;
    v = s == "true" || s == "1";
    return true;
}

bool parse_generator_value(const std::string &s, Type &v) {
    for (const Type &t : generator_types()) {
        if (t.to_string() != s) continue;
        v = t;
        return true;
    }
    return false;
}

std::string generator_type_names() {
    std::vector<std::string> names;
    for (const Type &t : generator_types()) names.push_back(t.to_string());
    return join(names);
}

std::string describe_buffer(Type t, int dims, const GeneratorParam<Type> *type_param) {
    std::string s = t.to_string() + " buffer, " + std::to_string(dims) + "-D";
    if (type_param) s += " (type from GeneratorParam '" + type_param->name() + "')";
    return s;
}

}  // namespace internal

// ---- The generator ----

std::string GeneratorBase::display_name() const { return name_.empty() ? "generator" : "generator " + name_; }

void GeneratorBase::set_generator_param(const std::string &name, const std::string &value) {
    user_assert(!built_) << display_name() << ": GeneratorParam '" << name
                         << "' is set after generate() ran; set GeneratorParams before build_pipeline()";
    for (GeneratorParamBase *p : params_) {
        if (p->name() != name) continue;
        std::string expected = p->set_from_string(value);
        user_assert(expected.empty()) << display_name() << ": GeneratorParam '" << name << "' cannot be \"" << value
                                      << "\"; it is " << expected;
        return;
    }
    std::vector<std::string> names;
    for (const GeneratorParamBase *p : params_) names.push_back(p->name() + " (" + p->kind() + ")");
    user_error << display_name() << " has no GeneratorParam '" << name << "'; "
               << (names.empty() ? std::string("it has none") : "its GeneratorParams are: " + join(names));
}

void GeneratorBase::set_generator_params(const std::vector<std::string> &assignments) {
    for (const std::string &a : assignments) {
        size_t eq = a.find('=');
        user_assert(eq != std::string::npos && eq > 0)
            << display_name() << ": \"" << a << "\" is not a GeneratorParam setting; write name=value";
        set_generator_param(a.substr(0, eq), a.substr(eq + 1));
    }
}

Pipeline GeneratorBase::build_pipeline() {
    if (built_) return pipeline_;
    user_assert(!outputs_.empty()) << display_name() << " declares no Output; add e.g. Output<Buffer<float, 2>> "
                                   << "output{\"output\"} and define it in generate()";
    internal::record_differentiated_outputs(&differentiated_);
    internal::record_adjoint_images(&adjoint_images_);
    auto stop_recording = [] {
        internal::record_differentiated_outputs(nullptr);
        internal::record_adjoint_images(nullptr);
    };
    try {
        internal::FuncNameScope names;  // anonymous Funcs named alike in every build
        call_generate();
    } catch (...) {
        stop_recording();
        throw;
    }
    stop_recording();
    std::vector<Func> funcs;
    for (const GeneratorOutputBase *out : outputs_) {
        const Func &f = out->func();
        std::string what = display_name() + ": Output '" + out->name() + "'";
        user_assert(f.defined()) << what << " is not defined by generate(); define it there, e.g. " << out->name()
                                 << "(x, y) = ...";
        Argument a = out->argument();
        user_assert(f.dimensions() == a.dimensions)
            << what << " is declared with " << a.dimensions << " dimension(s) but generate() defines it over "
            << f.dimensions();
        std::vector<Argument> bufs = out->arguments();
        std::vector<std::string> declared, defined;
        for (const Argument &b : bufs) declared.push_back(b.type.to_string());
        for (const Type &t : f.types()) defined.push_back(t.to_string());
        user_assert(f.outputs() == (int)bufs.size())
            << what << " is declared with " << bufs.size() << " value(s) (" << join(declared)
            << ") but generate() defines it with " << f.outputs() << " (" << join(defined)
            << "); declare a Tuple output as Output<Func> " << out->name() << "{\"" << out->name()
            << "\", {type0, type1, ...}, dims}";
        for (size_t i = 0; i < bufs.size(); i++) {
            if (f.types()[i] == bufs[i].type) continue;
            std::string elem = bufs.size() == 1 ? "" : " (element " + std::to_string(i) + " of its Tuple)";
            user_error << what << elem << " is declared " << bufs[i].type.to_string()
                       << " but generate() defines it as " << f.types()[i].to_string() << "; cast the value, e.g. "
                       << out->name() << "(...) = cast(" << bufs[i].type.to_string() << ", ...)";
        }
        funcs.push_back(f);
    }
    built_ = true;
    pipeline_ = Pipeline(funcs);
    return pipeline_;
}

Pipeline GeneratorBase::schedulable() {
    std::vector<Func> funcs = build_pipeline().outputs();
    for (const Func &f : differentiated_) funcs.push_back(f);
    return Pipeline(funcs);
}

std::vector<Argument> GeneratorBase::arguments() const {
    std::vector<Argument> args;
    for (const GeneratorIOBase *io : inputs_) args.push_back(io->argument());
    for (const GeneratorOutputBase *out : outputs_)
        for (const Argument &a : out->arguments()) args.push_back(a);
    return args;
}

std::string GeneratorBase::describe() const {
    std::ostringstream s;
    s << (name_.empty() ? "(unregistered generator)" : name_) << "\n";
    for (const GeneratorParamBase *p : params_)
        s << "  param   " << p->name() << " = " << p->value_string() << "  (" << p->kind() << ")\n";
    for (const GeneratorIOBase *io : inputs_) s << "  input   " << io->name() << ": " << io->describe() << "\n";
    for (const GeneratorIOBase *io : outputs_) s << "  output  " << io->name() << ": " << io->describe() << "\n";
    return s.str();
}

// ---- The registry ----

void GeneratorRegistry::register_factory(const std::string &name, Factory factory) {
    user_assert(internal::is_c_identifier(name)) << "Generator name \"" << name
                                     << "\" is not valid; use letters, digits and '_', not starting with a digit";
    user_assert(registry().emplace(name, std::move(factory)).second)
        << "Two generators are registered as \"" << name << "\"; KILN_REGISTER_GENERATOR names must be unique";
}

std::unique_ptr<GeneratorBase> GeneratorRegistry::create(const std::string &name) {
    auto it = registry().find(name);
    user_assert(it != registry().end())
        << "Unknown generator \"" << name << "\"; "
        << (registry().empty() ? std::string("no generator is linked into this program")
                               : "the generators linked into this program are: " + join(list()));
    std::unique_ptr<GeneratorBase> g = it->second();
    g->name_ = name;
    return g;
}

std::vector<std::string> GeneratorRegistry::list() {
    std::vector<std::string> names;
    for (const auto &kv : registry()) names.push_back(kv.first);
    return names;  // a std::map is sorted
}

}  // namespace kiln
