import Foundation
import TestSupport
import Testing

/// `run`, `export` and `publish` against moto's S3 server on loopback, checked with boto3.
@Suite(.enabled(if: motoIsInstalled, "needs moto[server] and boto3 in .venv (scripts/install-deps)"))
struct PublishRunTests {
    let prefix = "tv/"

    func config(_ box: Sandbox, endpoint: String, extra: String = "") -> String {
        """
        {"database": "tv.sqlite", "output": "feeds", "maxDeleteShare": 1,
         "sources": [{"name": "main", "url": "\(box.path("guide.xml"))"}],
         "fetch": {"retries": 0}\(extra),
         "publish": {"s3": {"endpoint": "\(endpoint)", "bucket": "feeds", "prefix": "\(prefix)", "region": "us-east-1"}}}
        """
    }

    /// The bucket holds exactly the local feed directory: same keys, same bytes (ETag = MD5).
    func expectBucketMirrors(_ box: Sandbox, _ store: MotoServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let local = box.feeds()
        let stored = try store.objects(prefix: prefix)
        #expect(Set(stored.keys) == Set(local.keys.map { prefix + $0 }), sourceLocation: sourceLocation)
        for (name, bytes) in local {
            #expect(stored[prefix + name]?.etag == (try md5Hex(bytes)), "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test("first run uploads every feed and the index typed; an unchanged run makes no PUT; a changed guide uploads only changed feeds; a removed channel's object is deleted")
    func nightlyCycle() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("config.json", config(box, endpoint: store.endpoint))
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta", "gamma.test": "Gamma"]))

        let first = try box.tvimport(["run", "--config", "config.json"], environment: store.environment)
        #expect(first.status == 0, "\(first.output)\n\(first.stderr)")
        let feeds = box.feeds()
        #expect(feeds.keys.sorted() == ["alpha.test.ics", "beta.test.ics", "gamma.test.ics", "index.html"])
        try expectBucketMirrors(box, store)
        let stored = try store.objects(prefix: prefix)
        #expect(stored[prefix + "alpha.test.ics"]?.contentType == "text/calendar; charset=utf-8")
        #expect(stored[prefix + "index.html"]?.contentType == "text/html; charset=utf-8")
        #expect(stored[prefix + "alpha.test.ics"]?.cacheControl == "public, max-age=3600")
        #expect(stored[prefix + "index.html"]?.cacheControl == "public, max-age=300")
        #expect(store.count("PUT") == feeds.count)
        #expect(first.output.contains("publish: 4 uploaded"), "\(first.output)")

        // Unchanged night: no PUT, no DELETE.
        let second = try box.tvimport(["run", "--config", "config.json"], environment: store.environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(store.count("PUT") == feeds.count)
        #expect(store.count("DELETE") == 0)
        #expect(second.output.contains("publish: nothing changed"), "\(second.output)")

        // Beta's titles change: only the files whose bytes changed go up.
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta renamed", "gamma.test": "Gamma"]))
        let third = try box.tvimport(["run", "--config", "config.json"], environment: store.environment)
        #expect(third.status == 0, "\(third.stderr)")
        // (The index changes too: it shows when the feeds were last written.)
        let changed = box.feeds().filter { feeds[$0.key] != $0.value }.keys.sorted()
        #expect(changed.contains("beta.test.ics") && !changed.contains("alpha.test.ics") && !changed.contains("gamma.test.ics"))
        #expect(store.count("PUT") == feeds.count + changed.count)
        try expectBucketMirrors(box, store)

        // Gamma leaves the guide: its feed is removed locally and its object deleted after the new index.
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta renamed"]))
        let fourth = try box.tvimport(["run", "--config", "config.json"], environment: store.environment)
        #expect(fourth.status == 0, "\(fourth.stderr)")
        #expect(box.feeds()["gamma.test.ics"] == nil)
        #expect(store.count("DELETE") == 1)
        try expectBucketMirrors(box, store)
        // The index went up before the delete (the log is in request order).
        let log = store.log.split(separator: "\n")
        let indexPut = log.lastIndex { $0.contains("PUT /feeds/tv/index.html") }
        let gammaDelete = log.firstIndex { $0.contains("DELETE /feeds/tv/gamma.test.ics") }
        #expect(indexPut != nil && gammaDelete != nil && indexPut! < gammaDelete!)
    }

    @Test("store unreachable: exit 69, database and feeds untouched; the next good run converges")
    func unreachableThenConverges() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        guard let closedPort = freePort() else { throw SetupFailure(description: "no free port") }
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta"]))
        try box.write("down.json", config(box, endpoint: "http://127.0.0.1:\(closedPort)"))
        try box.write("up.json", config(box, endpoint: store.endpoint))

        let failed = try box.tvimport(["run", "--config", "down.json"], environment: store.environment)
        #expect(failed.status == 69, "\(failed.output)\n\(failed.stderr)")
        #expect(failed.stderr.contains("bucket 'feeds' at http://127.0.0.1:\(closedPort)"), "\(failed.stderr)")
        #expect(failed.stderr.contains("unreachable"), "\(failed.stderr)")
        // The import and the export stand: the feeds are there.
        #expect(box.feeds().keys.sorted() == ["alpha.test.ics", "beta.test.ics", "index.html"])

        // `publish` alone fails the same way and changes nothing local: database, feeds, state.
        let before = box.snapshot()
        let again = try box.tvimport(["publish", "--config", "down.json"], environment: store.environment)
        #expect(again.status == 69)
        let after = box.snapshot()
        #expect(before.keys.sorted() == after.keys.sorted())
        for (name, (bytes, mtime)) in before where !name.hasSuffix(".lock") {
            #expect(after[name]?.0 == bytes && after[name]?.1 == mtime, "\(name) changed")
        }

        let good = try box.tvimport(["run", "--config", "up.json"], environment: store.environment)
        #expect(good.status == 0, "\(good.stderr)")
        try expectBucketMirrors(box, store)
    }

    @Test("a wrong secret is exit 69 naming the bucket and the cause; the secret is in no output or file")
    func wrongSecret() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha"]))
        try box.write("config.json", config(box, endpoint: store.endpoint))
        let secret = "wrong-\(UUID().uuidString)"
        var environment = store.environment
        environment["AWS_SECRET_ACCESS_KEY"] = secret

        var outputs: [ProcessResult] = []
        for arguments in [["run", "--config", "config.json"], ["run", "--config", "config.json", "--format", "json", "--log-format", "json"],
                          ["publish", "--config", "config.json"], ["publish", "--config", "config.json", "--verify"]] {
            let r = try box.tvimport(arguments, environment: environment)
            #expect(r.status == 69, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("bucket 'feeds'"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("403") && r.stderr.contains("SignatureDoesNotMatch"), "\(arguments): \(r.stderr)")
            outputs.append(r)
        }
        for r in outputs {
            #expect(!r.output.contains(secret) && !r.stderr.contains(secret))
        }
        for (name, (bytes, _)) in box.snapshot() {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is written in \(name)")
        }
        #expect(try store.objects(prefix: prefix).isEmpty)
        #expect(!store.log.contains(secret))
    }

