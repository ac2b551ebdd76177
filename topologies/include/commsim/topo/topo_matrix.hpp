// Parser for `nvidia-smi topo -m` output: the GPU/NIC connection matrix with affinities and legends.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/nccl_env.hpp"

namespace commsim::topo {

/// The connection code of one matrix cell. SOC (old drivers) is read as Sys.
enum class PairCode { Unknown, Self, NvLink, Pix, Pxb, Phb, Node, Sys };

/// "X", "NV12", "PIX", ... ; Unknown prints as "-".
std::string code_name(PairCode code, int nvlinks);

/// PCIe distance rank used to infer the tree: PIX 1, PXB 2, PHB 3, NODE 4, SYS 5; 0 when the cell says
/// nothing about PCIe (NVLink, self, unknown).
int pcie_rank(PairCode code);

/// NCCL's path type between two GPUs whose matrix cell is `code`: NV<n> -> NVL, PIX -> PIX, PXB -> PXB, PHB
/// and NODE -> PHB, anything else (SYS, X, unknown) -> SYS.
models::PathType nccl_path_type(PairCode code);

/// One cell: 16 bytes (a matrix of n devices stores n^2 of them; the file name lives in TopoMatrix).
struct MatrixCell {
  PairCode code = PairCode::Unknown;
  int nvlinks = 0;  ///< bonded NVLink count for NvLink cells
  int line = 0;     ///< where the cell is in the file (line 0 when derived from the transposed cell)
  int column = 0;
};

/// A GPU or NIC row/column of the matrix.
struct MatrixDevice {
  enum class Kind { Gpu, Nic };
  Kind kind = Kind::Gpu;
  std::string label;          ///< column header: "GPU3", "NIC0" or a device name such as "mlx5_0"
  std::string device;         ///< NIC device name from the NIC Legend (or the label itself); empty for GPUs
  int index = 0;              ///< GPU index, or NIC ordinal in column order
  std::string cpu_affinity;   ///< as printed, may be empty
  std::string numa_affinity;  ///< as printed, may be empty or "N/A"
  std::string gpu_numa_id;    ///< as printed, may be empty or "N/A"
  bool has_row = false;       ///< whether the matrix had a row for this device
};

/// The parsed matrix. Devices are GPUs first (by index) then NICs in column order; cells[i][j] is symmetric.
struct TopoMatrix {
  std::string file;
  std::vector<MatrixDevice> devices;
  std::vector<std::vector<MatrixCell>> cells;
  bool legend_seen = false;

  int gpu_count() const;
  int nic_count() const { return static_cast<int>(devices.size()) - gpu_count(); }
  const MatrixCell& cell(int a, int b) const { return cells[a][b]; }
  /// The file position of a cell, for messages.
  SourceLocation where(const MatrixCell& c) const { return {file, c.line, c.column}; }
};

/// Parses the text of `nvidia-smi topo -m`. Accepts tab- or space-aligned output, ESC[..m codes, CR LF line
/// ends, empty affinity cells, NIC columns (NIC# with a NIC Legend, or device names), full, truncated or
/// missing legends, and SOC for SYS. Throws InputError with file, line and column for: empty or binary input,
/// no header, short rows, empty or unknown cells, absurd NV counts, misplaced X, NVLink to a NIC, unknown or
/// duplicate rows, missing GPU rows and asymmetric cells. A header of more than kMaxMatrixDevices device
/// columns (core/limits.hpp) is refused before any cell is stored; cells are stored as rows are read, so the
/// work and memory follow the text, not what the header claims.
TopoMatrix parse_topo_matrix(std::string_view text, const std::string& file);

/// True when the text looks like `nvidia-smi topo -m` output (a header line with a GPU0 column).
bool looks_like_topo_matrix(std::string_view text);

}  // namespace commsim::topo
