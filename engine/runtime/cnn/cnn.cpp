// CNN executor over the one IR: shape inference at run time, one kernel per op.
#include "engine/runtime/cnn/cnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "engine/core/thread_pool.h"
#include "engine/model/cnn_ir.h"
#include "engine/runtime/cpu/kernels.h"

using edge::model::check_window_attr;
using edge::model::cnn_input_shape;
using edge::model::is_cnn;
using edge::model::Model;
using edge::model::Op;
using edge::model::op_attr;
using edge::model::op_attr1;
using edge::model::op_type_name;
using edge::model::OpType;
using edge::model::shape_text;

namespace edge::runtime {

int64_t Activation::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

struct CnnExecutor::Step {
    const Op* op = nullptr;
    std::vector<const Tensor*> weights;
    std::vector<std::string> release;  // values no later step reads
    // Integer layers: the quantization, the per-row code sums and (weight-only) the dequantized
    // weights, or the per-channel output scales (int8 activations).
    const CnnQuantLayer* q = nullptr;
    std::vector<int32_t> rowsum;
    std::vector<float> dequant;
    std::vector<float> out_scale;
};

const CnnQuantLayer* CnnQuantization::find(const std::string& op) const {
    for (const CnnQuantLayer& l : layers)
        if (l.op == op) return &l;
    return nullptr;
}

CnnExecutor::~CnnExecutor() = default;
int CnnExecutor::threads() const { return pool_ ? pool_->size() : 1; }

namespace {

std::string shp(const std::vector<int64_t>& s) { return "[" + shape_text(s) + "]"; }

using Axis = CnnAxis;

// A window's attributes before any arithmetic uses them (engine/model/cnn_ir.h).
Status window_error(const std::string& src, const char* what, const std::string& name, const std::vector<double>& st,
                    const std::vector<double>& dl, const std::vector<double>& pd, const std::vector<double>& k) {
    const std::string where = src + ": " + what + " '" + name + "'";
    EDGE_TRY(check_window_attr(where, "strides", st, 2, 1));
    EDGE_TRY(check_window_attr(where, "dilations", dl, 2, 1));
    EDGE_TRY(check_window_attr(where, "kernel", k, 2, 1));
    return check_window_attr(where, "pads", pd, 4, 0);
}

}  // namespace

CnnAxis cnn_spatial_axis(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe, int auto_pad,
                         bool ceil_mode) {
    CnnAxis a;
    const int64_t span = dil * (k - 1) + 1;
    if (auto_pad == 1 || auto_pad == 2) {  // SAME_UPPER / SAME_LOWER
        a.out = (in + stride - 1) / stride;
        const int64_t total = std::max<int64_t>(0, (a.out - 1) * stride + span - in);
        a.pad_begin = auto_pad == 1 ? total / 2 : total - total / 2;
        a.pad_end = total - a.pad_begin;
        return a;
    }
    if (auto_pad == 3) pb = pe = 0;  // VALID
    a.pad_begin = pb;
    a.pad_end = pe;
    const int64_t room = in + pb + pe - span;
    if (room < 0) return a;  // out = 0: caller reports
    a.out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
    if (ceil_mode && (a.out - 1) * stride >= in + pb) --a.out;  // last window must start inside
    return a;
}

// ---- kernels --------------------------------------------------------------------------------

int8_t quantize_act(float x, float scale, int32_t zero) {
    const float q = std::nearbyint(x / scale) + float(zero);
    return int8_t(std::clamp(q, -128.0f, 127.0f));
}

int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t k) {
    int32_t acc = 0;
    for (int64_t i = 0; i < k; ++i) acc += int32_t(a[i]) * int32_t(b[i]);
    return acc;
}

