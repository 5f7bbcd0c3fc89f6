// Element and attribute names compared as bytes straight from libxml2: no String per node.

@inline(__always)
func nameIs(_ p: UnsafePointer<UInt8>, _ s: StaticString) -> Bool {
    let q = s.utf8Start
    let n = s.utf8CodeUnitCount
    var i = 0
    // Stops at the first difference, so a shorter name (its NUL differs) is never read past.
    while i < n {
        if p[i] != q[i] { return false }
        i += 1
    }
    return p[n] == 0
}

/// The elements of `<programme>` this reader understands.
enum ProgrammeChild {
    case title, subTitle, desc, credits, date, category, keyword, language, origLanguage, length
    case icon, url, country, episodeNum, video, audio, previouslyShown, premiere, lastChance, new
    case subtitles, rating, starRating, image, other

    init(_ p: UnsafePointer<UInt8>) {
        switch p[0] {
        case UInt8(ascii: "t"): self = nameIs(p, "title") ? .title : .other
        case UInt8(ascii: "s"):
            if nameIs(p, "sub-title") { self = .subTitle } else if nameIs(p, "subtitles") { self = .subtitles }
            else if nameIs(p, "star-rating") { self = .starRating } else { self = .other }
        case UInt8(ascii: "d"):
            if nameIs(p, "desc") { self = .desc } else if nameIs(p, "date") { self = .date } else { self = .other }
        case UInt8(ascii: "c"):
            if nameIs(p, "category") { self = .category } else if nameIs(p, "credits") { self = .credits }
            else if nameIs(p, "country") { self = .country } else { self = .other }
        case UInt8(ascii: "k"): self = nameIs(p, "keyword") ? .keyword : .other
        case UInt8(ascii: "l"):
            if nameIs(p, "length") { self = .length } else if nameIs(p, "language") { self = .language }
            else if nameIs(p, "last-chance") { self = .lastChance } else { self = .other }
        case UInt8(ascii: "o"): self = nameIs(p, "orig-language") ? .origLanguage : .other
        case UInt8(ascii: "i"):
            if nameIs(p, "icon") { self = .icon } else if nameIs(p, "image") { self = .image } else { self = .other }
        case UInt8(ascii: "u"): self = nameIs(p, "url") ? .url : .other
        case UInt8(ascii: "e"): self = nameIs(p, "episode-num") ? .episodeNum : .other
        case UInt8(ascii: "v"): self = nameIs(p, "video") ? .video : .other
        case UInt8(ascii: "a"): self = nameIs(p, "audio") ? .audio : .other
        case UInt8(ascii: "p"):
            if nameIs(p, "previously-shown") { self = .previouslyShown } else if nameIs(p, "premiere") { self = .premiere }
            else { self = .other }
        case UInt8(ascii: "n"): self = nameIs(p, "new") ? .new : .other
        case UInt8(ascii: "r"): self = nameIs(p, "rating") ? .rating : .other
        default: self = .other
        }
    }
}

/// Credit roles in DTD order; the element name becomes `Credit.role`.
let creditRoles: [StaticString] = [
    "director", "actor", "writer", "adapter", "producer", "composer", "editor", "presenter", "commentator", "guest",
]

func creditRole(_ p: UnsafePointer<UInt8>) -> String? {
    for role in creditRoles where nameIs(p, role) { return role.description }
    return nil
}
