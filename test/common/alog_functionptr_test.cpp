// photon/common/alog-functionptr.h: function and member-function pointers log
// as their demangled type and address, directly and through LOG-style
// printf (found by argument-dependent lookup on LogBuffer).
#include <photon/common/alog-functionptr.h>

#include <gtest/gtest.h>

#include <string>

namespace {

int free_function(const char*) { return 0; }

}  // namespace

struct Widget {
    void poke(int) {}
    int peek() const { return 0; }
};

namespace ns {
struct Gadget {
    double run(float, char) { return 0; }
};
}  // namespace ns

namespace {

template <typename... Ts>
std::string logged(const Ts&... xs) {
    LogBuffer log;
    log.printf(xs...);
    return std::string(log.begin(), log.end());
}

TEST(AlogFunctionPtr, AFunctionPointerPrintsItsTypeAndAddress) {
    std::string s = logged(&free_function);
    EXPECT_EQ(0u, s.find("function_pointer<int (*)(char const*)> at ")) << s;
    LogBuffer direct;
    direct << &free_function;
    EXPECT_EQ(s, std::string(direct.begin(), direct.end()));
}

TEST(AlogFunctionPtr, MemberFunctionPointersPrintTheirClassAndConstness) {
    std::string s = logged(&Widget::poke);
    EXPECT_EQ(0u, s.find("function_pointer<void (Widget::*)(int)> at ")) << s;
    s = logged(&Widget::peek);
    EXPECT_EQ(0u, s.find("function_pointer<int (Widget::*)() const> at ")) << s;
    s = logged(&ns::Gadget::run);
    EXPECT_EQ(0u, s.find("function_pointer<double (ns::Gadget::*)(float, char)> at ")) << s;
}

TEST(AlogFunctionPtr, TheAddressIsTheFunctions) {
    std::string s = logged(&free_function);
    LogBuffer addr;
    addr << reinterpret_cast<void*>(&free_function);
    std::string expected = std::string(addr.begin(), addr.end());
    EXPECT_EQ(s.size() - expected.size(), s.rfind(expected)) << s;
}

}  // namespace
