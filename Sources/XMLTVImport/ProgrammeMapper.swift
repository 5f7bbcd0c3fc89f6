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
            text(episodeNumbers(p.episodeNumbers)),
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
        // the same person in the same role twice is one credit: the first one listed. Ordered
        // on the source values, so that only the members kept are made.
        let credits = p.credits
        var creditObjects: [IncomingObject] = []
        if !credits.isEmpty {
            creditObjects.reserveCapacity(credits.count)
            forEachUnique(credits.count, comparing: { a, b in
                let role = compareUTF8(credits[a].role, credits[b].role)
                return role != 0 ? role : compareUTF8(credits[a].name, credits[b].name)
            }) { i in
                let c = credits[i]
                creditObjects.append(IncomingObject(values: [.string(c.role), .string(c.name), text(c.character), .bool(c.isGuest),
                                                             .integer(Int64(i)), text(images(c.images))]))
            }
        }
        // A category's position counts the empty ones left out, as listed.
        let categories = p.categories
        var categoryObjects: [IncomingObject] = []
        if !categories.isEmpty {
            categoryObjects.reserveCapacity(categories.count)
            forEachUnique(categories.count, where: { !categories[$0].text.isEmpty }, comparing: { a, b in
                let text = compareUTF8(categories[a].text, categories[b].text)
                return text != 0 ? text : compareUTF8(categories[a].lang ?? "", categories[b].lang ?? "")
            }) { i in
                let c = categories[i]
                categoryObjects.append(IncomingObject(values: [.string(c.text), .string(c.lang ?? ""), .integer(Int64(i))]))
            }
        }
        var object = IncomingObject(values: values, children: [creditObjects, categoryObjects])
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

    /// Calls `body` with the positions `0..<count` (those `included`) in the order of `compare`
    /// (an identifier comparison, by UTF-8 bytes as `Value.compare`), skipping a position whose
    /// identifier equals the one before: of equal identifiers, the first listed is kept.
    private static func forEachUnique(_ count: Int, where included: (Int) -> Bool = { _ in true },
                                      comparing compare: (Int, Int) -> Int, _ body: (Int) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
            var n = 0
            for i in 0..<count where included(i) {
                order[n] = i
                n += 1
            }
            guard n > 0 else { return }
            var sorted = UnsafeMutableBufferPointer(rebasing: order[..<n])
            // Positions break ties, so every sort gives the same order. A programme has a few
            // credits and categories: sorted by insertion, cheaper than the general sort for so few.
            func precedes(_ a: Int, _ b: Int) -> Bool {
                let c = compare(a, b)
                return c != 0 ? c < 0 : a < b
            }
            if n <= 16 {
                for i in 1..<n {
                    var j = i
                    while j > 0 && precedes(sorted[j], sorted[j - 1]) {
                        sorted.swapAt(j, j - 1)
                        j -= 1
                    }
                }
            } else {
                sorted.sort(by: precedes)
            }
            var last = sorted[0]
            body(last)
            for i in sorted.dropFirst() where compare(i, last) != 0 {
                body(i)
                last = i
            }
        }
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

    /// Every episode number as a `system=raw` line, nil for none: one String built in place.
    private static func episodeNumbers(_ numbers: [EpisodeNumber]) -> String? {
        guard let first = numbers.first else { return nil }
        var lines = first.system
        lines += "="
        lines += first.raw
        for number in numbers.dropFirst() {
            lines += "\n"
            lines += number.system
            lines += "="
            lines += number.raw
        }
        return lines
    }

    private static func integer(_ n: Int?) -> Value { n.map { .integer(Int64($0)) } ?? .null }

    private static func text(_ s: String?) -> Value {
        guard let s, !s.isEmpty else { return .null }
        return .string(s)
    }

    /// The preferred text (the first, as listed: XMLTV puts the main language first) and the rest.
    private static func split(_ texts: [LocalizedText]) -> (LocalizedText?, [LocalizedText]) {
        // Most lists hold one text: no filtered copy for those.
        if texts.count <= 1 { return (texts.first.flatMap { $0.text.isEmpty ? nil : $0 }, []) }
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
