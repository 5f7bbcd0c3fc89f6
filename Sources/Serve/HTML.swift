import Primitives

/// HTML text built by appending, every text from the database or a request escaped on the way in.
///
/// Pages are small and written by hand (no template engine): what must never happen is an
/// unescaped feed title, so `text` and `attribute` are the only ways to put data in.
struct HTML {
    private(set) var output = ""

    /// Markup written in this repository (never data).
    mutating func raw(_ markup: StaticString) { output += markup.description }
    /// Markup assembled from constants and already escaped parts.
    mutating func trusted(_ markup: String) { output += markup }
    /// Data as element content.
    mutating func text(_ value: String) { output += HTMLText.escape(value) }

    /// Percent-encodes a path segment or query value (RFC 3986 unreserved characters stay).
    static func urlComponent(_ value: String) -> String {
        var result = ""
        for b in value.utf8 {
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: result.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return result
    }

    /// A whole page: the layout, the style sheet link, a title and `body`.
    static func page(title: String, signedIn: Bool, tokenConfigured: Bool, wide: Bool = false, _ body: (inout HTML) -> Void) -> String {
        // Titles quote data (an identifier from a feed, a search): written twice, so capped.
        let title = HTMLText.shortened(title, to: 1000)
        var page = HTML()
        page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        page.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        page.raw("<link rel=\"stylesheet\" href=\"/style.css\"><title>")
        page.text(title)
        page.raw(" · tvimport</title></head><body><header><nav aria-label=\"Site\"><a href=\"/\">Guide</a> <a href=\"/feeds/\">Feeds</a> <a href=\"/model\">Model</a>")
        page.raw(" <form class=\"search\" method=\"get\" action=\"/search\"><input type=\"search\" name=\"q\" placeholder=\"Title\" aria-label=\"Search titles\"><button>Search</button></form>")
        if tokenConfigured {
            page.raw(signedIn ? " <form method=\"post\" action=\"/logout\" class=\"inline\"><button>Sign out</button></form>" : " <a href=\"/login\">Sign in</a>")
        }
        page.raw(wide ? "</nav></header><main class=\"wide\"><h1>" : "</nav></header><main><h1>")
        page.text(title)
        page.raw("</h1>")
        body(&page)
        page.raw("</main></body></html>\n")
        return page.output
    }
}
