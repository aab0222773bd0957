// k-means and selection on constructed data: clusters recovered, representatives nearest their
// centroid, seeds reproduce, weights act as documented, bad input answered with clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "engine/calib/kmeans.h"
#include "engine/calib/select.h"
#include "engine/calib/weighting.h"
#include "test_support.h"

namespace {

using edge::calib::Embeddings;

// `blobs` Gaussian blobs (sd 0.3) around centers 10 apart on distinct axes, `per` points each,
// interleaved so that blob membership is i % blobs.
struct Blobs {
    Embeddings e;
    std::vector<std::vector<float>> centers;
    int blobs = 0;
};

Blobs make_blobs(int blobs, int per, int dim, uint32_t seed) {
    Blobs b;
    b.blobs = blobs;
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 0.3f);
    for (int c = 0; c < blobs; ++c) {
        std::vector<float> center(static_cast<size_t>(dim), 0.0f);
        const int pass = c / dim;  // each pass over the dimensions puts the centers further out
        center[size_t(c % dim)] = 10.0f * float(1 + pass);
        b.centers.push_back(center);
    }
    b.e.n = int64_t(blobs) * per;
    b.e.dim = dim;
    for (int i = 0; i < blobs * per; ++i)
        for (int j = 0; j < dim; ++j) b.e.data.push_back(b.centers[size_t(i % blobs)][size_t(j)] + noise(rng));
    return b;
}

}  // namespace

TEST(KMeans, RecoversConstructedClusters) {
    const Blobs b = make_blobs(6, 40, 8, 7);
    for (uint64_t seed : {1u, 2u, 3u, 11u, 12345u}) {
        edge::calib::KMeansOptions o;
        o.k = 6;
        o.seed = seed;
        auto r = edge::calib::kmeans(b.e.data, b.e.n, b.e.dim, o);
        ASSERT_TRUE(r.ok()) << r.message();
        // Every cluster is exactly one blob: same cluster <=> same blob.
        std::vector<int> blob_of_cluster(6, -1);
        for (int64_t i = 0; i < b.e.n; ++i) {
            const int c = r->assignment[size_t(i)];
            if (blob_of_cluster[size_t(c)] < 0) blob_of_cluster[size_t(c)] = int(i % 6);
            EXPECT_EQ(blob_of_cluster[size_t(c)], i % 6) << "seed " << seed << " point " << i;
        }
        std::set<int> distinct(blob_of_cluster.begin(), blob_of_cluster.end());
        EXPECT_EQ(distinct.size(), 6u) << "seed " << seed;
        for (int c = 0; c < 6; ++c) {
            EXPECT_EQ(r->sizes[size_t(c)], 40);
            const auto& center = b.centers[size_t(blob_of_cluster[size_t(c)])];
            // The centroid of 40 points with sd 0.3 lies within ~0.05 of the true center per axis.
            EXPECT_LT(edge::calib::squared_distance(r->centroids.data() + c * 8, center.data(), 8), 0.1)
                << "seed " << seed;
        }
        // Inertia: about n * dim * sd^2 = 240 * 8 * 0.09.
        EXPECT_NEAR(r->inertia, 240 * 8 * 0.09, 40.0);
    }
}

TEST(KMeans, LloydRunsToAFixedPoint) {
    // Unstructured data needs several Lloyd iterations; at the end every point sits in the cluster
    // of its nearest centroid and no centroid moves.
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> pts(600 * 4);
    for (float& v : pts) v = u(rng);
    edge::calib::KMeansOptions o;
    o.k = 12;
    o.seed = 4;
    o.max_iter = 500;
    o.tol = 0.0;
    auto r = edge::calib::kmeans(pts, 600, 4, o);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_GT(r->iterations, 2);
    EXPECT_LT(r->iterations, 500);
    for (int i = 0; i < 600; ++i) {
        int best = 0;
        double bd = 1e30;
        for (int c = 0; c < 12; ++c) {
            const double d = edge::calib::squared_distance(pts.data() + i * 4, r->centroids.data() + c * 4, 4);
            if (d < bd) bd = d, best = c;
        }
        const double mine =
            edge::calib::squared_distance(pts.data() + i * 4, r->centroids.data() + r->assignment[size_t(i)] * 4, 4);
        EXPECT_LE(mine, bd + 1e-5) << "point " << i << " is nearer to centroid " << best;
    }
    // k-means++ then Lloyd beats the k-means++ seeds alone (one iteration).
    o.max_iter = 1;
    auto once = edge::calib::kmeans(pts, 600, 4, o);
    ASSERT_TRUE(once.ok());
    EXPECT_LT(r->inertia, once->inertia);
}

TEST(KMeans, WeightedSingleClusterIsTheWeightedMean) {
    const std::vector<float> pts = {0, 0, 4, 0, 0, 8};  // three 2-D points
    const std::vector<double> w = {1.0, 3.0, 0.0};
    edge::calib::KMeansOptions o;
    o.k = 1;
    auto r = edge::calib::kmeans(pts, 3, 2, o, w);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_FLOAT_EQ(r->centroids[0], 3.0f);  // (0*1 + 4*3 + 0*0) / 4
    EXPECT_FLOAT_EQ(r->centroids[1], 0.0f);
    EXPECT_DOUBLE_EQ(r->inertia, 1.0 * 9.0 + 3.0 * 1.0);
}

