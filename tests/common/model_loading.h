// Loading a model in a test that needs it (header-only: test_support does not link the engine).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "engine/model/loader.h"

namespace edge::test {

// The model at `path`, opened lazily (weights unread) or eagerly; a failed load is a test failure
// and gives an empty model.
inline model::Model load_or_die(const std::string& path, bool lazy) {
    model::LoadOptions lo;
    lo.lazy_weights = lazy;
    auto m = model::load_model(path, lo);
    EXPECT_TRUE(m.ok()) << m.message();
    return m.ok() ? std::move(m).value() : model::Model{};
}

}  // namespace edge::test
