// Run-time language switch (QtCore only): installs the embedded translation (:/i18n) and Qt's own
// for the chosen language, removing the previous ones. Installing or removing a translator makes
// Qt send QEvent::LanguageChange to every widget, which retranslates itself in changeEvent().
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

class QTranslator;

namespace edge::views {

class Language : public QObject {
    Q_OBJECT
public:
    explicit Language(QObject* parent = nullptr);
    ~Language() override;

    // Language codes that ship: "en", "zh_CN".
    static QStringList available();
    // The language's own name ("English", "简体中文"), never translated.
    static QString nativeName(const QString& code);

    // Switches the application's language; false (and no change) when `code` does not ship or
    // its translation cannot be loaded. The choice is remembered in QSettings.
    bool setLanguage(const QString& code);
    QString current() const { return current_; }
    // The language saved in QSettings, else the system's when it ships, else English.
    static QString preferred();

signals:
    void languageChanged(const QString& code);

private:
    void removeTranslators();
    std::vector<std::unique_ptr<QTranslator>> installed_;
    QString current_ = QStringLiteral("en");
};

}  // namespace edge::views