TEST(KMeans, DuplicatePointsStillGiveNonEmptyClusters) {
    // 10 copies of one point and 2 of another: k = 5 must still give 5 non-empty clusters.
    std::vector<float> pts;
    for (int i = 0; i < 10; ++i) pts.insert(pts.end(), {1.0f, 1.0f});
    for (int i = 0; i < 2; ++i) pts.insert(pts.end(), {5.0f, 5.0f});
    edge::calib::KMeansOptions o;
    o.k = 5;
    auto r = edge::calib::kmeans(pts, 12, 2, o);
    ASSERT_TRUE(r.ok()) << r.message();
    for (int64_t s : r->sizes) EXPECT_GE(s, 1);
    EXPECT_EQ(std::accumulate(r->sizes.begin(), r->sizes.end(), int64_t(0)), 12);
}

TEST(Select, KMeansRepresentativesAreNearestTheirCentroidOnePerBlob) {
    const Blobs b = make_blobs(8, 25, 6, 3);
    edge::calib::SelectOptions o;
    o.n = 8;
    o.seed = 5;
    auto s = edge::calib::select_samples(b.e, o);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(s->indices.size(), 8u);
    EXPECT_TRUE(std::is_sorted(s->indices.begin(), s->indices.end()));
    std::set<int64_t> blobs;
    for (size_t i = 0; i < 8; ++i) {
        const int64_t pick = s->indices[i];
        const int blob = int(pick % 8);
        blobs.insert(blob);
        EXPECT_EQ(s->cluster_sizes[i], 25);
        // The blob's mean, computed here; no other member of the blob is nearer to it.
        std::vector<float> mean(6, 0.0f);
        for (int64_t j = blob; j < b.e.n; j += 8)
            for (int d = 0; d < 6; ++d) mean[size_t(d)] += b.e.row(j)[d] / 25.0f;
        const double dp = edge::calib::squared_distance(b.e.row(pick), mean.data(), 6);
        EXPECT_NEAR(dp, s->distances[i], 1e-4);
        for (int64_t j = blob; j < b.e.n; j += 8)
            EXPECT_GE(edge::calib::squared_distance(b.e.row(j), mean.data(), 6), dp - 1e-6) << "member " << j;
    }
    EXPECT_EQ(blobs.size(), 8u);
}

TEST(Select, SeedsReproduceAndDiffer) {
    const Blobs b = make_blobs(20, 30, 10, 9);
    for (auto method : {edge::calib::SelectMethod::KMeans, edge::calib::SelectMethod::Random}) {
        edge::calib::SelectOptions o;
        o.n = 50;
        o.method = method;
        o.seed = 42;
        o.threads = 1;
        auto a = edge::calib::select_samples(b.e, o);
        o.threads = 2;  // the thread count does not change the result
        auto a2 = edge::calib::select_samples(b.e, o);
        o.seed = 43;
        auto c = edge::calib::select_samples(b.e, o);
        ASSERT_TRUE(a.ok() && a2.ok() && c.ok());
        EXPECT_EQ(a->indices, a2->indices) << edge::calib::select_method_name(method);
        EXPECT_EQ(a->cluster_sizes, a2->cluster_sizes);
        EXPECT_NE(a->indices, c->indices) << edge::calib::select_method_name(method);
        EXPECT_EQ(std::set<int64_t>(a->indices.begin(), a->indices.end()).size(), 50u);
    }
}

TEST(Select, RandomIsUniform) {
    // Over many seeds every pool sample is drawn about equally often (n/pool = 1/4 of the time).
    Embeddings e;
    e.n = 40;
    e.dim = 1;
    e.data.assign(40, 0.0f);
    std::vector<int> hits(40, 0);
    edge::calib::SelectOptions o;
    o.n = 10;
    o.method = edge::calib::SelectMethod::Random;
    for (uint64_t seed = 0; seed < 2000; ++seed) {
        o.seed = seed;
        auto s = edge::calib::select_samples(e, o);
        ASSERT_TRUE(s.ok());
        for (int64_t i : s->indices) ++hits[size_t(i)];
    }
    for (int h : hits) EXPECT_NEAR(h, 500, 90);  // binomial(2000, 1/4): sd 19
}

