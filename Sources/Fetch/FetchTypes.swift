// The public vocabulary of the Fetch module: what to fetch, how politely, and what came of it.

/// The response headers that let the next run ask "has it changed?" (conditional GET).
public struct HTTPValidators: Sendable, Hashable, Codable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// True when there is nothing to send.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// Limits and manners of one download.
public struct FetchPolicy: Sendable {
    public static let defaultUserAgent =
        "tvimport/0.1 (+https://github.com/tvimport/tvimport; nightly XMLTV importer)"

    public var userAgent: String
    /// Largest body accepted, after content decoding.
    public var maxBytes: Int64
    /// Seconds allowed to establish a connection.
    public var connectTimeout: Double
    /// A transfer slower than `lowSpeedLimit` bytes/s for `lowSpeedTime` seconds is abandoned.
    public var lowSpeedLimit: Int
    public var lowSpeedTime: Int
    /// Redirects followed, only to http and https.
    public var maxRedirects: Int
    /// Further attempts after the first one, for transient failures only.
    public var retries: Int
    /// Seconds for all attempts including the waits between them.
    public var totalBudget: Double
    /// First wait between attempts in seconds, doubled each retry; a `Retry-After` replaces it.
    public var initialBackoff: Double

    public init(
        userAgent: String = FetchPolicy.defaultUserAgent,
        maxBytes: Int64 = 1 << 30,
        connectTimeout: Double = 20,
        lowSpeedLimit: Int = 1000,
        lowSpeedTime: Int = 30,
        maxRedirects: Int = 5,
        retries: Int = 3,
        totalBudget: Double = 600,
        initialBackoff: Double = 2
    ) {
        self.userAgent = userAgent
        self.maxBytes = maxBytes
        self.connectTimeout = connectTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.maxRedirects = maxRedirects
        self.retries = retries
        self.totalBudget = totalBudget
        self.initialBackoff = initialBackoff
    }
}

/// One source to fetch.
public struct FetchRequest: Sendable {
    /// `http://`, `https://`, `file://` or a local path.
    public var url: String
    /// Validators of the copy the caller already has; sent as If-None-Match / If-Modified-Since.
    public var validators: HTTPValidators?
    /// Content hash of the copy the caller already has; an identical body is `.notModified`.
    public var previousContentHash: String?
    /// Download and return the body even when the caller's copy looks current.
    public var force: Bool
    public var policy: FetchPolicy

    public init(
        url: String,
        validators: HTTPValidators? = nil,
        previousContentHash: String? = nil,
        force: Bool = false,
        policy: FetchPolicy = FetchPolicy()
    ) {
        self.url = url
        self.validators = validators
        self.previousContentHash = previousContentHash
        self.force = force
        self.policy = policy
    }
}

/// How the downloaded bytes are packed (after any HTTP content decoding, which curl does).
public enum Compression: String, Sendable, Hashable, Codable {
    case none, gzip, xz
}

/// A body that passed every check.
public struct Download: Sendable {
    /// A temporary file in the cache directory: the caller renames or deletes it.
    /// For a local source (`isLocal`) it is the source itself: never delete it.
    public var file: String
    public var validators: HTTPValidators
    /// Hex FNV-1a 64 of the bytes: detects identical re-downloads, it is not a security hash.
    public var contentHash: String
    public var bytes: Int64
    public var compression: Compression
    /// True when `file` is the caller's own local file rather than a temporary copy.
    public var isLocal: Bool

    public init(
        file: String, validators: HTTPValidators, contentHash: String, bytes: Int64,
        compression: Compression, isLocal: Bool = false
    ) {
        self.file = file
        self.validators = validators
        self.contentHash = contentHash
        self.bytes = bytes
        self.compression = compression
        self.isLocal = isLocal
    }
}

public enum FetchOutcome: Sendable {
    /// 304, or a body identical to `previousContentHash` (unless forced). Nothing is left on disk.
    case notModified
    case downloaded(Download)
}

/// Why a source could not be fetched. Nothing is left on disk when one is thrown.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A local file is missing or unreadable (exit 66).
        case notFound
        /// The server answered with an error status.
        case http(status: Int)
        /// Connection, TLS, DNS or local I/O failure.
        case transport
        /// The body is over `maxBytes`.
        case tooLarge
        /// The transfer ended before the whole body arrived.
        case truncated
        /// The body is an HTML page, empty, or otherwise not XMLTV.
        case notXMLTV
        /// A redirect to a scheme other than http/https, or too many redirects.
        case redirectRefused
        /// Connect timeout, low-speed abort or the total budget ran out.
        case timeout
    }

    public var kind: Kind
    public var url: String
    /// One line naming the URL and the cause.
    public var message: String

    public init(kind: Kind, url: String, message: String) {
        self.kind = kind
        self.url = url
        self.message = message
    }

    public var description: String { message }
}
