// libFuzzer target: known_hosts text -> known_host_keys (the text part of known_fingerprints: host
// fields, comma lists, [host]:port, hashed |1|salt|hmac entries, markers, comments) for a host on
// port 22 and on another port.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "remote/client/known_hosts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 14)) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (int port : {22, 2222}) {
        for (const auto& k : edge::client::known_host_keys(text, "orin.local", port))
            if (k.type.empty() || k.base64.empty() || k.line < 1) std::abort();
    }
    (void)edge::client::known_host_keys(text, "10.0.0.21", 0);
    return 0;
}
