import Foundation
import Listings
import ObjectGraph
import Primitives
import XMLTV

/// A guide that can be read only once, as it arrives: a command's standard output.
public struct GuideStream: Sendable {
    /// Opens the stream for the reader (a pipe, for example /dev/fd/N).
    public var path: String
    /// How messages name it, for example "the output of tv_grab_uk_freeview".
    public var name: String

    public init(path: String, name: String) {
        self.path = path
        self.name = name
    }
}

/// Imports a stream as one source in one transaction, merging channel by channel while the bytes
/// arrive. The bytes are also appended to a temporary file as they pass, and read from there only
/// when the guide turns out not to be grouped by channel (it is then staged, as a file would be;
/// the command cannot be asked for its output twice). `beforeCommit` runs inside the transaction
/// once the whole stream is read and merged: it throws to refuse the import (the command failed,
/// or its output is the same as last time), and nothing is written.
public func importGuide(into store: Store, stream: GuideStream, options: ImportOptions, dryRun: Bool,
                        overwritable: [String: Set<String>] = [:], beforeCommit: () throws -> Void) throws -> SourceImportReport {
    StagedGuide.removeLeftovers()
    let copy = try StreamCopy()
    let observer = options.reader.inputObserver
    var streaming = options
    streaming.reader.inputObserver = { bytes in
        observer?(bytes)
        copy.append(bytes)
    }
    let rename = { (file: String) in file == stream.path || file == copy.path ? stream.name : file }
    do {
        var report = try importGuide(into: store, readable: [stream.path], options: streaming, dryRun: dryRun, overwritable: overwritable,
                                     reread: {
                                         try copy.appendRest(of: stream, observer: observer)
                                         var again = options
                                         again.reader.inputObserver = nil
                                         return ([copy.path], again)
                                     }, beforeCommit: beforeCommit)
        for i in report.warnings.indices {
            if let file = report.warnings[i].file { report.warnings[i].file = rename(file) }
        }
        return report
    } catch ImportError.badInput(var error) {
        error.file = rename(error.file)
        throw ImportError.badInput(error)
    }
}

/// The bytes of a stream as they passed, in a temporary file named like a staging file (so a
/// killed run's copy is removed the same way). A failed write only matters if the copy is read.
final class StreamCopy: @unchecked Sendable {
    let path = StagedGuide.temporaryPath(suffix: "stream")
    private let descriptor: Int32
    private var failure: Int32 = 0

    init() throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ImportError.cannotWrite("cannot create the temporary copy \(path) of a stream: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Called on the reading thread only.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == 0 else { return }
        if !DurableFile.writeAll(descriptor, bytes) { failure = errno }
    }

    /// Reads the rest of `stream` (what the first reading left) into the copy.
    func appendRest(of stream: GuideStream, observer: (@Sendable (UnsafeRawBufferPointer) -> Void)?) throws {
        let source = open(stream.path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else {
            throw ImportError.badInput(XMLTVError(file: stream.name, message: "cannot read: \(String(cString: strerror(errno)))"))
        }
        defer { close(source) }
        let size = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let got = read(source, buffer, size)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw ImportError.badInput(XMLTVError(file: stream.name, message: "cannot read: \(String(cString: strerror(errno)))"))
            }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: got)
            observer?(bytes)
            append(bytes)
        }
        guard failure == 0 else {
            throw ImportError.cannotWrite("cannot write the temporary copy \(path) of \(stream.name): \(String(cString: strerror(failure)))")
        }
    }
}
