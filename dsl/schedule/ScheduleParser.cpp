// The .sched parser: text -> ScheduleFile (stanzas of directives), checking
// everything that does not need the pipeline: syntax, directive names,
// argument counts, and whether each argument is of the kind its slot takes
// (a name, an integer expression, a TailStrategy). Func and loop names are
// checked by apply(), which knows the pipeline.
//
//   file      := stanza*
//   stanza    := header directive*             (a header starts a line)
//   header    := NAME ['.' 'update' '(' INT ')'] ['.' 'specialize' '(' cond ')'] ':'
//   cond      := arg CMP arg ('&&' arg CMP arg)*    CMP: >= > <= < == !=   (arg: ScheduleSyntax.h;
//                a name is an input's width/height/channels or a scalar Param)
//   directive := IDENT '(' [arg (',' arg)*] ')'  (may continue on later lines)
//
//   "blur_y: split(x, xo, xi, 8)\n"  ->  {func "blur_y", stage -1, [split(x, xo, xi, 8) at 1:9]}
#include <algorithm>
#include <fstream>
#include <sstream>

#include "Directives.h"
#include "ScheduleSyntax.h"
#include "kiln/Error.h"
#include "kiln/ScheduleFile.h"

namespace kiln {

using internal::join;
using namespace internal::sched;

namespace {

// The words an argument of this kind may be, and how a message names them; nullptr for other kinds.
const std::vector<std::string> *words_of(Slot kind, std::string *what) {
    static const std::vector<std::string> tails = {"Auto", "GuardWithIf", "ShiftInwards", "RoundUp"},
                                           aligns = {"AlignStart", "AlignEnd", "NoAlign", "Auto"},
                                           bools = {"true", "false"},
                                           memories = {"GM", "UB", "L1", "L0A", "L0B", "L0C"},
                                           prefetches = {"Clamp", "GuardWithIf", "NonFaulting"},
                                           residuals = {"whole", "bits", "float16", "bfloat16", "none"};
    const std::vector<std::string> *w = kind == Slot::Tail       ? &tails
                                        : kind == Slot::Align    ? &aligns
                                        : kind == Slot::Bool     ? &bools
                                        : kind == Slot::Memory   ? &memories
                                        : kind == Slot::Prefetch ? &prefetches
                                        : kind == Slot::Residual ? &residuals
                                                                 : nullptr;
    if (w && kind == Slot::Tail) *what = "a TailStrategy (" + join(*w) + ")";
    else if (w && kind == Slot::Prefetch) *what = "a PrefetchBoundStrategy (" + join(*w) + ")";
    else if (w) *what = join(std::vector<std::string>(w->begin(), w->end() - 1)) + " or " + w->back();
    return w;
}

class Parser {
public:
    Parser(const std::string &text, const std::string &file) : toks(lex(text, file)), file(file) {}

    std::vector<ScheduleStanza> parse() {
        std::vector<ScheduleStanza> stanzas;
        std::string kernel;
        while (peek().kind != Token::End) {
            if (is(peek(), "[")) {
                kernel = section(kernel);
                continue;
            }
            ScheduleStanza s = header();
            s.kernel = kernel;
            auto stage_of = [&](const ScheduleStanza &o) {
                return o.func == s.func && o.stage == s.stage && o.wrapper == s.wrapper && o.wrapper_of == s.wrapper_of &&
                       o.clone == s.clone && o.kernel == s.kernel;
            };
            // A repeated header joins its first stanza, unless a
            // specialization of the stage came in between: it copied the
            // stage's schedule as it was then, so the stage's later
            // directives must stay after it (file order, as in C++).
            auto same = std::find_if(stanzas.begin(), stanzas.end(),
                                     [&](const ScheduleStanza &o) { return stage_of(o) && o.condition == s.condition; });
            if (same != stanzas.end() && s.condition.empty() &&
                std::any_of(same + 1, stanzas.end(),
                            [&](const ScheduleStanza &o) { return stage_of(o) && !o.condition.empty(); }))
                same = stanzas.end();
            ScheduleStanza &into = same == stanzas.end() ? (stanzas.push_back(s), stanzas.back()) : *same;
            while (peek().kind != Token::End && !at_header()) into.directives.push_back(directive(s));
        }
        return stanzas;
    }

private:
    std::vector<Token> toks;
    size_t pos = 0;
    const std::string &file;
    std::vector<Arg> args;  // of the directive being parsed

