import Foundation
import Testing
@testable import Publish

/// Addresses, encodings and digests: what libcurl signs and the store checks.
struct ObjectStoreTargetTests {
    @Test func pathStyleURLs() {
        let target = ObjectStoreTarget(endpoint: "http://127.0.0.1:9000/", bucket: "feeds", prefix: "tv/")
        #expect(target.pathStyle)
        #expect(target.objectURL(key: target.key(for: "bbc one+hd.ics")) == "http://127.0.0.1:9000/feeds/tv/bbc%20one%2Bhd.ics")
        #expect(target.listURL(continuationToken: nil) == "http://127.0.0.1:9000/feeds?list-type=2&prefix=tv%2F")
        // SigV4 wants the query sorted: continuation-token < list-type < prefix.
        #expect(target.listURL(continuationToken: "a/b=") == "http://127.0.0.1:9000/feeds?continuation-token=a%2Fb%3D&list-type=2&prefix=tv%2F")
    }

    @Test func virtualHostedURLsOnAWS() {
        let target = ObjectStoreTarget(bucket: "feeds", prefix: "", region: "eu-west-1")
        #expect(!target.pathStyle)
        #expect(target.endpoint == "https://s3.eu-west-1.amazonaws.com")
        #expect(target.objectURL(key: "é.ics") == "https://feeds.s3.eu-west-1.amazonaws.com/%C3%A9.ics")
        #expect(target.listURL(continuationToken: nil) == "https://feeds.s3.eu-west-1.amazonaws.com/?list-type=2")
    }

    @Test func digestsOfAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString)")
        try Data("hello\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let digests = try FileDigests(file: file.path)
        // md5sum and sha256sum of "hello\n".
        #expect(digests.md5Hex == "b1946ac92492d2347c6235b4d2611184")
        #expect(digests.md5Base64 == "sZRqySSS0jR8YjW00mERhA==")
        #expect(digests.sha256Hex == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
        #expect(digests.bytes == 6)
    }

    @Test func credentialsComeFromTheEnvironmentAndNeverPrintTheSecret() throws {
        #expect(throws: PublishError.self) { try ObjectStoreCredentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "AKIA"]) }
        let credentials = try ObjectStoreCredentials.fromEnvironment(
            ["AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "t0ken"])
        #expect(credentials.sessionToken == "t0ken")
        #expect(!"\(credentials)".contains("s3cr3t") && !"\(credentials)".contains("t0ken"))
    }

    @Test func listingAndErrorDocuments() {
        let listing = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>feeds</Name><IsTruncated>true</IsTruncated>
            <Contents><Key>tv/a.ics</Key><ETag>&quot;abc&quot;</ETag><Size>3</Size></Contents>
            <Contents><Key>tv/b &amp; c.ics</Key><ETag>"def"</ETag></Contents>
            <NextContinuationToken>next/1</NextContinuationToken></ListBucketResult>
            """.utf8)
        let page = ListBucketPage(xml: listing)
        #expect(page?.objects.map(\.key) == ["tv/a.ics", "tv/b & c.ics"])
        #expect(page?.objects.map(\.etag) == ["abc", "def"])
        #expect(page?.isTruncated == true && page?.nextContinuationToken == "next/1")
        let error = StoreErrorDocument(xml: Array("<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>".utf8))
        #expect(error?.code == "AccessDenied" && error?.message == "Access Denied")
        #expect(ListBucketPage(xml: Array("<html>nope</html>".utf8)) == nil)
    }
}