void conv2d_int8(const int8_t* x, int64_t n, int64_t ic, int64_t h, int64_t w, int32_t act_zero, const int8_t* codes,
                 const int32_t* rowsum, const float* out_scale, const float* bias, int64_t oc, const Conv2dParams& p,
                 float* y, int64_t oh, int64_t ow, ThreadPool* pool) {
    const int64_t icg = ic / p.group, ocg = oc / p.group;
    const int64_t k = icg * p.kh * p.kw;
    const int8_t pad = int8_t(act_zero);
    auto body = [&](int64_t begin, int64_t end) {
        std::vector<int8_t> col(size_t(ow * k));
        for (int64_t unit = begin; unit < end; ++unit) {
            const int64_t b = unit / oh, oy = unit % oh;
            for (int64_t g = 0; g < p.group; ++g) {
                for (int64_t ox = 0; ox < ow; ++ox) {
                    int8_t* dst = col.data() + ox * k;
                    for (int64_t c = 0; c < icg; ++c) {
                        const int8_t* plane = x + (b * ic + g * icg + c) * h * w;
                        for (int64_t ky = 0; ky < p.kh; ++ky) {
                            const int64_t iy = oy * p.stride_h - p.pad_t + ky * p.dil_h;
                            const bool row_in = iy >= 0 && iy < h;
                            for (int64_t kx = 0; kx < p.kw; ++kx) {
                                const int64_t ix = ox * p.stride_w - p.pad_l + kx * p.dil_w;
                                *dst++ = row_in && ix >= 0 && ix < w ? plane[iy * w + ix] : pad;
                            }
                        }
                    }
                }
                for (int64_t o = g * ocg; o < (g + 1) * ocg; ++o) {
                    const int8_t* wr = codes + o * k;
                    const float bo = bias ? bias[o] : 0.0f;
                    const int32_t corr = act_zero * rowsum[o];
                    float* out = y + ((b * oc + o) * oh + oy) * ow;
                    for (int64_t ox = 0; ox < ow; ++ox)
                        out[ox] = out_scale[o] * float(dot_i8(wr, col.data() + ox * k, k) - corr) + bo;
                }
            }
        }
    };
    const int64_t units = n * oh;
    if (pool && units > 1)
        pool->parallel_for(units, body, 1);
    else
        body(0, units);
}

void conv2d_reference(const float* x, int64_t n, int64_t ic, int64_t h, int64_t w, const float* weight,
                      const float* bias, int64_t oc, const Conv2dParams& p, float* y, int64_t oh, int64_t ow) {
    const int64_t icg = ic / p.group, ocg = oc / p.group;
    for (int64_t b = 0; b < n; ++b)
        for (int64_t o = 0; o < oc; ++o) {
            const int64_t g = o / ocg;
            for (int64_t oy = 0; oy < oh; ++oy)
                for (int64_t ox = 0; ox < ow; ++ox) {
                    double acc = bias ? bias[o] : 0.0;
                    for (int64_t c = 0; c < icg; ++c)
                        for (int64_t ky = 0; ky < p.kh; ++ky)
                            for (int64_t kx = 0; kx < p.kw; ++kx) {
                                const int64_t iy = oy * p.stride_h - p.pad_t + ky * p.dil_h;
                                const int64_t ix = ox * p.stride_w - p.pad_l + kx * p.dil_w;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                acc += double(x[((b * ic + g * icg + c) * h + iy) * w + ix]) *
                                       weight[((o * icg + c) * p.kh + ky) * p.kw + kx];
                            }
                    y[((b * oc + o) * oh + oy) * ow + ox] = float(acc);
                }
        }
}

void conv2d(const float* x, int64_t n, int64_t ic, int64_t h, int64_t w, const float* weight, const float* bias,
            int64_t oc, const Conv2dParams& p, float* y, int64_t oh, int64_t ow, ThreadPool* pool) {
    const int64_t icg = ic / p.group, ocg = oc / p.group;
    const int64_t k = icg * p.kh * p.kw;
    // One unit = one output row of one image: im2col of that row ([OW, K], a row per output
    // pixel, contiguous for dot) then a dot per (output channel, pixel).
    auto body = [&](int64_t begin, int64_t end) {
        std::vector<float> col(size_t(ow * k));
        for (int64_t unit = begin; unit < end; ++unit) {
            const int64_t b = unit / oh, oy = unit % oh;
            for (int64_t g = 0; g < p.group; ++g) {
                for (int64_t ox = 0; ox < ow; ++ox) {
                    float* dst = col.data() + ox * k;
                    for (int64_t c = 0; c < icg; ++c) {
                        const float* plane = x + (b * ic + g * icg + c) * h * w;
                        for (int64_t ky = 0; ky < p.kh; ++ky) {
                            const int64_t iy = oy * p.stride_h - p.pad_t + ky * p.dil_h;
                            const bool row_in = iy >= 0 && iy < h;
                            for (int64_t kx = 0; kx < p.kw; ++kx) {
                                const int64_t ix = ox * p.stride_w - p.pad_l + kx * p.dil_w;
                                *dst++ = row_in && ix >= 0 && ix < w ? plane[iy * w + ix] : 0.0f;
                            }
                        }
                    }
                }
                for (int64_t o = g * ocg; o < (g + 1) * ocg; ++o) {
                    const float* wr = weight + o * k;
                    const float bo = bias ? bias[o] : 0.0f;
                    float* out = y + ((b * oc + o) * oh + oy) * ow;
                    for (int64_t ox = 0; ox < ow; ++ox) out[ox] = kernels::dot(wr, col.data() + ox * k, k) + bo;
                }
            }
        }
    };
    const int64_t units = n * oh;
    if (pool && units > 1)
        pool->parallel_for(units, body, 1);
    else
        body(0, units);
}

