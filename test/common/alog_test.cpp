#include <photon/common/alog.h>
#include <photon/common/alog-stdstring.h>

#include <gtest/gtest.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <tuple>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../util/temp_dir.h"

namespace photon {
struct thread;
extern __thread thread* CURRENT;
}  // namespace photon

namespace {

// Keeps every line; clobbers errno the way a failing write() would.
class CaptureOutput final : public ILogOutput {
public:
    std::vector<std::string> lines;
    std::vector<int> levels;

    void write(int level, const char* begin, const char* end) override {
        lines.emplace_back(begin, end);
        levels.push_back(level);
        errno = EIO;
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
};

class Alog : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = default_logger;
        default_logger = {&out_, ALOG_DEBUG};
    }
    void TearDown() override { default_logger = saved_; }

    // The message: what follows the "func:" of the header, without the newline.
    std::string message(size_t i = 0) const {
        const std::string& line = out_.lines.at(i);
        std::string header_end = "|TestBody:";
        size_t at = line.find(header_end);
        EXPECT_NE(at, std::string::npos) << line;
        return line.substr(at + header_end.size(), line.size() - at - header_end.size() - 1);
    }

    CaptureOutput out_;
    ALogLogger saved_{};
};

enum class Color : short { red = -3, blue = 7 };

struct Point {
    int x, y;
};

