#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLinuxCalls

/// Replacing files so that a crash leaves each one whole, old or new: the bytes go to a temporary
/// file in the same directory, are flushed to disk, the temporary file is renamed over the target,
/// and the directory is flushed so that the rename itself survives.
///
/// ```swift
/// try DurableFile.replace("/srv/feeds/index.html", with: Array("<html>…".utf8))
///
/// // Many files at once: stage each, one flush of the whole file system, then the renames.
/// let staged = DurableFile.temporaryPath(for: "/srv/feeds/a.ics")
/// try DurableFile.write(bytes, to: staged, sync: false)
/// try DurableFile.syncFileSystem(containing: "/srv/feeds")
/// try DurableFile.rename(staged, to: "/srv/feeds/a.ics")
/// try DurableFile.syncDirectory("/srv/feeds")
/// ```
public enum DurableFile {
    /// Where `replace` stages the new content of `path`: `.<name>.tmp-<pid>` beside it, so that
    /// a later run can tell a dead run's leftovers (`isTemporary`) from its own.
    public static func temporaryPath(for path: String) -> String {
        let (directory, name) = split(path)
        return directory + "/." + name + ".tmp-" + String(getpid())
    }

    /// Whether `name` (a file name, no directory) is a temporary file `temporaryPath` made, and
    /// the id of the process that made it.
    public static func temporaryOwner(ofName name: String) -> Int32? {
        guard name.hasPrefix("."), name.contains(".tmp-"), let last = name.split(separator: "-").last else { return nil }
        return Int32(last)
    }

    /// Replaces the file at `path` with `bytes`, durably (see the type's description).
    public static func replace(_ path: String, with bytes: [UInt8]) throws(FileError) {
        let temporary = temporaryPath(for: path)
        do {
            try write(bytes, to: temporary, sync: true)
            try rename(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
        try syncDirectory(split(path).directory)
    }

    /// Flushes an existing file written by someone else, renames it over `target` and flushes the
    /// directory: `replace` for a file that was streamed rather than held in memory.
    public static func moveIntoPlace(_ temporary: String, to target: String) throws(FileError) {
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: temporary, errno: errno) }
        let synced = fsync(fd) == 0
        let failure = errno
        close(fd)
        guard synced else { throw FileError(path: temporary, errno: failure) }
        try rename(temporary, to: target)
        try syncDirectory(split(target).directory)
    }

    /// Writes a new file (created or truncated), flushed to disk when `sync` is true.
    public static func write(_ bytes: [UInt8], to path: String, sync: Bool) throws(FileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(path: path, errno: errno) }
        guard bytes.withUnsafeBytes({ writeAll(fd, $0) }) else {
            let failure = errno
            close(fd)
            throw FileError(path: path, errno: failure)
        }
        if sync && fsync(fd) != 0 {
            let failure = errno
            close(fd)
            throw FileError(path: path, errno: failure)
        }
        guard close(fd) == 0 else { throw FileError(path: path, errno: errno) }
    }

    /// Renames `source` over `target` (atomic within one file system).
    public static func rename(_ source: String, to target: String) throws(FileError) {
        #if canImport(Glibc)
        let result = Glibc.rename(source, target)
        #else
        let result = Darwin.rename(source, target)
        #endif
        guard result == 0 else { throw FileError(path: target, errno: errno) }
    }

    /// Flushes a directory, so that the renames and creations in it survive a crash.
    public static func syncDirectory(_ directory: String) throws(FileError) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileError(path: directory, errno: errno) }
    }

    /// Flushes every file of the file system that holds `directory` with one `syncfs(2)`: cheaper
    /// than a flush per file when hundreds of small files were staged.
    public static func syncFileSystem(containing directory: String) throws(FileError) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: directory, errno: errno) }
        defer { close(fd) }
        guard syncfs(fd) == 0 else { throw FileError(path: directory, errno: errno) }
    }

    /// Starts writing `count` bytes of the open file `fd` from `offset` back to disk, without
    /// waiting for them (Linux's `sync_file_range`, `SYNC_FILE_RANGE_WRITE`): a file written in
    /// a stream and flushed at the end (`moveIntoPlace`) then overlaps its disk writes with
    /// the work that makes the next bytes, and the final flush waits for the last few only. Best
    /// effort: the flush is what makes the file durable.
    public static func startWriteBack(_ fd: Int32, offset: Int, count: Int) {
        #if os(Linux)
        _ = sync_file_range(fd, __off64_t(offset), __off64_t(count), 2 /* SYNC_FILE_RANGE_WRITE */)
        #endif
    }

    /// Writes all of `bytes` to the open file `fd`, retrying short writes and interrupted calls:
    /// the one write loop of the package. False when a write failed (`errno` says why).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var rest = bytes
        while !rest.isEmpty, let base = rest.baseAddress {
            #if canImport(Glibc)
            let n = Glibc.write(fd, base, rest.count)
            #else
            let n = Darwin.write(fd, base, rest.count)
            #endif
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
        return true
    }

    /// What a file is compared with before it is replaced.
    public enum Content {
        /// Bytes in memory.
        case bytes([UInt8])
        /// Another file (a staged temporary file, say).
        case file(String)
    }

    /// Whether the file at `path` exists and holds exactly `content`: the check that skips a write
    /// whose bytes would not change the file, so that it keeps its modification time. Sizes are
    /// compared first; then the bytes, in blocks, so memory stays constant for files of any size.
    public static func holds(_ path: String, _ content: Content) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A block of at most 64 KiB: a small feed is read with one small allocation.
        let blockSize = min(max(Int(info.st_size), 1), 1 << 16)
        var block = [UInt8](repeating: 0, count: blockSize)
        switch content {
        case .bytes(let bytes):
            guard Int(info.st_size) == bytes.count else { return false }
            var offset = 0
            while true {
                let count = readFully(fd, &block)
                guard count >= 0, count <= bytes.count - offset else { return false }
                if count == 0 { return offset == bytes.count }
                let same = bytes.withUnsafeBytes { memcmp(block, $0.baseAddress! + offset, count) == 0 }
                guard same else { return false }
                offset += count
            }
        case .file(let other):
            var otherInfo = stat()
            guard stat(other, &otherInfo) == 0, otherInfo.st_size == info.st_size else { return false }
            let otherFD = open(other, O_RDONLY | O_CLOEXEC)
            guard otherFD >= 0 else { return false }
            defer { close(otherFD) }
            var otherBlock = [UInt8](repeating: 0, count: blockSize)
            while true {
                let count = readFully(fd, &block), otherCount = readFully(otherFD, &otherBlock)
                guard count == otherCount, count >= 0 else { return false }
                if count == 0 { return true }
                guard memcmp(block, otherBlock, count) == 0 else { return false }
            }
        }
    }

    /// Fills `buffer` from `fd` (fewer bytes only at the end of the file); -1 when a read failed.
    private static func readFully(_ fd: Int32, _ buffer: inout [UInt8]) -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return -1 }
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}

/// A file operation that failed: the path and the system's reason.
public struct FileError: Error, Sendable, CustomStringConvertible {
    /// The file or directory the operation was about.
    public var path: String
    /// The `errno` value.
    public var code: Int32

    public init(path: String, errno code: Int32) {
        self.path = path
        self.code = code
    }

    /// The system's text for `code` ("No space left on device").
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(path): \(reason)" }
}
