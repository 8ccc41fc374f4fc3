// photon/common/alog-audit.h: SCOPE_AUDIT logs its arguments and the scope's
// latency to the audit logger at scope exit; the threshold form stays silent
// for quick scopes; AU_FILEOP / AU_SOCKETOP name their values.
#include <photon/common/alog-audit.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class Lines final : public ILogOutput {
public:
    std::vector<std::string> lines;
    std::vector<int> levels;
    void write(int level, const char* begin, const char* end) override {
        lines.emplace_back(begin, end);
        levels.push_back(level);
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
};

class AlogAudit : public VcpuTest {
protected:
    void SetUp() override {
        VcpuTest::SetUp();
        saved_ = default_audit_logger;
        default_audit_logger = {&out_, ALOG_AUDIT};
    }
    void TearDown() override {
        default_audit_logger = saved_;
        VcpuTest::TearDown();
    }
    // The number after "[latency=" in line i; -1 if absent.
    long long latency(size_t i) const {
        const std::string& l = out_.lines.at(i);
        auto p = l.find("[latency=");
        return p == std::string::npos ? -1 : atoll(l.c_str() + p + 9);
    }
    Lines out_;
    ALogLogger saved_{};
};

TEST_F(AlogAudit, AScopeLogsItsArgumentsAndLatencyOnExit) {
    {
        SCOPE_AUDIT("file:read", AU_FILEOP("/data/x", 4096, 512));
        photon::thread_usleep(2000);
        EXPECT_TRUE(out_.lines.empty());  // not before the scope ends
    }
    ASSERT_EQ(1u, out_.lines.size());
    EXPECT_EQ(ALOG_AUDIT, out_.levels[0]);
    const std::string& l = out_.lines[0];
    EXPECT_NE(std::string::npos, l.find("file:read[pathname=/data/x][offset=4096][size=512]")) << l;
    EXPECT_GE(latency(0), 2000);  // photon::now moved past the sleep's end
}

TEST_F(AlogAudit, TheThresholdFormLogsOnlySlowScopes) {
    { SCOPE_AUDIT_THRESHOLD(kLongUs, "quick", AU_SOCKETOP(7)); }
    EXPECT_TRUE(out_.lines.empty());
    {
        SCOPE_AUDIT_THRESHOLD(1000, "slow", AU_SOCKETOP(7));
        photon::thread_usleep(3000);
    }
    ASSERT_EQ(1u, out_.lines.size());
    EXPECT_NE(std::string::npos, out_.lines[0].find("slow[endpoint=7]")) << out_.lines[0];
    EXPECT_GE(latency(0), 3000);
}

TEST_F(AlogAudit, AuditLinesStayOutOfTheNormalLog) {
    default_audit_logger.log_level = ALOG_AUDIT + 1;  // filtered out
    { SCOPE_AUDIT("dropped"); }
    EXPECT_TRUE(out_.lines.empty());
}

}  // namespace