    const Token &peek(size_t ahead = 0) const { return toks[std::min(pos + ahead, toks.size() - 1)]; }
    bool is(const Token &t, const char *punct) const { return t.kind == Token::Punct && t.text == punct; }
    [[noreturn]] void fail(const Token &t, const std::string &m) const { error_at(file, t.line, t.col, m); }
    [[noreturn]] void fail_found(const std::string &expected) const {
        fail(peek(), "expected " + expected + ", found " + describe(peek()));
    }
    void expect(const char *punct, const std::string &where) {
        if (!is(peek(), punct)) fail_found(std::string("'") + punct + "' " + where);
        pos++;
    }

    // NAME ':' or NAME '.' ... or a section's '[' — directives are always NAME '('.
    bool at_header() const {
        return (peek().kind == Token::Ident && (is(peek(1), ":") || is(peek(1), "."))) || is(peek(), "[");
    }

    // "[forward]" on a line of its own: the stanzas after it schedule a
    // backward generator's forward pass, to the end of the file.
    std::string section(const std::string &current) {
        const Token &open = peek();
        if (!open.first_on_line) fail(open, "a section '[forward]' must start a line");
        pos++;
        if (peek().kind != Token::Ident || peek().text != "forward")
            fail_found("'forward' in a section header '[forward]' (the only section: the stanzas after it schedule "
                       "the forward pass of a backward generator that saves Funcs)");
        pos++;
        expect("]", "after '[forward'");
        if (!current.empty())
            fail(open, "a second '[forward]' section; the first one lasts to the end of the file, so put every "
                       "stanza of the forward pass after it");
        if (peek().kind != Token::End && !peek().first_on_line)
            fail(peek(), "'[forward]' stands on a line of its own; put the stanza on the next line");
        return "forward";
    }

    ScheduleStanza header() {
        const Token &t = peek();
        if (t.kind != Token::Ident) fail_found("a stanza header 'FUNC:' or 'FUNC.update(N):'");
        if (is(peek(1), "(") && find_directive(t.text))
            fail(t, "directive " + t.text + " appears before any stanza header; start with 'FUNC:' to say which "
                    "Func it schedules");
        bool starts_line = t.first_on_line;
        ScheduleStanza s;
        s.func = t.text;
        s.line = t.line;
        s.col = t.col;
        pos++;
        while (is(peek(), ".")) {
            pos++;
            if (peek().kind != Token::Ident) fail_found("a name after '" + s.func + ".'");
            std::string part = toks[pos++].text;
            if (part == "update" && is(peek(), "(")) {
                pos++;
                const Token &n = peek();
                if (n.kind != Token::Int || n.text.size() > 6)
                    fail_found("the update index (an integer) after '" + s.func + ".update('");
                s.stage = std::stoi(n.text);
                pos++;
                expect(")", "after '" + s.func + ".update(" + n.text + "'");
                if (is(peek(), ".") && peek(1).text == "specialize") continue;
                break;
            }
            if (part == "specialize" && is(peek(), "(")) {
                pos++;
                s.condition = condition(s.func);
                break;
            }
            // FUNC.in(consumer, ...): its wrapper; FUNC.clone_in(consumer, ...): its clone
            if ((part == "in" || part == "clone_in") && is(peek(), "(")) {
                const Token &open = peek();
                pos++;
                s.wrapper = true;
                s.clone = part == "clone_in";
                const std::string call = s.func + "." + part + "(...)";
                while (!is(peek(), ")")) {
                    if (peek().kind != Token::Ident) fail_found("a consumer Func name in '" + call + "'");
                    s.wrapper_of.push_back(toks[pos++].text);
                    if (is(peek(), ",")) pos++;
                    else if (!is(peek(), ")")) fail_found("',' or ')' in '" + call + "'");
                }
                pos++;
                if (s.clone && s.wrapper_of.empty())
                    fail(open, "'" + s.func + ".clone_in():' names no consumer; a clone is for the consumers named, "
                               "e.g. '" + s.func + ".clone_in(g):'");
                if (is(peek(), ".")) {
                    std::string wrapper = s.func + (s.clone ? "_clone_in" : "_in");
                    for (const auto &c : s.wrapper_of) wrapper += "_" + c;
                    const bool specialize = peek(1).text == "specialize";
                    if (s.clone)
                        fail(peek(), "a clone stanza 'FUNC.clone_in(...):' schedules the clone's pure definition "
                                     "and where it is computed; schedule its updates in a stanza named after "
                                     "the clone ('" + wrapper + ".update(0):')");
                    fail(peek(), specialize ? "a wrapper stanza 'FUNC.in(...):' takes no specialize(); make the "
                                              "wrapper with this stanza, then specialize it in a stanza named after "
                                              "it, before its own schedule: '" + wrapper + ".specialize(COND): ...', "
                                              "then '" + wrapper + ": ...'"
                                            : "a wrapper stanza 'FUNC.in(...):' schedules the wrapper's pure "
                                              "definition; it has no updates");
                }
                break;
            }
            s.func += "." + part;
        }
        std::string name = s.stage < 0 ? s.func : s.func + ".update(" + std::to_string(s.stage) + ")";
        if (s.wrapper) name = s.func + (s.clone ? ".clone_in(" : ".in(") + join(s.wrapper_of) + ")";
        if (!s.condition.empty()) name += ".specialize(" + s.condition + ")";
        expect(":", "after the stanza name '" + name + "'");
        if (!starts_line)
            error_at(file, s.line, s.col, "a stanza header must start a line; put '" + name + ":' on a new line");
        return s;
    }

