// The views' one error convention: an operation that can fail on what the user gave it (a
// project or plan file, a JSON document, a board entry, an export path) returns a Result: ok,
// or the message for the user (translated, naming the file or entry and the problem). The engine
// has its own (edge::Status / edge::Result<T>, plain std::string); the views turn those into
// text where they call the engine. No bool + QString* out-parameter (conventions.check).
#pragma once
#include <QString>
#include <utility>

namespace edge::views {

class [[nodiscard]] Result {
public:
    Result() = default;  // success
    static Result failure(QString message) {
        Result r;
        r.failed_ = true;
        r.message_ = std::move(message);
        return r;
    }

    bool ok() const { return !failed_; }
    explicit operator bool() const { return !failed_; }
    // Empty on success.
    const QString& message() const { return message_; }

private:
    bool failed_ = false;
    QString message_;
};

}  // namespace edge::views
