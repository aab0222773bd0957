// Read-only view of a whole file, memory-mapped (private, copy-on-write so that in-place
// transforms of mapped tensors never touch the file).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "result.h"

namespace edge {

class MappedFile {
public:
    static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    // A writable view of the private mapping; once asked for, release() keeps every page (a
    // private change would be lost).
    uint8_t* mutable_data() const {
        written_ = true;
        return data_;
    }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

    // A pointer into the mapping that keeps the mapping alive.
    std::shared_ptr<uint8_t> share(size_t offset) const;
    // Drops the pages of [offset, offset + len) from this process (madvise MADV_DONTNEED; the
    // page cache keeps them, a later read faults them back in). A no-op once mutable_data() was
    // asked for; tensors that alias the mapping (share()) must not be written either.
    void release(size_t offset, size_t len) const;
    // Page-in policy for readers that take a file piece by piece (GGUF, safetensors): no
    // read-around on faults (the kernel would otherwise read up to read_ahead_kb - often 8 MB -
    // around every header page it faults in), and an explicit read-ahead of each range that is
    // about to be read whole.
    void advise_random() const;
    void will_need(size_t offset, size_t len) const;
    // For a range that stays mapped and is read again and again (a tensor an executor runs in
    // place): ordinary read-around on its faults again (MADV_NORMAL; under advise_random every
    // fault would read one page: an F16 1B model took 18 s instead of 2 to fault in from disk),
    // and a read-ahead of the range.
    void will_run(size_t offset, size_t len) const;

private:
    MappedFile() = default;
    uint8_t* data_ = nullptr;
    size_t size_ = 0;
    mutable bool written_ = false;
    std::string path_;
    std::weak_ptr<MappedFile> self_;
};

// Reads a whole (small) file into a string.
Result<std::string> read_text_file(const std::string& path);
// Creates (or truncates) `path` and writes n bytes / a whole text into it; errors name the path.
Status write_bytes_file(const std::string& path, const void* data, size_t n);
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace edge