LogBuffer& operator<<(LogBuffer& log, const Point& p) {
    return log.printf('(', p.x, ',', p.y, ')');
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

TEST_F(Alog, LiteralFormatReplacesEachBacktickWithTheNextArgument) {
    LOG_INFO("copied ` bytes to `", 42, "/tmp/x");
    EXPECT_EQ(message(), "copied 42 bytes to /tmp/x");
}

TEST_F(Alog, DoubledBacktickPrintsOneBacktick) {
    LOG_INFO("quote `` then ` and `` again", 7);
    EXPECT_EQ(message(), "quote ` then 7 and ` again");
}

TEST_F(Alog, ArgumentsBeyondThePlaceholdersAreAppended) {
    LOG_INFO("a=` b=", 1, 2, '!');
    EXPECT_EQ(message(), "a=1 b=2!");
}

TEST_F(Alog, NonLiteralFirstArgumentConcatenatesEverything) {
    const char* fmt = "no ` placeholders: ";
    LOG_INFO(fmt, 1, ' ', std::string("two"), ' ', 3.5);
    EXPECT_EQ(message(), "no ` placeholders: 1 two 3.5000");
}

TEST_F(Alog, PrintsEveryBuiltinArgumentType) {
    int* null_int = nullptr;
    const char* null_str = nullptr;
    char name[8] = "photon";
    LOG_INFO(-5, ' ', 18446744073709551615ULL, ' ', (unsigned char)200, ' ', 'c', ' ', true, ' ',
             Color::red, ' ', Color::blue, ' ', 2.5f, ' ', FP(1.0 / 3).precision(2), ' ',
             (void*)0x1234, ' ', null_int, ' ', null_str, ' ', name, ' ', std::string_view("sv"),
             ' ', Point{3, 4});
    EXPECT_EQ(message(),
              "-5 18446744073709551615 200 c 1 -3 7 2.5000 0.33 0000000000001234 "
              "0000000000000000 (null) photon sv (3,4)");
}

TEST_F(Alog, IntegerFormattersHonourBaseWidthAndPadding) {
    LOG_INFO(HEX(255), ' ', HEX(-1), ' ', HEX(0x1f).width(6), ' ', DEC(42).width(5), ' ',
             DEC(-42).width(6).padding('0'), ' ', OCT(8), ' ', BIN(5).width(8), ' ',
             HEX(uint8_t(0xAB)).width(1), ' ', DEC(7).width(3).padding('*'), ' ',
             BIN(5).width(8).padding('0'));
    // As in Photon, only HEX pads with '0' by default.
    EXPECT_EQ(message(), "FF FFFFFFFF 00001F    42 -00042 10      101 AB **7 00000101");
}

TEST_F(Alog, ValuePrintsNameAndValue) {
    int retries = 3;
    LOG_INFO(VALUE(retries), VALUE(retries * 2));
    EXPECT_EQ(message(), "[retries=3][retries * 2=6]");
}

TEST_F(Alog, ErrnoPrintsNumberAndText) {
    errno = ENOENT;
    LOG_INFO("open: `", ERRNO());
    LOG_INFO(ERRNO(EACCES));
    EXPECT_EQ(message(0), "open: errno=" + std::to_string(ENOENT) + "(" + strerror(ENOENT) + ")");
    EXPECT_EQ(message(1), "errno=" + std::to_string(EACCES) + "(" + strerror(EACCES) + ")");
}

TEST_F(Alog, FilteredLevelDoesNotEvaluateArguments) {
    int evaluations = 0;
    auto expensive = [&] { return ++evaluations; };
    set_log_output_level(ALOG_WARN);
    LOG_DEBUG("x=`", expensive());
    LOG_INFO(expensive());
    EXPECT_EQ(evaluations, 0);
    EXPECT_TRUE(out_.lines.empty());
    LOG_WARN("x=`", expensive());
    EXPECT_EQ(evaluations, 1);
    EXPECT_EQ(message(), "x=1");
}

TEST_F(Alog, EveryLevelCarriesItsPaddedNameAndReachesTheOutput) {
    LOG_DEBUG("d");
    LOG_INFO("i");
    LOG_WARN("w");
    LOG_ERROR("e");
    LOG_FATAL("f");
    LOG_TEMP("t");
    const char* names[] = {"|DEBUG|", "|INFO |", "|WARN |", "|ERROR|", "|FATAL|", "|TEMP |"};
    ASSERT_EQ(out_.lines.size(), 6u);
    for (int i = 0; i < 6; ++i) {
        EXPECT_NE(out_.lines[i].find(names[i]), std::string::npos) << out_.lines[i];
        EXPECT_EQ(out_.levels[i], i);
    }
}

TEST_F(Alog, AuditGoesToTheAuditLogger) {
    LOG_AUDIT("user ` logged in", "alice");
    EXPECT_TRUE(out_.lines.empty());  // the default audit output is null

    CaptureOutput audit;
    ALogLogger saved = default_audit_logger;
    default_audit_logger.log_output = &audit;
    LOG_AUDIT("user ` logged in", "bob");
    default_audit_logger = saved;
    ASSERT_EQ(audit.lines.size(), 1u);
    EXPECT_NE(audit.lines[0].find("|AUDIT|th="), std::string::npos);
    // As in Photon, audit lines carry no file, line or function.
    EXPECT_NE(audit.lines[0].find("|user bob logged in\n"), std::string::npos) << audit.lines[0];
    EXPECT_EQ(audit.lines[0].find("alog_test.cpp"), std::string::npos);
}

TEST_F(Alog, LineHeaderHasTimestampLevelThreadFileLineAndFunction) {
    auto* saved_current = photon::CURRENT;
    photon::CURRENT = reinterpret_cast<photon::thread*>(uintptr_t(0xABC0));
    int line = __LINE__ + 1;
    LOG_INFO("hello");
    photon::CURRENT = saved_current;

    regex_t header;
    ASSERT_EQ(
        regcomp(&header,
                "^([0-9]{4})/([0-9]{2})/([0-9]{2}) ([0-9]{2}):[0-9]{2}:[0-9]{2}\\.[0-9]{6}"
                "\\|INFO \\|th=000000000000ABC0\\|alog_test\\.cpp:([0-9]+)\\|TestBody:hello\n$",
                REG_EXTENDED),
        0);
    regmatch_t m[6];
    const std::string& text = out_.lines.at(0);
    int rc = regexec(&header, text.c_str(), 6, m, 0);
    regfree(&header);
    ASSERT_EQ(rc, 0) << text;
    auto group = [&](int i) { return std::stoi(text.substr(m[i].rm_so, m[i].rm_eo - m[i].rm_so)); };
    EXPECT_GE(group(1), 1970);
    EXPECT_LE(group(2), 12);
    EXPECT_LE(group(3), 31);
    EXPECT_LE(group(4), 23);
    EXPECT_EQ(group(5), line);
}

TEST_F(Alog, LongLinesAreCutAtTheBufferSizeAndStillEndWithNewline) {
    std::string big(3 * LOG_BUFFER_SIZE, 'x');
    LOG_INFO(big, 12345, 1.5);
    const std::string& line = out_.lines.at(0);
    EXPECT_EQ(line.size(), size_t(LOG_BUFFER_SIZE));
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find_first_not_of('x', line.find("TestBody:") + 9), line.size() - 1);
}

