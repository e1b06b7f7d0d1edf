#include "runtime/plugins/plugin_file.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>
#include <vector>

#include <boost/dll/library_info.hpp>
#include <hwy/targets.h>

namespace gguflow::plugins {
namespace {

// Checks the parts of the ELF header that boost::dll::library_info trusts before it seeks:
// magic, 64-bit little-endian class, and a section header table inside the file. A truncated
// or garbage file fails here with a reason instead of sending the parser off the end.
std::string check_elf_header(const std::filesystem::path& file) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) return "cannot read the file size: " + ec.message();
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot open the file";
  unsigned char header[64] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  if (static_cast<size_t>(in.gcount()) < sizeof header)
    return "not an ELF shared library (only " + std::to_string(size) + " bytes)";
  if (std::memcmp(header, "\x7f" "ELF", 4) != 0) return "not an ELF shared library (bad magic)";
  if (header[4] != 2 || header[5] != 1) return "not a 64-bit little-endian ELF file";
  uint16_t type = 0, machine = 0;
  std::memcpy(&type, header + 0x10, 2);
  std::memcpy(&machine, header + 0x12, 2);
  if (type != 3) return "an ELF file but not a shared library (e_type " + std::to_string(type) + ")";
#if defined(__x86_64__)
  constexpr uint16_t kHostMachine = 62;  // EM_X86_64
#elif defined(__aarch64__)
  constexpr uint16_t kHostMachine = 183;  // EM_AARCH64
#else
  constexpr uint16_t kHostMachine = 0;
#endif
  if (kHostMachine && machine != kHostMachine)
    return "built for another processor architecture (ELF machine " + std::to_string(machine) +
           ", this host " + std::to_string(kHostMachine) + ")";
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  std::memcpy(&shoff, header + 0x28, 8);
  std::memcpy(&shentsize, header + 0x3A, 2);
  std::memcpy(&shnum, header + 0x3C, 2);
  std::memcpy(&shstrndx, header + 0x3E, 2);
  if (shentsize != 64 || shnum == 0 || shstrndx >= shnum)
    return "corrupt ELF file (no valid section header table)";
  if (shoff > size || uint64_t{shnum} * 64 > size - shoff)
    return "corrupt ELF file (truncated: section headers end past " + std::to_string(size) +
           " bytes)";
  // boost::dll::library_info reads the section-name string table into memory and reads every
  // name as a C string at its sh_name offset: the table must lie inside the file, end with a
  // NUL, and every sh_name must point inside it (an unterminated table sent Boost's reader off
  // the end of its buffer: malformed/plugin_dir/libgguflow-kernels-tiny.so).
  std::vector<unsigned char> headers(size_t{shnum} * 64);
  in.seekg(static_cast<std::streamoff>(shoff));
  in.read(reinterpret_cast<char*>(headers.data()), static_cast<std::streamsize>(headers.size()));
  if (static_cast<size_t>(in.gcount()) != headers.size()) return "cannot read the section headers";
  auto field32 = [&](size_t section, size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, headers.data() + section * 64 + at, 4);
    return v;
  };
  auto field64 = [&](size_t section, size_t at) {
    uint64_t v = 0;
    std::memcpy(&v, headers.data() + section * 64 + at, 8);
    return v;
  };
  constexpr uint32_t kShtStrtab = 3;
  const uint32_t strtab_type = field32(shstrndx, 4);
  const uint64_t strtab_offset = field64(shstrndx, 0x18), strtab_size = field64(shstrndx, 0x20);
  if (strtab_type != kShtStrtab)
    return "corrupt ELF file (the section-name table, section " + std::to_string(shstrndx) +
           ", has type " + std::to_string(strtab_type) + ", not a string table)";
  if (strtab_size == 0 || strtab_offset > size || strtab_size > size - strtab_offset)
    return "corrupt ELF file (the section-name table [" + std::to_string(strtab_offset) + ", +" +
           std::to_string(strtab_size) + ") lies outside the " + std::to_string(size) +
           "-byte file)";
  char last = 1;
  in.seekg(static_cast<std::streamoff>(strtab_offset + strtab_size - 1));
  in.read(&last, 1);
  if (!in || last != '\0')
    return "corrupt ELF file (the section-name table is not NUL-terminated)";
  for (size_t i = 0; i < shnum; ++i) {
    if (field32(i, 0) >= strtab_size)
      return "corrupt ELF file (section " + std::to_string(i) + " has name offset " +
             std::to_string(field32(i, 0)) + " past the " + std::to_string(strtab_size) +
             "-byte section-name table)";
  }
  return "";
}

}  // namespace

std::optional<std::string> plugin_name_from_file(const std::filesystem::path& file) {
  const std::string base = file.filename().string();
  const std::string prefix = kPluginPrefix, suffix = kPluginSuffix;
  if (base.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (base.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (base.compare(base.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  return base.substr(prefix.size(), base.size() - prefix.size() - suffix.size());
}

int64_t target_bit_from_name(const std::string& name) {
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t target = int64_t{1} << bit;
    const char* target_name = hwy::TargetName(target);
    if (target_name && name == target_name) return target;
  }
  return 0;
}

namespace {

// The plugins this project builds: name, Highway target, and the CPU features the build adds.
struct BuiltPlugin {
  const char* name;
  const char* target;
  const char* feature;  // nullptr: none
};
constexpr BuiltPlugin kBuilt[] = {
    {"sse4", "SSE4", nullptr},      {"avx2", "AVX2", nullptr},       {"avx3", "AVX3", nullptr},
    {"avx3_vnni", "AVX3", "AVX512VNNI"}, {"avx3_dl", "AVX3_DL", nullptr}, {"neon", "NEON", nullptr},
    {"sve", "SVE", nullptr},        {"sve2", "SVE2", nullptr},
};

const BuiltPlugin* built_plugin(const std::string& name) {
  for (const BuiltPlugin& p : kBuilt)
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace

bool target_matches_name(const std::string& name, const std::string& target) {
  if (name == "scalar") return target == "SCALAR" || target == "EMU128";
  const BuiltPlugin* p = built_plugin(name);
  return !p || target == p->target;
}

std::vector<std::string> features_for_name(const std::string& name) {
  const BuiltPlugin* p = built_plugin(name);
  if (!p || !p->feature) return {};
  return {p->feature};
}

PluginFileInfo read_plugin_file(const std::filesystem::path& file) {
  PluginFileInfo info;
  info.problem = check_elf_header(file);
  if (!info.problem.empty()) return info;
  std::vector<std::string> sections;
  try {
    boost::dll::library_info elf(boost::dll::fs::path(file.string()));
    sections = elf.sections();
  } catch (const std::exception& e) {
    info.problem = std::string("corrupt ELF file (") + e.what() + ")";
    return info;
  }
  const std::string target_prefix = kTargetSectionPrefix, requires_prefix = kRequiresSectionPrefix;
  bool has_target = false;
  for (const std::string& s : sections) {
    if (s.compare(0, requires_prefix.size(), requires_prefix) == 0) {
      info.required_features.push_back(s.substr(requires_prefix.size()));
      continue;
    }
    if (has_target || s.compare(0, target_prefix.size(), target_prefix) != 0) continue;
    has_target = true;
    info.target = s.substr(target_prefix.size());
    info.target_bit = target_bit_from_name(info.target);
    if (info.target_bit == 0)
      info.problem = "built for Highway target '" + info.target + "', which this host does not know";
  }
  std::sort(info.required_features.begin(), info.required_features.end());
  if (!has_target) info.problem = "no " + target_prefix + "* section: not a gguflow kernel plugin";
  return info;
}

}  // namespace gguflow::plugins
