// kiln-calibrate: measures the host's rates for the autoscheduler's cost
// model (MachineModel, kiln/Autoschedule.h) and writes them to the machine
// file that MachineModel::host() reads.
//
//   Calibration c = calibrate_host();
//   std::cout << c.report;                      // one line per measurement
//   write c.machine.file_text(c.header) to MachineModel::machine_file()
//
// Measured on the calling thread unless said otherwise (docs/autoschedule.md,
// "Calibration"): the clock (a chain of dependent integer additions, one
// cycle each), vector operations per cycle (independent multiply-adds of
// the widest vectors the host target uses), the extra cycles of a vector
// division, the read + write bandwidth of L1, L2 and L3 (a copy within
// half the cache), DRAM for one core and for all threads (STREAM's triad),
// starting a parallel loop, one heap allocation and the first touch of a
// page. Cache sizes and threads stay host()'s; unvectorized_lanes and
// transcendental_cycles keep their values (they are properties of the
// emitted code, not of the machine).
#pragma once
#include <string>

#include "Autoschedule.h"

namespace kiln {

struct CalibrationOptions {
    bool quick = false;  // fewer and shorter runs: seconds -> a fraction of one, for tests
};

struct Calibration {
    MachineModel machine;  // host() with the measured fields replaced
    std::string report;    // what was measured, one line each
    std::string header;    // for the file: the CPU, the vector width, the date
};

Calibration calibrate_host(const CalibrationOptions &options = {});

}  // namespace kiln