TEST_F(Alog, LoggingPreservesErrno) {
    errno = EBADF;
    LOG_INFO("output sets EIO; caller still sees EBADF");
    EXPECT_EQ(errno, EBADF);
    ASSERT_EQ(out_.lines.size(), 1u);
}

int fail_with(int new_errno) {
    errno = EAGAIN;
    LOG_ERROR_RETURN(new_errno, -7, "failed with `", new_errno);
}

const char* fail_errno(int new_errno) {
    errno = ENOENT;
    LOG_ERRNO_RETURN(new_errno, nullptr, "cannot open `", "/nonexistent");
}

TEST_F(Alog, LogErrorReturnSetsErrnoAndReturnsTheValue) {
    EXPECT_EQ(fail_with(EINVAL), -7);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(fail_with(0), -7);
    EXPECT_EQ(errno, EAGAIN);  // 0 keeps the errno from before the log
    ASSERT_EQ(out_.lines.size(), 2u);
    EXPECT_NE(out_.lines[0].find("|ERROR|"), std::string::npos);
    EXPECT_NE(out_.lines[0].find(":failed with 22\n"), std::string::npos) << out_.lines[0];
}

TEST_F(Alog, LogErrnoReturnAppendsTheCurrentErrno) {
    EXPECT_EQ(fail_errno(0), nullptr);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_EQ(fail_errno(EPERM), nullptr);
    EXPECT_EQ(errno, EPERM);
    ASSERT_EQ(out_.lines.size(), 2u);
    std::string expected = ":cannot open /nonexistent errno=" + std::to_string(ENOENT) + "(" +
                           strerror(ENOENT) + ")\n";
    EXPECT_NE(out_.lines[1].find(expected), std::string::npos) << out_.lines[1];
}

TEST_F(Alog, FirstNLogsOnlyTheFirstNCalls) {
    for (int i = 0; i < 10; ++i) LOG_FIRST_N(3, LOG_INFO("i=`", i));
    ASSERT_EQ(out_.lines.size(), 3u);
    EXPECT_EQ(message(2), "i=2");
}

TEST_F(Alog, EveryNLogsOneCallInN) {
    for (int i = 0; i < 10; ++i) LOG_EVERY_N(4, LOG_INFO("i=`", i));
    ASSERT_EQ(out_.lines.size(), 3u);
    EXPECT_EQ(message(0), "i=0");
    EXPECT_EQ(message(1), "i=4");
    EXPECT_EQ(message(2), "i=8");
}

TEST_F(Alog, EveryTLogsOncePerPeriod) {
    for (int i = 0; i < 5; ++i) LOG_EVERY_T(3600, LOG_INFO("hourly ", i));
    EXPECT_EQ(out_.lines.size(), 1u);

    for (int i = 0; i < 2; ++i) {
        LOG_EVERY_T(0.001, LOG_INFO("ms ", i));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // > the 1 ms period
    }
    EXPECT_EQ(out_.lines.size(), 3u);
}

TEST_F(Alog, FirstNEveryTLogsNCallsPerPeriod) {
    for (int i = 0; i < 5; ++i) LOG_FIRST_N_EVERY_T(2, 3600, LOG_INFO("i=`", i));
    ASSERT_EQ(out_.lines.size(), 2u);
    EXPECT_EQ(message(1), "i=1");
}

class AlogFile : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(tmp_.ok());
        dir_ = tmp_.path();
        path_ = tmp_ / "app.log";
        saved_ = default_logger;
    }
    void TearDown() override { default_logger = saved_; }

    photon_test::temp_dir tmp_{"alog_test"};
    std::string dir_, path_;
    ALogLogger saved_{};
};

