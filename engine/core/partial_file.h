// A file written beside its target (`<path>.partial`) and renamed over it only when finished,
// so a failed or abandoned save never leaves a half-written file under the real name and never
// loses the one that was there: the .edge and .edgeq writers stream through it.
#pragma once
#include <fstream>
#include <string>

#include "engine/core/result.h"

namespace edge {

class PartialFile {
public:
    // Opens `<path>.partial` for writing (truncated); an error names `path`.
    Status open(const std::string& path);
    std::ofstream& stream() { return f_; }
    const std::string& path() const { return path_; }
    const std::string& partial_path() const { return tmp_; }
    // Flushes and closes the partial file and renames it over `path`.
    Status commit();
    // Removes the partial file unless commit() succeeded.
    ~PartialFile();

private:
    std::string path_, tmp_;
    std::ofstream f_;
    bool committed_ = false;
};

}  // namespace edge
