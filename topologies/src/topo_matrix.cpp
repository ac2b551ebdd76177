// Parsing `nvidia-smi topo -m` as real machines print it (tabs or spaces, escape codes, legends, NIC
// columns).
#include "commsim/topo/topo_matrix.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <unordered_map>

#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"

namespace commsim::topo {
namespace {

constexpr int kMaxNvlinks = 64;  // no GPU has more; larger counts are corrupt input
constexpr const char* kWhat = "`nvidia-smi topo -m` output";
constexpr const char* kValidCodes = "X, NV#, PIX, PXB, PHB, NODE, SYS, SOC";

/// A line with terminal escape sequences removed; col_[i] is the 1-based column in the file of clean_[i].
struct CleanLine {
  int number = 0;
  std::string text;
  std::vector<int> col;
  int end_col = 1;  ///< column just past the last character
};

CleanLine clean_line(const Line& line, const std::string& file) {
  CleanLine out;
  out.number = line.number;
  const std::string_view s = line.text;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '\x1b') {
      std::size_t j = i + 1;
      if (j < s.size() && s[j] == '[') {
        ++j;
        while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == ';')) ++j;
        if (j < s.size() && s[j] >= '@' && s[j] <= '~') {
          i = j + 1;
          continue;
        }
      }
      throw InputError({file, line.number, static_cast<int>(i) + 1}, "malformed terminal escape sequence");
    }
    out.text += s[i];
    out.col.push_back(static_cast<int>(i) + 1);
    ++i;
  }
  out.end_col = static_cast<int>(s.size()) + 1;
  return out;
}

struct Field {
  std::string text;
  int column = 0;  ///< 1-based column in the file where the field (or the empty slot) starts
};

bool is_blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

/// Tab-separated split, trimming spaces; keeps empty fields.
std::vector<Field> split_tabs(const CleanLine& l) {
  std::vector<Field> out;
  std::size_t start = 0;
  while (true) {
    std::size_t end = l.text.find('\t', start);
    if (end == std::string::npos) end = l.text.size();
    std::size_t a = start, b = end;
    while (a < b && l.text[a] == ' ') ++a;
    while (b > a && l.text[b - 1] == ' ') --b;
    const int col = a < l.col.size() ? l.col[a] : l.end_col;
    out.push_back({l.text.substr(a, b - a), col});
    if (end == l.text.size()) break;
    start = end + 1;
  }
  return out;
}

/// Whitespace split. With `min_gap` 2, single spaces stay inside a field ("CPU Affinity").
std::vector<Field> split_spaces(const CleanLine& l, int min_gap) {
  std::vector<Field> out;
  const std::string& t = l.text;
  std::size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    if (i >= t.size()) break;
    std::size_t j = i;
    while (j < t.size()) {
      if (std::isspace(static_cast<unsigned char>(t[j]))) {
        std::size_t k = j;
        while (k < t.size() && std::isspace(static_cast<unsigned char>(t[k]))) ++k;
        const bool tab = t.substr(j, k - j).find('\t') != std::string::npos;
        if (tab || static_cast<int>(k - j) >= min_gap || k == t.size()) break;
        j = k;
      } else {
        ++j;
      }
    }
    out.push_back({t.substr(i, j - i), l.col[i]});
    i = j;
  }
  return out;
}

bool parse_int(std::string_view s, int& value) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && p == s.data() + s.size();
}

std::optional<int> numbered(std::string_view s, std::string_view prefix) {
  if (s.size() <= prefix.size() || s.substr(0, prefix.size()) != prefix) return std::nullopt;
  int v = 0;
  if (!parse_int(s.substr(prefix.size()), v) || v < 0 || v > 100000) return std::nullopt;
  return v;
}

bool looks_like_nic_device(std::string_view s) {
  if (s.empty() || s.size() > 32 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  bool digit = false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
    digit = digit || std::isdigit(static_cast<unsigned char>(c));
  }
  return digit;
}

enum class ColumnKind { Gpu, Nic, CpuAffinity, NumaAffinity, GpuNumaId };

struct Column {
  ColumnKind kind;
  std::string name;
  int start = 0;    ///< 1-based file column of the header text
  int device = -1;  ///< index into devices for Gpu/Nic columns
};

