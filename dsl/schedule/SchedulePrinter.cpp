// The canonical text of a ScheduleFile: one line per stanza, in file order,
// directives separated by a space, arguments as the parser kept them.
// Comments and line breaks inside stanzas are not kept.
//
//   # tiles
//   blur_y: tile(x, y, xi, yi, 64, 8)
//           vectorize(xi, natural_vector_size * 2)
//   blur_x: compute_at(blur_y, x)
//     ->
//   blur_y: tile(x, y, xi, yi, 64, 8) vectorize(xi, natural_vector_size*2)
//   blur_x: compute_at(blur_y, x)
//
// Printing then parsing gives a structurally equal file (operator==).
#include "ScheduleSyntax.h"
#include "kiln/ScheduleFile.h"

namespace kiln {

bool operator==(const ScheduleDirective &a, const ScheduleDirective &b) {
    return a.name == b.name && a.args == b.args;
}

bool operator==(const ScheduleStanza &a, const ScheduleStanza &b) {
    return a.func == b.func && a.stage == b.stage && a.wrapper == b.wrapper && a.wrapper_of == b.wrapper_of &&
           a.clone == b.clone && a.condition == b.condition && a.kernel == b.kernel && a.directives == b.directives;
}

std::string ScheduleFile::to_string() const {
    std::string out, kernel;
    for (const auto &s : stanzas_) {
        if (s.kernel != kernel) out += "[" + (kernel = s.kernel) + "]\n";
        out += s.func;
        if (s.wrapper) out += (s.clone ? ".clone_in(" : ".in(") + internal::join(s.wrapper_of) + ")";
        if (s.stage >= 0) out += ".update(" + std::to_string(s.stage) + ")";
        if (!s.condition.empty()) out += ".specialize(" + s.condition + ")";
        out += ":";
        for (const auto &d : s.directives) {
            out += " " + d.name + "(";
            for (size_t i = 0; i < d.args.size(); i++) out += (i ? ", " : "") + d.args[i];
            out += ")";
        }
        out += "\n";
    }
    return out;
}

}  // namespace kiln