TEST_F(AlogFile, RotatesBySizeAndKeepsMaxFiles) {
    ILogOutput* out = new_log_output_file(path_.c_str(), 1000, 3);
    ASSERT_NE(out, nullptr);
    default_logger = {out, ALOG_DEBUG};
    for (int i = 0; i < 100; ++i) LOG_INFO("line `", i);
    default_logger = saved_;
    out->destruct();

    EXPECT_TRUE(exists(path_));
    EXPECT_TRUE(exists(path_ + ".1"));
    EXPECT_TRUE(exists(path_ + ".2"));
    EXPECT_FALSE(exists(path_ + ".3"));
    std::string current = read_file(path_), previous = read_file(path_ + ".1");
    EXPECT_LE(current.size(), 1000u);
    EXPECT_LE(previous.size(), 1000u);
    EXPECT_GT(previous.size(), 900u);  // lines are ~70 bytes, so a full file is near the limit
    EXPECT_NE(current.find(":line 99\n"), std::string::npos);
    EXPECT_EQ(current.find(":line 0\n"), std::string::npos);
}

TEST_F(AlogFile, ConcurrentWritersLoseAndTearNoLineAcrossRotations) {
    const int kThreads = 4, kLines = 500, kMaxFiles = 100;
    ILogOutput* out = new_log_output_file(path_.c_str(), 8192, kMaxFiles);
    ASSERT_NE(out, nullptr);
    default_logger = {out, ALOG_DEBUG};
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
        workers.emplace_back([t] {
            for (int i = 0; i < kLines; ++i) LOG_INFO("worker ` line `", t, i);
        });
    for (auto& w : workers) w.join();
    default_logger = saved_;
    out->destruct();

    std::vector<int> seen(kThreads * kLines, 0);
    int files = 0;
    for (int i = 0; i < kMaxFiles; ++i) {
        std::string fn = i ? path_ + "." + std::to_string(i) : path_;
        if (!exists(fn)) continue;
        ++files;
        std::istringstream in(read_file(fn));
        for (std::string line; std::getline(in, line);) {
            int t = -1, n = -1;
            size_t at = line.find("|operator():worker ");
            ASSERT_NE(at, std::string::npos) << line;
            ASSERT_EQ(sscanf(line.c_str() + at, "|operator():worker %d line %d", &t, &n), 2);
            ++seen.at(t * kLines + n);
        }
    }
    EXPECT_GT(files, 2);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), kThreads * kLines);
}

TEST_F(AlogFile, RotateOnStartMovesTheOldLogAside) {
    { std::ofstream(path_) << "old run\n"; }
    ILogOutput* out = new_log_output_file(path_.c_str(), UINT64_MAX, 10, -1ULL, true);
    ASSERT_NE(out, nullptr);
    out->destruct();
    EXPECT_EQ(read_file(path_ + ".1"), "old run\n");
    EXPECT_EQ(read_file(path_), "");
}

TEST_F(AlogFile, LogOutputFileRedirectsTheDefaultLoggerUntilClosed) {
    ASSERT_EQ(log_output_file(path_.c_str()), 0);
    LOG_INFO("to the file");
    EXPECT_EQ(log_output_file_close(), 0);
    EXPECT_EQ(default_logger.log_output, log_output_stdout);
    EXPECT_EQ(log_output_file_close(), -1);
    EXPECT_EQ(errno, EALREADY);
    EXPECT_NE(read_file(path_).find(":to the file\n"), std::string::npos);
}

TEST_F(AlogFile, OpeningAMissingDirectoryFailsWithErrno) {
    default_logger.log_output = log_output_null;
    EXPECT_EQ(new_log_output_file((dir_ + "/missing/app.log").c_str()), nullptr);
    EXPECT_EQ(errno, ENOENT);
}

TEST_F(AlogFile, FdOutputWritesColoredLinesAndKeepsThrottle) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ILogOutput* out = new_log_output_file(fds[1], 1000);
    EXPECT_EQ(out->get_log_file_fd(), fds[1]);
    EXPECT_EQ(out->get_throttle(), 1000u);
    out->set_level_color(ALOG_ERROR, ALOG_COLOR_RED);
    const char line[] = "boom\n";
    out->write(ALOG_ERROR, line, line + 5);
    out->destruct();  // closes fds[1]
    char buf[64];
    ssize_t n = read(fds[0], buf, sizeof(buf));
    close(fds[0]);
    EXPECT_EQ(std::string(buf, n > 0 ? size_t(n) : 0), "\033[31mboom\033[0m\n");
}

// Photon's API beyond the basics: other loggers, string wrappers, integer and float options.