namespace {

void pool2d(bool is_max, const Activation& in, Activation& out, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
            const Axis& ay, const Axis& ax, bool count_include_pad, ThreadPool* pool) {
    const int64_t n = in.shape[0], c = in.shape[1], h = in.shape[2], w = in.shape[3];
    const int64_t oh = ay.out, ow = ax.out;
    auto body = [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const float* src = in.data.data() + plane * h * w;
            float* dst = out.data.data() + plane * oh * ow;
            for (int64_t oy = 0; oy < oh; ++oy)
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const int64_t y0 = oy * sh - ay.pad_begin, x0 = ox * sw - ax.pad_begin;
                    float best = -std::numeric_limits<float>::infinity();
                    double sum = 0;
                    int64_t count = 0, padded = 0;
                    for (int64_t ky = 0; ky < kh; ++ky)
                        for (int64_t kx = 0; kx < kw; ++kx) {
                            const int64_t iy = y0 + ky, ix = x0 + kx;
                            if (iy >= -ay.pad_begin && iy < h + ay.pad_end && ix >= -ax.pad_begin &&
                                ix < w + ax.pad_end)
                                ++padded;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                            const float v = src[iy * w + ix];
                            best = std::max(best, v);
                            sum += v;
                            ++count;
                        }
                    const int64_t div = count_include_pad ? padded : count;
                    dst[oy * ow + ox] = is_max ? best : (div ? float(sum / double(div)) : 0.0f);
                }
        }
    };
    if (pool)
        pool->parallel_for(n * c, body, 1);
    else
        body(0, n * c);
}

}  // namespace

// ---- the executor ---------------------------------------------------------------------------

