import Foundation
import Primitives

/// What tvimport last put in the store, per key: the MD5 the store holds (its ETag), and the
/// local file's size and modification time then, so that an unchanged file is not even read again.
/// Kept in a JSON file of the fetch cache, apart from the database and the feeds.
struct PublishState: Codable, Equatable {
    struct Object: Codable, Equatable {
        var md5: String
        var size: Int64
        /// Nanoseconds since 1970 of the local file's mtime when it was uploaded.
        var modified: Int64
    }

    /// The target the objects were put in: a state of another bucket or prefix is not this one's.
    var target: String
    var objects: [String: Object] = [:]

    static func identity(of target: ObjectStoreTarget) -> String {
        "\(target.endpoint) \(target.bucket) \(target.prefix)"
    }

    /// The state of `target`, or nil when there is none (first run, other target, unreadable file).
    static func load(path: String, target: ObjectStoreTarget) -> PublishState? {
        guard let data = FileManager.default.contents(atPath: path),
              let state = try? JSONDecoder().decode(PublishState.self, from: data),
              state.target == identity(of: target) else { return nil }
        return state
    }

    /// Replaced durably (`DurableFile`), so that a crash leaves the old state or the new one.
    func save(path: String) throws(PublishError) {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            var text = JSONText(escapingSlashes: true)
            try text.append(encoding: self)
            try DurableFile.replace(path, with: text.bytes)
        } catch let error as FileError {
            throw PublishError(.state, "cannot write the publish state \(path): \(error.reason)")
        } catch {
            throw PublishError(.state, "cannot write the publish state \(path): \(error.localizedDescription)")
        }
    }
}