TEST_F(Alog, ShiftingIntoAnotherLoggerSendsTheLineThereUnderItsLevel) {
    CaptureOutput other;
    ALogLogger to_other{&other, ALOG_WARN};
    to_other << LOG_WARN("to the other logger ", 1);
    to_other << LOG_INFO("below the other logger's level");
    EXPECT_TRUE(out_.lines.empty());
    ASSERT_EQ(other.lines.size(), 1u);
    EXPECT_NE(other.lines[0].find(":to the other logger 1\n"), std::string::npos);
    EXPECT_EQ(other.levels[0], ALOG_WARN);
}

TEST_F(Alog, ALineIsWrittenOnceAtTheEndOfItsFullExpressionEvenWhenKept) {
    int evaluated = 0;
    {
        auto kept = LOG_INFO("kept ", ++evaluated);
        auto moved = std::move(kept);  // the moved-from builder stays silent
        EXPECT_TRUE(out_.lines.empty());
        EXPECT_EQ(evaluated, 0);  // arguments are evaluated when the line is written
    }
    ASSERT_EQ(out_.lines.size(), 1u);
    EXPECT_EQ(message(), "kept 1");
}

TEST_F(Alog, LogStringsPrintTheirBytesIncludingNuls) {
    const char raw[] = {'a', '\0', 'b'};
    char named[16] = "named";
    const char* p = "pchar";
    LOG_INFO(ALogString(raw, 3), '|', ALogStringL("lit"), '|', ALogStringPChar(p, 2), '|', named);
    EXPECT_EQ(message(), std::string("a\0b|lit|pc|named", 16));
}

TEST(AlogForwarding, PicksTheStringWrapperAsPhotonDoes) {
    auto lit = alog_forwarding("as\0df");
    static_assert(std::is_same<decltype(lit), ALogStringL>::value, "literal");
    EXPECT_EQ(lit.size, 5u);
    const char* cp = "as\0df";
    auto pc = alog_forwarding(cp);
    static_assert(std::is_same<decltype(pc), ALogStringPChar>::value, "const char*");
    EXPECT_EQ(pc.size, 2u);
    char arr[100] = "as\0df";
    auto pa = alog_forwarding(arr);
    static_assert(std::is_same<decltype(pa), ALogStringPChar>::value, "char[]");
    EXPECT_EQ(pa.size, 2u);
    const char* null_str = nullptr;
    EXPECT_EQ(alog_forwarding(null_str).size, 0u);
    int x = 7;
    EXPECT_EQ(&alog_forwarding(x), &x);  // everything else passes through
}

TEST_F(Alog, DecimalCommasGroupThousandsWithinTheWidth) {
    LOG_INFO(DEC(298345723731234).comma(true), ' ', DEC(2345678).comma(true).width(10), ' ',
             DEC(678).comma(true).width(5), ' ', DEC(-1234567).comma(true), ' ', DEC(0).comma(true),
             ' ', HEX(0x123456).comma(true));
    EXPECT_EQ(message(), "298,345,723,731,234  2,345,678   678 -1,234,567 0 123456");
}

TEST_F(Alog, IntegerOptionsAndAccessorsFollowPhoton) {
    LOG_INFO(HEX(0xabcdef).lower(true), ' ', HEX(uint64_t(-1)), ' ', ALogInteger(255, 4), ' ',
             ALogInteger(-5, 10), ' ', OCT(int8_t(-1)), ' ', BIN(true));
    EXPECT_EQ(message(), "abcdef FFFFFFFFFFFFFFFF FF -5 377 1");
    auto x = DEC(int16_t(-3)).width(4).padding('_').comma(true).lower(true);
    EXPECT_TRUE(x.is_signed());
    EXPECT_EQ(x.svalue(), -3);
    EXPECT_EQ(x.uvalue(), uint64_t(-3));
    EXPECT_EQ(x.shift(), 10);
    EXPECT_EQ(x.width(), 4);
    EXPECT_EQ(x.padding(), '_');
    EXPECT_TRUE(x.comma());
    EXPECT_TRUE(x.lower());
    EXPECT_EQ(HEX(1u).shift(), 4);
    EXPECT_FALSE(HEX(1u).is_signed());
}

