import CCurl
import Foundation

/// Downloads XMLTV sources politely and fails closed: a `.downloaded` outcome is a complete body
/// that looks like XMLTV; any failure throws and leaves nothing behind in the cache directory.
public struct Fetcher: Sendable {
    /// Where temporary downloads are created, so that the caller can rename them into the cache.
    public let cacheDirectory: String

    public init(cacheDirectory: String) {
        self.cacheDirectory = cacheDirectory
    }

    /// Fetches `request.url`, blocking until done, retried or failed.
    public func fetch(_ request: FetchRequest) throws(FetchError) -> FetchOutcome {
        switch SourceAddress(request.url) {
        case .local(let path):
            return try LocalSource(path: path, request: request).fetch()
        case .remote(let url):
            return try RemoteSource(url: url, request: request, directory: cacheDirectory).fetch()
        case .unsupported(let reason):
            throw FetchError(kind: .transport, url: request.url, cause: reason)
        }
    }
}

extension FetchError {
    /// Builds the one-line message from the URL (without credentials) and the cause.
    init(kind: Kind, url: String, cause: String) {
        self.init(kind: kind, url: url, message: "\(Self.displayed(url)): \(cause)")
    }

    /// The URL with any `user:password@` removed: messages end up in logs and cron mail.
    static func displayed(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + String(rest[rest.index(after: at)...])
    }
}

/// What a request's URL string names.
enum SourceAddress: Equatable {
    case local(path: String)
    case remote(url: String)
    case unsupported(reason: String)

    init(_ text: String) {
        guard let separator = text.range(of: "://") else {
            self = .local(path: text)
            return
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        switch scheme {
        case "http", "https":
            self = .remote(url: text)
        case "file":
            guard let url = URL(string: text), url.isFileURL else {
                self = .unsupported(reason: "not a valid file URL")
                return
            }
            if let host = url.host, !host.isEmpty, host != "localhost" {
                self = .unsupported(reason: "file URLs on another host (\(host)) are not supported")
                return
            }
            self = .local(path: url.path)
        default:
            self = .unsupported(reason: "unsupported URL scheme \"\(scheme)\" (use http, https, file or a path)")
        }
    }
}

/// A local file: read in place, never copied, never deleted.
struct LocalSource {
    var path: String
    var request: FetchRequest

    func fetch() throws(FetchError) -> FetchOutcome {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FetchError(kind: .notFound, url: request.url, cause: "no such file")
        }
        if isDirectory.boolValue {
            throw FetchError(kind: .notFound, url: request.url, cause: "is a directory, not a file")
        }
        guard let file = fopen(path, "rb") else {
            let reason = String(cString: strerror(errno))
            throw FetchError(kind: .notFound, url: request.url, cause: "cannot be read: \(reason)")
        }
        defer { fclose(file) }

        var hash = ContentHash()
        var head: [UInt8] = []
        var bytes: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = fread(buffer.baseAddress, 1, buffer.count, file)
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hash.update(chunk)
            if head.count < ContentSniffer.headLength {
                head.append(contentsOf: chunk.prefix(ContentSniffer.headLength - head.count))
            }
            bytes += Int64(count)
        }
        if ferror(file) != 0 {
            throw FetchError(kind: .notFound, url: request.url, cause: "cannot be read: read error")
        }

        let compression: Compression
        switch ContentSniffer.verdict(forHead: head) {
        case .accepted(let found): compression = found
        case .rejected(let reason):
            throw FetchError(kind: .notXMLTV, url: request.url, cause: "file holds " + reason)
        }
        if !request.force, let previous = request.previousContentHash, previous == hash.hex {
            return .notModified
        }
        return .downloaded(Download(
            file: path, validators: HTTPValidators(), contentHash: hash.hex, bytes: bytes,
            compression: compression, isLocal: true))
    }
}
