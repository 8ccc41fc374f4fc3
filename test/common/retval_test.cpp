// photon/common/retval.h: values that carry their errno, failure values per type, equality,
// and the conversions that must not hand out an errno as a value.
#include <photon/common/retval.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <type_traits>

namespace {

using photon::reterr;
using photon::retval;

retval<double> already() { return {-1, EALREADY}; }

retval<int> pick(int i) {
    switch (i) {
        case 0:
            return 32;
        case 1:
            return reterr{EINVAL};
        case 2: {
            retval<double> r = already();
            return reterr{r};  // passes on only the error
        }
        default:
            errno = EADDRINUSE;
            return -5;
    }
}

TEST(Reterr, IsZeroOnSuccessAndConvertsToTheErrno) {
    reterr ok{}, bad{ENOENT};
    EXPECT_TRUE(ok.succeeded());
    EXPECT_FALSE(ok.failed());
    EXPECT_TRUE(bad.failed());
    EXPECT_EQ(ENOENT, bad.get_errno());
    EXPECT_EQ(ENOENT, (int)bad);
    static_assert(sizeof(reterr) == 8, "the error is 64 bits wide");
}

TEST(Retval, TakesErrnoOnlyForFailureValues) {
    errno = EALREADY;
    const static retval<int> rvs[] = {{32}, {-2345, EINVAL}, {-1234, EADDRINUSE}, {-5234}};
    EXPECT_EQ(32, rvs[0]);
    EXPECT_TRUE(rvs[0].succeeded());
    EXPECT_EQ(0, rvs[0].error());
    EXPECT_EQ(-2345, rvs[1]);
    EXPECT_EQ(EINVAL, rvs[1].error());
    EXPECT_EQ(EADDRINUSE, rvs[2].get_errno());
    EXPECT_EQ(-5234, rvs[3].get());
    EXPECT_EQ(EALREADY, rvs[3].error());  // taken from errno
    errno = EIO;
    retval<unsigned> zero = 0u, one = 1u;  // unsigned: zero is the failure value
    EXPECT_EQ(EIO, zero.error());
    EXPECT_TRUE(one.succeeded());
    retval<float*> p = {nullptr, ECANCELED};
    EXPECT_EQ(nullptr, p.get());
    EXPECT_EQ(ECANCELED, p.error());
    int x = 7;
    retval<int*> q = &x;
    EXPECT_EQ(7, *q.get());
    EXPECT_EQ(&x, q.operator->());
}

TEST(Retval, FromAnErrorHoldsTheFailureValue) {
    retval<int> a = reterr{EPERM};
    EXPECT_EQ(-1, a.get());
    EXPECT_EQ(EPERM, a.error());
    retval<size_t> b = reterr{EPERM};
    EXPECT_EQ(0u, b.get());
    retval<char*> c = reterr{EPERM};
    EXPECT_EQ(nullptr, c.get());
    retval<std::string> d = reterr{EPERM};  // class types: T{}
    EXPECT_EQ("", d.get());
    retval<std::string> e = std::string("fine");
    EXPECT_TRUE(e.succeeded());  // no string value is a failure
    EXPECT_EQ(-1.0, photon::failure_value<double>());
    EXPECT_TRUE(photon::is_failure(-0.5));
    EXPECT_FALSE(photon::is_failure(0));
    EXPECT_TRUE(photon::is_failure(0u));
    EXPECT_TRUE(photon::is_failure<void*>(nullptr));
}

TEST(Retval, FromAZeroErrorIsStillAFailure) {
    retval<int> r = reterr{0};  // Photon: a "success" holding -1
    EXPECT_TRUE(r.failed());
    EXPECT_EQ(EINVAL, r.error());
    EXPECT_EQ(-1, r.get());
}

TEST(Retval, ComparesErrorsFirstAndSymmetrically) {
    const retval<int> expect[] = {{32}, {-2345, EINVAL}, {-9, EALREADY}, {-1, EADDRINUSE}};
    for (int i = 0; i < 4; i++) EXPECT_EQ(expect[i], pick(i)) << i;
    retval<int> ok(5), bad(5, EINVAL);
    EXPECT_NE(ok, bad);
    EXPECT_NE(bad, ok);  // Photon compared only the values when the left side succeeded
    EXPECT_EQ(retval<int>(-1, EIO), retval<int>(-7, EIO));  // failures: the values do not count
    EXPECT_NE(retval<int>(1, 0), retval<int>(2, 0));
    EXPECT_TRUE(ok == 5);
    EXPECT_TRUE(ok != 6);
}

TEST(Retval, ConvertsToItsValueNeverToTheErrno) {
    retval<long> r(12345, 0);
    long v = r;
    EXPECT_EQ(12345, v);
    static_assert(!std::is_convertible<retval<long>, int>::value,
                  "int n = retval<long> would have yielded the errno");
    static_assert(std::is_convertible<retval<int>, int>::value, "");
    retval<int> i(-3, ENOSPC);
    int n = i;
    EXPECT_EQ(-3, n);
    reterr e = i.error();
    EXPECT_EQ(ENOSPC, (int)e);
    retval<bool> flag = true;
    EXPECT_TRUE(flag);
}

retval<void> ret_failed() { return {EBADF}; }
retval<void> ret_succeeded() { return {}; }

TEST(RetvalVoid, CarriesOnlyTheError) {
    auto a = ret_failed();
    EXPECT_TRUE(a.failed());
    EXPECT_EQ(EBADF, a.error());
    auto b = ret_succeeded();
    EXPECT_TRUE(b.succeeded());
    b.get();
    EXPECT_NE(a, b);
    EXPECT_EQ(a, retval<void>(reterr{EBADF}));
}

}  // namespace