TEST_F(Alog, FloatOptionsTakeWidthAndPrecisionTogether) {
    LOG_INFO(FP(3.14159).width(8, 2), '|', FP(2.5).precision(6, 1), '|', FP(1e6).scientific(true),
             '|', FP(1.5).precision(0));
    EXPECT_EQ(message(), "    3.14|   2.5|1.000000e+06|2");
    auto f = FP(1.0).width(9).precision(3).padding(' ').comma(true).lower(true);
    EXPECT_EQ(f.value(), 1.0);
    EXPECT_EQ(f.width(), 9);
    EXPECT_EQ(f.precision(), 3);
    EXPECT_EQ(f.padding(), ' ');
    EXPECT_TRUE(f.comma() && f.lower());
    EXPECT_FALSE(f.scientific());
}

TEST_F(Alog, TuplesPrintTheirElementsInOrder) {
    LOG_INFO(std::make_tuple(1, '-', "two", '-', 3.5), std::tuple<>());
    EXPECT_EQ(message(), "1-two-3.5000");
}

TEST_F(Alog, ErrnoZeroPrintsTheErrnoOfThePrintAndSetWritesTheCapturedOne) {
    errno = ENOENT;
    LOG_INFO(ERRNO(0));
    EXPECT_EQ(message(), "errno=" + std::to_string(ENOENT) + "(" + strerror(ENOENT) + ")");
    ERRNO e;
    EXPECT_EQ(e.no, ENOENT);
    e.set(EPIPE);
    EXPECT_EQ(errno, EPIPE);
    ERRNO fixed(EACCES);
    fixed.set(EBUSY);  // no captured variable: sets errno
    EXPECT_EQ(errno, EBUSY);
}

int fail_after_cleanup() {
    DECLARE_ERRNO_SETTER;
    DEFER(errno = EIO);  // cleanup that clobbers errno, as close() may
    LOG_ERROR_RETURN(EINVAL, -1, "failing");
}

int fail_without_setter() {
    DEFER(errno = EIO);
    LOG_ERROR_RETURN(EINVAL, -1, "failing");
}

TEST_F(Alog, DeclaredErrnoSetterOutlastsTheDefers) {
    EXPECT_EQ(fail_after_cleanup(), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(fail_without_setter(), -1);
    EXPECT_EQ(errno, EIO);  // without it the DEFER runs last
    EXPECT_EQ(out_.lines.size(), 2u);
}

photon::reterr fail_retval() { LOG_ERROR_RETVAL(ENOSPC, "disk full at ", 3); }

TEST_F(Alog, LogErrorRetvalReturnsTheErrorAndLogsItsText) {
    photon::reterr e = fail_retval();
    EXPECT_EQ(e.get_errno(), ENOSPC);
    ASSERT_EQ(out_.lines.size(), 1u);
    std::string expected = "|fail_retval:disk full at 3 errno=" + std::to_string(ENOSPC) + "(" +
                           strerror(ENOSPC) + ")\n";
    EXPECT_NE(out_.lines[0].find(expected), std::string::npos) << out_.lines[0];
}

TEST_F(Alog, GetLogFileFdAsksTheDefaultOutput) {
    EXPECT_EQ(get_log_file_fd(), -1);
    default_logger.log_output = log_output_stderr;
    EXPECT_EQ(get_log_file_fd(), 2);
}

TEST(AlogColors, PresetAndClearSwitchThePalette) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ILogOutput* out = new_log_output_file(fds[1]);
    ASSERT_NE(out, nullptr);
    const char line[] = "x\n";
    out->preset_color();
    out->write(ALOG_WARN, line, line + 2);
    out->write(ALOG_INFO, line, line + 2);
    out->clear_color();
    out->write(ALOG_WARN, line, line + 2);
    out->destruct();
    char buf[128];
    ssize_t n = read(fds[0], buf, sizeof(buf));
    close(fds[0]);
    EXPECT_EQ(std::string(buf, n > 0 ? size_t(n) : 0), "\033[33mx\033[0m\nx\nx\n");
}

