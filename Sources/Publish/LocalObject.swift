import Foundation

/// What a published file is, which decides its Content-Type, its default Cache-Control and when
/// it goes up (feeds and the XMLTV export before the index that links them).
public enum ObjectKind: Sendable, Hashable {
    case feed, index, guide, gzippedGuide

    public var contentType: String {
        switch self {
        case .feed: "text/calendar; charset=utf-8"
        case .index: "text/html; charset=utf-8"
        case .guide: "application/xml"
        case .gzippedGuide: "application/gzip"
        }
    }

    /// Feeds change once a night and calendar apps poll every few hours: an hour in any cache.
    /// The index is short-lived so that a new channel's link shows soon after its feed is up.
    public var defaultCacheControl: String {
        switch self {
        case .index: "public, max-age=300"
        case .feed, .guide, .gzippedGuide: "public, max-age=3600"
        }
    }
}

/// One local file to publish under `name` (the key without the target's prefix).
public struct LocalObject: Sendable, Hashable {
    public var name: String
    public var path: String
    public var kind: ObjectKind

    public init(name: String, path: String, kind: ObjectKind) {
        self.name = name
        self.path = path
        self.kind = kind
    }

    /// The feeds (`*.ics`) and `index.html` of an export directory, and the XMLTV export when
    /// there is one (published under its file name). Hidden files (the exporter's own state and
    /// temporary files) are never published.
    public static func collect(feedDirectory: String, guide: String? = nil) throws(PublishError) -> [LocalObject] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: feedDirectory)
        } catch {
            throw PublishError(.localFile, "\(feedDirectory): cannot list the feed directory: \(error.localizedDescription)")
        }
        var objects: [LocalObject] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            if name.hasSuffix(".ics") {
                objects.append(LocalObject(name: name, path: feedDirectory + "/" + name, kind: .feed))
            } else if name == "index.html" {
                objects.append(LocalObject(name: name, path: feedDirectory + "/" + name, kind: .index))
            }
        }
        if let guide, FileManager.default.fileExists(atPath: guide) {
            let name = (guide as NSString).lastPathComponent
            objects.append(LocalObject(name: name, path: guide, kind: name.hasSuffix(".gz") ? .gzippedGuide : .guide))
        }
        return objects
    }
}
