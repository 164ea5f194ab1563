// Boundary conditions: wrap an image or Func so that reads outside its
// region are defined. All of them keep the accesses to the wrapped input
// inside its bounds, so bounds inference never asks for more than exists.
//
//   repeat_edge:        f(clamp(x, min, max))
//   constant_exterior:  x in [min, max] ? f(x) : value
//   mirror_image:       ... 2 1 0 | 0 1 2 ... (the edge is repeated)
//   mirror_interior:    ... 2 1 | 0 1 2 ...   (the edge is not repeated)
#pragma once
#include <utility>
#include <vector>

#include "Func.h"
#include "Param.h"

namespace kiln {
namespace BoundaryConditions {

using Region = std::vector<std::pair<Expr, Expr>>;  // {min, extent} per dimension

Func repeat_edge(const ImageParam &im);
Func repeat_edge(const Func &f, const Region &bounds);
Func constant_exterior(const ImageParam &im, Expr value);
Func constant_exterior(const Func &f, Expr value, const Region &bounds);
Func mirror_image(const ImageParam &im);
Func mirror_image(const Func &f, const Region &bounds);
Func mirror_interior(const ImageParam &im);
Func mirror_interior(const Func &f, const Region &bounds);

}  // namespace BoundaryConditions
}  // namespace kiln
