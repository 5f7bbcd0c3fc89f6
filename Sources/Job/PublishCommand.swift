import Fetch
import Foundation
import Publish

/// `tvimport publish`, and the publish that `run` and `export` make after their export when the
/// config has `publish.s3`.
public enum PublishCommand {
    /// `tvimport publish [--config FILE] [--verify] [--dry-run]`: publishes the config's output
    /// directory now, under the run lock (a run exporting meanwhile would change what is compared).
    public static func run(configPath: String?, verify: Bool, dryRun: Bool) throws -> (output: String, status: ExitStatus) {
        let config = try configPath.map { try JobConfig.load(path: $0, requireSources: false) } ?? JobConfig.bundledSample()
        guard config.publisher != nil else {
            throw JobError(.config, "\(configPath ?? "the bundled sample configuration"): no 'publish.s3' to publish to")
        }
        let lock = try RunLock(path: config.database + ".lock")
        defer { lock.release() }
        guard let outcome = publish(config: config, feedDirectory: config.output, verify: verify, dryRun: dryRun) else {
            return ("", .success)
        }
        if outcome.status != .success { throw JobError(outcome.status, outcome.line) }
        return (outcome.line, .success)
    }

    /// Publishes `feedDirectory` (and the XMLTV export) when the config has a publish target;
    /// nil when it has none. A failure is returned with its exit status, never thrown: the export
    /// before it stands.
    static func publish(config: JobConfig, feedDirectory: String, verify: Bool = false, dryRun: Bool = false)
        -> (line: String, status: ExitStatus)?
    {
        guard let publisher = config.publisher else { return nil }
        do throws(PublishError) {
            let local = try LocalObject.scan(feedDirectory: feedDirectory, guide: config.xmltv)
            let report = try publisher.publish(local.objects, skipped: local.skipped, verify: verify, dryRun: dryRun) { () throws(PublishError) in
                try ObjectStoreCredentials.fromEnvironment()
            }
            return (report.summary, .success)
        } catch {
            return (error.message, ExitStatus(error))
        }
    }
}

extension ExitStatus {
    /// A store that refused or could not be reached is 69, like a source that could not be downloaded.
    init(_ error: PublishError) {
        switch error.kind {
        case .configuration: self = .config
        case .localFile: self = .noInput
        case .store: self = .unavailable
        case .state: self = .cannotCreate
        }
    }
}

extension JobConfig {
    /// The publisher of `publish.s3`, its state kept in the fetch cache; nil without one.
    public var publisher: Publisher? {
        guard let publishTarget else { return nil }
        return Publisher(target: publishTarget, policy: fetchPolicy, statePath: cacheDirectory + "/publish-state.json")
    }
}

extension ConfigReader {
    /// `publish`: `{"s3": {"endpoint", "bucket", "prefix", "region", "pathStyle", "cacheControl"}}`.
    func publishTarget(_ value: Any) throws -> ObjectStoreTarget {
        let publish = try object(value, "publish", allowed: ["s3"])
        guard let s3Value = publish["s3"] else { throw fail("publish.s3", "an object (the only kind of store so far)") }
        let s3 = try object(s3Value, "publish.s3", allowed: ["endpoint", "bucket", "prefix", "region", "pathStyle", "cacheControl"])
        guard let bucket = try string(s3["bucket"], "publish.s3.bucket"), !bucket.isEmpty, !bucket.contains("/") else {
            throw fail("publish.s3.bucket", "a bucket name")
        }
        let endpoint = try string(s3["endpoint"], "publish.s3.endpoint")
        if let endpoint {
            let lower = endpoint.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URL(string: endpoint)?.host != nil else {
                throw fail("publish.s3.endpoint", "an http(s) URL such as https://s3.eu-west-1.amazonaws.com")
            }
        }
        let prefix = try string(s3["prefix"], "publish.s3.prefix") ?? ""
        if prefix.hasPrefix("/") { throw fail("publish.s3.prefix", "a key prefix without a leading slash, such as tv/") }
        let region = try string(s3["region"], "publish.s3.region") ?? "us-east-1"
        if region.isEmpty || region.contains(":") { throw fail("publish.s3.region", "a region name such as eu-west-1") }
        let cacheControl = try string(s3["cacheControl"], "publish.s3.cacheControl")
        if let cacheControl, cacheControl.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw fail("publish.s3.cacheControl", "one header value")
        }
        return ObjectStoreTarget(endpoint: endpoint, bucket: bucket, prefix: prefix, region: region,
                                 pathStyle: try bool(s3["pathStyle"], "publish.s3.pathStyle"), cacheControl: cacheControl)
    }
}
