import Feeds
import Foundation
import ObjectGraph
import Primitives

/// The titles of the programmes that have not ended, each once: what `/search` compares a query
/// with and what `/shows/SLUG.ics` finds its title among. Read once per minute and database
/// state (`GridCache.stamp`), not for every request: reading them means reading every programme
/// (no index serves "not ended": docs/design.md, "User contract", retention), 0.3 s on a guide of
/// half a million programmes, which a client asking for searches or shows nobody has could
/// otherwise make the server spend at will.
final class UpcomingTitles: @unchecked Sendable {
    /// One reading: the titles in the order first met, their lower-case forms, and (made when a
    /// show is first asked for) the titles by show slug.
    final class Reading: @unchecked Sendable {
        let key: String
        let titles: [String]
        let lowercased: [String]
        private let lock = NSLock()
        private var slugs: [String: String]?

        init(key: String, titles: [String]) {
            self.key = key
            self.titles = titles
            lowercased = titles.map { $0.lowercased() }
        }

        /// The titles that contain `needle` (lower case), as search compares them.
        func containing(_ needle: String) -> [String] {
            titles.indices.filter { lowercased[$0].contains(needle) }.map { titles[$0] }
        }

        /// The title whose show slug (`ShowFeed.slug(for:)`) is `slug`.
        func title(forSlug slug: String) -> String? {
            lock.withLock {
                if slugs == nil {
                    slugs = Dictionary(titles.map { (ShowFeed.slug(for: $0), $0) }, uniquingKeysWith: { first, _ in first })
                }
                return slugs?[slug]
            }
        }
    }

    private let lock = NSLock()
    private var last: Reading?

    /// The titles of what has not ended at `now`, read again when the minute or the database changed.
    func reading(database: String, now: Int64, reads: StoreReads) async throws -> Reading {
        // Stamped before reading: a commit in between makes the next request read again.
        let key = "\(now / 60) " + GridCache.stamp(database: database)
        if let last = lock.withLock({ last }), last.key == key { return last }
        let titles = try await reads.read { context in try Self.titles(notEndedAt: now, in: context) }
        let made = Reading(key: key, titles: titles)
        lock.withLock { last = made }
        return made
    }

    /// Every title of a programme that has not ended at `now`, once each, in the order met. Read
    /// in place: a string is made for a title not met before only.
    static func titles(notEndedAt now: Int64, in context: ObjectContext) throws -> [String] {
        var titles: [String] = []
        var byHash: [UInt64: [Int]] = [:]   // indexes into `titles`, by FNV-1a of the title's bytes
        let cursor = try context.fetch("Programme", where: .compare("stop", .greater, .date(now)), keys: ["title"])
        while try cursor.step() {
            guard let bytes = cursor.text(at: 0) else { continue }
            var hash = FNV1a()
            hash.add(bytes)
            if let known = byHash[hash.value], known.contains(where: { titles[$0].utf8.elementsEqual(bytes) }) { continue }
            byHash[hash.value, default: []].append(titles.count)
            titles.append(String(decoding: bytes, as: UTF8.self))
        }
        return titles
    }
}
