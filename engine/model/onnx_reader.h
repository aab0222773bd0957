// The ONNX protobuf reader: ModelProto's graph as plain structs (nodes, attributes, initializers,
// inputs and outputs), with every length and count checked against the input. Field numbers are
// those of onnx.proto (IR 3..9). onnx.cpp builds the IR from what this reads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace edge::model::onnx {

// A constant (initializer, Constant node, or folded value) held as floats (and as ints for the
// integer types, which only Reshape/Pad shapes use).
struct Const {
    std::vector<int64_t> dims;
    std::vector<float> f;
    std::vector<int64_t> i;
    bool integer = false;
    // Saturates at INT64_MAX instead of overflowing (hostile dims; callers refuse huge counts).
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t d : dims) {
            if (d <= 0) return d == 0 ? 0 : -1;
            if (n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
            n *= d;
        }
        return n;
    }
};

struct Attr {
    std::string name;
    bool has_f = false, has_i = false, has_s = false, has_t = false;
    float f = 0;
    int64_t i = 0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    const uint8_t* t = nullptr;
    size_t t_size = 0;
};

struct Node {
    std::string name, op_type, domain;
    std::vector<std::string> inputs, outputs;
    std::vector<Attr> attrs;
    const Attr* attr(const std::string& n) const {
        for (const Attr& a : attrs)
            if (a.name == n) return &a;
        return nullptr;
    }
};

struct ValueInfo {
    std::string name;
    std::vector<int64_t> dims;  // symbolic dims read as 1
};

struct GraphProto {
    std::vector<Node> nodes;
    std::vector<std::pair<std::string, const uint8_t*>> init_raw;  // parsed lazily below
    std::map<std::string, Const> inits;
    std::vector<ValueInfo> inputs, outputs;
};

// "<origin>: malformed ONNX <where>: <why>".
std::string bad(const std::string& origin, const std::string& where, const std::string& why);
// A TensorProto: dims, data type and values (raw or typed fields); name_out gets its name.
Result<Const> parse_tensor(const uint8_t* p, size_t n, const std::string& origin, std::string* name_out);
// A GraphProto: nodes, initializers, inputs and outputs.
Result<GraphProto> parse_graph(const uint8_t* p, size_t n, const std::string& origin);

}  // namespace edge::model::onnx
