// Signing against the providers' published vectors: AWS's SigV4 test suite
// ("service" requests) and the S3 API reference's examples, and the OSS V1
// and V4 examples of Alibaba Cloud's SDK test suites. Pure computation.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <photon/common/checksum/digest.h>
#include <photon/ecosystem/oss.h>
#include <photon/net/http/headers.h>

#include "../../net/oss/sign.h"

using namespace photon::objstore;
using photon::net::http::Headers;
using photon::net::http::Verb;

namespace {

std::string signature_of(std::string_view auth) {
    auto i = auth.find("Signature=");
    return i == auth.npos ? std::string() : std::string(auth.substr(i + 10));
}

const char kAwsDocKey[] = "AKIAIOSFODNN7EXAMPLE";
const char kAwsDocSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const char kEmptySha[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

Authenticator* s3_doc_auth() {
    return new_s3_authenticator(CredentialParameters{kAwsDocKey, kAwsDocSecret, ""});
}

}  // namespace

TEST(SigV4, GetVanillaMatchesAwsTestSuite) {
    std::unique_ptr<Authenticator> auth(detail::new_v4_authenticator(
        CredentialParameters{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""}, false,
        "service"));
    Headers h;
    h.insert("Host", "example.amazonaws.com");
    h.insert("X-Amz-Date", "20150830T123600Z");
    Authenticator::SignParameters p{};
    p.region = "us-east-1";
    p.verb = Verb::GET;
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;x-amz-date, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        h["Authorization"]);
}

TEST(SigV4, QueryKeysAreSortedAsInAwsTestSuite) {
    std::unique_ptr<Authenticator> auth(detail::new_v4_authenticator(
        CredentialParameters{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""}, false,
        "service"));
    Headers h;
    h.insert("Host", "example.amazonaws.com");
    h.insert("X-Amz-Date", "20150830T123600Z");
    photon::SKV q[] = {{"Param1", "value1"}, {"Param2", "value2"}};
    Authenticator::SignParameters p{};
    p.region = "us-east-1";
    p.verb = Verb::GET;
    p.query_params = StringKV(q);
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
              signature_of(h["Authorization"]));
}

TEST(SigV4, S3GetObjectWithRangeMatchesS3Reference) {
    std::unique_ptr<Authenticator> auth(s3_doc_auth());
    Headers h;
    h.insert("Host", "examplebucket.s3.amazonaws.com");
    h.insert("Range", "bytes=0-9");
    h.insert("x-amz-content-sha256", kEmptySha);
    h.insert("x-amz-date", "20130524T000000Z");
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.object = "test.txt";
    p.verb = Verb::GET;
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_NE(h["Authorization"].find("SignedHeaders=host;range;x-amz-content-sha256;x-amz-date"),
              std::string_view::npos);
    EXPECT_EQ("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
              signature_of(h["Authorization"]));
}

TEST(SigV4, S3PutObjectEncodesTheKeyAsS3Reference) {
    std::unique_ptr<Authenticator> auth(s3_doc_auth());
    Headers h;
    h.insert("Host", "examplebucket.s3.amazonaws.com");
    h.insert("Date", "Fri, 24 May 2013 00:00:00 GMT");
    h.insert("x-amz-date", "20130524T000000Z");
    h.insert("x-amz-storage-class", "REDUCED_REDUNDANCY");
    h.insert("x-amz-content-sha256", detail::sha256_hex("Welcome to Amazon S3."));
    h.insert("Content-Length", "21");  // not signed
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.object = "test$file.text";
    p.verb = Verb::PUT;
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
              signature_of(h["Authorization"]));
}

TEST(SigV4, S3ListObjectsQueryMatchesS3Reference) {
    std::unique_ptr<Authenticator> auth(s3_doc_auth());
    Headers h;
    h.insert("Host", "examplebucket.s3.amazonaws.com");
    h.insert("x-amz-content-sha256", kEmptySha);
    h.insert("x-amz-date", "20130524T000000Z");
    photon::SKV q[] = {{"max-keys", "2"}, {"prefix", "J"}};
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.verb = Verb::GET;
    p.query_params = StringKV(q);
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
              signature_of(h["Authorization"]));
}

TEST(SigV4, PathStyleSignsTheBucketInThePath) {
    // Same request as above, path-style: a different canonical URI, so a
    // different signature (SeaweedFS checks this form end to end).
    std::unique_ptr<Authenticator> auth(s3_doc_auth());
    Headers h;
    h.insert("Host", "127.0.0.1:9000");
    h.insert("x-amz-content-sha256", kEmptySha);
    h.insert("x-amz-date", "20130524T000000Z");
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.object = "test.txt";
    p.verb = Verb::GET;
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_NE("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
              signature_of(h["Authorization"]));
    EXPECT_EQ(64u, signature_of(h["Authorization"]).size());
}

