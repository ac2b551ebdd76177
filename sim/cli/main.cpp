// commsim: entry point; parses the command line and maps errors to exit codes.
#include <cstdio>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/huge_pages.hpp"
#include "commsim/workloads/cli_conventions.hpp"

namespace {

constexpr const char* kFooter = R"(
EXAMPLES
  commsim topo show topologies/library/real/h200x4.topo        what the 4x H200 machine looks like
  commsim topo show my-node.topo --gpu H100 --format json     your machine, for scripts
  commsim topo gpus                                            the GPU generations commsim knows
  commsim simulate sendrecv --topology T.topo --gpus 0-3        predicted nccl-tests sendrecv_perf
  commsim simulate all_reduce --topology T.topo -g 4 -b 8 -e 128M -f 2   the same flags as all_reduce_perf
  commsim simulate pipeline --topology T.topo --stages 4 ...    a Megatron 1F1B step, per P2P mode
  commsim advise pipeline --topology T.topo --stages 4 ...      which P2P mode to use, and why
  commsim sweep SPEC.toml --out DIR                             a grid of what-ifs on every core (or --shard K/N)
  commsim validate --topology T.topo --nccl-tests LOG...        how far predictions are from measurements
  commsim plot A.tsv B.tsv --x gpus --y user_s -o out.svg       a log-log chart of two columns, a line per file
  commsim <command> --help                                     details of one command

EXIT STATUS
  0  success
  1  internal error (a bug: please report it with the command line)
  2  usage error: unknown option, bad flag value, unknown GPU or preset name
  3  bad input file: the message names the file, line and column
  4  a file could not be read or written
  6  some points failed (commsim sweep: every row is written; the failed ones have status 'failed')

UNITS
  In files every quantity takes a unit: sizes 8B, 24MiB, 1GiB; bandwidths 25GBps, 400Gbps; durations 1.5us.
  On the command line sizes are also written as nccl-tests writes them: a bare number is bytes (-b 8), K/M/G
  are powers of 1024 (-e 128M); KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024. Short flags -b -e -f
  -g -n -w are nccl-tests'. Time flags take a unit (--fwd-us 0.5ms); a bare number is in the flag's unit.
  Output fields named *_gbps are GB/s (1e9 bytes per second), per direction; *_us are microseconds.

SEE ALSO
  README.md (quick start, architecture), topologies/README.md (input formats, what-if TOML, GPU defaults).
)";

}  // namespace

int main(int argc, char** argv) {
  // Before anything is allocated: large runs spend up to half their time in page faults on 4 KiB pages.
  commsim::reexec_with_huge_pages(argv);
  CLI::App app{
      "commsim predicts how long GPU communication takes on a machine you have or one you are planning.\n"
      "It reads real topologies (`nvidia-smi topo -m`) or what-if TOML clusters and models NVLink, "
      "NVSwitch,\n"
      "PCIe, host memory and InfiniBand/RoCE/TCP fabrics the way NCCL uses them.",
      "commsim"};
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("commsim ") + COMMSIM_VERSION);
  app.require_subcommand(1);
  app.get_formatter()->column_width(34);
  commsim::cli::add_topo_command(app);
  commsim::cli::add_simulate_command(app);
  commsim::cli::add_validate_command(app);
  commsim::cli::add_calibrate_command(app);
  commsim::cli::add_model_command(app);
  commsim::cli::add_advise_command(app);
  commsim::cli::add_sweep_command(app);
  commsim::cli::add_plot_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string hint = commsim::workloads::did_you_mean(app, argc, argv);
    if (hint.empty()) {
      app.exit(e);
    } else {
      std::cerr << "commsim: " << hint << "\nRun with --help for more information.\n";
    }
    return static_cast<int>(commsim::ExitCode::kUsage);
  } catch (const commsim::Error& e) {
    std::cerr << "commsim: " << e.what() << "\n";
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    std::cerr << "commsim: out of memory\n";
    return static_cast<int>(commsim::ExitCode::kInternal);
  } catch (const std::exception& e) {
    std::cerr << "commsim: internal error: " << e.what() << "\n";
    return static_cast<int>(commsim::ExitCode::kInternal);
  }
  return 0;
}
