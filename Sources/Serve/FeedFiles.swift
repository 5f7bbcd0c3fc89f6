import Foundation
import Primitives
import Hummingbird

/// The files of the feed directory as `serve` hands them out: each read, hashed and gzipped once
/// when it changes (its inode, size or mtime), then served from memory. A 304 costs one `stat`;
/// a 200, no copy and no compression per request.
///
///     let feeds = FeedFiles(directory: "/var/www/tv")
///     if let entry = try await feeds.entry("bbc1.uk.ics") { print(entry.etag) }
///
/// Only regular files directly inside the directory, named like the exporter names them
/// (`FeedFiles.servableName`), are ever opened: a request path is decoded once and checked, never
/// joined blindly to the directory.
public final class FeedFiles: @unchecked Sendable {
    /// One file as served.
    public struct Entry: Sendable {
        public let body: ByteBuffer
        /// The gzip form, when it is smaller.
        public let gzipBody: ByteBuffer?
        /// Strong validators, one per representation.
        public let etag: String
        public let gzipETag: String
        public let lastModified: Int64
        /// `lastModified` as an HTTP date, made once.
        public let lastModifiedText: String
        /// The response headers of each representation (`FeedFiles.ResponseHeaders`), made once:
        /// a request's 304 or 200 copies them, writing nothing. The gzip form's 304 carries no
        /// Content-Encoding (RFC 9110 15.4.5: no representation metadata beyond the validators and
        /// caching fields), its 200 does.
        public let headers: HTTPFields
        public let gzipHeaders: HTTPFields
        public let gzipBodyHeaders: HTTPFields
        let identity: FileIdentity
    }

    /// Makes the response headers of a file's representation (its name, its ETag, its
    /// Last-Modified), once per content; Content-Encoding is added here where it belongs.
    public typealias ResponseHeaders = @Sendable (_ name: String, _ etag: String, _ lastModified: String) -> HTTPFields

    struct FileIdentity: Equatable {
        let inode: UInt64, size: Int64, mtime: Int64, mtimeNanoseconds: Int64
    }

    public let directory: String
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// Held while a file is read and compressed (rare: once per change of a file).
    private let loading = NSLock()

    /// Called each time a file is compressed (once per new content; `/metrics` counts them).
    private let onCompress: @Sendable () -> Void

    private let responseHeaders: ResponseHeaders

    public init(directory: String, onCompress: @escaping @Sendable () -> Void = {},
                responseHeaders: @escaping ResponseHeaders = { _, etag, lastModified in [.eTag: etag, .lastModified: lastModified] }) {
        self.directory = directory
        self.onCompress = onCompress
        self.responseHeaders = responseHeaders
    }

    /// A file name the exporter may write (`FeedFileName`, the rule `publish` keeps too).
    public static func servableName(_ name: String) -> Bool { FeedFileName.isExporterName(name) }

    /// The raw (still percent-encoded) rest of a request path after `/feeds/`, decoded once:
    /// nil when it does not name a servable file (RequestInput.swift).
    public static func fileName(fromRawPath raw: Substring) -> String? { RequestInput.feedFileName(fromRawPath: raw) }

    /// The current entry of `name`, reloaded if the file changed; nil when it is not there (or
    /// not a regular file: a symbolic link is not followed out of the directory).
    ///
    /// An unchanged file costs one `lstat` where the request is handled (every 304, and every 200
    /// after the first). Reading, hashing and compressing a changed file block, so they run on the
    /// thread pool (BlockingWork.swift), one file at a time: requests that arrive while a file
    /// loads wait for that load instead of compressing it again.
    public func entry(_ name: String) async throws -> Entry? {
        precondition(Self.servableName(name))
        guard let identity = identity(of: name) else {
            lock.withLock { _ = entries.removeValue(forKey: name) }
            return nil
        }
        if let known = lock.withLock({ entries[name] }), known.identity == identity { return known }
        return try await BlockingWork.run { self.load(name) }
    }

    /// The entry of `name` when it is loaded and the file has not changed since (one `lstat`),
    /// else nil: what the event loop may answer from without blocking (FeedFastPath).
    func loadedEntry(_ name: String) -> Entry? {
        guard let identity = identity(of: name), let known = lock.withLock({ entries[name] }), known.identity == identity else { return nil }
        return known
    }

    /// Whether `name` is a regular file of the directory now (one `lstat`; nothing is read).
    public func contains(_ name: String) -> Bool {
        Self.servableName(name) && identity(of: name) != nil
    }

    private func identity(of name: String) -> FileIdentity? {
        var info = stat()
        guard lstat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileIdentity(inode: UInt64(info.st_ino), size: Int64(info.st_size),
                            mtime: Int64(info.st_mtim.tv_sec), mtimeNanoseconds: Int64(info.st_mtim.tv_nsec))
    }

    /// Reads `name` into a new entry (on a pool thread). The gzip form is made once per content:
    /// a file rewritten with the same bytes (the same ETag) keeps the compressed body it had.
    private func load(_ name: String) -> Entry? {
        loading.withLock {
            guard let identity = identity(of: name) else { return nil }
            let previous = lock.withLock { entries[name] }
            if let previous, previous.identity == identity { return previous }   // loaded while this one waited
            // The exporter replaces feeds by rename, so a file read now is whole.
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return nil }
            let bytes = [UInt8](data)
            // A content hash for the ETag (Primitives' FNV-1a: tells content apart, not a security boundary).
            var hash = FNV1a()
            hash.add(bytes)
            let tag = "\"\(String(hash.value, radix: 16))-\(bytes.count)"
            let gzipBody: ByteBuffer?
            if let previous, previous.etag == tag + "\"" {
                gzipBody = previous.gzipBody
            } else {
                gzipBody = GzipDeflater.gzip(bytes, level: 9).flatMap { $0.count < bytes.count ? ByteBuffer(bytes: $0) : nil }
                onCompress()
            }
            let etag = tag + "\"", gzipETag = tag + "-gz\"", lastModifiedText = HTTPDate.format(identity.mtime)
            let gzipHeaders = responseHeaders(name, gzipETag, lastModifiedText)
            var gzipBodyHeaders = gzipHeaders
            gzipBodyHeaders[.contentEncoding] = "gzip"
            let entry = Entry(body: ByteBuffer(bytes: bytes), gzipBody: gzipBody, etag: etag, gzipETag: gzipETag,
                              lastModified: identity.mtime, lastModifiedText: lastModifiedText,
                              headers: responseHeaders(name, etag, lastModifiedText),
                              gzipHeaders: gzipHeaders, gzipBodyHeaders: gzipBodyHeaders, identity: identity)
            lock.withLock { entries[name] = entry }
            return entry
        }
    }

    /// The names currently servable in the directory.
    public func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter(Self.servableName).sorted()
    }
}
