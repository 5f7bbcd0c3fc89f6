import Listings
import Merge
import ObjectGraph
import Primitives
import XMLTV

/// Turns XMLTV records into incoming objects of the listings model. This is the only place that
/// knows both vocabularies.
public enum ListingsMapper {
    // The model's keys (Listings), under the names the import reads them by.
    public static let channelKeys = TVModel.channelKeys
    public static let programmeKeys = TVModel.programmeKeys
    public static let creditKeys = TVModel.creditKeys
    public static let categoryKeys = TVModel.categoryKeys

    public static func channel(_ c: XMLTVChannel) -> IncomingObject {
        let (first, rest) = split(c.displayNames)
        return IncomingObject(values: [
            .string(c.id), text(first?.text), text(lines(rest)), text(c.icons.first?.src), text(c.urls.first), text(icons(c.icons)),
        ])
    }

    /// A channel known only from its programmes: its id is all we have.
    public static func bareChannel(_ id: String) -> IncomingObject {
        IncomingObject(values: [.string(id), .null, .null, .null, .null, .null])
    }

    public static func programme(_ p: XMLTVProgramme) -> IncomingObject {
        let (title, otherTitles) = split(p.titles)
        let (subTitle, otherSubTitles) = split(p.subTitles)
        let (desc, otherDescs) = split(p.descriptions)
        var other: String? = nil
        if !otherTitles.isEmpty || !otherSubTitles.isEmpty || !otherDescs.isEmpty {
            let tagged = otherTitles.map { ("title", $0) } + otherSubTitles.map { ("sub-title", $0) } + otherDescs.map { ("desc", $0) }
            other = tagged.map { "\($0.0)\t\($0.1.lang ?? "")\t\($0.1.text)" }.joined(separator: "\n")
        }
        let preferred = p.episodeNumbers.first { $0.system == "xmltv_ns" && ($0.season != nil || $0.episode != nil) }
            ?? p.episodeNumbers.first { $0.season != nil || $0.episode != nil }
        // One array literal, built in place (appending a literal built it twice).
        let values: [Value] = [
            .date(p.start), .integer(Int64(p.clumpIndex)), p.stop.map(Value.date) ?? .null, .integer(Int64(p.clumpCount)),
            text(title?.text), text(subTitle?.text), text(desc?.text), text(other),
            text(p.date), text(lines(p.keywords)), text(p.language), text(p.originalLanguage),
            integer(p.length),
            text(p.icons.first?.src), text(p.urls.first), text(p.countries.isEmpty ? nil : p.countries.joined(separator: "\n")),
            text(p.episodeNumbers.isEmpty ? nil : p.episodeNumbers.map { "\($0.system)=\($0.raw)" }.joined(separator: "\n")),
            integer(preferred?.season), integer(preferred?.seasonCount), integer(preferred?.episode),
            integer(preferred?.episodeCount), integer(preferred?.part), integer(preferred?.partCount),
            text(keyed(p.video)), text(keyed(p.audio)),
            .bool(p.previouslyShown), text(p.previouslyShownStart), .bool(p.premiere), .bool(p.lastChance), .bool(p.isNew),
            text(p.subtitles.isEmpty ? nil : p.subtitles.map { $0.isEmpty ? "untyped" : $0 }.joined(separator: "\n")),
            text(p.ratings.isEmpty ? nil : p.ratings.map { "\($0.system ?? "")=\($0.value)" }.joined(separator: "\n")),
            text(p.starRatings.isEmpty ? nil : p.starRatings.map { "\($0.system ?? "")=\($0.value)" }.joined(separator: "\n")),
            text(icons(p.icons)), text(images(p.images)),
        ]
        // Owned members, sorted by their identifier (the merge walks them as a sorted stream);
        // the same person in the same role twice is one credit: the first one listed.
        var credits: [IncomingObject] = []
        credits.reserveCapacity(p.credits.count)
        for (i, c) in p.credits.enumerated() {
            credits.append(IncomingObject(values: [.string(c.role), .string(c.name), text(c.character), .bool(c.isGuest), .integer(Int64(i)),
                                          text(images(c.images))]))
        }
        var categories: [IncomingObject] = []
        categories.reserveCapacity(p.categories.count)
        for (i, c) in p.categories.enumerated() where !c.text.isEmpty {
            categories.append(IncomingObject(values: [.string(c.text), .string(c.lang ?? ""), .integer(Int64(i))]))
        }
        var object = IncomingObject(values: values, children: [sortedUnique(credits, identifier: [0, 1], position: 4),
                                                               sortedUnique(categories, identifier: [0, 1], position: 2)])
        object.contentHash = p.sourceHash.map { contentHash($0, p) } ?? ContentHash.of(object)
        return object
    }

    /// A programme as read, decoded and mapped only when the merge needs its values: an
    /// unchanged programme (same hash as stored) costs its identifier and hash alone.
    public static func deferredProgramme(_ record: ProgrammeRecord) -> IncomingObject {
        IncomingObject(values: [.date(record.start), .integer(Int64(record.clumpIndex))],
                       contentHash: contentHash(record.sourceHash, record), resolve: { programme(record.decoded()) })
    }