TEST(OssV1, PutObjectMatchesOssSdkVector) {
    std::unique_ptr<Authenticator> auth(
        new_basic_oss_authenticator(CredentialParameters{"ak", "sk", ""}));
    Headers h;
    h.insert("Content-MD5", "eB5eJF1ptWaXm4bijSPyxw==");
    h.insert("Content-Type", "text/html");
    h.insert("x-oss-meta-author", "alice");
    h.insert("x-oss-meta-magic", "abracadabra");
    h.insert("x-oss-date", "Wed, 28 Dec 2022 10:27:41 GMT");
    h.insert("Date", "Wed, 28 Dec 2022 10:27:41 GMT");
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.object = "nelson";
    p.verb = Verb::PUT;
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("OSS ak:kSHKmLxlyEAKtZPkJhG9bZb5k7M=", h["Authorization"]);
}

TEST(OssV1, SubResourceAndSecurityTokenMatchOssSdkVector) {
    std::unique_ptr<Authenticator> auth(
        new_basic_oss_authenticator(CredentialParameters{"ak", "sk", "token"}));
    Headers h;
    h.insert("Content-MD5", "eB5eJF1ptWaXm4bijSPyxw==");
    h.insert("Content-Type", "text/html");
    h.insert("x-oss-meta-author", "alice");
    h.insert("x-oss-meta-magic", "abracadabra");
    h.insert("x-oss-date", "Wed, 28 Dec 2022 10:27:41 GMT");
    h.insert("Date", "Wed, 28 Dec 2022 10:27:41 GMT");
    photon::SKV q[] = {{"acl", ""}, {"non-signed-key", "value"}};
    Authenticator::SignParameters p{};
    p.bucket = "examplebucket";
    p.object = "nelson";
    p.verb = Verb::PUT;
    p.query_params = StringKV(q);
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("token", h["x-oss-security-token"]);
    EXPECT_EQ("OSS ak:yeceHMAsgusDPCR979RJcLtd7RI=", h["Authorization"]);
}

TEST(OssV4, PutObjectMatchesOssSdkVector) {
    std::unique_ptr<Authenticator> auth(
        new_oss_v4_authenticator(CredentialParameters{"ak", "sk", ""}));
    Headers h;
    h.insert("x-oss-head1", "value");
    h.insert("abc", "value");
    h.insert("ZAbc", "value");
    h.insert("XYZ", "value");
    h.insert("content-type", "text/plain");
    h.insert("x-oss-content-sha256", "UNSIGNED-PAYLOAD");
    h.insert("x-oss-date", "20231216T162057Z");
    photon::SKV q[] = {{"+param1", "value3"}, {"+param2", ""},       {"param1", "value1"},
                       {"param2", ""},        {"|param1", "value4"}, {"|param2", ""}};
    Authenticator::SignParameters p{};
    p.region = "cn-hangzhou";
    p.bucket = "bucket";
    p.object = "1234+-/123/1.txt";
    p.verb = Verb::PUT;
    p.query_params = StringKV(q);
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ(
        "OSS4-HMAC-SHA256 Credential=ak/20231216/cn-hangzhou/oss/aliyun_v4_request,"
        "Signature=e21d18daa82167720f9b1047ae7e7f1ce7cb77a31e8203a7d5f4624fa0284afe",
        h["Authorization"]);
}

TEST(OssV4, SecurityTokenIsSignedAsInOssSdkVector) {
    std::unique_ptr<Authenticator> auth(
        new_oss_v4_authenticator(CredentialParameters{"ak", "sk", "token"}));
    Headers h;
    h.insert("x-oss-head1", "value");
    h.insert("abc", "value");
    h.insert("ZAbc", "value");
    h.insert("XYZ", "value");
    h.insert("content-type", "text/plain");
    h.insert("x-oss-content-sha256", "UNSIGNED-PAYLOAD");
    h.insert("x-oss-date", "20231217T034736Z");
    photon::SKV q[] = {{"+param1", "value3"}, {"+param2", ""},       {"param1", "value1"},
                       {"param2", ""},        {"|param1", "value4"}, {"|param2", ""}};
    Authenticator::SignParameters p{};
    p.region = "cn-hangzhou";
    p.bucket = "bucket";
    p.object = "1234+-/123/1.txt";
    p.verb = Verb::PUT;
    p.query_params = StringKV(q);
    ASSERT_EQ(0, auth->sign(h, p));
    EXPECT_EQ("b94a3f999cf85bcdc00d332fbd3734ba03e48382c36fa4d5af5df817395bd9ea",
              signature_of(h["Authorization"]));
}

TEST(OssEncoding, UriEncodeKeepsUnreservedAndOptionallySlash) {
    EXPECT_EQ("a%20b%2Bc/d", detail::uri_encode("a b+c/d", true));
    EXPECT_EQ("a%2Fb", detail::uri_encode("a/b", false));
    EXPECT_EQ("%D0%BA", detail::uri_encode("\xD0\xBA", false));
    EXPECT_EQ("eB5eJF1ptWaXm4bijSPyxw==", detail::base64(photon::md5("0123456789").finalize()));
    EXPECT_EQ("20130524T000000Z", detail::amz_date(1369353600));
    EXPECT_EQ("Fri, 24 May 2013 00:00:00 GMT", detail::http_date(1369353600));
    EXPECT_EQ(1369353600, detail::parse_time("2013-05-24T00:00:00.000Z"));
    EXPECT_EQ(1369353600, detail::parse_time("Fri, 24 May 2013 00:00:00 GMT"));
    EXPECT_EQ(-1, detail::parse_time("yesterday"));
}