Result<std::unique_ptr<CnnExecutor>> CnnExecutor::create(const Model& m, int threads) {
    const std::string& src = m.source_path.empty() ? m.name : m.source_path;
    if (!is_cnn(m)) return err(src, ": not a CNN model (architecture '", m.architecture, "')");
    auto shape = cnn_input_shape(m);
    if (!shape) return shape.error();
    if (shape->size() != 4) return err(src, ": CNN input shape ", shp(shape.value()), " is not NCHW");
    if (m.graph.inputs.size() != 1) return err(src, ": a CNN graph needs exactly one input");
    if (m.graph.outputs.empty()) return err(src, ": the graph has no output");
    if (m.graph.ops.empty()) return err(src, ": the graph has no ops");
    std::unique_ptr<CnnExecutor> e(new CnnExecutor());
    e->model_ = &m;
    e->input_shape_ = shape.value();
    std::set<std::string> defined = {m.graph.inputs[0]};
    std::map<std::string, size_t> last_use;
    for (size_t i = 0; i < m.graph.ops.size(); ++i) {
        const Op& op = m.graph.ops[i];
        Step s;
        s.op = &op;
        const size_t want_in = op.type == OpType::Add && op.weights.empty() ? 2 : 1;
        if (op.inputs.size() != want_in || op.outputs.size() != 1)
            return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") has ", op.inputs.size(), " inputs and ",
                       op.outputs.size(), " outputs; expected ", want_in, " and 1");
        for (const std::string& v : op.inputs) {
            if (!defined.count(v))
                return err(src, ": op '", op.name, "' reads '", v, "', which no earlier op produces");
            last_use[v] = i;
        }
        for (const std::string& wn : op.weights) {
            const Tensor* t = m.find(wn);
            if (!t) return err(src, ": op '", op.name, "' needs tensor '", wn, "', which the model lacks");
            if (t->type != DType::F32 || !t->data)
                return err(src, ": tensor '", wn, "' is held as ", dtype_name(t->type), "; the CNN executor needs F32");
            s.weights.push_back(t);
        }
        auto need_w = [&](size_t lo, size_t hi) -> Status {
            if (s.weights.size() < lo || s.weights.size() > hi)
                return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") has ", s.weights.size(),
                           " weight tensors, expected ", lo, lo == hi ? "" : " to " + std::to_string(hi));
            return {};
        };
        switch (op.type) {
            case OpType::Conv2d: {
                EDGE_TRY(need_w(1, 2));
                const Tensor* w = s.weights[0];
                if (w->shape.size() != 4)
                    return err(src, ": conv '", op.name, "' weight has shape ", shp(w->shape), "; expected 4-D");
                if (s.weights.size() == 2 && s.weights[1]->numel() != w->shape[0])
                    return err(src, ": conv '", op.name, "' bias has ", s.weights[1]->numel(), " values for ",
                               w->shape[0], " output channels");
                const int64_t g = int64_t(op_attr1(op, "group", 1));
                if (g < 1 || w->shape[0] % g) return err(src, ": conv '", op.name, "': bad group ", g);
                break;
            }
            case OpType::BatchNorm:
                EDGE_TRY(need_w(4, 4));
                for (const Tensor* t : s.weights)
                    if (t->numel() != s.weights[0]->numel())
                        return err(src, ": batchnorm '", op.name, "' parameters differ in length");
                break;
            case OpType::Linear:
                EDGE_TRY(need_w(1, 2));
                if (s.weights[0]->shape.size() != 2)
                    return err(src, ": linear '", op.name, "' weight has shape ", shp(s.weights[0]->shape));
                if (s.weights.size() == 2 && s.weights[1]->numel() != s.weights[0]->shape[0])
                    return err(src, ": linear '", op.name, "' bias has ", s.weights[1]->numel(), " values for ",
                               s.weights[0]->shape[0], " outputs");
                break;
            case OpType::Add: EDGE_TRY(need_w(0, 1)); break;
            case OpType::Relu:
            case OpType::MaxPool:
            case OpType::AvgPool:
            case OpType::GlobalAvgPool:
            case OpType::Reshape:
            case OpType::Pad:
            case OpType::Softmax: EDGE_TRY(need_w(0, 0)); break;
            default:
                return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") is not a CNN op the executor runs");
        }
        defined.insert(op.outputs[0]);
        e->steps_.push_back(std::move(s));
    }
    for (const std::string& o : m.graph.outputs)
        if (!defined.count(o)) return err(src, ": graph output '", o, "' is never produced");
    const std::set<std::string> outputs(m.graph.outputs.begin(), m.graph.outputs.end());
    for (const auto& [v, i] : last_use)
        if (!outputs.count(v)) e->steps_[i].release.push_back(v);
    const int n = threads > 0 ? threads : 0;
    e->pool_ = std::make_unique<ThreadPool>(n);
    return e;
}

Result<std::unique_ptr<CnnExecutor>> CnnExecutor::create(const Model& m, const CnnQuantization& q, int threads) {
    auto e = create(m, threads);
    if (!e) return e;
    const std::string& src = m.source_path.empty() ? m.name : m.source_path;
    auto quant = std::make_shared<const CnnQuantization>(q);
    std::set<std::string> found;
    for (Step& s : (*e)->steps_) {
        const Op& op = *s.op;
        const CnnQuantLayer* l = quant->find(op.name);
        if (!l) continue;
        if (op.type != OpType::Conv2d && op.type != OpType::Linear)
            return err(src, ": quantized layer '", op.name, "' is a ", op_type_name(op.type),
                       ", not a Conv2d or Linear");
        const Tensor& w = *s.weights[0];
        const int64_t oc = w.shape[0], k = w.numel() / oc;
        if (int64_t(l->codes.size()) != w.numel() || int64_t(l->scales.size()) != oc)
            return err(src, ": quantized layer '", op.name, "' has ", l->codes.size(), " codes and ", l->scales.size(),
                       " scales for weight ", w.shape_str());
        if (l->bits < 2 || l->bits > 8) return err(src, ": quantized layer '", op.name, "': ", l->bits, " bits");
        const int lim = (1 << (l->bits - 1)) - 1;
        for (int8_t c : l->codes)
            if (c < -lim || c > lim)
                return err(src, ": quantized layer '", op.name, "': code ", int(c), " outside +-", lim);
        if (l->int8_activations && (!(l->act_scale > 0) || l->act_zero < -128 || l->act_zero > 127))
            return err(src, ": quantized layer '", op.name, "': bad activation scale ", l->act_scale, " / zero ",
                       l->act_zero);
        s.q = l;
        if (l->int8_activations) {
            s.rowsum.assign(size_t(oc), 0);
            s.out_scale.resize(size_t(oc));
            for (int64_t o = 0; o < oc; ++o) {
                for (int64_t i = 0; i < k; ++i) s.rowsum[size_t(o)] += l->codes[size_t(o * k + i)];
                s.out_scale[size_t(o)] = l->scales[size_t(o)] * l->act_scale;
            }
        } else {
            s.dequant.resize(size_t(w.numel()));
            for (int64_t i = 0; i < w.numel(); ++i)
                s.dequant[size_t(i)] = l->scales[size_t(i / k)] * float(l->codes[size_t(i)]);
        }
        found.insert(op.name);
    }
    for (const CnnQuantLayer& l : quant->layers)
        if (!found.count(l.op)) return err(src, ": quantized layer '", l.op, "' is not an op of the graph");
    (*e)->quant_ = std::move(quant);
    return e;
}

