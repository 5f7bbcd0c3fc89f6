import Foundation

/// Where the feeds are published: one bucket (and key prefix) of an S3-compatible store.
public struct ObjectStoreTarget: Sendable, Hashable {
    /// `https://host[:port]` of the store; AWS's regional endpoint when the config gives none.
    public var endpoint: String
    public var bucket: String
    /// Prepended to every key, for example `tv/`.
    public var prefix: String
    /// The SigV4 signing region (`us-east-1` for most S3-compatible stores that ignore it).
    public var region: String
    /// `endpoint/bucket/key` (MinIO, Ceph, Garage, most self-hosted stores) rather than
    /// `bucket.endpoint/key` (AWS's default).
    public var pathStyle: Bool
    /// Replaces the per-kind Cache-Control (see `ObjectKind.defaultCacheControl`) for every object.
    public var cacheControl: String?

    public init(endpoint: String? = nil, bucket: String, prefix: String = "", region: String = "us-east-1",
                pathStyle: Bool? = nil, cacheControl: String? = nil) {
        self.endpoint = endpoint ?? "https://s3.\(region).amazonaws.com"
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        // A store of one's own usually has no per-bucket host names: path style unless it is AWS.
        self.pathStyle = pathStyle ?? (endpoint != nil)
        self.cacheControl = cacheControl
    }

    /// "bucket 'feeds' at https://host": how messages name the target.
    public var displayName: String { "bucket '\(bucket)' at \(endpoint)" }

    /// The full key of a published file name.
    func key(for name: String) -> String { prefix + name }

    /// The URL of one object (`key` already prefixed).
    func objectURL(key: String) -> String {
        base() + "/" + Self.encodePath(key)
    }

    /// The ListObjectsV2 URL. libcurl 7.88 signs the query as it is given, so the parameters are
    /// written in the sorted, fully encoded form SigV4's canonical request needs.
    func listURL(continuationToken: String?) -> String {
        var query: [String] = []
        if let continuationToken { query.append("continuation-token=" + Self.encodeQueryValue(continuationToken)) }
        query.append("list-type=2")
        if !prefix.isEmpty { query.append("prefix=" + Self.encodeQueryValue(prefix)) }
        return base() + (pathStyle ? "" : "/") + "?" + query.joined(separator: "&")
    }

    /// Scheme, host and, path-style, the bucket: no trailing slash.
    private func base() -> String {
        var trimmed = endpoint
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        if pathStyle { return trimmed + "/" + Self.encodePath(bucket) }
        guard let separator = trimmed.range(of: "://") else { return bucket + "." + trimmed }
        return String(trimmed[..<separator.upperBound]) + bucket + "." + String(trimmed[separator.upperBound...])
    }

    /// SigV4's URI encoding: every byte but the unreserved ones as %XX; `/` kept in paths.
    static func encodePath(_ text: String) -> String { encode(text, keepSlash: true) }
    static func encodeQueryValue(_ text: String) -> String { encode(text, keepSlash: false) }

    private static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += byte < 16 ? "%0" + hex : "%" + hex
            }
        }
        return out
    }
}

/// The standard AWS credentials, from the environment only (never from the config file).
public struct ObjectStoreCredentials: Sendable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the optional AWS_SESSION_TOKEN.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(PublishError) -> ObjectStoreCredentials
    {
        let id = environment["AWS_ACCESS_KEY_ID"] ?? ""
        let secret = environment["AWS_SECRET_ACCESS_KEY"] ?? ""
        let missing = [id.isEmpty ? "AWS_ACCESS_KEY_ID" : nil, secret.isEmpty ? "AWS_SECRET_ACCESS_KEY" : nil].compactMap { $0 }
        guard missing.isEmpty else {
            throw PublishError(.configuration, "publishing needs the environment variable\(missing.count > 1 ? "s" : "") \(missing.joined(separator: " and ")) (credentials are never read from the config file)")
        }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return ObjectStoreCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// Names the key id only: the secret and the token must never reach a log.
    public var description: String { "credentials of access key \(accessKeyID)" }
}

/// Why a publish failed. Messages name the target and the cause, never a secret.
public struct PublishError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Missing credentials or an unusable target (exit 78).
        case configuration
        /// A local file could not be read (exit 66).
        case localFile
        /// The store refused or could not be reached (exit 69).
        case store
        /// The publish state could not be written (exit 73).
        case state
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
