#include "views/models/language.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

namespace edge::views {

namespace {
const QString kKey = QStringLiteral("ui/language");
}

Language::Language(QObject* parent) : QObject(parent) {}

Language::~Language() { removeTranslators(); }

QStringList Language::available() { return {QStringLiteral("en"), QStringLiteral("zh_CN")}; }

QString Language::nativeName(const QString& code) {
    if (code == QLatin1String("zh_CN")) return QStringLiteral("简体中文");
    return QStringLiteral("English");
}

QString Language::preferred() {
    QString saved = QSettings().value(kKey).toString();
    if (available().contains(saved)) return saved;
    const QString system = QLocale::system().name();
    return available().contains(system) ? system : QStringLiteral("en");
}

void Language::removeTranslators() {
    for (auto& t : installed_) QCoreApplication::removeTranslator(t.get());
    installed_.clear();
}

bool Language::setLanguage(const QString& code) {
    if (!available().contains(code)) return false;
    auto ours = std::make_unique<QTranslator>();
    if (!ours->load(QStringLiteral(":/i18n/edgestudio_%1.qm").arg(code))) return false;
    removeTranslators();
    // Qt's own strings (standard buttons, file dialogs) when the system ships them.
    auto qt = std::make_unique<QTranslator>();
    if (code != QLatin1String("en") &&
        qt->load(QStringLiteral("qtbase_%1").arg(code), QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qt.get());
        installed_.push_back(std::move(qt));
    }
    QCoreApplication::installTranslator(ours.get());
    installed_.push_back(std::move(ours));
    current_ = code;
    QSettings().setValue(kKey, code);
    emit languageChanged(code);
    return true;
}

}  // namespace edge::views
