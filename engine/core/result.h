// Result<T>: the engine's error convention (DESIGN.md). A function that can fail on user input
// returns Result<T>; the error carries a message meant for the user, naming what and where.
// No exception crosses a module boundary.
#pragma once
#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace edge {

struct Error {
    std::string message;
};

inline std::string to_piece(const std::string& s) { return s; }
inline std::string to_piece(std::string_view s) { return std::string(s); }
inline std::string to_piece(const char* s) { return s; }
inline std::string to_piece(char c) { return std::string(1, c); }
template <class N>
requires std::is_integral_v<N> std::string to_piece(N n) { return std::to_string(n); }
template <class N>
requires std::is_floating_point_v<N> std::string to_piece(N n) {
    std::ostringstream os;
    os << n;
    return os.str();
}

// Builds an error from pieces: err(path, ": tensor count ", n, " is absurd").
template <class... Args>
Error err(Args&&... args) {
    std::string s;
    (s += ... += to_piece(std::forward<Args>(args)));
    return Error{std::move(s)};
}

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error e) : v_(std::move(e)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(v_);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(v_);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(v_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }

    const Error& error() const {
        assert(!ok());
        return std::get<1>(v_);
    }
    const std::string& message() const { return error().message; }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error e) : e_(std::move(e)) {}
    bool ok() const { return !e_.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const {
        assert(!ok());
        return *e_;
    }
    const std::string& message() const { return error().message; }

private:
    std::optional<Error> e_;
};

using Status = Result<void>;

}  // namespace edge

// Propagate an error from an expression returning Result<...>/Status.
#define EDGE_TRY(expr)                                     \
    do {                                                   \
        auto edge_try_r_ = (expr);                         \
        if (!edge_try_r_.ok()) return edge_try_r_.error(); \
    } while (0)