MatrixCell parse_cell(const Field& f, int line, const std::string& file) {
  MatrixCell c;
  c.line = line;
  c.column = f.column;
  const SourceLocation where{file, line, f.column};
  const std::string& s = f.text;
  if (s.empty()) throw InputError(where, "empty matrix cell; expected one of " + std::string(kValidCodes));
  if (s == "X") {
    c.code = PairCode::Self;
  } else if (s == "PIX") {
    c.code = PairCode::Pix;
  } else if (s == "PXB") {
    c.code = PairCode::Pxb;
  } else if (s == "PHB") {
    c.code = PairCode::Phb;
  } else if (s == "NODE") {
    c.code = PairCode::Node;
  } else if (s == "SYS" || s == "SOC") {
    c.code = PairCode::Sys;
  } else if (s.size() > 2 && s.rfind("NV", 0) == 0 && std::isdigit(static_cast<unsigned char>(s[2]))) {
    int n = 0;
    if (!parse_int(std::string_view(s).substr(2), n) || n < 1 || n > kMaxNvlinks) {
      throw InputError(where, "absurd NVLink count '" + s + "': a GPU pair has between 1 and " +
                                  std::to_string(kMaxNvlinks) + " bonded NVLinks");
    }
    c.code = PairCode::NvLink;
    c.nvlinks = n;
  } else {
    throw InputError(where, "unknown connection code '" + s + "'; valid codes: " + kValidCodes);
  }
  return c;
}

bool same_cell(const MatrixCell& a, const MatrixCell& b) {
  return a.code == b.code && a.nvlinks == b.nvlinks;
}

}  // namespace

std::string code_name(PairCode code, int nvlinks) {
  switch (code) {
    case PairCode::Self:
      return "X";
    case PairCode::NvLink:
      return "NV" + std::to_string(nvlinks);
    case PairCode::Pix:
      return "PIX";
    case PairCode::Pxb:
      return "PXB";
    case PairCode::Phb:
      return "PHB";
    case PairCode::Node:
      return "NODE";
    case PairCode::Sys:
      return "SYS";
    case PairCode::Unknown:
      break;
  }
  return "-";
}

int pcie_rank(PairCode code) {
  switch (code) {
    case PairCode::Pix:
      return 1;
    case PairCode::Pxb:
      return 2;
    case PairCode::Phb:
      return 3;
    case PairCode::Node:
      return 4;
    case PairCode::Sys:
      return 5;
    default:
      return 0;
  }
}

models::PathType nccl_path_type(PairCode code) {
  switch (code) {
    case PairCode::NvLink:
      return models::PathType::Nvl;
    case PairCode::Pix:
      return models::PathType::Pix;
    case PairCode::Pxb:
      return models::PathType::Pxb;
    case PairCode::Phb:
    case PairCode::Node:
      return models::PathType::Phb;
    default:
      return models::PathType::Sys;
  }
}

int TopoMatrix::gpu_count() const {
  return static_cast<int>(std::count_if(devices.begin(), devices.end(), [](const MatrixDevice& d) {
    return d.kind == MatrixDevice::Kind::Gpu;
  }));
}

bool looks_like_topo_matrix(std::string_view text) {
  text = strip_utf8_bom(text);  // a byte-order mark (Windows editors) is accepted
  for (const Line& l : split_lines(text.substr(0, std::min<std::size_t>(text.size(), 1 << 16)))) {
    std::string stripped;  // without ESC[..m sequences
    for (std::size_t i = 0; i < l.text.size(); ++i) {
      if (l.text[i] == '\x1b' && i + 1 < l.text.size() && l.text[i + 1] == '[') {
        std::size_t j = i + 2;
        while (j < l.text.size() && (std::isdigit(static_cast<unsigned char>(l.text[j])) || l.text[j] == ';'))
          ++j;
        i = j;
        continue;
      }
      stripped += l.text[i];
    }
    const std::string_view t = stripped;
    const auto pos = t.find("GPU0");
    if (pos == std::string_view::npos) continue;
    const bool left_ok = pos == 0 || !std::isalnum(static_cast<unsigned char>(t[pos - 1]));
    const bool right_ok = pos + 4 >= t.size() || !std::isalnum(static_cast<unsigned char>(t[pos + 4]));
    if (left_ok && right_ok && t.substr(0, pos).find_first_not_of(" \t") == std::string::npos) {
      return true;
    }
  }
  return false;
}

