import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// the design's (docs/design.md#models-from-modules) Song/Artist split into two modules, each with a placeholder of the other's entity.
enum Music {
    static let songs = ModelModule("Songs", entities: [
        EntityDescription("Song", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("duration", .double),
        ], relationships: [
            .toOne("artist", "Artist", inverse: "songs", deleteRule: .nullify),
        ]),
        .placeholder("Artist", relationships: [
            .toMany("songs", "Song", inverse: "artist", deleteRule: .cascade),
        ]),
    ])

    static let artists = ModelModule("Artists", entities: [
        EntityDescription("Artist", attributes: [
            AttributeDescription("name", .string),
        ], relationships: [
            .toMany("songs", "Song", inverse: "artist", deleteRule: .cascade),
        ]),
        .placeholder("Song", relationships: [
            .toOne("artist", "Artist", inverse: "songs", deleteRule: .nullify),
        ]),
    ])

    /// Adds pictures to Artist without the Artists module knowing: the inverse lives only in this
    /// module's placeholder, which also contributes a local attribute.
    static let pictures = ModelModule("Pictures", entities: [
        EntityDescription("Picture", attributes: [
            AttributeDescription("url", .string),
        ], relationships: [
            .toOne("artist", "Artist", inverse: "pictures", deleteRule: .nullify),
        ]),
        .placeholder("Artist", attributes: [
            AttributeDescription("pictureCount", .integer, optional: false, default: .integer(0)),
        ], relationships: [
            .toMany("pictures", "Picture", inverse: "artist", deleteRule: .cascade),
        ]),
    ])
}

/// A small TV guide: lineups deny deletion while they hold channels, channels own their
/// programmes, programmes own their credits, genres are nullified.
enum Guide {
    static let module = ModelModule("Guide", entities: [
        EntityDescription("Lineup", attributes: [AttributeDescription("name", .string)], relationships: [
            .toMany("channels", "Channel", inverse: "lineup", deleteRule: .deny),
        ]),
        EntityDescription("Channel", identifier: ["id"], attributes: [
            AttributeDescription("id", .string, optional: false),
            AttributeDescription("name", .string),
            AttributeDescription("programmeCount", .integer, optional: false, default: .integer(0)),
            AttributeDescription("changedAt", .date),
        ], relationships: [
            .toOne("lineup", "Lineup", inverse: "channels", deleteRule: .nullify),
            .toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade),
        ]),
        EntityDescription("Programme", attributes: [
            AttributeDescription("title", .string),
            AttributeDescription("start", .date),
        ], relationships: [
            .toOne("channel", "Channel", inverse: "programmes", deleteRule: .nullify),
            .toOne("genre", "Genre", inverse: "programmes", deleteRule: .nullify),
            .toMany("credits", "Credit", inverse: "programme", deleteRule: .cascade),
        ]),
        EntityDescription("Credit", attributes: [AttributeDescription("person", .string)], relationships: [
            .toOne("programme", "Programme", inverse: "credits", deleteRule: .nullify),
            .toMany("awards", "Award", inverse: "credit", deleteRule: .deny),
        ]),
        EntityDescription("Award", attributes: [AttributeDescription("name", .string)], relationships: [
            .toOne("credit", "Credit", inverse: "awards", deleteRule: .nullify),
        ]),
        EntityDescription("Genre", attributes: [AttributeDescription("name", .string)], relationships: [
            .toMany("programmes", "Programme", inverse: "genre", deleteRule: .nullify),
        ]),
    ])

    static func model() throws -> ObjectModel { try ObjectModel(merging: [module]) }
    static func store() throws -> Store { try Store.inMemory(model: model()) }
}

/// Collects every batch a context hands its observers.
final class RecordingObserver: ContextObserver, @unchecked Sendable {
    var batches: [ChangeBatch] = []
    var saves = 0
    var rollbacks = 0
    func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws { batches.append(changes) }
    func contextDidSave(_ summary: ChangeSummary) { saves += 1 }
    func contextDidRollBack() { rollbacks += 1 }

    var inserted: [ObjectChange] { batches.flatMap(\.inserted) }
    var updated: [ObjectChange] { batches.flatMap(\.updated) }
    var deleted: [ObjectChange] { batches.flatMap(\.deleted) }
    var relationshipChanges: [RelationshipChange] { batches.flatMap(\.relationshipChanges) }
    func reset() { batches = [] }
}

/// A path in a fresh temporary directory, removed by `cleanUp()`.
struct TemporaryDatabase {
    let directory: URL
    var path: String { directory.appendingPathComponent("test.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}