    @Test("missing credentials are a configuration error (78) naming the variables")
    func missingCredentials() throws {
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha"]))
        try box.write("config.json", config(box, endpoint: "http://127.0.0.1:9"))
        try box.tvimport(["run", "--config", "config.json"])
        let r = try box.tvimport(["publish", "--config", "config.json"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(r.stderr)")
    }

    @Test("--verify lists the bucket and repairs what changed behind the job's back; --dry-run touches nothing")
    func verifyAndDryRun() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta"]))
        try box.write("config.json", config(box, endpoint: store.endpoint))
        #expect(try box.tvimport(["run", "--config", "config.json"], environment: store.environment).status == 0)
        let puts = store.count("PUT")

        // Someone deletes a feed and leaves a stray one in the prefix.
        try store.change("delete", key: prefix + "alpha.test.ics")
        try box.write("stray.ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
        try store.change("put", key: prefix + "stray.ics", file: box.path("stray.ics"))

        // Without --verify the state says all is up: nothing is sent.
        let plain = try box.tvimport(["publish", "--config", "config.json"], environment: store.environment)
        #expect(plain.status == 0 && plain.output.contains("nothing changed"), "\(plain.output)")

        // A dry run of the repair says what it would do, sends nothing and keeps the state.
        let before = box.snapshot()
        let dry = try box.tvimport(["publish", "--config", "config.json", "--verify", "--dry-run"], environment: store.environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.output.contains("upload tv/alpha.test.ics") && dry.output.contains("delete tv/stray.ics"), "\(dry.output)")
        #expect(store.count("PUT") == puts + 1)  // the stray put by boto3 only
        #expect(store.count("DELETE") == 1)      // boto3's
        #expect(box.snapshot().mapValues(\.0) == before.mapValues(\.0))

        let repaired = try box.tvimport(["publish", "--config", "config.json", "--verify"], environment: store.environment)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(repaired.output.contains("1 uploaded, 1 deleted"), "\(repaired.output)")
        try expectBucketMirrors(box, store)

        // A dry run needs neither the store nor credentials.
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha changed", "beta.test": "Beta"]))
        #expect(try box.tvimport(["export", "--db", "tv.sqlite", "--out", "feeds"]).status == 0)
        let offline = try box.tvimport(["run", "--config", "config.json", "--dry-run"])
        #expect(offline.status == 0, "\(offline.stderr)")
        let preview = try box.tvimport(["publish", "--config", "config.json", "--dry-run"])
        #expect(preview.status == 0, "\(preview.stderr)")
    }

    @Test("export publishes when the config has publish; the XMLTV export goes up as application/xml or gzip")
    func exportAndGuide() throws {
        let store = try MotoServer()
        let box = try Sandbox()
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha"]))
        // `run` writes the XMLTV file the config names (`"xmltv": "PATH"`) before it publishes, so
        // the object is this run's file, not the last run's.
        try box.write("config.json", config(box, endpoint: store.endpoint, extra: ", \"xmltv\": \"\(box.path("export.xml"))\""))
        #expect(try box.tvimport(["run", "--config", "config.json"], environment: store.environment).status == 0)
        var stored = try store.objects(prefix: prefix)
        #expect(stored[prefix + "export.xml"]?.contentType == "application/xml")
        #expect(stored[prefix + "export.xml"]?.etag == (try md5Hex(Data(contentsOf: URL(fileURLWithPath: box.path("export.xml"))))))
        try box.write("guide.xml", makeGuide(["alpha.test": "Alpha", "beta.test": "Beta"]))
        #expect(try box.tvimport(["run", "--config", "config.json"], environment: store.environment).status == 0)
        let written = try String(contentsOfFile: box.path("export.xml"), encoding: .utf8)
        #expect(written.contains("<channel id=\"beta.test\">"), "the second run's guide")
        stored = try store.objects(prefix: prefix)
        #expect(stored[prefix + "export.xml"]?.etag == (try md5Hex(Data(written.utf8))), "the second run published its own XMLTV file")

        // `export --xmltv` publishes the file it wrote (gzip: application/gzip).
        let exported = try box.tvimport(["export", "--db", "tv.sqlite", "--out", "feeds", "--xmltv", "export.xml.gz", "--config", "config.json"],
                                        environment: store.environment)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.output.contains("publish: 1 uploaded"), "\(exported.output)")
        stored = try store.objects(prefix: prefix)
        #expect(stored[prefix + "export.xml.gz"]?.contentType == "application/gzip")
    }
}
