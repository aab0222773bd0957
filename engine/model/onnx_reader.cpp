#include "engine/model/onnx_reader.h"

#include <cstring>

#include "engine/model/onnx_pb.h"

namespace edge::model::onnx {

std::string bad(const std::string& origin, const std::string& where, const std::string& why) {
    return origin + ": malformed ONNX " + where + ": " + why;
}

Result<Const> parse_tensor(const uint8_t* p, size_t n, const std::string& origin, std::string* name_out) {
    pb::Reader r(p, n);
    pb::Field f;
    Const c;
    int64_t dtype = 0;
    std::string name;
    const uint8_t* raw = nullptr;
    size_t raw_size = 0;
    bool external = false;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    while (r.next(f)) {
        switch (f.number) {
            case 1:
                if (!pb::append_varints(f, c.dims)) return err(bad(origin, "tensor", "bad dims"));
                break;
            case 2: dtype = int64_t(f.value); break;
            case 4:
                if (!pb::append_floats(f, floats)) return err(bad(origin, "tensor", "bad float_data"));
                break;
            case 5:
            case 7:
                if (!pb::append_varints(f, ints)) return err(bad(origin, "tensor", "bad int data"));
                break;
            case 8: name = std::string(f.str()); break;
            case 9:
                raw = f.data;
                raw_size = f.size;
                break;
            case 10:
                if (!pb::append_doubles(f, floats)) return err(bad(origin, "tensor", "bad double_data"));
                break;
            case 14: external = f.value == 1; break;
            default: break;
        }
    }
    if (r.failed()) return err(bad(origin, "tensor '" + name + "'", r.why()));
    if (name_out) *name_out = name;
    if (external)
        return err(origin, ": tensor '", name, "' keeps its data in an external file, which is not supported");
    for (int64_t d : c.dims)
        if (d < 0 || d > (int64_t(1) << 31)) return err(origin, ": tensor '", name, "' has a bad dimension ", d);
    const int64_t count = c.numel();
    if (count > (int64_t(1) << 31)) return err(origin, ": tensor '", name, "' is too large");
    auto need = [&](size_t elem) -> Status {
        if (raw && raw_size != size_t(count) * elem)
            return err(origin, ": tensor '", name, "' raw_data holds ", raw_size, " bytes, its shape needs ",
                       size_t(count) * elem);
        return {};
    };
    switch (dtype) {
        case 1:  // FLOAT
            EDGE_TRY(need(4));
            if (raw) {
                c.f.resize(size_t(count));
                if (raw_size) std::memcpy(c.f.data(), raw, raw_size);  // no elements: data() may be null
            } else {
                c.f = std::move(floats);
            }
            break;
        case 11:  // DOUBLE
            EDGE_TRY(need(8));
            if (raw) {
                c.f.resize(size_t(count));
                for (int64_t k = 0; k < count; ++k) {
                    double v;
                    std::memcpy(&v, raw + 8 * k, 8);
                    c.f[size_t(k)] = float(v);
                }
            } else {
                c.f = std::move(floats);
            }
            break;
        case 6:  // INT32
        case 7:  // INT64
        {
            const size_t elem = dtype == 7 ? 8 : 4;
            EDGE_TRY(need(elem));
            c.integer = true;
            if (raw) {
                c.i.resize(size_t(count));
                for (int64_t k = 0; k < count; ++k) {
                    if (elem == 8) {
                        std::memcpy(&c.i[size_t(k)], raw + 8 * k, 8);
                    } else {
                        int32_t v;
                        std::memcpy(&v, raw + 4 * k, 4);
                        c.i[size_t(k)] = v;
                    }
                }
            } else {
                c.i = std::move(ints);
            }
            c.f.assign(c.i.begin(), c.i.end());
            break;
        }
        default:
            return err(origin, ": tensor '", name, "' has ONNX data type ", dtype,
                       "; only float, double, int32 and int64 tensors are supported");
    }
    if (int64_t(c.f.size()) != count)
        return err(origin, ": tensor '", name, "' holds ", c.f.size(), " values, its shape needs ", count);
    return c;
}

namespace {

Result<Attr> parse_attr(const uint8_t* p, size_t n, const std::string& origin, const std::string& node) {
    pb::Reader r(p, n);
    pb::Field f;
    Attr a;
    while (r.next(f)) {
        switch (f.number) {
            case 1: a.name = std::string(f.str()); break;
            case 2: {
                uint32_t bits = uint32_t(f.value);
                std::memcpy(&a.f, &bits, 4);
                a.has_f = true;
                break;
            }
            case 3:
                a.i = int64_t(f.value);
                a.has_i = true;
                break;
            case 4:
                a.s = std::string(f.str());
                a.has_s = true;
                break;
            case 5:
                a.t = f.data;
                a.t_size = f.size;
                a.has_t = true;
                break;
            case 7:
                if (!pb::append_floats(f, a.floats)) return err(bad(origin, "node '" + node + "'", "bad floats"));
                break;
            case 8:
                if (!pb::append_varints(f, a.ints)) return err(bad(origin, "node '" + node + "'", "bad ints"));
                break;
            default: break;
        }
    }
    if (r.failed()) return err(bad(origin, "attribute of node '" + node + "'", r.why()));
    return a;
}

Result<Node> parse_node(const uint8_t* p, size_t n, const std::string& origin) {
    pb::Reader r(p, n);
    pb::Field f;
    Node node;
    std::vector<std::pair<const uint8_t*, size_t>> attrs;
    while (r.next(f)) {
        switch (f.number) {
            case 1: node.inputs.emplace_back(f.str()); break;
            case 2: node.outputs.emplace_back(f.str()); break;
            case 3: node.name = std::string(f.str()); break;
            case 4: node.op_type = std::string(f.str()); break;
            case 5: attrs.emplace_back(f.data, f.size); break;
            case 7: node.domain = std::string(f.str()); break;
            default: break;
        }
    }
    if (r.failed()) return err(bad(origin, "node", r.why()));
    if (node.name.empty() && !node.outputs.empty()) node.name = node.outputs[0];
    for (auto [d, s] : attrs) {
        auto a = parse_attr(d, s, origin, node.name);
        if (!a) return a.error();
        node.attrs.push_back(std::move(a.value()));
    }
    return node;
}

Result<ValueInfo> parse_value_info(const uint8_t* p, size_t n, const std::string& origin) {
    pb::Reader r(p, n);
    pb::Field f;
    ValueInfo v;
    while (r.next(f)) {
        if (f.number == 1) v.name = std::string(f.str());
        if (f.number != 2 || f.wire != 2) continue;
        pb::Reader type(f.data, f.size);  // TypeProto
        pb::Field tf;
        while (type.next(tf)) {
            if (tf.number != 1 || tf.wire != 2) continue;  // tensor_type
            pb::Reader tt(tf.data, tf.size);
            pb::Field sf;
            while (tt.next(sf)) {
                if (sf.number != 2 || sf.wire != 2) continue;  // shape
                pb::Reader shape(sf.data, sf.size);
                pb::Field df;
                while (shape.next(df)) {
                    if (df.number != 1 || df.wire != 2) continue;  // dim
                    pb::Reader dim(df.data, df.size);
                    pb::Field vf;
                    int64_t value = 1;  // a symbolic dimension (batch) is read as 1
                    while (dim.next(vf))
                        if (vf.number == 1 && vf.wire == 0) value = int64_t(vf.value);
                    if (dim.failed()) return err(bad(origin, "value '" + v.name + "'", dim.why()));
                    v.dims.push_back(value);
                }
                if (shape.failed()) return err(bad(origin, "value '" + v.name + "'", shape.why()));
            }
            if (tt.failed()) return err(bad(origin, "value '" + v.name + "'", tt.why()));
        }
        if (type.failed()) return err(bad(origin, "value '" + v.name + "'", type.why()));
    }
    if (r.failed()) return err(bad(origin, "value info", r.why()));
    return v;
}

}  // namespace

Result<GraphProto> parse_graph(const uint8_t* p, size_t n, const std::string& origin) {
    pb::Reader r(p, n);
    pb::Field f;
    GraphProto g;
    while (r.next(f)) {
        if (f.wire != 2) continue;
        if (f.number == 1) {
            auto node = parse_node(f.data, f.size, origin);
            if (!node) return node.error();
            g.nodes.push_back(std::move(node.value()));
        } else if (f.number == 5) {
            std::string name;
            auto t = parse_tensor(f.data, f.size, origin, &name);
            if (!t) return t.error();
            g.inits[name] = std::move(t.value());
        } else if (f.number == 11 || f.number == 12) {
            auto v = parse_value_info(f.data, f.size, origin);
            if (!v) return v.error();
            (f.number == 11 ? g.inputs : g.outputs).push_back(std::move(v.value()));
        }
    }
    if (r.failed()) return err(bad(origin, "graph", r.why()));
    return g;
}

}  // namespace edge::model::onnx
