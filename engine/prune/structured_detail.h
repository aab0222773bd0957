// Internal to engine/prune: the CNN channel analysis that structured.cpp and
// structured_cnn.cpp share (not part of the public structured.h interface).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/prune/structured.h"

namespace edge::prune::detail {

std::string origin(const model::Model& m);

// ---- CNN channel analysis ---------------------------------------------------------------------

struct UnionFind {
    std::vector<int> parent;
    int add() {
        parent.push_back(int(parent.size()));
        return parent.back();
    }
    int find(int x) {
        while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
        return x;
    }
    void unite(int a, int b) {
        a = find(a), b = find(b);
        if (a != b) parent[size_t(std::max(a, b))] = std::min(a, b);
    }
};

// A value's channels: node ids base .. base+C-1. A flattened value refers to its source's nodes
// with `hw` columns per channel.
struct ValueChannels {
    int base = -1;
    int64_t channels = 0;
    int64_t hw = 1;     // columns per channel when read flat (set when a Linear reads it)
    bool flat = false;  // produced by a flatten of a channelled value
};

enum class RecKind { Producer, Consumer, Follower };
// An op touching the channels of a value.
struct Record {
    RecKind kind;
    int op = -1;
    int base = -1;
    int64_t channels = 0;
    int64_t hw = 1;  // consumer columns per channel
};

struct CnnAnalysis {
    UnionFind uf;
    std::map<std::string, ValueChannels> values;
    std::vector<Record> records;
    std::map<int, std::string> pinned;                   // node -> reason
    std::map<int, double> bn_scale;                      // producer node -> folded BatchNorm scale
    std::map<int, std::pair<int, int64_t>> produced_by;  // node -> (op, channel)
    struct PadInfo {
        int op;
        int in_base, out_base;
        int64_t in_c, before, after;
    };
    std::vector<PadInfo> pads;
    struct ReshapeInfo {
        int op;
        std::string src;  // value flattened
    };
    std::vector<ReshapeInfo> reshapes;
};

// A CNN's groups plus, per group, the union-find roots of its units (for apply/mask).
struct CnnGroups {
    std::vector<PruneGroup> groups;
    std::vector<std::vector<int>> roots;  // per group, per unit
    std::vector<std::vector<double>> bn;  // per group, per unit: folded BN scale of the first producer (or 1)
};

// Follows every op of a CNN graph and unites the channels it ties (BatchNorm, residual Add,
// channel Pad, flatten->Linear); pins what cannot be followed.
Result<CnnAnalysis> analyze_cnn(const model::Model& m);
Result<CnnGroups> cnn_groups(const model::Model& m, CnnAnalysis& a);
size_t row_axis(const Tensor& t);
int64_t row_size(const Tensor& t);
int64_t slice_params(const model::Model& m, const UnitSlice& s);

}  // namespace edge::prune::detail