    /// A programme's hash from the hash of its element and its place in the schedule (the stop
    /// may have been inferred or repaired): equal for equal values, whichever way it was mapped.
    private static func contentHash(_ sourceHash: UInt64, _ p: some ScheduledProgramme) -> Int64 {
        // Bump with any change to the mapping above, so stored hashes stop matching.
        let mappingVersion: Int64 = 2   // 2: icons with sizes, images
        var h = ContentHash.Accumulator(sourceHash)
        for n in [mappingVersion, p.start, p.stop ?? Int64.min, Int64(p.clumpIndex), Int64(p.clumpCount)] { h.add(n) }
        return h.value
    }

    /// Members sorted by identifier, keeping the first listed (lowest `position`) of equal ones.
    private static func sortedUnique(_ members: [IncomingObject], identifier: [Int], position: Int) -> [IncomingObject] {
        guard members.count > 1 else { return members }
        func precedes(_ a: IncomingObject, _ b: IncomingObject) -> Bool {
            for p in identifier {
                let c = Value.compare(a.values[p], b.values[p])
                if c != 0 { return c < 0 }
            }
            return Value.compare(a.values[position], b.values[position]) < 0
        }
        // A programme has a few credits and categories: sorted in place, by insertion, rather
        // than by the general sort, which cost more than the comparisons for so few.
        var sorted = members
        if sorted.count <= 16 {
            for i in 1..<sorted.count {
                var j = i
                while j > 0 && precedes(sorted[j], sorted[j - 1]) {
                    sorted.swapAt(j, j - 1)
                    j -= 1
                }
            }
        } else {
            sorted.sort(by: precedes)
        }
        var unique: [IncomingObject] = [sorted[0]]
        unique.reserveCapacity(sorted.count)
        for m in sorted.dropFirst() where identifier.contains(where: { Value.compare(m.values[$0], unique[unique.count - 1].values[$0]) != 0 }) {
            unique.append(m)
        }
        return unique
    }

    /// Every icon as a `width\theight\tsrc` line (`TVModel`'s `icons`), or nil when the first
    /// icon's URL (`icon`) says it all: one icon without a size.
    static func icons(_ icons: [Icon]) -> String? {
        if icons.isEmpty || (icons.count == 1 && icons[0].width == nil && icons[0].height == nil) { return nil }
        return icons.map { "\($0.width.map(String.init) ?? "")\t\($0.height.map(String.init) ?? "")\t\($0.src)" }.joined(separator: "\n")
    }

    /// Every image as a `type\tsize\torient\tsystem\tsrc` line (`TVModel`'s `images`), nil for none.
    static func images(_ images: [Image]) -> String? {
        images.isEmpty ? nil : images.map { "\($0.type ?? "")\t\($0.size ?? "")\t\($0.orient ?? "")\t\($0.system ?? "")\t\($0.src)" }
            .joined(separator: "\n")
    }

    private static func integer(_ n: Int?) -> Value { n.map { .integer(Int64($0)) } ?? .null }

    private static func text(_ s: String?) -> Value {
        guard let s, !s.isEmpty else { return .null }
        return .string(s)
    }

    /// The preferred text (the first, as listed: XMLTV puts the main language first) and the rest.
    private static func split(_ texts: [LocalizedText]) -> (LocalizedText?, [LocalizedText]) {
        let nonEmpty = texts.filter { !$0.text.isEmpty }
        return (nonEmpty.first, Array(nonEmpty.dropFirst()))
    }

    private static func lines(_ texts: [LocalizedText]) -> String? {
        texts.isEmpty ? nil : texts.map(\.text).joined(separator: "\n")
    }

    private static func keyed(_ d: [String: String]) -> String? {
        d.isEmpty ? nil : d.keys.sorted().map { "\($0)=\(d[$0]!)" }.joined(separator: "\n")
    }
}

/// A stable 64-bit hash of an incoming object's values and members (FNV-1a over a canonical
/// byte encoding): equal content gives an equal hash on every run and machine.
public enum ContentHash {
    /// Hashes integers onto a start value.
    struct Accumulator {
        private var h: FNV1a
        init(_ seed: UInt64) { h = FNV1a(basis: seed) }
        mutating func add(_ n: Int64) { h.add(littleEndian: UInt64(bitPattern: n)) }
        var value: Int64 { Int64(bitPattern: h.value) }
    }

    public static func of(_ object: IncomingObject) -> Int64 {
        var h = FNV1a()
        add(object, &h)
        return Int64(bitPattern: h.value)
    }

    private static func add(_ object: IncomingObject, _ h: inout FNV1a) {
        for v in object.values { add(v, &h) }
        for members in object.children {
            h.add(0xFE)
            for m in members { add(m, &h) }
        }
    }

    private static func add(_ v: Value, _ h: inout FNV1a) {
        switch v {
        case .null: h.add(0)
        case .string(let s):
            h.add(1)
            var s = s
            s.withUTF8 { h.add($0) }
            h.add(0xFF)
        case .integer(let i), .date(let i):
            h.add(2)
            h.add(littleEndian: UInt64(bitPattern: i))
        case .double(let d):
            h.add(3)
            h.add(littleEndian: d.bitPattern)
        case .bool(let b): h.add(b ? 5 : 4)
        case .data(let d):
            h.add(6)
            h.add(d)
        }
    }
}
