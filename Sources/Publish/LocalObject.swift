import Foundation
import Primitives

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
    /// there is one (published under its file name).
    public static func collect(feedDirectory: String, guide: String? = nil) throws(PublishError) -> [LocalObject] {
        try scan(feedDirectory: feedDirectory, guide: guide).objects
    }

    /// What is published from an export directory, and what is not and why. Only regular files
    /// (`lstat`: no symbolic link, directory, FIFO or device) named as the exporter names them
    /// (`FeedFileName`) are taken: `ln -s /etc/passwd feeds/passwd.ics` is skipped, never read.
    /// Hidden files (the exporter's own state and temporary files) are passed over in silence.
    public static func scan(feedDirectory: String, guide: String? = nil) throws(PublishError) -> (objects: [LocalObject], skipped: [SkippedFile]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: feedDirectory)
        } catch {
            throw PublishError(.localFile, "\(feedDirectory): cannot list the feed directory: \(error.localizedDescription)")
        }
        var objects: [LocalObject] = []
        var skipped: [SkippedFile] = []
        // The XMLTV export may be written into the feed directory: it goes up as the guide.
        let guidePath = guide.map { ($0 as NSString).standardizingPath }
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = feedDirectory + "/" + name
            if (path as NSString).standardizingPath == guidePath { continue }
            guard FeedFileName.isExporterName(name) else {
                skipped.append(SkippedFile(name: name, reason: "not a file tvimport writes"))
                continue
            }
            if let reason = notRegular(path) {
                skipped.append(SkippedFile(name: name, reason: reason))
                continue
            }
            objects.append(LocalObject(name: name, path: path, kind: name == "index.html" ? .index : .feed))
        }
        if let guide, FileManager.default.fileExists(atPath: guide) || isSymbolicLink(guide) {
            let name = (guide as NSString).lastPathComponent
            if let reason = notRegular(guide) {
                skipped.append(SkippedFile(name: guide, reason: reason))
            } else {
                objects.append(LocalObject(name: name, path: guide, kind: name.hasSuffix(".gz") ? .gzippedGuide : .guide))
            }
        }
        return (objects, skipped)
    }

    /// Why `path` is not a regular file of its own (`lstat`), or nil when it is one.
    static func notRegular(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "cannot be read: \(String(cString: strerror(errno)))" }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a directory"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a regular file"
        }
    }

    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// Opens a file for reading only if it is a regular file and not a symbolic link, checked on
    /// the descriptor itself (`O_NOFOLLOW`, then `fstat`): a link swapped in after `scan` is not
    /// followed, and a FIFO put in its place cannot block the open.
    static func openRegularFile(_ path: String) throws(PublishError) -> UnsafeMutablePointer<FILE> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw PublishError(.localFile, "\(path): cannot be read: \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let file = fdopen(fd, "rb") else {
            close(fd)
            throw PublishError(.localFile, "\(path): not a regular file: not published")
        }
        return file
    }
}

/// A file of the export directory that publish leaves alone, and why.
public struct SkippedFile: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var reason: String
    public var description: String { "\(name) (\(reason))" }
}
