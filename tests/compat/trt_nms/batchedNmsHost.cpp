#include <algorithm>
#include <vector>

#include "batchedNms.h"

namespace
{
struct Candidate
{
    float score;
    int32_t index;
    int32_t cls;
    int32_t rank;
};

float iou(float const* a, float const* b)
{
    float ax1 = std::min(a[0], a[2]), ax2 = std::max(a[0], a[2]), ay1 = std::min(a[1], a[3]), ay2 = std::max(a[1], a[3]);
    float bx1 = std::min(b[0], b[2]), bx2 = std::max(b[0], b[2]), by1 = std::min(b[1], b[3]), by2 = std::max(b[1], b[3]);
    float iw = std::min(ax2, bx2) - std::max(ax1, bx1);
    float ih = std::min(ay2, by2) - std::max(ay1, by1);
    if (!(iw > 0.0F) || !(ih > 0.0F))
    {
        return 0.0F;
    }
    float inter = iw * ih;
    float areaA = (ax2 - ax1) * (ay2 - ay1);
    float areaB = (bx2 - bx1) * (by2 - by1);
    float uni = areaA + areaB - inter;
    return uni > 0.0F ? inter / uni : 0.0F;
}

bool byScore(Candidate const& a, Candidate const& b)
{
    return a.score != b.score ? a.score > b.score : a.index < b.index;
}

bool byScoreClassRank(Candidate const& a, Candidate const& b)
{
    if (a.score != b.score)
    {
        return a.score > b.score;
    }
    return a.cls != b.cls ? a.cls < b.cls : a.rank < b.rank;
}
} // namespace

void batchedNmsHost(nvinfer1::plugin::NMSParameters const& param, bool clipBoxes, int32_t batchSize,
    int32_t numPriors, float const* boxes, float const* scores, int32_t* numDetections, float* nmsedBoxes,
    float* nmsedScores, float* nmsedClasses)
{
    int32_t const C = param.numClasses;
    int32_t const L = param.shareLocation ? 1 : C;
    int32_t const K = param.keepTopK;
    for (int32_t b = 0; b < batchSize; ++b)
    {
        float const* bb = boxes + static_cast<int64_t>(b) * numPriors * L * 4;
        float const* sb = scores + static_cast<int64_t>(b) * numPriors * C;
        std::vector<Candidate> kept;
        for (int32_t c = 0; c < C; ++c)
        {
            if (c == param.backgroundLabelId)
            {
                continue;
            }
            std::vector<Candidate> cand;
            for (int32_t i = 0; i < numPriors; ++i)
            {
                float s = sb[static_cast<int64_t>(i) * C + c];
                if (s > param.scoreThreshold)
                {
                    cand.push_back({s, i, c, 0});
                }
            }
            std::sort(cand.begin(), cand.end(), byScore);
            if (static_cast<int32_t>(cand.size()) > param.topK)
            {
                cand.resize(param.topK);
            }
            std::vector<Candidate> keep;
            for (Candidate const& x : cand)
            {
                if (static_cast<int32_t>(keep.size()) >= K)
                {
                    break;
                }
                float const* bx = bb + (static_cast<int64_t>(x.index) * L + (param.shareLocation ? 0 : c)) * 4;
                bool suppressed = false;
                for (Candidate const& k : keep)
                {
                    float const* bk = bb + (static_cast<int64_t>(k.index) * L + (param.shareLocation ? 0 : c)) * 4;
                    if (iou(bk, bx) > param.iouThreshold)
                    {
                        suppressed = true;
                        break;
                    }
                }
                if (!suppressed)
                {
                    keep.push_back({x.score, x.index, c, static_cast<int32_t>(keep.size())});
                }
            }
            kept.insert(kept.end(), keep.begin(), keep.end());
        }
        std::sort(kept.begin(), kept.end(), byScoreClassRank);
        int32_t const n = std::min(K, static_cast<int32_t>(kept.size()));
        numDetections[b] = n;
        for (int32_t r = 0; r < K; ++r)
        {
            int64_t const o = static_cast<int64_t>(b) * K + r;
            if (r < n)
            {
                Candidate const& x = kept[r];
                float const* bx = bb + (static_cast<int64_t>(x.index) * L + (param.shareLocation ? 0 : x.cls)) * 4;
                for (int32_t k = 0; k < 4; ++k)
                {
                    float v = bx[k];
                    if (param.isNormalized && clipBoxes)
                    {
                        v = std::min(std::max(v, 0.0F), 1.0F);
                    }
                    nmsedBoxes[o * 4 + k] = v;
                }
                nmsedScores[o] = x.score;
                nmsedClasses[o] = static_cast<float>(x.cls);
            }
            else
            {
                for (int32_t k = 0; k < 4; ++k)
                {
                    nmsedBoxes[o * 4 + k] = 0.0F;
                }
                nmsedScores[o] = 0.0F;
                nmsedClasses[o] = -1.0F;
            }
        }
    }
}