TEST(Select, BadInputNamesTheProblem) {
    const Blobs b = make_blobs(3, 10, 4, 1);
    edge::calib::SelectOptions o;
    o.n = 31;
    auto big = edge::calib::select_samples(b.e, o);
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.message().find("31 samples asked for"), std::string::npos) << big.message();
    EXPECT_NE(big.message().find("only 30"), std::string::npos) << big.message();
    o.method = edge::calib::SelectMethod::Random;
    EXPECT_TRUE(edge::test::fails_with(edge::calib::select_samples(b.e, o),
                                       {"31 samples asked for, but the pool holds only 30 (ask for at most 30"}));

    auto empty = edge::calib::select_samples(Embeddings{}, o);
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.message().find("pool is empty"), std::string::npos) << empty.message();

    o.n = 0;
    auto zero = edge::calib::select_samples(b.e, o);
    ASSERT_FALSE(zero.ok());
    EXPECT_NE(zero.message().find("at least 1"), std::string::npos) << zero.message();

    o.n = 3;
    o.weights = {1.0, 2.0};
    auto w = edge::calib::select_samples(b.e, o);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.message().find("2 sample weights for a pool of 30"), std::string::npos) << w.message();

    std::vector<float> nan_pts = {0.0f, NAN};
    edge::calib::KMeansOptions ko;
    ko.k = 1;
    auto nan = edge::calib::kmeans(nan_pts, 1, 2, ko);
    ASSERT_FALSE(nan.ok());
    EXPECT_NE(nan.message().find("point 0 has a non-finite value at dimension 1"), std::string::npos) << nan.message();

    EXPECT_TRUE(edge::test::fails_with(edge::calib::parse_select_method("median"),
                                       {"unknown selection method 'median' (expected kmeans or random)"}));
}

TEST(Select, WeightsDecideBetweenEquallyNearMembers) {
    // One cluster of two points equally far from the centroid: the heavier one is chosen.
    Embeddings e;
    e.n = 2;
    e.dim = 1;
    e.data = {-1.0f, 1.0f};
    edge::calib::SelectOptions o;
    o.n = 1;
    o.weights = {1.0, 1.0};
    auto tie = edge::calib::select_samples(e, o);
    ASSERT_TRUE(tie.ok());
    EXPECT_EQ(tie->indices[0], 0);  // a tie goes to the lower index
    o.weights = {1.0, 2.0};
    auto s = edge::calib::select_samples(e, o);
    ASSERT_TRUE(s.ok());
    // weighted centroid 1/3: distances 16/9 (w 1) and 4/9 (w 2)
    EXPECT_EQ(s->indices[0], 1);
    EXPECT_DOUBLE_EQ(s->weights[0], 2.0);
}

TEST(Weighting, FactorsFollowTheDocumentedFormulas) {
    edge::calib::HardwareProfile hw;  // KV block 16, 128 tokens
    std::vector<edge::calib::SampleShape> s(4);
    s[0].tokens = 32;   // aligned, a quarter of the length
    s[1].tokens = 33;   // 33 of 48
    s[2].tokens = 128;  // full, aligned
    s[3].tokens = 500;  // cut at 128
    auto w = edge::calib::hardware_weights(s, hw);
    ASSERT_TRUE(w.ok()) << w.message();
    EXPECT_DOUBLE_EQ(w->alignment[0], 1.0);
    EXPECT_DOUBLE_EQ(w->alignment[1], 33.0 / 48.0);
    EXPECT_DOUBLE_EQ(w->length[0], 0.25);
    EXPECT_DOUBLE_EQ(w->length[3], 1.0);
    EXPECT_DOUBLE_EQ(w->alignment[3], 1.0);
    const double raw[4] = {0.25, 33.0 / 128.0 * 33.0 / 48.0, 1.0, 1.0};
    const double sum = raw[0] + raw[1] + raw[2] + raw[3];
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(w->weight[size_t(i)], raw[i] * 4.0 / sum, 1e-12);

    // Strength 0 switches factors off.
    hw.length_strength = hw.alignment_strength = 0.0;
    auto flat = edge::calib::hardware_weights(s, hw);
    ASSERT_TRUE(flat.ok());
    for (double x : flat->weight) EXPECT_DOUBLE_EQ(x, 1.0);

    // Images: a 28x28 sample against a tile of 8 fills 28/32 of each side; channel outliers weigh less.
    edge::calib::HardwareProfile img;
    img.input_h = img.input_w = 28;
    std::vector<edge::calib::SampleShape> im(3);
    for (int i = 0; i < 3; ++i) {
        im[size_t(i)].height = im[size_t(i)].width = 28;
        im[size_t(i)].channel_mean = {i == 2 ? 0.9 : 0.1};
    }
    auto wi = edge::calib::hardware_weights(im, img);
    ASSERT_TRUE(wi.ok()) << wi.message();
    EXPECT_DOUBLE_EQ(wi->alignment[0], (28.0 / 32.0) * (28.0 / 32.0));
    EXPECT_DOUBLE_EQ(wi->length[0], 1.0);
    EXPECT_LT(wi->channel[2], wi->channel[0]);
    EXPECT_LT(wi->weight[2], wi->weight[0]);

    hw.token_multiple = 0;
    auto bad = edge::calib::hardware_weights(s, hw);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("token_multiple (0)"), std::string::npos) << bad.message();
    EXPECT_TRUE(
        edge::test::fails_with(edge::calib::hardware_weights({}, img), {"hardware weighting", "the pool is empty"}));
}
