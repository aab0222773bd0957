#include "engine/core/partial_file.h"

#include <filesystem>

namespace edge {

Status PartialFile::open(const std::string& path) {
    path_ = path;
    tmp_ = path + ".partial";
    f_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!f_) return err(path, ": cannot open for writing");
    return {};
}

Status PartialFile::commit() {
    f_.flush();
    if (!f_) return err(path_, ": write failed (disk full?)");
    f_.close();
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) return err(path_, ": cannot move the written file into place: ", ec.message());
    committed_ = true;
    return {};
}

PartialFile::~PartialFile() {
    if (committed_ || tmp_.empty()) return;
    if (f_.is_open()) f_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
}

}  // namespace edge
