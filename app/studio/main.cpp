// edgestudio [model | project.edgeproj]: the EdgeStudio desktop application. An optional model
// path (file or Hugging Face folder) or project is opened at start; without one, a session that
// crashed last time is offered for recovery.
#include <QApplication>
#include <QCommandLineParser>

#include "app/studio/main_window.h"
#include "views/models/language.h"
#include "views/style.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("EdgeStudio"));
    QApplication::setApplicationName(QStringLiteral("EdgeStudio"));
    QApplication::setApplicationVersion(QStringLiteral(EDGE_STUDIO_VERSION));
    edge::views::applyStudioStyle(app);

    edge::views::Language language;
    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("EdgeStudio: deploy neural networks on low-resource boards"));
    cli.addHelpOption();
    cli.addVersionOption();
    QCommandLineOption langOption(QStringLiteral("lang"), QStringLiteral("Interface language (en, zh_CN)."),
                                  QStringLiteral("code"));
    QCommandLineOption tokOption(QStringLiteral("tokenizer"), QStringLiteral("Tokenizer for a llama2.c model."),
                                 QStringLiteral("file"));
    cli.addOption(langOption);
    cli.addOption(tokOption);
    cli.addPositionalArgument(QStringLiteral("model"),
                              QStringLiteral("Model file or folder, or .edgeproj project, to open."));
    cli.process(app);
    language.setLanguage(cli.isSet(langOption) ? cli.value(langOption) : edge::views::Language::preferred());

    edge::studio::MainWindow window(&language);
    window.resize(1600, 1000);
    window.show();
    if (!cli.positionalArguments().isEmpty())
        window.openPath(cli.positionalArguments().front(), cli.value(tokOption));
    else
        window.offerRecovery();  // the previous session crashed: offer its autosave
    return app.exec();
}
