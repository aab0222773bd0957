#include "views/models/summary_model.h"
#include "engine/model/weights.h"

#include <QFileInfo>
#include <QFont>
#include <QFontDatabase>

#include "views/models/format.h"

namespace edge::views {

namespace {
QString yesNo(bool b) { return b ? SummaryModel::tr("yes") : SummaryModel::tr("no"); }
QString num(int n) { return groupedCount(n); }
}  // namespace

SummaryModel::SummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryModel::setModel(std::shared_ptr<const LoadedModel> model) {
    beginResetModel();
    model_ = std::move(model);
    rows_ = buildRows();
    endResetModel();
}

void SummaryModel::retranslate() { setModel(model_); }

QString SummaryModel::value(const QString& property) const {
    for (const Row& r : rows_)
        if (!r.section && r.property == property) return r.value;
    return {};
}

std::vector<SummaryModel::Row> SummaryModel::buildRows() const {
    std::vector<Row> rows;
    if (!model_) return rows;
    const edge::model::Model& m = model_->model;
    const edge::model::LlamaConfig& c = m.config;
    auto section = [&](const QString& title) { rows.push_back({title, {}, true, false}); };
    auto text = [&](const QString& p, const QString& v) { rows.push_back({p, v, false, false}); };
    auto mono = [&](const QString& p, const QString& v) { rows.push_back({p, v, false, true}); };

    section(tr("Model"));
    const QString file = QString::fromStdString(m.source_path);
    text(tr("Name"), m.name.empty() ? QFileInfo(file).fileName() : QString::fromStdString(m.name));
    text(tr("File"), file);
    text(tr("Source format"), QString::fromStdString(m.source_format));
    text(tr("Architecture"), QString::fromStdString(m.architecture));
    const int64_t params = m.parameter_count();
    mono(tr("Parameters"), tr("%1 (%2)").arg(groupedCount(params), compactCount(params)));
    if (m.weight_bytes() == 0 && m.weights)
        mono(tr("Weight memory"),
             tr("%1 in the file, read when a job needs it").arg(humanBytes(edge::model::stored_weight_bytes(m))));
    else
        mono(tr("Weight memory"), humanBytes(m.weight_bytes()));
    mono(tr("Layers"), num(int(model_->layers.size())));
    mono(tr("Tensors"), num(int(m.tensors.size())));

    section(tr("Architecture"));
    mono(tr("Embedding width"), num(c.dim));
    mono(tr("FFN width"), num(c.hidden_dim));
    mono(tr("Decoder blocks"), num(c.n_layers));
    mono(tr("Attention heads"), num(c.n_heads));
    mono(tr("KV heads"), num(c.n_kv_heads));
    mono(tr("Head dimension"), num(c.head_dim));
    mono(tr("Vocabulary"), num(c.vocab_size));
    mono(tr("Context length"), num(c.context_length));
    mono(tr("RoPE dimensions"), num(c.rope_dim));
    mono(tr("RoPE θ"), QString::number(double(c.rope_theta), 'g', 6));
    text(tr("RoPE scaling"), c.rope_scaling.empty() ? tr("none") : QString::fromStdString(c.rope_scaling));
    mono(tr("Norm ε"), QString::number(double(c.norm_eps), 'g', 3));
    text(tr("Tied embeddings"), yesNo(c.tied_embeddings));
    text(tr("Q/K/V biases"), yesNo(c.attn_qkv_bias));

    section(tr("Tokenizer"));
    const edge::tokenizer::TokenizerSpec& t = m.tokenizer;
    if (t.empty()) {
        text(tr("Type"), tr("none (the file carries no tokenizer)"));
    } else {
        text(tr("Type"), QString::fromStdString(t.model));
        mono(tr("Tokens"), num(int(t.tokens.size())));
        if (!t.merges.empty()) mono(tr("Merges"), num(int(t.merges.size())));
        mono(tr("BOS / EOS"), QStringLiteral("%1 / %2").arg(t.bos_id).arg(t.eos_id));
        if (!t.source.empty()) text(tr("Source"), QString::fromStdString(t.source));
    }

    if (!m.metadata.empty()) {
        section(tr("File metadata"));
        constexpr size_t kMaxEntries = 40;
        constexpr int kMaxChars = 160;
        for (size_t i = 0; i < m.metadata.size() && i < kMaxEntries; ++i) {
            QString v = QString::fromStdString(m.metadata[i].second);
            if (v.size() > kMaxChars) v = v.left(kMaxChars) + QChar(0x2026);
            text(QString::fromStdString(m.metadata[i].first), v);
        }
        if (m.metadata.size() > kMaxEntries)
            text(QStringLiteral("…"), tr("%1 more entries").arg(m.metadata.size() - kMaxEntries));
    }
    return rows;
}

int SummaryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int SummaryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole:
            if (index.column() == PropertyColumn) return r.property;
            return r.value;
        case IsSectionRole: return r.section;
        case Qt::FontRole: {
            if (r.section) {
                QFont f;
                f.setBold(true);
                return f;
            }
            if (index.column() == ValueColumn && r.mono) return QFontDatabase::systemFont(QFontDatabase::FixedFont);
            return {};
        }
        default: return {};
    }
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == PropertyColumn) return tr("Property");
    if (section == ValueColumn) return tr("Value");
    return {};
}

}  // namespace edge::views
