// libFuzzer target: the studio's project files (views/models/project.h projectFromJson - the Layers
// plan, every configuration with its engines and board measurements, the thresholds, the
// sensitivity list), what the studio opens and `edgestudio-cli configs` reads and writes. A
// document the reader accepts is written back (projectToJson) and must be read again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "views/models/project.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 20)) return 0;  // a project of a few hundred configurations
    const QByteArray text(reinterpret_cast<const char*>(data), qsizetype(size));
    edge::views::ProjectData p;
    if (!edge::views::projectFromJson(text, QStringLiteral("fuzz.edgeproj"), &p)) return 0;
    edge::views::ProjectData again;
    if (!edge::views::projectFromJson(edge::views::projectToJson(p), QStringLiteral("again.edgeproj"), &again))
        std::abort();  // what we write, we read
    if (again.configurations.size() != p.configurations.size() || again.plan.size() != p.plan.size()) std::abort();
    return 0;
}
