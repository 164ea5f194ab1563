// Pipeline: argument inference, lowering + codegen, and JIT realization.
#include "kiln/Pipeline.h"

#include <algorithm>
#include <fstream>

#include "codegen/CodeGen_C.h"
#include "codegen/CodeGen_NPU.h"
#include "driver/JIT.h"
#include "ir/IRPrinter.h"
#include "ir/Util.h"
#include "lower/Lower.h"
#include "lower/RealizationOrder.h"
#include "schedule/Directives.h"

namespace kiln {

using namespace internal;

namespace {

std::vector<std::shared_ptr<FunctionContents>> output_contents(const std::vector<Func> &outs) {
    user_assert(!outs.empty()) << "A Pipeline needs at least one output Func";
    std::vector<std::shared_ptr<FunctionContents>> r;
    for (const auto &f : outs) {
        user_assert(f.defined()) << "Func " << f.name() << " is an output of the pipeline but has no definition";
        r.push_back(f.contents());
    }
    return r;
}

// How many buffers the outputs are written to: one per Tuple element.
size_t num_output_buffers(const std::vector<std::shared_ptr<FunctionContents>> &outs) {
    size_t n = 0;
    for (const auto &o : outs) n += o->num_values();
    return n;
}

// For the NPU target, the loop nest its own passes start from (CodeGen_NPU.cpp).
LoweredFunc lower_pipeline(const Pipeline &p, const std::string &fn_name, const std::vector<Argument> &args,
                           const Target &t) {
    auto outs = output_contents(p.outputs());
    LowerOptions o;
    if (t.has(Target::NPU)) o.stop = LowerStop::LoopNest;
    return lower(outs, fn_name, lowered_args(args, num_output_buffers(outs)), t, o);
}

std::string describe(const Argument &a) {
    return a.is_buffer ? a.type.to_string() + " buffer of " + std::to_string(a.dimensions) + " dimension(s)"
                       : a.type.to_string() + " scalar";
}

// An explicit signature lists every input the pipeline reads (with the type
// and dimensions it is read with) once, then exactly the outputs, in order.
void check_signature(const Pipeline &p, const std::vector<Argument> &args) {
    std::vector<Argument> inferred = p.infer_arguments();
    size_t num_outputs = num_output_buffers(output_contents(p.outputs())), num_inputs = inferred.size() - num_outputs;
    user_assert(args.size() >= num_outputs)
        << "The signature lists " << args.size() << " argument(s), fewer than the pipeline's " << num_outputs
        << " output(s); list the inputs, then the outputs";
    for (size_t i = 0; i < num_outputs; i++) {
        const Argument &want = inferred[num_inputs + i], &got = args[args.size() - num_outputs + i];
        user_assert(got.name == want.name && got.is_buffer && got.type == want.type &&
                    got.dimensions == want.dimensions)
            << "The signature must end with the pipeline's outputs in order; argument "
            << args.size() - num_outputs + i << " is '" << got.name << "' (" << describe(got) << ") where output '"
            << want.name << "' (" << describe(want) << ") belongs";
    }
    std::map<std::string, const Argument *> given;
    for (size_t i = 0; i < args.size(); i++) {
        user_assert(given.emplace(args[i].name, &args[i]).second)
            << "The signature lists '" << args[i].name << "' twice; every argument needs its own name";
    }
    for (size_t i = 0; i < num_inputs; i++) {
        const Argument &want = inferred[i];
        auto it = given.find(want.name);
        user_assert(it != given.end())
            << "The pipeline reads " << (want.is_buffer ? "ImageParam '" : "Param '") << want.name
            << "', which is not in the signature; add it to the arguments";
        const Argument &got = *it->second;
        user_assert(got.is_buffer == want.is_buffer && got.type == want.type && got.dimensions == want.dimensions)
            << "The signature declares '" << want.name << "' as a " << describe(got) << " but the pipeline reads it as a "
            << describe(want);
    }
}

// The C++ element type of a Buffer holding t, for messages.
std::string c_type_name(const Type &t) {
    if (t.is_bool()) return "bool";
    if (t.is_float16_or_bfloat16()) return t.is_bfloat() ? "kiln::bfloat16_t" : "kiln::float16_t";
    if (t.is_float()) return t.bits() == 32 ? "float" : t.bits() == 64 ? "double" : t.to_string();
    return t.to_string() + "_t";
}

// realize() can see an output buffer of the wrong element type or
// dimensionality before compiling anything, where the kernel would only
// return -4 or -5 after the JIT. A null buffer is left to the kernel (-2).
//
//   f(x, y) = cast<float>(x);  Buffer<uint8_t> b(8, 8);  f.realize(b);
//     ->  CompileError "Func f: realize() was given a uint8 buffer for f, whose values are float32; ..."
void check_output_buffers(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                          const std::vector<halide_buffer_t *> &bufs) {
    size_t k = 0;
    for (const auto &o : outs) {
        std::string args = join(o->args);
        for (int i = 0; i < o->num_values(); i++, k++) {
            const halide_buffer_t *b = bufs[k];
            if (!b) continue;
            const Type &t = o->types[i];
            std::string what = o->num_values() == 1 ? o->name : "element " + std::to_string(i) + " of " + o->name +
                                                                    " (buffer " + o->buffer_name(i) + ")";
            bool scalar = b->type.lanes == 1 && (b->type.code <= halide_type_float || b->type.code == halide_type_bfloat);
            Type got((TypeCode)b->type.code, b->type.bits);
            user_assert(scalar && got == t)
                << "Func " << o->name << ": realize() was given a "
                << (scalar ? got.to_string() : "vector or handle") << " buffer for " << what << ", whose values are "
                << t.to_string() << "; realize into a Buffer<" << c_type_name(t) << "> (or let " << o->name
                << ".realize({sizes}) allocate one)"
                << (scalar ? ", or make " + o->name + " compute " + got.to_string() + ", e.g. cast<" +
                                 c_type_name(got) + ">(...) in its definition"
                           : std::string());
            user_assert(b->dimensions == (int)o->args.size())
                << "Func " << o->name << ": realize() was given a buffer of " << b->dimensions << " dimension(s) for "
                << what << ", which has " << o->args.size() << " (" << args
                << "); realize into a buffer with one dimension per argument";
        }
    }
}

void check_function_name(const std::string &fn_name) {
    bool ok = !fn_name.empty() && !isdigit((unsigned char)fn_name[0]);
    for (char c : fn_name) ok &= isalnum((unsigned char)c) || c == '_';
    user_assert(ok) << "compile_to_cpp: \"" << fn_name
                    << "\" is not a valid C function name; use letters, digits and '_', not starting with a digit";
}

}  // namespace

std::map<std::string, Func> Pipeline::functions() const {
    std::map<std::string, Func> r;
    for (const auto &kv : find_user_functions(output_contents(outputs_))) r.emplace(kv.first, Func(kv.second));
    return r;
}

std::vector<Argument> Pipeline::infer_arguments() const {
    auto outs = output_contents(outputs_);
    Environment env = find_environment(outs);
    std::vector<Argument> args;
    for (const auto &kv : find_parameters(env)) {
        bool is_output = false;
        for (const auto &o : outs) is_output |= o->name == kv.first;  // reported below
        user_assert(is_output || !env.count(kv.first)) << "The " << (kv.second->is_buffer ? "ImageParam " : "Param ") << kv.first
                                          << " has the same name as a Func of the pipeline; rename one of them "
                                             "(every argument and Func of a kernel needs its own name)";
        Argument a;
        a.name = kv.first;
        a.is_buffer = kv.second->is_buffer;
        a.type = kv.second->type;
        a.dimensions = kv.second->dimensions;
        args.push_back(a);
    }
    for (const auto &o : outs) {
        for (const auto &a : args)
            user_assert(a.name != o->name) << "The output Func " << o->name
                                           << " has the same name as an input; rename one of them";
        for (int i = 0; i < o->num_values(); i++) {  // a Tuple: one buffer per element, "f.0", "f.1", ...
            Argument a;
            a.name = o->buffer_name(i);
            a.is_buffer = true;
            a.type = o->types[i];
            a.dimensions = (int)o->args.size();
            args.push_back(a);
        }
    }
    return args;
}

std::string Pipeline::compile_to_cpp_source(const std::string &fn_name, const Target &t) const {
    return compile_to_cpp_source(fn_name, infer_arguments(), t);
}

std::string Pipeline::compile_to_cpp_source(const std::string &fn_name, const std::vector<Argument> &args,
                                            const Target &t) const {
    check_function_name(fn_name);
    check_signature(*this, args);
    if (t.has(Target::NPU)) {
        auto outs = output_contents(outputs());
        for (const auto &f : find_user_functions(outs)) sched::check_npu_honours(*f.second);
        return codegen_npu(outs, fn_name, lowered_args(args, outs.size()), t);
    }
    return codegen_cpp(lower_pipeline(*this, fn_name, args, t), t);
}

void Pipeline::compile_to_cpp(const std::string &path, const std::string &fn_name, const Target &t) const {
    std::ofstream f(path);
    user_assert(f) << "compile_to_cpp: cannot open " << path << " for writing";
    f << compile_to_cpp_source(fn_name, t);
}

std::string Pipeline::lowered_stmt(const Target &t) const {
    return to_string(lower_pipeline(*this, outputs_[0].name(), infer_arguments(), t).body);
}

std::string Pipeline::lowered_stmt(const std::string &fn_name, const std::vector<Argument> &args,
                                   const Target &t) const {
    check_signature(*this, args);
    return to_string(lower_pipeline(*this, fn_name, args, t).body);
}

namespace internal {
struct JITCache {
    uint64_t epoch = 0;
    std::string target;
    std::shared_ptr<JITModule> module;
    std::vector<std::shared_ptr<ParameterContents>> inputs;  // signature order
};
}  // namespace internal

void Pipeline::compile_jit(const Target &t) {
    std::shared_ptr<JITCache> c = jit_cache_;
    if (c && c->epoch == definition_epoch() && c->target == t.to_string()) return;
    c = std::make_shared<JITCache>();
    c->epoch = definition_epoch();
    c->target = t.to_string();
    std::vector<Argument> args = infer_arguments();
    std::string fn = "jit_" + outputs_[0].name();
    for (auto &ch : fn)
        if (!isalnum((unsigned char)ch) && ch != '_') ch = '_';
    c->module = JITModule::compile(compile_to_cpp_source(fn, t), fn, t);
    auto params = find_parameters(find_environment(output_contents(outputs_)));
    const size_t num_buffers = num_output_buffers(output_contents(outputs_));
    for (size_t i = 0; i + num_buffers < args.size(); i++) c->inputs.push_back(params.at(args[i].name));
    jit_cache_ = c;
}

void Pipeline::realize(Realization &outs, const Target &t) {
    std::vector<halide_buffer_t *> raw;
    for (size_t i = 0; i < outs.size(); i++) raw.push_back(outs[i].raw_buffer());
    realize_raw(raw, t);
}

void Pipeline::realize_raw(const std::vector<halide_buffer_t *> &outs, const Target &t) {
    size_t num_buffers = num_output_buffers(output_contents(outputs_));
    std::string tuples = num_buffers == outputs_.size()
                             ? ""
                             : ", written to " + std::to_string(num_buffers) + " buffer(s) (one per Tuple element),";
    user_assert(outs.size() == num_buffers) << "Pipeline::realize: the pipeline has " << outputs_.size()
                                            << " output(s)" << tuples << " but " << outs.size()
                                            << " buffer(s) were given";
    check_output_buffers(output_contents(outputs_), outs);
    compile_jit(t);
    const std::shared_ptr<JITCache> &c = jit_cache_;
    std::vector<void *> argv;
    for (const auto &pp : c->inputs) {
        const ParameterContents &p = *pp;
        if (p.is_buffer) {
            user_assert(p.buffer) << "Pipeline::realize: ImageParam " << p.name
                                  << " has no buffer bound; call " << p.name << ".set(buffer) first";
            argv.push_back(const_cast<halide_buffer_t *>(p.buffer));
        } else {
            argv.push_back(const_cast<uint64_t *>(&p.scalar_bits));
        }
    }
    for (auto *o : outs) argv.push_back(o);
    c->module->run_or_throw(argv.data());
}

}  // namespace kiln
