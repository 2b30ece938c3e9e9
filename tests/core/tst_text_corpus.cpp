// Text corpora for the language model: decoding, vocabulary, batches and the messages for files
// that cannot be a corpus.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/text_corpus.hpp"
#include "errors.hpp"

using namespace pipelens;

namespace {

std::string writeTemp(const std::string& name, const std::string& bytes) {
    const auto path = std::filesystem::temp_directory_path() / ("pipelens_tst_text_" + name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
}

// The DataError message of loading `path` (empty if it loads).
std::string loadError(const std::string& path) {
    try {
        loadTextCorpus(path);
    } catch (const DataError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

class TestTextCorpus : public QObject {
    Q_OBJECT
  private slots:
    void vocabularyIsSortedCodePoints() {
        const TextCorpus c = corpusFromUtf8("hello world\n", "test");
        QCOMPARE(c.vocabUtf8(), std::string("\n dehlorw"));
        QCOMPARE(c.length(), 12LL);
        QCOMPARE(c.ids[0], 4);   // 'h' after newline, space, d, e
        QCOMPARE(c.ids[11], 0);  // '\n'
    }

    void multiByteUtf8IsOneTokenPerCodePoint() {
        // e-acute (2 bytes), the euro sign (3 bytes) and a 4-byte emoji.
        const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80!";
        const std::string path = writeTemp("multibyte.txt", text);
        const TextCorpus c = loadTextCorpus(path);
        QCOMPARE(c.length(), 9LL);  // c a f e-acute space euro space emoji !
        QCOMPARE(c.vocab.size(), std::size_t(8));
        QCOMPARE(c.vocab.back(), char32_t(0x1F600));
        QCOMPARE(c.vocab[c.vocab.size() - 2], char32_t(0x20AC));
        QCOMPARE(c.ids[3], static_cast<int>(c.vocab.find(char32_t(0xE9))));
        QCOMPARE(utf8Encode(c.vocab).size(), std::size_t(1 + 1 + 3 + 2 + 3 + 4));
        std::filesystem::remove(path);
    }

    void lineEndsAndByteOrderMark() {
        const TextCorpus c = corpusFromUtf8(
            "\xEF\xBB\xBF"
            "a\r\nb\rc",
            "test");
        QCOMPARE(c.vocabUtf8(), std::string("\nabc"));
        QCOMPARE(c.length(), 5LL);
    }

    void emptyFileIsAClearError() {
        const std::string path = writeTemp("empty.txt", "");
        const std::string msg = loadError(path);
        QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("is empty") != std::string::npos, msg.c_str());
        std::filesystem::remove(path);
    }

    void binaryFileIsAClearError() {
        const std::string path = writeTemp("binary.bin", std::string("PK\x03\x04\0\0\x14\0", 8));
        const std::string msg = loadError(path);
        QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("NUL byte at offset 4") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("UTF-8 text") != std::string::npos, msg.c_str());
        std::filesystem::remove(path);
    }

    void invalidUtf8IsAClearError_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("latin-1") << QByteArray("caf\xE9 ok") << "byte 0xe9 at offset 3";
        QTest::newRow("overlong") << QByteArray("a\xC0\xAF") << "byte 0xc0 at offset 1";
        QTest::newRow("surrogate") << QByteArray("ab\xED\xA0\x80") << "byte 0xed at offset 2";
        QTest::newRow("truncated") << QByteArray("abc\xE2\x82") << "byte 0xe2 at offset 3";
        QTest::newRow("stray continuation") << QByteArray("\x80xyz") << "byte 0x80 at offset 0";
    }
    void invalidUtf8IsAClearError() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        const std::string path = writeTemp("invalid.txt", bytes.toStdString());
        const std::string msg = loadError(path);
        QVERIFY2(msg.find("is not valid UTF-8") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
        std::filesystem::remove(path);
    }

    void missingFileIsAClearError() {
        const std::string msg = loadError("/nonexistent/corpus.txt");
        QVERIFY2(msg.find("does not exist") != std::string::npos, msg.c_str());
    }

    void tooShortForOneBatchSaysHowManyCharactersAreNeeded() {
        const std::string path = writeTemp("short.txt", "to be or not");  // 12 characters
        const TextCorpus c = loadTextCorpus(path);
        try {
            TokenBatches(c, 2, 8);  // NOLINT(bugprone-unused-raii): built to throw
            QFAIL("a 12-character corpus cannot hold a 2 x 8 batch");
        } catch (const DataError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
            QVERIFY2(msg.find("has 12 characters") != std::string::npos, msg.c_str());
            QVERIFY2(msg.find("at least 17 characters") != std::string::npos, msg.c_str());
        }
        // Exactly b T + 1 characters is one batch.
        QCOMPARE(TokenBatches(c, 1, 11).batches(), 1);
        std::filesystem::remove(path);
    }

    void batchesAreConsecutiveWindowsWithShiftedTargets() {
        std::string text;
        for (int i = 0; i < 50; ++i) text += static_cast<char>('A' + i % 26);
        const TextCorpus c = corpusFromUtf8(text, "test");
        const TokenBatches b(c, 2, 3);
        QCOMPARE(b.batches(), (50 - 1) / 6);  // the last (len - 1) mod (b T) characters unused
        for (int i = 0; i < b.batches(); ++i) {
            for (int r = 0; r < 6; ++r) {
                QCOMPARE(b.tokens(i)[r], c.ids[static_cast<std::size_t>(i * 6 + r)]);
                QCOMPARE(b.targets(i)[r], c.ids[static_cast<std::size_t>(i * 6 + r + 1)]);
            }
        }
    }

    void heldOutSplitKeepsTheVocabulary() {
        const TextCorpus c = corpusFromUtf8("abcabcabcabcxyz", "test");
        auto [train, held] = splitHeldOut(c, 0.2);
        QCOMPARE(train.length(), 12LL);
        QCOMPARE(held.length(), 3LL);
        QCOMPARE(held.vocab, c.vocab);
        QCOMPARE(held.ids[0], static_cast<int>(c.vocab.find(U'x')));
        QVERIFY_THROWS_EXCEPTION(ConfigError, splitHeldOut(c, 1.0));
    }

    void builtInCorpusIsSeededAndStructured() {
        const TextCorpus a = builtInCorpus(7, 5000);
        const TextCorpus b = builtInCorpus(7, 5000);
        const TextCorpus other = builtInCorpus(8, 5000);
        QVERIFY(a.length() >= 5000);
        QCOMPARE(a.ids, b.ids);
        QVERIFY(a.ids != other.ids);
        QVERIFY(a.vocabSize() > 20 && a.vocabSize() < 60);
        // Structure: the unigram entropy alone is well below log V.
        std::vector<double> uni(static_cast<std::size_t>(a.vocabSize()), 0.0);
        for (int id : a.ids) uni[static_cast<std::size_t>(id)] += 1.0;
        double h = 0.0;
        for (double n : uni) {
            if (n > 0) h -= n / a.length() * std::log(n / a.length());
        }
        QVERIFY2(h < 0.85 * std::log(a.vocabSize()), qPrintable(QString::number(h)));
    }
};

QTEST_APPLESS_MAIN(TestTextCorpus)
#include "tst_text_corpus.moc"