TopoMatrix parse_topo_matrix(std::string_view text, const std::string& file) {
  text = strip_utf8_bom(text);  // a byte-order mark (Windows editors) is accepted
  require_text(text, file, kWhat);
  const std::vector<Line> raw = split_lines(text);
  std::vector<CleanLine> lines;  // lines after the header are cleaned once the header is known to fit
  lines.reserve(raw.size());

  // 1. Header: the first line whose first field is GPU0.
  std::size_t h = 0;
  std::vector<Field> header;
  for (; h < raw.size(); ++h) {
    lines.push_back(clean_line(raw[h], file));
    auto fields = split_spaces(lines[h], 2);
    // The header starts with a GPU column and, unlike a row, has no X cell.
    const bool gpu_first = !fields.empty() && numbered(fields[0].text, "GPU").has_value();
    if (gpu_first &&
        std::none_of(fields.begin(), fields.end(), [](const Field& f) { return f.text == "X"; })) {
      header = lines[h].text.find('\t') != std::string::npos ? split_tabs(lines[h]) : fields;
      break;
    }
  }
  if (header.empty()) {
    throw InputError({file, 1, 1}, "no header line with a GPU0 column; expected " + std::string(kWhat));
  }
  const int header_line = lines[h].number;
  // Tab headers begin with the empty row-label slot.
  if (!header.empty() && header[0].text.empty()) header.erase(header.begin());
  while (!header.empty() && header.back().text.empty()) header.pop_back();

  // Refused before anything is stored per column: the cells grow as the square of the device columns.
  if (header.size() > static_cast<std::size_t>(kMaxMatrixDevices) + 3) {  // + the three affinity columns
    throw InputError({file, header_line, header[static_cast<std::size_t>(kMaxMatrixDevices) + 3].column},
                     "refused: the header has " + std::to_string(header.size()) +
                         " columns; one `nvidia-smi topo -m` matrix has at most " +
                         std::to_string(kMaxMatrixDevices) + " GPU and NIC columns");
  }
  for (std::size_t i = h + 1; i < raw.size(); ++i) lines.push_back(clean_line(raw[i], file));

  TopoMatrix m;
  m.file = file;
  std::vector<Column> columns;
  std::vector<MatrixDevice> gpus, nics;
  std::vector<std::pair<bool, int>> column_device;  // (is_gpu, index within gpus/nics)
  bool attributes_started = false;
  for (const Field& f : header) {
    Column c{ColumnKind::Gpu, f.text, f.column, -1};
    if (f.text.empty()) throw InputError({file, header_line, f.column}, "empty column header");
    if (auto g = numbered(f.text, "GPU")) {
      if (*g != static_cast<int>(gpus.size())) {
        throw InputError({file, header_line, f.column},
                         "GPU columns must be GPU0, GPU1, ... in order; found '" + f.text + "' where GPU" +
                             std::to_string(gpus.size()) + " was expected");
      }
      MatrixDevice d;
      d.kind = MatrixDevice::Kind::Gpu;
      d.label = f.text;
      d.index = *g;
      gpus.push_back(d);
    } else if (f.text == "CPU Affinity") {
      c.kind = ColumnKind::CpuAffinity;
    } else if (f.text == "NUMA Affinity") {
      c.kind = ColumnKind::NumaAffinity;
    } else if (f.text == "GPU NUMA ID") {
      c.kind = ColumnKind::GpuNumaId;
    } else if (numbered(f.text, "NIC") || looks_like_nic_device(f.text)) {
      c.kind = ColumnKind::Nic;
      MatrixDevice d;
      d.kind = MatrixDevice::Kind::Nic;
      d.label = f.text;
      d.device = f.text;
      d.index = static_cast<int>(nics.size());
      nics.push_back(d);
    } else {
      throw InputError(
          {file, header_line, f.column},
          "unknown column '" + f.text +
              "'; expected GPU#, NIC#, a NIC device name, CPU Affinity, NUMA Affinity or GPU NUMA ID");
    }
    const bool is_device = c.kind == ColumnKind::Gpu || c.kind == ColumnKind::Nic;
    if (is_device && attributes_started) {
      throw InputError({file, header_line, f.column},
                       "device column '" + f.text + "' after the affinity columns");
    }
    attributes_started = attributes_started || !is_device;
    columns.push_back(c);
  }
  // Devices: GPUs first, then NICs; map each column to its device index.
  m.devices = gpus;
  m.devices.insert(m.devices.end(), nics.begin(), nics.end());
  {
    int gi = 0, ni = 0;
    std::set<std::string> seen;
    for (Column& c : columns) {
      if (c.kind == ColumnKind::Gpu) c.device = gi++;
      if (c.kind == ColumnKind::Nic) c.device = static_cast<int>(gpus.size()) + ni++;
      if (c.device >= 0 && !seen.insert(c.name).second) {
        throw InputError({file, header_line, c.start}, "duplicate column '" + c.name + "'");
      }
    }
  }
  const int n = static_cast<int>(m.devices.size());
  if (n > kMaxMatrixDevices) {
    throw InputError({file, header_line, 1},
                     "refused: the header has " + std::to_string(n) +
                         " GPU and NIC columns; one `nvidia-smi topo -m` matrix has at most " +
                         std::to_string(kMaxMatrixDevices));
  }
  // A row's cells are stored when the row is read (work and memory follow the text, not the header).
  m.cells.assign(n, std::vector<MatrixCell>());
  std::unordered_map<std::string_view, int> device_of_label;  // row label -> device
  for (const Column& c : columns) {
    if (c.device >= 0) device_of_label.emplace(c.name, c.device);
  }
  std::vector<int> device_of_column;
  std::vector<const Column*> attribute_columns;
  for (const Column& c : columns) {
    if (c.device >= 0) {
      device_of_column.push_back(c.device);
    } else {
      attribute_columns.push_back(&c);
    }
  }

  // 2. Rows, until a blank line or the legend.
  std::size_t r = h + 1;
  for (; r < lines.size(); ++r) {
    const CleanLine& l = lines[r];
    if (is_blank(l.text)) break;
    const bool tabs = l.text.find('\t') != std::string::npos;
    std::vector<Field> fields = tabs ? split_tabs(l) : split_spaces(l, 1);
    if (fields.empty()) break;
    if (fields[0].text.rfind("Legend", 0) == 0 || fields[0].text.rfind("NIC Legend", 0) == 0) break;
    const std::string label = fields[0].text;
    const auto row_it = device_of_label.find(label);
    if (row_it == device_of_label.end()) {
      throw InputError({file, l.number, fields[0].column},
                       "row label '" + label + "' is not one of the matrix columns");
    }
    const int row = row_it->second;
    MatrixDevice& dev = m.devices[row];
    if (dev.has_row) throw InputError({file, l.number, fields[0].column}, "duplicate row '" + label + "'");
    dev.has_row = true;
    const std::size_t need = device_of_column.size();
    if (fields.size() < need + 1) {
      throw InputError({file, l.number, l.end_col}, "short row '" + label + "': expected " +
                                                        std::to_string(need) + " matrix cells, found " +
                                                        std::to_string(fields.size() - 1));
    }
    m.cells[row].assign(static_cast<std::size_t>(n), MatrixCell{});
    for (std::size_t k = 0; k < need; ++k) {
      MatrixCell c = parse_cell(fields[k + 1], l.number, file);
      const int col = device_of_column[k];
      const bool diagonal = col == row;
      if (diagonal != (c.code == PairCode::Self)) {
        throw InputError(
            m.where(c),
            diagonal ? "diagonal cell of '" + label + "' must be X, found '" + fields[k + 1].text + "'"
                     : "X off the diagonal (row '" + label + "', column '" + m.devices[col].label + "')");
      }
      const bool nic_pair =
          m.devices[row].kind == MatrixDevice::Kind::Nic || m.devices[col].kind == MatrixDevice::Kind::Nic;
      if (c.code == PairCode::NvLink && nic_pair) {
        throw InputError(m.where(c), "NVLink code '" + fields[k + 1].text + "' between '" + label +
                                         "' and '" + m.devices[col].label + "': NICs have no NVLinks");
      }
      m.cells[row][col] = c;
    }
    // Attribute columns: by index with tabs, by nearest header position with spaces.
    std::vector<Field> rest(fields.begin() + static_cast<std::ptrdiff_t>(need) + 1, fields.end());
    if (tabs && rest.size() > attribute_columns.size()) {
      // nvidia-smi prints an empty tab field between NUMA Affinity and GPU NUMA ID: drop empty fields.
      std::erase_if(rest, [](const Field& f) { return f.text.empty(); });
    }
    if (rest.size() > attribute_columns.size()) {
      const bool all_empty = std::all_of(rest.begin() + static_cast<std::ptrdiff_t>(attribute_columns.size()),
                                         rest.end(), [](const Field& f) { return f.text.empty(); });
      if (!all_empty) {
        const Field& extra = rest[attribute_columns.size()];
        throw InputError(
            {file, l.number, extra.column},
            "row '" + label + "' has more cells than the header has columns ('" + extra.text + "')");
      }
    }
    for (std::size_t k = 0; k < rest.size(); ++k) {
      std::size_t slot = k;
      if (!tabs && !attribute_columns.empty()) {
        int best = 1 << 30;
        for (std::size_t a = 0; a < attribute_columns.size(); ++a) {
          const int d = std::abs(attribute_columns[a]->start - rest[k].column);
          if (d < best) {
            best = d;
            slot = a;
          }
        }
      }
      if (slot >= attribute_columns.size()) continue;
      switch (attribute_columns[slot]->kind) {
        case ColumnKind::CpuAffinity:
          dev.cpu_affinity = rest[k].text;
          break;
        case ColumnKind::NumaAffinity:
          dev.numa_affinity = rest[k].text;
          break;
        case ColumnKind::GpuNumaId:
          dev.gpu_numa_id = rest[k].text;
          break;
        default:
          break;
      }
    }
  }
  const int end_line = r < lines.size() ? lines[r].number : (lines.empty() ? 1 : lines.back().number + 1);
  for (const MatrixDevice& d : m.devices) {
    if (d.kind == MatrixDevice::Kind::Gpu && !d.has_row) {
      throw InputError({file, end_line, 1}, "matrix ends without a row for " + d.label);
    }
  }

  // 3. Symmetry, and fill cells of rows that were not printed (NIC rows may be absent) from the transpose.
  for (int a = 0; a < n; ++a) {
    if (!m.devices[a].has_row) m.cells[a].assign(static_cast<std::size_t>(n), MatrixCell{});
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) {
        m.cells[a][b].code = PairCode::Self;
        continue;
      }
      MatrixCell& ab = m.cells[a][b];
      const MatrixCell& ba = m.cells[b][a];
      if (!m.devices[a].has_row) {
        ab = ba;
        ab.line = 0;
        continue;
      }
      if (m.devices[b].has_row && a > b && !same_cell(ab, ba)) {
        throw InputError(m.where(ab), "asymmetric matrix: " + m.devices[a].label + "/" + m.devices[b].label +
                                          " is " + code_name(ab.code, ab.nvlinks) + " but " +
                                          m.devices[b].label + "/" + m.devices[a].label + " (line " +
                                          std::to_string(ba.line) + ") is " + code_name(ba.code, ba.nvlinks));
      }
    }
  }

  // 4. Legend: only the NIC Legend matters (NICk: device). Truncated or missing legends are fine.
  for (std::size_t k = r; k < lines.size(); ++k) {
    const std::string& t = lines[k].text;
    if (t.find("Legend:") != std::string::npos) m.legend_seen = true;
    auto fields = split_spaces(lines[k], 1);
    if (fields.size() == 2 && fields[0].text.size() > 1 && fields[0].text.back() == ':') {
      const std::string label = fields[0].text.substr(0, fields[0].text.size() - 1);
      for (MatrixDevice& d : m.devices) {
        if (d.kind == MatrixDevice::Kind::Nic && d.label == label && numbered(label, "NIC")) {
          d.device = fields[1].text;
        }
      }
    }
  }
  return m;
}

}  // namespace commsim::topo
