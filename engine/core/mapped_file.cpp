#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace edge {

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err(path, ": cannot open: ", std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        return err(path, ": cannot stat: ", std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return err(path, ": is a directory, expected a file");
    }
    std::shared_ptr<MappedFile> f(new MappedFile());
    f->path_ = path;
    f->size_ = size_t(st.st_size);
    if (f->size_ > 0) {
        void* p = mmap(nullptr, f->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int e = errno;
            ::close(fd);
            return err(path, ": cannot memory-map: ", std::strerror(e));
        }
        f->data_ = static_cast<uint8_t*>(p);
    }
    ::close(fd);
    f->self_ = f;
    return f;
}

MappedFile::~MappedFile() {
    if (data_) munmap(data_, size_);
}

std::shared_ptr<uint8_t> MappedFile::share(size_t offset) const {
    return std::shared_ptr<uint8_t>(self_.lock(), data_ + offset);
}

void MappedFile::release(size_t offset, size_t len) const {
    if (!data_ || offset >= size_ || written_) return;
    len = std::min(len, size_ - offset);
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    // Whole pages inside the range only: a page shared with a neighbour stays.
    const size_t begin = (offset + page - 1) / page * page;
    const size_t end = (offset + len) / page * page;
    if (end > begin) madvise(data_ + begin, end - begin, MADV_DONTNEED);
}

void MappedFile::advise_random() const {
    if (data_) madvise(data_, size_, MADV_RANDOM);
}

namespace {

// madvise(advice) over the whole pages that hold [offset, offset + len) of a mapping of `size`.
void advise_range(uint8_t* data, size_t size, size_t offset, size_t len, int advice) {
    if (!data || offset >= size) return;
    len = std::min(len, size - offset);
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t begin = offset / page * page;
    madvise(data + begin, offset + len - begin, advice);
}

}  // namespace

void MappedFile::will_need(size_t offset, size_t len) const { advise_range(data_, size_, offset, len, MADV_WILLNEED); }

void MappedFile::will_run(size_t offset, size_t len) const {
    advise_range(data_, size_, offset, len, MADV_NORMAL);
    advise_range(data_, size_, offset, len, MADV_WILLNEED);
}

Result<std::string> read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return err(path, ": cannot open: ", std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Status write_bytes_file(const std::string& path, const void* data, size_t n) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f) return err(path, ": cannot open for writing");
    if (n && std::fwrite(data, 1, n, f.get()) != n) return err(path, ": write failed (disk full?)");
    if (std::fclose(f.release()) != 0) return err(path, ": write failed on close");
    return {};
}

Status write_text_file(const std::string& path, const std::string& text) {
    return write_bytes_file(path, text.data(), text.size());
}

}  // namespace edge