TEST(AlogColors, UnknownLevelOrCodeFailsWithEinval) {
    ALogLogger saved = default_logger;
    default_logger.log_output = log_output_null;  // the rejection is logged
    EXPECT_EQ(log_output_stderr->set_level_color(ALOG_AUDIT + 1, ALOG_COLOR_RED), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(log_output_stderr->set_level_color(-1, ALOG_COLOR_RED), -1);
    EXPECT_EQ(log_output_stderr->set_level_color(ALOG_INFO, 0x42), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(log_output_stderr->set_level_color(ALOG_INFO, ALOG_COLOR_LIGHTWHITE), 0);
    EXPECT_EQ(log_output_stderr->set_level_color(ALOG_INFO, ALOG_COLOR_NOTHING), 0);
    default_logger = saved;
}

// Thread-safe: counts lines (a batch may hold many) and the levels they came with.
class CountingOutput final : public ILogOutput {
public:
    void write(int level, const char* begin, const char* end) override {
        std::lock_guard<std::mutex> lock(mutex_);
        text_.append(begin, end);
        levels_.push_back(level);
    }
    int get_log_file_fd() override { return 42; }
    uint64_t set_throttle(uint64_t t) override { return throttle_ = t; }
    uint64_t get_throttle() override { return throttle_; }
    void destruct() override {}
    std::string text() {
        std::lock_guard<std::mutex> lock(mutex_);
        return text_;
    }
    std::vector<int> levels() {
        std::lock_guard<std::mutex> lock(mutex_);
        return levels_;
    }

private:
    std::mutex mutex_;
    std::string text_;
    std::vector<int> levels_;
    uint64_t throttle_ = -1ULL;
};

TEST(AlogAsync, LinesFromManyThreadsAllArriveByDestruct) {
    CountingOutput sink;
    ILogOutput* async = new_async_log_output(&sink, 4);
    ASSERT_NE(async, nullptr);
    EXPECT_EQ(async->get_log_file_fd(), 42);
    EXPECT_EQ(async->set_throttle(77), 77u);
    EXPECT_EQ(sink.get_throttle(), 77u);
    ALogLogger logger{async, ALOG_DEBUG};
    const int kThreads = 4, kLines = 2000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kLines; ++i) logger << LOG_INFO("async ` `", t, i);
        });
    for (auto& th : threads) th.join();
    async->destruct();  // flushes

    std::vector<int> seen(kThreads * kLines, 0);
    std::istringstream in(sink.text());
    for (std::string line; std::getline(in, line);) {
        int t = -1, i = -1;
        size_t at = line.find(":async ");
        ASSERT_NE(at, std::string::npos) << line;
        ASSERT_EQ(sscanf(line.c_str() + at, ":async %d %d", &t, &i), 2) << line;
        ++seen.at(t * kLines + i);
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), kThreads * kLines);
    for (int level : sink.levels()) EXPECT_EQ(level, -1);  // coloured (or not) by the async one
}

TEST(AlogAsync, ColoursAreAppliedBeforeQueueing) {
    CountingOutput sink;
    ILogOutput* async = new_async_log_output(&sink, 1000);  // clamped, not refused
    ASSERT_NE(async, nullptr);
    EXPECT_EQ(async->set_level_color(ALOG_ERROR, ALOG_COLOR_RED), 0);
    const char line[] = "boom\n";
    async->write(ALOG_ERROR, line, line + 5);
    async->write(ALOG_INFO, line, line + 5);
    async->destruct();
    EXPECT_EQ(sink.text(), "\033[31mboom\033[0m\nboom\n");
}

TEST(AlogAsync, NoOutputIsEinval) {
    ALogLogger saved = default_logger;
    default_logger.log_output = log_output_null;
    errno = 0;
    EXPECT_EQ(new_async_log_output(nullptr), nullptr);
    EXPECT_EQ(errno, EINVAL);
    default_logger = saved;
}

// Last in the file: every LOG_* below sees this prefix.
#define ALWAYS_LOGGED std::make_tuple(ALogStringL("{always} "), VALUE(kAlwaysId), ' ')
const int kAlwaysId = 7;

TEST_F(Alog, AlwaysLoggedItemsFollowTheHeaderOfEveryLine) {
    LOG_INFO("a ` line", "prefixed");
    LOG_WARN(1, 2);
    EXPECT_EQ(message(0), "{always} [kAlwaysId=7] a prefixed line");
    EXPECT_EQ(message(1), "{always} [kAlwaysId=7] 12");
}
#undef ALWAYS_LOGGED

}  // namespace
