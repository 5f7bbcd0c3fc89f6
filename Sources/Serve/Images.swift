import Fetch
import Foundation
import Hummingbird
import Listings
import NIOCore
import ObjectGraph
import Primitives

/// Where the pages point for a channel's logo and a programme's picture: paths of this server,
/// so that the Content-Security-Policy keeps `img-src 'self'` (no page loads anything from
/// elsewhere, and no viewer's address goes to the logo's host).
enum ImagePaths {
    static func logo(_ channel: GuidePages.ChannelRow) -> String { "/logos/" + GuidePages.channelSegment(channel) }

    static func programme(_ channel: GuidePages.ChannelRow, _ p: GuidePages.ProgrammeRow) -> String {
        "/pictures" + GuidePages.programmePath(channel, p).dropFirst("/programmes".count)
    }
}

/// Logos and pictures fetched once from the address the guide gives (`SmallDownload`: http or
/// https, at most `maxBytes`) and kept in memory by address; a failure is remembered for
/// `retryAfterFailure` seconds, so a dead host costs one attempt per ten minutes, not one per page.
/// Only PNG, JPEG, GIF and WebP are served (recognised by their first bytes, whatever the remote
/// server says): an SVG could carry script.
final class ImageCache: @unchecked Sendable {
    struct Image: Sendable {
        let body: ByteBuffer
        let type: String
        let etag: String
    }

    static let maxBytes: Int64 = 1 << 20
    static let maxEntries = 4096
    static let retryAfterFailure: Int64 = 600

    private let lock = NSLock()
    private var entries: [String: (image: Image?, at: Int64)] = [:]

    /// The image at `url`, fetched on first use (on the thread pool).
    func image(at url: String) async -> Image? {
        let now = Int64(Date().timeIntervalSince1970)
        if let known = lock.withLock({ entries[url] }), known.image != nil || now - known.at < Self.retryAfterFailure { return known.image }
        let image = try? await BlockingWork.run { () -> Image? in
            guard let bytes = SmallDownload.bytes(of: url, maxBytes: Self.maxBytes), let type = Self.imageType(bytes) else { return nil }
            var hash = FNV1a()
            hash.add(bytes)
            return Image(body: ByteBuffer(bytes: bytes), type: type, etag: "\"\(String(hash.value, radix: 16))-\(bytes.count)\"")
        }
        lock.withLock {
            if entries.count >= Self.maxEntries { entries.removeAll() }
            entries[url] = ((image ?? nil), now)
        }
        return image ?? nil
    }

    /// The media type of an image from its first bytes; nil for anything else.
    static func imageType(_ bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        return nil
    }
}

/// `/logos/CHANNEL` and `/pictures/CHANNEL/YYYYMMDDhhmmss[/CLUMP]`: the image the guide names
/// for a channel or a programme, from `ImageCache`, with an ETag and a day's caching.
struct ImagePages: Sendable {
    let state: ServeState

    func logo(_ request: Request) async throws -> Response {
        let raw = Routes.rest(of: request, after: 1)
        guard raw.utf8.count <= 3 * 1024, let id = RequestInput.percentDecoded(raw) else { return Pages.error(.notFound, "No such logo.") }
        let url = try await state.reads.read { context -> String? in
            let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string(id)), keys: ["icon"])
                ?? RequestInput.rowID(id).flatMap({ try context.object(ObjectID(entity: "Channel", rowID: $0), keys: ["icon"]) })
            return c?["icon"].stringValue
        }
        return await respond(request, url: url)
    }

    func picture(_ request: Request) async throws -> Response {
        guard let key = RequestInput.programmeKey(fromRawPath: Routes.rest(of: request, after: 1)) else { return Pages.error(.notFound, "No such picture.") }
        let url = try await state.reads.read { context -> String? in
            guard let c = try context.first("Channel", where: .compare("xmltvId", .equal, .string(key.channel)), keys: [])
                    ?? RequestInput.rowID(key.channel).flatMap({ try context.object(ObjectID(entity: "Channel", rowID: $0), keys: []) }) else { return nil }
            return try context.first("Programme", where: .and([.related("channel", c.id), .compare("start", .equal, .date(key.start)),
                                                               .compare("clumpIndex", .equal, .integer(Int64(key.clump)))]), keys: ["icon", "images"])
                .flatMap { ShownImage.programme(icon: $0["icon"].stringValue, images: $0["images"].stringValue) }
        }
        return await respond(request, url: url)
    }

    /// A transparent pixel: what a page shows for an image the guide names but that could not be
    /// fetched (the name beside a logo says it all; a broken-image icon would only get in the way).
    static let blank: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0B, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0x60, 0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0x7A, 0x5E, 0xAB, 0x3F, 0x00, 0x00, 0x00, 0x00,
        0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]

    func respond(_ request: Request, url: String?) async -> Response {
        guard let url, !url.isEmpty else { return Pages.error(.notFound, "No picture: the guide names none.") }
        guard let image = await state.images.image(at: url) else {
            // Asked again after the cache's retry time, when the host may be back.
            return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: "public, max-age=\(ImageCache.retryAfterFailure)"],
                            body: .init(byteBuffer: ByteBuffer(bytes: Self.blank)))
        }
        let headers: HTTPFields = [.contentType: image.type, .eTag: image.etag, .cacheControl: "public, max-age=86400"]
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { RequestInput.sameTag($0, image.etag) }) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: image.body))
    }
}