    // The condition of "FUNC.specialize(...)", after its '(' and through its
    // ')': comparisons joined by &&, as canonical text.
    std::string condition(const std::string &func) {
        static const char *const cmps[] = {">=", ">", "<=", "<", "==", "!="};
        std::string text;
        for (int i = 1;; i++) {
            std::string what = "comparison " + std::to_string(i) + " of " + func + ".specialize(...)";
            Arg lhs = parse_arg(toks, pos, file, what);
            const Token &op = peek();
            bool cmp = false;
            for (const char *c : cmps) cmp |= is(op, c);
            if (!cmp) fail_found("a comparison (>=, >, <=, <, ==, !=) in " + what);
            pos++;
            Arg rhs = parse_arg(toks, pos, file, what);
            text += (text.empty() ? "" : " && ") + lhs.text + " " + op.text + " " + rhs.text;
            if (is(peek(), "&&")) {
                pos++;
                continue;
            }
            expect(")", "or '&&' after " + what);
            return text;
        }
    }

    ScheduleDirective directive(const ScheduleStanza &s) {
        const Token &t = peek();
        if (t.kind != Token::Ident) fail_found("a directive such as vectorize(x), or a stanza header");
        const Directive *info = find_directive(t.text);
        if (!info) {
            std::string m = "unknown directive '" + t.text + "'";
            std::string near = nearest(t.text, directive_names());
            if (!near.empty()) m += "; did you mean '" + near + "'?";
            m += " Directives: " + join(directive_names());
            if (!is(peek(1), "(") && t.first_on_line) m += " (a stanza header needs a ':', as in '" + t.text + ":')";
            fail(t, m);
        }
        ScheduleDirective d;
        d.name = t.text;
        d.line = t.line;
        d.col = t.col;
        pos++;
        expect("(", "after " + d.name);
        size_t first_arg = pos;
        size_t max_args = 0;
        for (const auto &f : info->forms) max_args = std::max(max_args, f.params.size());
        if (is(peek(), ")")) {
            pos++;
        } else {
            while (true) {
                std::string what = "argument " + std::to_string(d.args.size() + 1) + " of " + d.name;
                Arg a = parse_arg(toks, pos, file, what);
                d.args.push_back(a.text);
                d.arg_lines.push_back(a.line);
                d.arg_cols.push_back(a.col);
                args.push_back(std::move(a));
                if (is(peek(), ",")) {
                    pos++;
                } else if (is(peek(), ")")) {
                    pos++;
                    break;
                } else if (!info->variadic && d.args.size() >= max_args) {
                    fail_found("')' after the arguments of " + d.name);
                } else {
                    std::string fixed = with_missing_commas(*info, first_arg, s);
                    fail(peek(), "expected ',' or ')' after " + what + ", found " + describe(peek()) +
                                     (fixed.empty() ? "" : "; a ',' is missing: write " + fixed + ", as in " + info->usage));
                }
            }
        }
        check(*info, d, s);
        args.clear();
        return d;
    }

