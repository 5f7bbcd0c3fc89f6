import Testing
@testable import Feeds

@Suite("Programme UIDs")
struct ProgrammeUIDTests {
    @Test("Fixed expected values (FNV-1a 64 from two offset bases; recomputed outside Swift)")
    func fixedValues() {
        #expect(ProgrammeUID.make(channelID: "bbc1.uk", start: 1_741_118_400, clumpIndex: 0, domain: "tvimport.example")
                == "8f763120351b0c0e8d95468e7a539c91@tvimport.example")
        #expect(ProgrammeUID.make(channelID: "zdf.de", start: 1_741_118_400, clumpIndex: 1, domain: "tvimport.example")
                == "347717edc65ef566be49ca0954f1bd93@tvimport.example")
    }

    @Test("Same input, same UID")
    func stable() {
        let a = ProgrammeUID.make(channelID: "arte.fr", start: 1_700_000_000, clumpIndex: 2, domain: "tv.example")
        let b = ProgrammeUID.make(channelID: "arte.fr", start: 1_700_000_000, clumpIndex: 2, domain: "tv.example")
        #expect(a == b)
    }

    @Test("Channel, start and clump each change the UID")
    func distinct() {
        let base = ProgrammeUID.make(channelID: "arte.fr", start: 1_700_000_000, clumpIndex: 0, domain: "d")
        let others = [
            ProgrammeUID.make(channelID: "arte.de", start: 1_700_000_000, clumpIndex: 0, domain: "d"),
            ProgrammeUID.make(channelID: "arte.fr", start: 1_700_000_060, clumpIndex: 0, domain: "d"),
            ProgrammeUID.make(channelID: "arte.fr", start: 1_700_000_000, clumpIndex: 1, domain: "d"),
            // The separators keep ("a1", 0) and ("a", 10) apart.
            ProgrammeUID.make(channelID: "arte.fr1", start: 700_000_000, clumpIndex: 0, domain: "d"),
        ]
        #expect(Set(others + [base]).count == others.count + 1)
    }

    @Test("Canonically equal channel ids with different bytes (NFC, NFD) get different UIDs")
    func normalisationForms() {
        let nfc = "t\u{E9}l\u{E9}.fr", nfd = "te\u{301}le\u{301}.fr"
        #expect(nfc == nfd)  // Swift's String equality: the trap the UID must not fall into
        let a = ProgrammeUID.make(channelID: nfc, start: 0, clumpIndex: 0, domain: "d")
        let b = ProgrammeUID.make(channelID: nfd, start: 0, clumpIndex: 0, domain: "d")
        #expect(a != b)
    }

    @Test("ASCII only, fixed length, domain sanitised")
    func asciiOnly() {
        let uid = ProgrammeUID.make(channelID: "日本.jp", start: -5, clumpIndex: 0, domain: "tv.exämple,org\r\n")
        #expect(uid.utf8.allSatisfy { $0 < 0x80 })
        #expect(uid.hasSuffix("@tv.exmpleorg"))
        #expect(uid.split(separator: "@")[0].count == 32)
        #expect(ProgrammeUID.make(channelID: "x", start: 0, clumpIndex: 0, domain: "").hasSuffix("@tvimport.invalid"))
    }
}