Result<Activation> CnnExecutor::run(const Activation& input) const { return run(input, Observer()); }

Result<Activation> CnnExecutor::run(const Activation& input, const Observer& before) const {
    const std::string& src = model_->source_path.empty() ? model_->name : model_->source_path;
    if (input.shape.size() != 4 || input.shape[0] < 1 ||
        !std::equal(input.shape.begin() + 1, input.shape.end(), input_shape_.begin() + 1))
        return err(src, ": input has shape ", shp(input.shape), "; the model takes [N, ", input_shape_[1], ", ",
                   input_shape_[2], ", ", input_shape_[3], "]");
    if (int64_t(input.data.size()) != input.numel())
        return err(src, ": input holds ", input.data.size(), " values for shape ", shp(input.shape));
    std::map<std::string, Activation> values;
    values[model_->graph.inputs[0]] = input;
    for (const Step& s : steps_) {
        if (before) before(*s.op, values.at(s.op->inputs[0]));
        EDGE_TRY(step(s, values));
        for (const std::string& v : s.release) values.erase(v);
    }
    auto it = values.find(model_->graph.outputs[0]);
    return std::move(it->second);
}

Status CnnExecutor::step(const Step& s, std::map<std::string, Activation>& values) const {
    const Op& op = *s.op;
    const std::string& src = model_->source_path.empty() ? model_->name : model_->source_path;
    const Activation& x = values.at(op.inputs[0]);
    Activation y;
    auto bad_rank = [&](size_t rank) {
        return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") got input of shape ", shp(x.shape),
                   "; it needs ", rank, " dimensions");
    };
    switch (op.type) {
        case OpType::Conv2d: {
            if (x.shape.size() != 4) return bad_rank(4);
            const Tensor& w = *s.weights[0];
            Conv2dParams p;
            p.kh = w.shape[2];
            p.kw = w.shape[3];
            p.group = int64_t(op_attr1(op, "group", 1));
            const auto st = op_attr(op, "strides", {1, 1}), dl = op_attr(op, "dilations", {1, 1}),
                       pd = op_attr(op, "pads", {0, 0, 0, 0});
            p.stride_h = int64_t(st[0]);
            p.stride_w = int64_t(st[1]);
            p.dil_h = int64_t(dl[0]);
            p.dil_w = int64_t(dl[1]);
            if (w.shape[1] * p.group != x.shape[1])
                return err(src, ": conv '", op.name, "' weight ", shp(w.shape), " (group ", p.group,
                           ") does not fit input ", shp(x.shape));
            const int ap = int(op_attr1(op, "auto_pad", 0));
            if (auto bad = window_error(src, "conv", op.name, st, dl, pd, {double(p.kh), double(p.kw)}); !bad.ok())
                return bad.error();
            const Axis ay =
                cnn_spatial_axis(x.shape[2], p.kh, p.stride_h, p.dil_h, int64_t(pd[0]), int64_t(pd[2]), ap, false);
            const Axis ax =
                cnn_spatial_axis(x.shape[3], p.kw, p.stride_w, p.dil_w, int64_t(pd[1]), int64_t(pd[3]), ap, false);
            if (ay.out <= 0 || ax.out <= 0)
                return err(src, ": conv '", op.name, "' kernel ", shp(w.shape), " does not fit input ", shp(x.shape));
            p.pad_t = ay.pad_begin;
            p.pad_b = ay.pad_end;
            p.pad_l = ax.pad_begin;
            p.pad_r = ax.pad_end;
            y.shape = {x.shape[0], w.shape[0], ay.out, ax.out};
            y.data.resize(size_t(y.numel()));
            const float* cbias = s.weights.size() > 1 ? s.weights[1]->f32() : nullptr;
            if (s.q && s.q->int8_activations) {
                std::vector<int8_t> xq(x.data.size());
                for (size_t i = 0; i < xq.size(); ++i) xq[i] = quantize_act(x.data[i], s.q->act_scale, s.q->act_zero);
                conv2d_int8(xq.data(), x.shape[0], x.shape[1], x.shape[2], x.shape[3], s.q->act_zero, s.q->codes.data(),
                            s.rowsum.data(), s.out_scale.data(), cbias, w.shape[0], p, y.data.data(), ay.out, ax.out,
                            pool_.get());
                break;
            }
            conv2d(x.data.data(), x.shape[0], x.shape[1], x.shape[2], x.shape[3], s.q ? s.dequant.data() : w.f32(),
                   cbias, w.shape[0], p, y.data.data(), ay.out, ax.out, pool_.get());
            break;
        }
        case OpType::BatchNorm: {
            if (x.shape.size() < 2) return bad_rank(4);
            const int64_t c = x.shape[1];
            if (s.weights[0]->numel() != c)
                return err(src, ": batchnorm '", op.name, "' has ", s.weights[0]->numel(), " channels, input ",
                           shp(x.shape));
            const double eps = op_attr1(op, "epsilon", 1e-5);
            const int64_t inner = x.numel() / (x.shape[0] * c);
            y = x;
            for (int64_t ch = 0; ch < c; ++ch) {
                const float a = float(s.weights[0]->f32()[ch] / std::sqrt(double(s.weights[3]->f32()[ch]) + eps));
                const float b = s.weights[1]->f32()[ch] - a * s.weights[2]->f32()[ch];
                for (int64_t b0 = 0; b0 < x.shape[0]; ++b0) {
                    float* d = y.data.data() + (b0 * c + ch) * inner;
                    for (int64_t i = 0; i < inner; ++i) d[i] = a * d[i] + b;
                }
            }
            break;
        }
        case OpType::Relu:
            y = x;
            for (float& v : y.data) v = v > 0.0f ? v : 0.0f;
            break;
        case OpType::MaxPool:
        case OpType::AvgPool: {
            if (x.shape.size() != 4) return bad_rank(4);
            const auto k = op_attr(op, "kernel", {1, 1}), st = op_attr(op, "strides", {1, 1}),
                       pd = op_attr(op, "pads", {0, 0, 0, 0});
            const int ap = int(op_attr1(op, "auto_pad", 0));
            if (auto bad = window_error(src, "pool", op.name, st, {1, 1}, pd, k); !bad.ok()) return bad.error();
            const bool ceil = op_attr1(op, "ceil_mode", 0) != 0;
            const Axis ay = cnn_spatial_axis(x.shape[2], int64_t(k[0]), int64_t(st[0]), 1, int64_t(pd[0]),
                                             int64_t(pd[2]), ap, ceil);
            const Axis ax = cnn_spatial_axis(x.shape[3], int64_t(k[1]), int64_t(st[1]), 1, int64_t(pd[1]),
                                             int64_t(pd[3]), ap, ceil);
            if (ay.out <= 0 || ax.out <= 0)
                return err(src, ": pool '", op.name, "' window does not fit input ", shp(x.shape));
            y.shape = {x.shape[0], x.shape[1], ay.out, ax.out};
            y.data.resize(size_t(y.numel()));
            pool2d(op.type == OpType::MaxPool, x, y, int64_t(k[0]), int64_t(k[1]), int64_t(st[0]), int64_t(st[1]), ay,
                   ax, op_attr1(op, "count_include_pad", 0) != 0, pool_.get());
            break;
        }
        case OpType::GlobalAvgPool: {
            if (x.shape.size() != 4) return bad_rank(4);
            y.shape = {x.shape[0], x.shape[1], 1, 1};
            y.data.resize(size_t(y.numel()));
            const int64_t hw = x.shape[2] * x.shape[3];
            for (int64_t i = 0; i < x.shape[0] * x.shape[1]; ++i) {
                double sum = 0;
                for (int64_t j = 0; j < hw; ++j) sum += x.data[size_t(i * hw + j)];
                y.data[size_t(i)] = float(sum / double(hw));
            }
            break;
        }
        case OpType::Linear: {
            const Tensor& w = *s.weights[0];
            const int64_t out = w.shape[0], k = w.shape[1];
            const int64_t n = x.shape.empty() ? 1 : x.shape[0];
            if (n * k != x.numel())
                return err(src, ": linear '", op.name, "' weight ", shp(w.shape), " does not fit input ", shp(x.shape));
            y.shape = {n, out};
            y.data.resize(size_t(n * out));
            const float* bias = s.weights.size() > 1 ? s.weights[1]->f32() : nullptr;
            const float* wf = s.q && !s.q->int8_activations ? s.dequant.data() : w.f32();
            std::vector<int8_t> xq;
            if (s.q && s.q->int8_activations) {
                xq.resize(x.data.size());
                for (size_t i = 0; i < xq.size(); ++i) xq[i] = quantize_act(x.data[i], s.q->act_scale, s.q->act_zero);
            }
            auto body = [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                    const int64_t b = i / out, o = i % out;
                    const float bo = bias ? bias[o] : 0.0f;
                    if (!xq.empty())
                        y.data[size_t(i)] =
                            s.out_scale[size_t(o)] * float(dot_i8(s.q->codes.data() + o * k, xq.data() + b * k, k) -
                                                           s.q->act_zero * s.rowsum[size_t(o)]) +
                            bo;
                    else
                        y.data[size_t(i)] = kernels::dot(wf + o * k, x.data.data() + b * k, k) + bo;
                }
            };
            if (n * out * k > 65536)
                pool_->parallel_for(n * out, body, 16);
            else
                body(0, n * out);
            break;
        }
        case OpType::Add: {
            if (s.weights.empty()) {
                const Activation& b = values.at(op.inputs[1]);
                if (b.shape != x.shape)
                    return err(src, ": add '", op.name, "' of shapes ", shp(x.shape), " and ", shp(b.shape));
                y = x;
                for (size_t i = 0; i < y.data.size(); ++i) y.data[i] += b.data[i];
                break;
            }
            // Constant operand, broadcast numpy-style against x (right-aligned).
            const Tensor& c = *s.weights[0];
            std::vector<int64_t> cs = c.shape;
            while (!cs.empty() && cs.front() == 1 && cs.size() > x.shape.size()) cs.erase(cs.begin());
            if (cs.size() > x.shape.size())
                return err(src, ": add '", op.name, "' constant ", shp(c.shape), " does not broadcast to ",
                           shp(x.shape));
            cs.insert(cs.begin(), x.shape.size() - cs.size(), 1);
            std::vector<int64_t> cstride(cs.size(), 0);
            int64_t acc = 1;
            for (size_t d = cs.size(); d-- > 0;) {
                if (cs[d] != 1 && cs[d] != x.shape[d])
                    return err(src, ": add '", op.name, "' constant ", shp(c.shape), " does not broadcast to ",
                               shp(x.shape));
                cstride[d] = cs[d] == 1 ? 0 : acc;
                acc *= cs[d];
            }
            y = x;
            const int64_t rank = int64_t(x.shape.size());
            std::vector<int64_t> idx(size_t(rank), 0);
            for (int64_t i = 0; i < x.numel(); ++i) {
                int64_t off = 0;
                for (int64_t d = 0; d < rank; ++d) off += idx[size_t(d)] * cstride[size_t(d)];
                y.data[size_t(i)] += c.f32()[off];
                for (int64_t d = rank - 1; d >= 0; --d) {
                    if (++idx[size_t(d)] < x.shape[size_t(d)]) break;
                    idx[size_t(d)] = 0;
                }
            }
            break;
        }
        case OpType::Reshape: {
            y.data = x.data;
            if (op.attrs.count("flatten_axis")) {
                const int64_t axis = int64_t(op_attr1(op, "flatten_axis", 1));
                int64_t lo = 1, hi = 1;
                for (size_t d = 0; d < x.shape.size(); ++d) (int64_t(d) < axis ? lo : hi) *= x.shape[d];
                y.shape = {lo, hi};
                break;
            }
            const auto want = op_attr(op, "shape");
            int64_t known = 1, infer = -1;
            for (size_t d = 0; d < want.size(); ++d) {
                int64_t v = int64_t(want[d]);
                if (v == 0 && d < x.shape.size()) v = x.shape[d];
                if (v == -1 && infer < 0) {
                    infer = int64_t(d);
                    y.shape.push_back(1);
                    continue;
                }
                if (v <= 0) return err(src, ": reshape '", op.name, "': bad target dimension ", want[d]);
                known *= v;
                y.shape.push_back(v);
            }
            // The batch: a fixed leading 1 from an exporter (mnist-8: [1, 256]) follows N.
            if (infer < 0 && !y.shape.empty() && y.shape[0] == 1 && x.shape[0] > 1 && known * x.shape[0] == x.numel())
                y.shape[0] = x.shape[0], known *= x.shape[0];
            if (infer >= 0) {
                if (x.numel() % known) return err(src, ": reshape '", op.name, "' cannot infer -1 for ", shp(x.shape));
                y.shape[size_t(infer)] = x.numel() / known;
            } else if (known != x.numel()) {
                return err(src, ": reshape '", op.name, "' to ", shp(y.shape), " does not hold input ", shp(x.shape));
            }
            break;
        }
        case OpType::Pad: {
            const auto pads = op_attr(op, "pads");
            const size_t r = x.shape.size();
            if (pads.size() != 2 * r)
                return err(src, ": pad '", op.name, "' has ", pads.size(), " pads for input ", shp(x.shape));
            const float value = float(op_attr1(op, "value", 0));
            y.shape = x.shape;
            for (size_t d = 0; d < r; ++d) y.shape[d] += int64_t(pads[d]) + int64_t(pads[d + r]);
            y.data.assign(size_t(y.numel()), value);
            std::vector<int64_t> idx(r, 0);
            for (int64_t i = 0; i < x.numel(); ++i) {
                int64_t off = 0;
                for (size_t d = 0; d < r; ++d) off = off * y.shape[d] + idx[d] + int64_t(pads[d]);
                y.data[size_t(off)] = x.data[size_t(i)];
                for (size_t d = r; d-- > 0;) {
                    if (++idx[d] < x.shape[d]) break;
                    idx[d] = 0;
                }
            }
            break;
        }
        case OpType::Softmax: {
            y = x;
            const int64_t last = x.shape.empty() ? 1 : x.shape.back();
            for (int64_t i = 0; i + last <= y.numel(); i += last) kernels::softmax(y.data.data() + i, int(last));
            break;
        }
        default: return err(src, ": op '", op.name, "' is not runnable");
    }
    values[op.outputs[0]] = std::move(y);
    return {};
}

