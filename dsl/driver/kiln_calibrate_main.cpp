// kiln-calibrate: measure this machine for the autoscheduler's cost model
// and write the machine file MachineModel::host() reads.
//
//   kiln-calibrate                 measure (a few seconds) and write the machine file
//   kiln-calibrate -o FILE         write FILE instead ($KILN_MACHINE=FILE then uses it)
//   kiln-calibrate --print         measure and print the file, write nothing
//   kiln-calibrate --quick         shorter runs (less precise; for tests)
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "kiln/Calibrate.h"
#include "kiln/Error.h"

int main(int argc, char **argv) {
    CLI::App app{"kiln-calibrate: measure this machine's clock, vector rate, bandwidths and overheads for the "
                 "autoscheduler's cost model, and write them to the machine file (docs/autoschedule.md)"};
    std::string output;
    bool print = false, quick = false;
    app.add_option("-o,--output", output,
                   "The file to write (default: $KILN_MACHINE, else $XDG_CONFIG_HOME/kiln/machine.txt or "
                   "~/.config/kiln/machine.txt)");
    app.add_flag("--print", print, "Print the machine file instead of writing it");
    app.add_flag("--quick", quick, "Shorter, less precise measurements");
    CLI11_PARSE(app, argc, argv);

    if (output.empty() && !print) output = kiln::MachineModel::machine_file();
    if (output.empty() && !print) {
        std::cerr << "kiln-calibrate: no machine file to write ($KILN_MACHINE is `none` and no -o FILE); "
                     "pass -o FILE or --print\n";
        return 1;
    }
    kiln::CalibrationOptions options;
    options.quick = quick;
    kiln::Calibration c = kiln::calibrate_host(options);
    std::cerr << c.report;
    const std::string text = c.machine.file_text(c.header);
    if (print) {
        std::cout << text;
        return 0;
    }
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(output).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    std::ofstream f(output);
    f << text;
    f.close();
    if (!f) {
        std::cerr << "kiln-calibrate: cannot write " << output << "\n";
        return 1;
    }
    // Read back through the parser the autoscheduler uses.
    try {
        kiln::MachineModel::detected().with_file(output);
    } catch (const kiln::CompileError &e) {
        std::cerr << "kiln-calibrate: " << e.what() << "\n";
        return 1;
    }
    std::cerr << "wrote " << output << "\n";
    return 0;
}