    // The directive whose arguments start at toks[first], read as if a ','
    // stood wherever one argument directly follows another, if that reads to
    // the ')' and passes check(); else "".
    //   split(x xo, xi, 8)  ->  "split(x, xo, xi, 8)"
    std::string with_missing_commas(const Directive &info, size_t first, const ScheduleStanza &s) {
        ScheduleDirective d;
        d.name = info.name;
        d.line = toks[first].line;
        d.col = toks[first].col;
        std::vector<Arg> parsed;
        try {
            for (size_t p = first;;) {
                parsed.push_back(parse_arg(toks, p, file, "an argument"));
                d.args.push_back(parsed.back().text);
                if (is(toks[p], ")")) break;
                if (is(toks[p], ",")) p++;
                else if (toks[p].kind != Token::Ident && toks[p].kind != Token::Int) return "";
            }
        } catch (const CompileError &) {
            return "";
        }
        std::swap(args, parsed);  // check() reads the arguments from `args`
        bool ok = true;
        try {
            check(info, d, s);
        } catch (const CompileError &) {
            ok = false;
        }
        std::swap(args, parsed);
        return ok ? d.name + "(" + join(d.args) + ")" : "";
    }

    void check(const Directive &info, const ScheduleDirective &d, const ScheduleStanza &s) const {
        if (info.scope == Scope::Func && !s.condition.empty())
            error_at(file, d.line, d.col,
                     d.name + " schedules the whole Func " + s.func + ", not one specialization of it; move it to "
                     "the '" + s.func + ":' stanza");
        if (info.scope == Scope::Func && s.stage >= 0)
            error_at(file, d.line, d.col,
                     d.name + " schedules the whole Func " + s.func + ", not one update stage; move it to the '" +
                         s.func + ":' stanza");
        if (info.scope == Scope::Update && s.stage < 0)
            error_at(file, d.line, d.col,
                     d.name + " splits an update definition; put it in the '" + s.func +
                         ".update(N):' stanza of the reduction");
        std::vector<Parameter> params;
        if (!params_for(info, d.args.size(), &params))
            error_at(file, d.line, d.col,
                     d.name + " takes " + arity_text(info) + ": " + info.usage + "; found " +
                         std::to_string(d.args.size()));
        for (size_t i = 0; i < args.size(); i++) {
            const Slot kind = params[i].slot;
            const std::string param = params[i].name;
            std::string what;
            const std::vector<std::string> *words = words_of(kind, &what);
            std::string slot = "argument " + std::to_string(i + 1) + " (" + param + ") of " + d.name;
            const Arg &a = args[i];
            std::string found = (a.is_name() ? "the name '" : "the integer '") + a.text + "'";
            if (kind == Slot::Int && a.is_name())
                error_at(file, a.line, a.col,
                         slot + " must be an integer (a number, natural_vector_size, or arithmetic on them), found " +
                             found);
            if (kind != Slot::Int && kind != Slot::Root && !words && !a.is_name())
                error_at(file, a.line, a.col, slot + " must be a name, found " + found);
            if (words && (!a.is_name() || std::find(words->begin(), words->end(), a.name) == words->end())) {
                std::string near = a.is_name() ? nearest(a.name, *words) : "";
                error_at(file, a.line, a.col,
                         slot + " must be " + what + ", found " + found +
                             (near.empty() ? "" : "; did you mean '" + near + "'?"));
            }
            if (a.stage > 0 && kind != Slot::Stage)
                error_at(file, a.line, a.col,
                         slot + " must be " + (kind == Slot::Func || kind == Slot::Buffer ? "a Func" : "a name") +
                             ", found the update stage '" + a.text + "'; only compute_with's first argument may name "
                             "a stage (" + a.name + ".update(N)); name the Func " + a.name);
            if (kind == Slot::Root && a.name != param)
                error_at(file, a.line, a.col,
                         d.name + " with one argument takes '" + param + "', found " + found + "; use " + info.usage);
        }
    }
};

}  // namespace

ScheduleFile ScheduleFile::parse(const std::string &text, const std::string &filename) {
    ScheduleFile f;
    f.filename_ = filename;
    f.stanzas_ = Parser(text, filename).parse();
    return f;
}

ScheduleFile ScheduleFile::load(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CompileError(path + ": cannot open the schedule file for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw CompileError(path + ": error while reading the schedule file");
    return parse(text.str(), path);
}

}  // namespace kiln