Result<ClassifyResult> classify(const CnnExecutor& exec, const std::vector<float>& pixels,
                                const std::vector<uint8_t>& labels, int64_t batch, Progress* progress) {
    const auto& s = exec.input_shape();
    const int64_t per = s[1] * s[2] * s[3];
    const int64_t count = int64_t(labels.size());
    if (int64_t(pixels.size()) != count * per)
        return err("classify: ", pixels.size(), " pixel values for ", count, " labels of ", per, " values each");
    ClassifyResult r;
    r.predictions.reserve(size_t(count));
    batch = std::max<int64_t>(1, batch);
    for (int64_t b0 = 0; b0 < count; b0 += batch) {
        if (is_cancelled(progress)) return err("classify: cancelled");
        const int64_t n = std::min(batch, count - b0);
        Activation in;
        in.shape = {n, s[1], s[2], s[3]};
        in.data.assign(pixels.begin() + b0 * per, pixels.begin() + (b0 + n) * per);
        auto out = exec.run(in);
        if (!out) return out.error();
        const int64_t classes = out->numel() / n;
        if (classes < 1 || out->numel() != n * classes) return err("classify: output of shape ", shp(out->shape));
        for (int64_t i = 0; i < n; ++i) {
            const float* row = out->data.data() + i * classes;
            const int32_t pred = int32_t(std::max_element(row, row + classes) - row);
            r.predictions.push_back(pred);
            r.correct += pred == int32_t(labels[size_t(b0 + i)]);
        }
        r.images += n;
        report(progress, double(r.images) / double(count), "classifying");
    }
    return r;
}

}  // namespace edge::runtime
