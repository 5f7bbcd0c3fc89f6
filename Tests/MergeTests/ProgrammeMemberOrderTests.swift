import Merge
import ObjectGraph
import Testing
import XMLTV
import XMLTVImport

/// A programme's credits and categories reach the merge sorted by identifier, the first listed of
/// equal ones kept. The mapper orders the source values (no member made and dropped): compared here
/// with sorting the made members by `Value.compare`, over random lists with repeats, empty
/// category texts and bytes that order differently from Swift's string comparison.
@Suite struct ProgrammeMemberOrderTests {
    static func reference(_ members: [IncomingObject], identifier: [Int], position: Int) -> [[[UInt8]]] {
        let sorted = members.sorted { a, b in
            for p in identifier {
                let c = Value.compare(a.values[p], b.values[p])
                if c != 0 { return c < 0 }
            }
            return Value.compare(a.values[position], b.values[position]) < 0
        }
        var unique: [IncomingObject] = []
        for m in sorted where unique.last.map({ last in identifier.contains { Value.compare(m.values[$0], last.values[$0]) != 0 } }) ?? true {
            unique.append(m)
        }
        return unique.map(Self.shown)
    }

    /// Values as bytes: Swift's `==` on strings would take NFC and NFD spellings as equal.
    static func shown(_ object: IncomingObject) -> [[UInt8]] { object.values.map { Array($0.description.utf8) } }

    @Test func membersMatchSortingTheMadeObjects() {
        var generator = SystemRandomNumberGenerator()
        let names = ["Ann", "Bob", "ann", "Émile", "E\u{301}mile", "", "Zoë", "Bob "]
        let roles = ["actor", "director", "guest", "writer"]
        for _ in 0..<3_000 {
            var p = XMLTVProgramme(channel: "c", start: 1_800_000_000, stop: 1_800_003_600, titles: [LocalizedText(text: "T")])
            for _ in 0..<Int.random(in: 0...(Bool.random(using: &generator) ? 4 : 24), using: &generator) {
                p.credits.append(Credit(role: roles.randomElement(using: &generator)!, name: names.randomElement(using: &generator)!,
                                        character: Bool.random(using: &generator) ? "x" : nil, isGuest: Bool.random(using: &generator)))
            }
            for _ in 0..<Int.random(in: 0...(Bool.random(using: &generator) ? 3 : 20), using: &generator) {
                p.categories.append(LocalizedText(text: names.randomElement(using: &generator)!,
                                                  lang: [nil, "en", "", "de"].randomElement(using: &generator)!))
            }
            let object = ListingsMapper.programme(p)
            let credits = p.credits.enumerated().map { i, c in
                IncomingObject(values: [.string(c.role), .string(c.name), c.character.map(Value.string) ?? .null, .bool(c.isGuest),
                                        .integer(Int64(i)), .null])
            }
            let categories = p.categories.enumerated().filter { !$0.element.text.isEmpty }.map { i, c in
                IncomingObject(values: [.string(c.text), .string(c.lang ?? ""), .integer(Int64(i))])
            }
            #expect(object.children.count == 2)
            #expect(object.children[0].map(Self.shown) == Self.reference(credits, identifier: [0, 1], position: 4))
            #expect(object.children[1].map(Self.shown) == Self.reference(categories, identifier: [0, 1], position: 2))
        }
    }
}
